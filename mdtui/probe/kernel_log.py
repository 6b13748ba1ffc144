"""The parity routines the kernel chose at boot (raid6 gen/xor, RAID5 xor) and their speeds, from dmesg."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from mdtui.ascii_numbers import parse_float
from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.probe.root import LOG_LIMIT, SystemRoot

# Where a captured root keeps the kernel log: a `dmesg > dmesg.txt` beside sys/ and proc/, or the
# files syslog daemons write.
KERNEL_LOG_FILES = ("/dmesg.txt", "/var/log/dmesg", "/var/log/kern.log")

# What comes before the message on a kernel log line, in the formats mdtui reads: dmesg's "[    1.234567] ",
# dmesg --time-format=iso's "2026-11-26T22:18:58,123456+00:00 ", syslog's "May  3 10:00:01 host kernel: "
# (with the kernel's own "[ 1.2] " after it when it prints one) and journalctl -o short-unix's
# "1764000000.123456 host kernel: ". A message's own line breaks (a file name in a segfault line may hold
# them) come out as indented lines, which begin no message; only a line that starts at its first column
# with no prefix (dmesg -t, a quoted line) is taken as a bare message.
_LINE = re.compile(
    r"(?P<stamp>\[\s*[0-9]+\.[0-9]+\]"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}[,.][0-9]+(?:[+-][0-9]{2}:?[0-9]{2}|Z)?"
    r"|[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} \S+ kernel:(?: \[\s*[0-9]+\.[0-9]+\])?"
    r"|[0-9]+\.[0-9]+ \S+ kernel:"
    r") ?(?P<message>.*)"
)


def kernel_messages(text: str) -> Iterator[tuple[str | None, str]]:
    """(prefix, message) for each line of a kernel log that begins a message (see _LINE); a matcher then
    takes a message only from its start, so text a user put inside a message (a program's name, a file
    name) is never read as one of md's or the kernel's own lines."""
    for line in text.splitlines():
        if not line or line[0].isspace():
            continue  # the rest of a message with line breaks, indented by dmesg and journalctl
        found = _LINE.fullmatch(line)
        if found is not None:
            yield found["stamp"], found["message"]
        else:
            yield None, line
_SPEED = r"(?P<speed>[0-9]+(?:\.[0-9]+)?)\s*MB/s(?:ec)?"
# No parity routine runs a petabyte a second: a larger figure is a damaged log, and reads as unknown.
MAX_MB_S = 1e9
# lib/raid6/algos.c since 4.x: "raid6: using algorithm avx2x4 gen() 23755 MB/s"; older kernels:
# "raid6: using algorithm sse2x4 (9580 MB/s)".
_RAID6_CHOSEN = re.compile(r"raid6: using algorithm (?P<name>\S+)\s+(?:gen\(\)\s+|\()" + _SPEED)
_RAID6_XOR = re.compile(r"raid6: \.\.\.\. xor\(\)\s+" + _SPEED)
# Kernels built without CONFIG_RAID6_PQ_BENCHMARK pick by CPU features and print no speed.
_RAID6_SKIPPED = re.compile(r"raid6: skipped pq benchmark and selected (?P<name>\S+)")
_RAID6_CANDIDATE = re.compile(r"raid6: (?P<name>\S+)\s+gen\(\)\s+" + _SPEED)
_RAID6_RECOVERY = re.compile(r"raid6: using (?P<name>\S+) recovery algorithm")
# crypto/xor.c: "xor: using function: avx (28480 MB/sec)"; older ones print "28480.000 MB/sec".
_XOR_CHOSEN = re.compile(r"xor: using function: (?P<name>\S+) \(" + _SPEED + r"\)")
# x86 with AVX short-circuits the xor benchmark: the function is named, its speed never measured.
_XOR_AUTOMATIC = re.compile(r"xor: automatically using best checksumming function\s+(?P<name>\S+)")


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
    for _, line in kernel_messages(text):
        if not line.startswith(("raid6:", "xor:")):
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
