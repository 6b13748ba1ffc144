"""The parity routines the kernel chose at boot (raid6 gen/xor, RAID5 xor) and their speeds, from dmesg."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from mdtui.ascii_numbers import parse_float
from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.probe.root import LOG_LIMIT, SystemRoot

# Where a captured root keeps the kernel log: a `dmesg > dmesg.txt` beside sys/ and proc/, or the
# files syslog daemons write.
KERNEL_LOG_FILES = ("/dmesg.txt", "/var/log/dmesg", "/var/log/kern.log")

# An optional "[    1.234567] " timestamp (dmesg) or syslog prefix ("... kernel: [ 1.2] ") before the message.
_PREFIX = r"(?:.*?kernel:\s*)?(?:\[\s*[0-9]+\.[0-9]+\]\s*)?"
_SPEED = r"(?P<speed>[0-9]+(?:\.[0-9]+)?)\s*MB/s(?:ec)?"
# No parity routine runs a petabyte a second: a larger figure is a damaged log, and reads as unknown.
MAX_MB_S = 1e9
# lib/raid6/algos.c since 4.x: "raid6: using algorithm avx2x4 gen() 23755 MB/s"; older kernels:
# "raid6: using algorithm sse2x4 (9580 MB/s)".
_RAID6_CHOSEN = re.compile(_PREFIX + r"raid6: using algorithm (?P<name>\S+)\s+(?:gen\(\)\s+|\()" + _SPEED)
_RAID6_XOR = re.compile(_PREFIX + r"raid6: \.\.\.\. xor\(\)\s+" + _SPEED)
# Kernels built without CONFIG_RAID6_PQ_BENCHMARK pick by CPU features and print no speed.
_RAID6_SKIPPED = re.compile(_PREFIX + r"raid6: skipped pq benchmark and selected (?P<name>\S+)")
_RAID6_CANDIDATE = re.compile(_PREFIX + r"raid6: (?P<name>\S+)\s+gen\(\)\s+" + _SPEED)
_RAID6_RECOVERY = re.compile(_PREFIX + r"raid6: using (?P<name>\S+) recovery algorithm")
# crypto/xor.c: "xor: using function: avx (28480 MB/sec)"; older ones print "28480.000 MB/sec".
_XOR_CHOSEN = re.compile(_PREFIX + r"xor: using function: (?P<name>\S+) \(" + _SPEED + r"\)")
# x86 with AVX short-circuits the xor benchmark: the function is named, its speed never measured.
_XOR_AUTOMATIC = re.compile(_PREFIX + r"xor: automatically using best checksumming function\s+(?P<name>\S+)")


@dataclass(frozen=True)
class ParityRoutines:
    """What the kernel benchmarked and chose. Speeds are MB/s as the kernel printed them; None when not printed.

    ``raid6_*`` serve RAID6 (P and Q syndromes, and RAID6 read-modify-write "xor"); ``xor_*`` is the
    RAID5 (and RAID6 P) checksumming function.
    """

    raid6_algorithm: str | None = None
    raid6_gen_mb_s: float | None = None
    raid6_xor_mb_s: float | None = None
    raid6_recovery: str | None = None
    raid6_benchmarked: bool = False
    raid6_candidates: tuple[tuple[str, float], ...] = ()  # every gen() figure printed, in order
    xor_function: str | None = None
    xor_mb_s: float | None = None

    @property
    def found(self) -> bool:
        return self.raid6_algorithm is not None or self.xor_function is not None

    @property
    def raid6_simd(self) -> bool | None:
        """False for the plain-integer fallbacks ("int64x4"); None when the algorithm is unknown."""
        if self.raid6_algorithm is None:
            return None
        return not self.raid6_algorithm.startswith("int")


def _speed(text: str) -> float | None:
    return parse_float(text, hi=MAX_MB_S)


def parse_kernel_log(text: str) -> ParityRoutines:
    """The last choice of each kind in ``text`` (a module reloaded later benchmarks again)."""
    found = ParityRoutines()
    candidates: list[tuple[str, float]] = []
    for line in text.splitlines():
        if "raid6:" not in line and "xor:" not in line:
            continue
        if match := _RAID6_CHOSEN.match(line):
            found = replace(
                found, raid6_algorithm=match["name"], raid6_gen_mb_s=_speed(match["speed"]), raid6_benchmarked=True
            )
        elif match := _RAID6_XOR.match(line):
            found = replace(found, raid6_xor_mb_s=_speed(match["speed"]))
        elif match := _RAID6_SKIPPED.match(line):
            found = replace(
                found, raid6_algorithm=match["name"], raid6_gen_mb_s=None, raid6_xor_mb_s=None, raid6_benchmarked=False
            )
        elif match := _RAID6_RECOVERY.match(line):
            found = replace(found, raid6_recovery=match["name"])
        elif match := _RAID6_CANDIDATE.match(line):
            if (speed := _speed(match["speed"])) is not None:
                candidates.append((match["name"], speed))
        elif match := _XOR_CHOSEN.match(line):
            found = replace(found, xor_function=match["name"], xor_mb_s=_speed(match["speed"]))
        elif match := _XOR_AUTOMATIC.match(line):
            found = replace(found, xor_function=match["name"], xor_mb_s=None)
    return replace(found, raid6_candidates=tuple(candidates))


def read_kernel_log(root: SystemRoot) -> str | None:
    """The kernel log: `dmesg` on the live system, a saved log file in a captured root; None when unreadable."""
    if root.is_live:
        try:
            result = run_command(["dmesg"], timeout_s=10)
        except MdtuiError:
            result = None
        if result is not None and result.ok and result.stdout:
            return result.stdout
    for name in KERNEL_LOG_FILES:
        text = root.read_text(name, limit=LOG_LIMIT)
        if text:
            return text
    return None


def read_parity_routines(root: SystemRoot) -> ParityRoutines | None:
    text = read_kernel_log(root)
    return parse_kernel_log(text) if text is not None else None
