"""The dmesg parser on lines in the formats kernels print, and reading the log from a captured root."""

from __future__ import annotations

from pathlib import Path

from mdtui.probe.kernel_log import parse_kernel_log, read_kernel_log, read_parity_routines
from mdtui.probe.root import SystemRoot

# lib/raid6/algos.c and crypto/xor.c since 5.x, with dmesg timestamps and unrelated lines around them.
BENCHMARKED = """\
[    0.000000] Linux version 6.1.0-56-amd64 (debian-kernel@lists.debian.org)
[    2.104361] raid6: avx2x4   gen() 23755 MB/s
[    2.172363] raid6: avx2x2   gen() 21874 MB/s
[    2.240359] raid6: avx2x1   gen() 16411 MB/s
[    2.240361] raid6: using algorithm avx2x4 gen() 23755 MB/s
[    2.308356] raid6: .... xor() 14113 MB/s, rmw enabled
[    2.308359] raid6: using avx2x2 recovery algorithm
[    2.310148] xor: measuring software checksum speed
[    2.311205]    prefetch64-sse  : 21990 MB/sec
[    2.311892]    generic_sse     : 19880 MB/sec
[    2.311893] xor: using function: prefetch64-sse (21990 MB/sec)
[    2.400000] md/raid:md0: device nvme3n1 operational as raid disk 3
"""

# What this development machine's kernel (6.18, no CONFIG_RAID6_PQ_BENCHMARK, AVX-512) printed.
SKIPPED = (
    "[    0.306820] raid6: skipped pq benchmark and selected avx512x4\n"
    "[    0.306831] raid6: using avx512x2 recovery algorithm\n"
    # The kernel pads the name to ten columns ("%-10s"), so the line ends in spaces.
    "[    0.422711] xor: automatically using best checksumming function   avx       \n"
)

# 3.x kernels: one speed in parentheses, xor with three decimals; syslog's kern.log prefix.
OLD_SYSLOG = """\
May  3 10:00:01 host kernel: [    1.514050] raid6: sse2x4    9580 MB/s
May  3 10:00:01 host kernel: [    1.514052] raid6: using algorithm sse2x4 (9580 MB/s)
May  3 10:00:01 host kernel: [    1.520000] xor: using function: generic_sse (12345.600 MB/sec)
"""


def test_benchmarked_kernel() -> None:
    found = parse_kernel_log(BENCHMARKED)
    assert found.raid6_algorithm == "avx2x4"
    assert found.raid6_gen_mb_s == 23755.0
    assert found.raid6_xor_mb_s == 14113.0
    assert found.raid6_recovery == "avx2x2"
    assert found.raid6_benchmarked is True
    assert found.raid6_simd is True
    assert found.raid6_candidates == (("avx2x4", 23755.0), ("avx2x2", 21874.0), ("avx2x1", 16411.0))
    assert (found.xor_function, found.xor_mb_s) == ("prefetch64-sse", 21990.0)


def test_lines_as_quoted_in_finding_3() -> None:
    # Finding 3 (docs/findings.md) quotes the xor line with "MB/s"; accept both spellings.
    text = "raid6: using algorithm avx2x4 gen() 23755 MB/s\nxor: using function: avx (28480 MB/s)\n"
    found = parse_kernel_log(text)
    assert (found.raid6_algorithm, found.raid6_gen_mb_s) == ("avx2x4", 23755.0)
    assert (found.xor_function, found.xor_mb_s) == ("avx", 28480.0)


def test_kernel_that_skipped_the_benchmark() -> None:
    found = parse_kernel_log(SKIPPED)
    assert found.raid6_algorithm == "avx512x4"
    assert found.raid6_gen_mb_s is None
    assert found.raid6_benchmarked is False
    assert found.raid6_recovery == "avx512x2"
    assert (found.xor_function, found.xor_mb_s) == ("avx", None)
    assert found.found


def test_old_kernel_through_syslog() -> None:
    found = parse_kernel_log(OLD_SYSLOG)
    assert (found.raid6_algorithm, found.raid6_gen_mb_s) == ("sse2x4", 9580.0)
    assert (found.xor_function, found.xor_mb_s) == ("generic_sse", 12345.6)
    assert found.raid6_candidates == ()  # "sse2x4    9580 MB/s" has no gen(): not a candidate line of 4.x


def test_integer_fallback_is_not_simd_and_a_later_load_wins() -> None:
    text = "raid6: using algorithm int64x8 gen()  3105 MB/s\n" + "raid6: using algorithm avx2x2 gen() 20000 MB/s\n"
    assert parse_kernel_log(text).raid6_algorithm == "avx2x2"
    assert parse_kernel_log(text.splitlines()[0]).raid6_simd is False


def test_nothing_found_in_an_unrelated_log() -> None:
    found = parse_kernel_log("[    0.0] Linux version 6.1\n[    1.0] nvme nvme0: 2/0/0 default/read/poll queues\n")
    assert not found.found
    assert found.raid6_simd is None


def test_captured_root_reads_its_saved_log(tmp_path: Path) -> None:
    (tmp_path / "dmesg.txt").write_text(BENCHMARKED)
    root = SystemRoot(tmp_path)
    assert read_kernel_log(root) == BENCHMARKED.strip()
    routines = read_parity_routines(root)
    assert routines is not None and routines.raid6_algorithm == "avx2x4"


def test_captured_root_without_a_log(tmp_path: Path) -> None:
    assert read_parity_routines(SystemRoot(tmp_path)) is None
