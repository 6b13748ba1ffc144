"""Every parser is total: any input gives a value or a named MdtuiError, never another exception, and fast.

Property-based (hypothesis), seeded with the real samples in tests/fixtures: each test starts from a
real file and damages it (random character flips, truncation, deleted and repeated slices, and
insertions of what broke parsers before: Unicode digits, 5000-digit numbers, 1e400, inf, NUL,
braces). Settings are small and derandomised so the file takes seconds and CI is deterministic.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from whole_parse import parse_dd_stderr, progress_series

from mdtui.ascii_numbers import MAX_DIGITS, parse_counters, parse_float, parse_int
from mdtui.errors import MdtuiError, ParseError
from mdtui.execute.dd import DdStreamParser
from mdtui.execute.fio import FioStreamDecoder, document_error, document_stats, parse_fio_output
from mdtui.model.link import Link, LinkKind
from mdtui.probe.arrays import read_arrays
from mdtui.probe.cpu import CpufreqReader, parse_proc_stat
from mdtui.probe.diskstats import parse_block_stat, parse_diskstats
from mdtui.probe.kernel_log import parse_kernel_log
from mdtui.probe.links import parse_rate, parse_width
from mdtui.probe.mdstat import parse_mdstat
from mdtui.probe.mounts import parse_mountinfo, parse_proc_mounts
from mdtui.probe.procstat import parse_pid_stat
from mdtui.probe.root import ATTRIBUTE_LIMIT, RefusedFileError, SystemRoot, read_attribute, read_table_file
from mdtui.probe.udev import parse_udev_database
from mdtui.store.fio_import import metrics_from_fio, read_fio_output, samples_from_fio
from mdtui.store.fio_import import parse_fio_output as parse_fio_import

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LAB = FIXTURES / "trees" / "lab-standard"
PROCFS = FIXTURES / "procfs"

HUGE = "9" * 5000
# What broke parsers before, or could: Unicode digits int() rejects ("²") or accepts ("٤"), numbers
# past int()'s 4300 digits or float's range, inf and nan, NUL, signs, underscores, and JSON's braces.
TOKENS = (
    "²",
    "٤",
    "\u0662",
    HUGE,
    "1e400",
    "9" * 400 + ".5",
    "inf",
    "nan",
    "-1",
    "1_0",
    "\0",
    "\n",
    "\r",
    " ",
    ":",
    "/",
    "[",
    "]",
    "{",
    "}",
    '"',
    "(",
    ")",
    "K/sec",
    "min",
    "%",
    "=",
    "0x",
    "١٢٣",
)

SETTINGS = settings(
    max_examples=100,
    deadline=1000,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)

# Tests that write a tree per example: file writes cost more than parsing, so fewer examples.
FILE_SETTINGS = settings(SETTINGS, max_examples=50)


def _read(path: Path) -> str:
    return path.read_text(errors="replace")


@st.composite
def damaged(draw: st.DrawFn, seeds: tuple[str, ...]) -> str:
    """A seed text with a few random damages applied in turn, all decided by one drawn seed (cheap to draw)."""
    text = draw(st.sampled_from(seeds))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    for _ in range(rng.randrange(7)):
        position = rng.randrange(len(text) + 1)
        kind = rng.choice(("token", "token", "char", "truncate", "delete", "repeat", "replace-digits"))
        if kind == "token":
            text = text[:position] + rng.choice(TOKENS) + text[position:]
        elif kind == "char":
            code = rng.choice((rng.randrange(128), rng.randrange(0x110000)))
            text = text[:position] + chr(code) + text[position + 1 :]
        elif kind == "truncate":
            text = text[:position]
        elif kind == "delete":
            text = text[:position] + text[position + rng.randrange(1, 200) :]
        elif kind == "repeat":
            text = text[:position] + text[position : position + rng.randrange(1, 400)] * 3 + text[position:]
        else:
            digit = rng.choice(("²", "٤", HUGE[:40], "1e400"))
            text = "".join(digit if ch.isdigit() and rng.random() < 0.3 else ch for ch in text)
    return text


def texts(*seeds: str) -> st.SearchStrategy[str]:
    """Damaged seeds, and now and then text with no seed at all."""
    return st.one_of(damaged(tuple(seeds)), st.text(max_size=300))


def total(call: Callable[[], Any]) -> Any:
    """Run a parser: a value, or a named MdtuiError (returned, so a test can look at it)."""
    started = time.perf_counter()
    try:
        result = call()
    except MdtuiError as exc:
        result = exc
    assert time.perf_counter() - started < 2.0  # hypothesis's deadline is the tighter check; this one is per call
    return result


# -- numbers -----------------------------------------------------------------------------------


@SETTINGS
@given(st.one_of(st.text(max_size=60), st.sampled_from(TOKENS), st.integers().map(str)))
def test_numbers_accept_only_short_ascii_numbers_in_range(text: str) -> None:
    value = parse_int(text, lo=-(10**40), hi=10**40)
    if value is not None:
        stripped = text.strip()
        assert stripped.isascii() and stripped.lstrip("+-").isdigit() and len(stripped.lstrip("+-")) <= MAX_DIGITS
    number = parse_float(text, lo=-1e30, hi=1e30)
    assert number is None or (-1e30 <= number <= 1e30 and text.strip().isascii())
    counters = parse_counters(text.split())
    assert counters is None or all(0 <= c < 2**64 for c in counters)


# -- /proc/mdstat and md sysfs -------------------------------------------------------------------

MDSTAT_SEEDS = (
    _read(LAB / "proc/mdstat"),
    _read(PROCFS / "proc/mdstat"),
    _read(FIXTURES / "trees/real-links/proc/mdstat"),
)


@SETTINGS
@given(texts(*MDSTAT_SEEDS))
@example(MDSTAT_SEEDS[1].replace("1", "²"))
@example(MDSTAT_SEEDS[0].replace("27136", HUGE).replace("7.5", "9" * 400 + ".5"))
@example("md0 : active raid1 sda[" + HUGE + "]\n      " + HUGE + " blocks [" + HUGE + "/1] [U]\n")
def test_mdstat_parser_is_total(text: str) -> None:
    arrays = total(lambda: parse_mdstat(text))
    assert isinstance(arrays, list)
    for array in arrays:
        for figure in (array.size_bytes, array.chunk_bytes, array.raid_disks):
            assert figure is None or 0 <= figure < 2**64


MD_ATTRIBUTES = (
    "raid_disks",
    "chunk_size",
    "layout",
    "degraded",
    "sync_completed",
    "sync_speed",
    "sync_action",
    "array_state",
    "level",
    "bitmap/location",
    "dev-nvme0n1/slot",
    "dev-nvme0n1/state",
)


@pytest.fixture(scope="module")
def md_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lab-standard's /proc and md0's sysfs, whose attributes each example overwrites."""
    tree = tmp_path_factory.mktemp("md-tree")
    shutil.copytree(LAB / "proc", tree / "proc")
    md = tree / "sys/block/md0"
    shutil.copytree(LAB / "sys/devices/virtual/block/md0", md, symlinks=True)
    return tree


@FILE_SETTINGS
@given(
    st.lists(
        damaged(
            (
                "4",
                "0",
                "65536",
                "2",
                "1.2",
                "0 / 2093056",
                "resync",
                "active",
                "raid6",
                "+8",
                "none",
                "in_sync",
                "2261",
                "delayed",
                "none / none",
                "",
            )
        ),
        min_size=len(MD_ATTRIBUTES),
        max_size=len(MD_ATTRIBUTES),
    ),
    texts(*MDSTAT_SEEDS[:1]),
)
@example(["4²"] * len(MD_ATTRIBUTES), MDSTAT_SEEDS[0])
@example([HUGE] * len(MD_ATTRIBUTES), MDSTAT_SEEDS[0])
@example([f"{HUGE} / {HUGE}"] * len(MD_ATTRIBUTES), MDSTAT_SEEDS[0])
def test_md_sysfs_is_total(md_tree: Path, values: list[str], mdstat: str) -> None:
    (md_tree / "proc/mdstat").write_text(mdstat, errors="surrogatepass")
    for name, value in zip(MD_ATTRIBUTES, values, strict=True):
        path = md_tree / "sys/block/md0/md" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value, errors="surrogatepass")
    result = total(lambda: read_arrays(SystemRoot(md_tree)))
    assert isinstance(result, list | ParseError)


# -- diskstats, /proc/stat, /proc/PID/stat -------------------------------------------------------

DISKSTATS_SEEDS = (_read(LAB / "proc/diskstats"), _read(PROCFS / "proc/diskstats"))
STAT_SEEDS = (_read(LAB / "proc/stat"), _read(PROCFS / "proc/stat"))
PID_STAT = "4321 (md0_raid6) S 2 0 0 0 -1 2129984 0 0 0 0 12 345 0 0 20 0 1 0 97 0 0 18446744073709551615 0 0 0 0"


@SETTINGS
@given(texts(*DISKSTATS_SEEDS))
@example(f" 259 0 nvme0n1 {' '.join([HUGE] * 17)}\n 2² 0 vda 1 2 3 4 5 6 7 8 9 10 11\n")
def test_diskstats_parser_is_total(text: str) -> None:
    devices = total(lambda: parse_diskstats(text))
    assert isinstance(devices, dict)
    for counters in devices.values():
        assert all(0 <= value < 2**64 for value in counters[1:] if value is not None)
    for line in text.splitlines()[:5]:
        parse_block_stat("sda", line.split(None, 3)[-1] if line.split() else line)


@SETTINGS
@given(texts(*STAT_SEEDS))
@example(f"cpu  1 2 3 4 5 6 7 8 9 10\ncpu{HUGE} 1 2 3\ncpu² 1 2\n")
def test_proc_stat_parser_is_total(text: str) -> None:
    parsed = total(lambda: parse_proc_stat(text))
    assert all(0 <= cpu < 2**16 for cpu in parsed.per_cpu)


@SETTINGS
@given(texts(PID_STAT))
@example(PID_STAT.replace("12", HUGE))
def test_pid_stat_parser_is_total(text: str) -> None:
    stat_line = total(lambda: parse_pid_stat(text))
    assert stat_line is None or stat_line.cpu_ticks >= 0


# -- cpufreq ---------------------------------------------------------------------------------------

CPUFREQ_FILES = (
    "affected_cpus",
    "scaling_cur_freq",
    "cpuinfo_max_freq",
    "cpuinfo_min_freq",
    "scaling_max_freq",
    "scaling_governor",
    "scaling_driver",
    "energy_performance_preference",
)


@pytest.fixture(scope="module")
def cpu_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cpu-tree")


@FILE_SETTINGS
@given(
    st.lists(
        damaged(("0 1", "2400000", "4200000", "800000", "powersave", "intel_pstate", "balance_performance", "")),
        min_size=len(CPUFREQ_FILES),
        max_size=len(CPUFREQ_FILES),
    )
)
@example(["0 ² " + HUGE, HUGE, "²", "1e400", "-5", "performance", "x", "y"])
def test_cpufreq_is_total(cpu_tree: Path, values: list[str]) -> None:
    policy = cpu_tree / "sys/devices/system/cpu/cpufreq/policy0"
    policy.mkdir(parents=True, exist_ok=True)
    for name, value in zip(CPUFREQ_FILES, values, strict=True):
        (policy / name).write_text(value, errors="surrogatepass")
    state = total(lambda: CpufreqReader(SystemRoot(cpu_tree)).read())
    for core in state.cores:
        assert core.cur_khz is None or 0 <= core.cur_khz <= 100_000_000


# -- links -----------------------------------------------------------------------------------------


@SETTINGS
@given(texts("8.0 GT/s PCIe", "16.0 GT/s", "6.0 Gbps", "12.0 Gbit", "x4", "Unknown", "<unknown>"), texts("x4", "4"))
@example(f"{HUGE} GT/s PCIe", HUGE)
@example("9" * 400 + ".5 GT/s", "x²")
def test_links_are_total(rate_text: str, width_text: str) -> None:
    rate, width = total(lambda: parse_rate(rate_text)), total(lambda: parse_width(width_text))
    for kind in LinkKind:
        link = Link(kind, rate, rate, width, width, rate, width)
        total(lambda link=link: (link.bandwidth_bytes_per_s, link.describe(), link.finding(), link.slot_limited))
    # Links built by hand (or from damaged JSON) with impossible figures have no bandwidth, no error.
    for bad in (float("inf"), float("nan"), 1e400, -1.0, 1e300):
        assert Link(LinkKind.PCIE, bad, 8.0, 4, 4).bandwidth_bytes_per_s is None


# -- udev and mounts -------------------------------------------------------------------------------

UDEV_SEEDS = tuple(_read(path) for path in sorted((LAB / "run/udev/data").iterdir())[:4])
MOUNT_SEEDS = (_read(LAB / "proc/self/mountinfo"),)


@SETTINGS
@given(texts(*UDEV_SEEDS))
@example("E:" + "A" * 100_000 + "\nS:" + HUGE + "\n")
def test_udev_records_are_total(text: str) -> None:
    info = total(lambda: parse_udev_database(text))
    assert all(link.startswith("/dev/") for link in info.links)


@SETTINGS
@given(texts(*MOUNT_SEEDS, _read(LAB / "proc/swaps")))
@example(f"1 2 {HUGE}:{HUGE} / / rw - ext4 /dev/nvme0n1 rw\n\x00\x00 - \n")
def test_mount_tables_are_total(text: str) -> None:
    assert isinstance(total(lambda: parse_mountinfo(text)), list)
    assert isinstance(total(lambda: parse_proc_mounts(text)), list)


# -- fio -------------------------------------------------------------------------------------------

FIO_SEEDS = tuple(
    _read(path) for path in sorted((FIXTURES / "fio").glob("*.json")) + sorted((FIXTURES / "store").glob("*.json"))
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
FIO_KEYS = (
    "jobs",
    "read",
    "write",
    "io_bytes",
    "total_ios",
    "runtime",
    "bw_bytes",
    "iops",
    "clat_ns",
    "lat_ns",
    "percentile",
    "error",
    "elapsed",
    "timestamp_ms",
    "timestamp",
    "usr_cpu",
    "sys_cpu",
    "job options",
)


@st.composite
def reshaped_fio(draw: st.DrawFn) -> str:
    """Valid JSON, not shaped as fio writes it: a real document with some values replaced by anything."""
    document = json.loads(parse_fio_output(draw(st.sampled_from(FIO_SEEDS[3:]))).final_raw or "{}")

    def reshape(node: Any, depth: int = 0) -> Any:
        if isinstance(node, dict):
            depth += 1
            return {
                key: draw(JSON_VALUES) if key in FIO_KEYS and draw(st.integers(0, 9)) == 0 else reshape(value, depth)
                for key, value in node.items()
            }
        if isinstance(node, list) and depth < 3:
            return [reshape(item, depth + 1) for item in node]
        return node

    text = json.dumps(reshape(document), indent=2)
    if draw(st.booleans()):
        text = text.replace(str(draw(st.integers(0, 9))), draw(st.sampled_from((HUGE, "1e400", "Infinity", "NaN"))), 1)
    return text


FIO_TEXTS = st.one_of(texts(*FIO_SEEDS), reshaped_fio())


def _check_fio_document(document: dict[str, Any]) -> None:
    document_stats(document)
    document_error(document)
    list(progress_series([document, document]))
    metrics_from_fio(document)


@SETTINGS
@given(FIO_TEXTS, st.lists(st.integers(1, 5000), min_size=1, max_size=20))
@example('{\n"jobs": [{"read": 5, "write": [], "error": "x"}, 7, "s"]\n}\n', [3])
@example('{\n"jobs": [{"read": {"io_bytes": ' + HUGE + "}}]\n}\n", [50])
@example("[" * 100_000 + "\n}\n", [4096])
@example('{\n"jobs": [{"read": {"io_bytes": 1e400, "runtime": Infinity, "clat_ns": {"percentile": 5}}}]\n}\n', [7])
def test_fio_stream_decoder_is_total(text: str, pieces: list[int]) -> None:
    def decode() -> list[dict[str, Any]]:
        decoder = FioStreamDecoder()
        documents, position, index = [], 0, 0
        while position < len(text):
            size = pieces[index % len(pieces)]
            documents += [d for d, _ in decoder.feed(text[position : position + size])]
            position, index = position + size, index + 1
        documents += [d for d, _ in decoder.flush()]
        decoder.close()
        return documents

    streamed = total(decode)
    whole = total(lambda: parse_fio_output(text))
    assert streamed == list(whole.documents)
    for document in whole.documents:
        total(lambda document=document: _check_fio_document(document))


@SETTINGS
@given(FIO_TEXTS)
@example('{\n"jobs": [{"read": {"io_bytes": ' + HUGE + '}}], "timestamp_ms": 1e400}\n')
@example('{\n"jobs": [], "timestamp_ms": 1700000000000}\n')
@example('{\n"jobs": [{"elapsed": -5, "error": 1e400}], "timestamp_ms": 1700000000000}\n')
@example("{" * 100_000)
def test_fio_import_is_total(text: str) -> None:
    documents = total(lambda: parse_fio_import(text))
    assert isinstance(documents, list)
    total(lambda: samples_from_fio(documents, 0.0))
    run = total(lambda: read_fio_output(text, source="damaged.json"))
    assert isinstance(run, MdtuiError) or run.metrics is not None


# -- dd --------------------------------------------------------------------------------------------

DD_SEEDS = tuple(_read(path) for path in sorted((FIXTURES / "dd").glob("*.txt")))


@SETTINGS
@given(texts(*DD_SEEDS), st.lists(st.integers(1, 300), min_size=1, max_size=10))
@example(f"\r{HUGE} bytes copied, 1 s, 1 MB/s\r1 bytes copied, 1.2.3 s, 1 MB/s\n", [5])
@example("\r123 bytes copied, 1e400 s, 1 MB/s\r" + "9" * 100_000, [4096])
@example(f"{HUGE}+0 records in\n1+0 records out\n1 byte copied, 5e-05 s, 20 kB/s\n", [1])
def test_dd_parser_is_total(text: str, pieces: list[int]) -> None:
    def stream() -> DdStreamParser:
        parser = DdStreamParser()
        position, index = 0, 0
        while position < len(text):
            size = pieces[index % len(pieces)]
            parser.feed(text[position : position + size])
            position, index = position + size, index + 1
        parser.close()
        return parser

    parser = total(stream)
    whole = total(lambda: parse_dd_stderr(text))
    assert [p.read_bytes for p in parser.progress] == [p.read_bytes for p in whole.progress]
    assert parser.summary == whole.summary
    for progress in whole.progress:
        assert 0 <= progress.read_bytes < 2**64


# -- kernel log ------------------------------------------------------------------------------------

KERNEL_LOG = """[    2.104361] raid6: avx2x4   gen() 23755 MB/s
[    2.240361] raid6: using algorithm avx2x4 gen() 23755 MB/s
[    2.308356] raid6: .... xor() 14113 MB/s, rmw enabled
[    2.308357] raid6: using avx2x2 recovery algorithm
[    2.310001] xor: automatically using best checksumming function   avx
Jan  1 00:00:01 host kernel: [    1.0] xor: using function: avx (28480 MB/sec)
"""


@SETTINGS
@given(texts(KERNEL_LOG))
@example(KERNEL_LOG.replace("23755", "9" * 400 + ".5").replace("14113", HUGE))
@example(KERNEL_LOG.replace("2", "²"))
def test_kernel_log_parser_is_total(text: str) -> None:
    routines = total(lambda: parse_kernel_log(text))
    for speed in (routines.raid6_gen_mb_s, routines.raid6_xor_mb_s, routines.xor_mb_s):
        assert speed is None or 0 <= speed <= 1e9


# -- the bounded readers ---------------------------------------------------------------------------


def test_readers_refuse_what_is_not_a_regular_file_and_never_block(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    zero = tmp_path / "zero"
    zero.symlink_to("/dev/zero")
    (tmp_path / "directory").mkdir()
    (tmp_path / "dangling").symlink_to("nowhere")
    big = tmp_path / "big"
    big.write_bytes(b"1" * (ATTRIBUTE_LIMIT + 1))
    binary = tmp_path / "binary"
    binary.write_bytes(b"md0 : active\0")
    root = SystemRoot(tmp_path)
    started = time.perf_counter()
    # /dev/zero is reached only by a link out of the tree: a captured tree is read beneath itself only.
    for name, why in (("fifo", "a FIFO"), ("zero", "leads out of"), ("directory", "a directory")):
        assert root.read_text(name) is None
        with pytest.raises(RefusedFileError, match=why) as refused:
            root.read_table(name)
        assert refused.value.source == str(tmp_path / name)
    assert root.read_table("dangling") is None and root.read_text("missing") is None
    assert root.read_int("big") is None
    with pytest.raises(RefusedFileError, match="larger than 1 MiB"):
        read_table_file(big, limit=ATTRIBUTE_LIMIT)
    with pytest.raises(RefusedFileError, match="binary data"):
        root.read_table("binary")
    assert read_attribute(binary) == "md0 : active\0"
    with pytest.raises(RefusedFileError, match="a character device"):
        read_table_file(zero)  # the live system's reader, which follows links, still refuses a device
    assert time.perf_counter() - started < 1.0
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # untouched
