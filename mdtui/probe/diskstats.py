"""Parsers for /proc/diskstats and /sys/block/<dev>/stat: cumulative I/O counters per block device."""

from __future__ import annotations

from collections.abc import Container
from typing import NamedTuple

from mdtui.ascii_numbers import U64_MAX, parse_counters, parse_int
from mdtui.probe.root import SystemRoot

DISKSTATS = "/proc/diskstats"

# The kernel counts these sectors in 512-byte units whatever the device's logical sector size.
SECTOR_BYTES = 512

# Device numbers are 12 bits of major and 20 of minor (MINORBITS).
MAX_MAJOR = (1 << 12) - 1
MAX_MINOR = (1 << 20) - 1

# Counters after the three identity fields: 11 before Linux 4.18, 15 with discards, 17 with flushes.
_MIN_COUNTERS = 11
_MAX_COUNTERS = 17


class DiskCounters(NamedTuple):
    """One device's cumulative counters. A NamedTuple because the sampler builds one per device per tick."""

    name: str
    major: int
    minor: int
    reads_completed: int
    reads_merged: int
    sectors_read: int
    read_ms: int
    writes_completed: int
    writes_merged: int
    sectors_written: int
    write_ms: int
    in_flight: int  # a gauge, not a counter
    io_ms: int  # io_ticks: milliseconds with at least one request in flight
    weighted_io_ms: int  # time_in_queue: request-milliseconds, so it grows faster than wall time under load
    discards_completed: int | None = None
    discards_merged: int | None = None
    sectors_discarded: int | None = None
    discard_ms: int | None = None
    flushes_completed: int | None = None
    flush_ms: int | None = None

    @property
    def read_bytes(self) -> int:
        return self.sectors_read * SECTOR_BYTES

    @property
    def write_bytes(self) -> int:
        return self.sectors_written * SECTOR_BYTES


# Padding for lines from kernels that print fewer counters: the fields they lack are None.
_MISSING: tuple[None, ...] = (None,) * len(DiskCounters._fields)
_new_tuple = tuple.__new__


def parse_diskstats_line(line: str) -> DiskCounters | None:
    """One /proc/diskstats line (14, 18 or 20 fields), or None when it is not one.

    Every number must be plain ASCII digits within its range (counters are u64), else None.
    """
    parts = line.split()
    if len(parts) < 3 + _MIN_COUNTERS:
        # Linux 2.6 before 2.6.25 printed only four counters for partitions; nothing current does.
        return None
    numbers = parse_counters(parts[:2] + parts[3 : 3 + _MAX_COUNTERS])
    if numbers is None or numbers[0] > MAX_MAJOR or numbers[1] > MAX_MINOR:
        return None
    values = (parts[2], *numbers)
    # Built as a bare tuple, skipping NamedTuple's generated __new__: this runs per busy device per tick.
    return _new_tuple(DiskCounters, values + _MISSING[len(values) :])


def parse_diskstats_lines(lines: list[str]) -> list[DiskCounters | None]:
    """parse_diskstats_line for many lines at once, with the same results, in a few C calls per tick.

    When every line has the same number of fields and every counter word is valid, the words of all
    lines are checked and converted together (one join, one isdigit, one map(int), one max) instead
    of line by line; a busy host's hundreds of changed lines cost a third as much. Anything else (a
    short line, a bad word, a kernel mixing field counts) falls back to parse_diskstats_line per line.
    """
    if not lines:
        return []
    split = [line.split() for line in lines]
    width = len(split[0])
    if width >= 3 + _MIN_COUNTERS and all(len(parts) == width for parts in split):
        stop = min(width, 3 + _MAX_COUNTERS)
        words = [word for parts in split for word in (parts[0], parts[1], *parts[3:stop])]
        numbers = parse_counters(words)
        if numbers is not None:
            step = stop - 1
            padding = _MISSING[step + 1 :]
            result: list[DiskCounters | None] = []
            for index, parts in enumerate(split):
                values = numbers[index * step : (index + 1) * step]
                if values[0] > MAX_MAJOR or values[1] > MAX_MINOR:
                    result.append(None)
                else:
                    result.append(_new_tuple(DiskCounters, (parts[2], *values, *padding)))
            return result
    return [parse_diskstats_line(line) for line in lines]


# Counter positions (after the three identity fields) that rates need, in DiskCounters' order.
READS, SECTORS_READ, READ_MS = 0, 2, 3
WRITES, SECTORS_WRITTEN, WRITE_MS = 4, 6, 7
IN_FLIGHT, IO_MS, WEIGHTED_MS = 8, 9, 10
SECTORS_DISCARDED = 13
RATE_COUNTERS = (READS, SECTORS_READ, READ_MS, WRITES, SECTORS_WRITTEN, WRITE_MS, IN_FLIGHT, IO_MS, WEIGHTED_MS)


class DiskstatsColumns(NamedTuple):
    """A whole /proc/diskstats text column by column: one list per field instead of one object per line.

    ``names``, ``majors`` and ``minors`` are the identity words as printed (compared as text between
    ticks: equal lists mean the same devices in the same order); ``counters`` holds the converted
    counters that rates need (RATE_COUNTERS, plus SECTORS_DISCARDED when the kernel prints it), each
    a list in line order; the other counters are not converted.
    """

    width: int  # words per line: 14, 18 or 20
    names: list[str]
    majors: list[str]
    minors: list[str]
    counters: dict[int, list[int]]
    # Each converted counter's words as printed: a column printed as last tick printed it (an idle
    # field: discards, flushes, in-flight) takes last tick's numbers, the same list, unconverted.
    words: dict[int, list[str]] | None = None

    def same_devices(self, other: DiskstatsColumns) -> bool:
        """The same devices (name and major:minor) on the same lines with the same fields as other."""
        return (
            self.width == other.width
            and self.names == other.names
            and self.majors == other.majors
            and self.minors == other.minors
        )


def parse_diskstats_columns(text: str, previous: DiskstatsColumns | None = None) -> DiskstatsColumns | None:
    """/proc/diskstats as columns, in a few C calls per field; None when the text is not regular.

    Regular: ASCII, every line with the same number of fields (14, 18 or 20), every name with a
    non-digit, major and minor in range, and the counters rates use (RATE_COUNTERS, SECTORS_DISCARDED)
    plain numbers within u64. Anything else (a short or long line, a bad word, a kernel mixing field
    counts, a blank line) returns None and the caller parses line by line, where a bad line costs only
    that device. The other counters (merges, discard and flush counts and times) are not converted
    and so not checked here: nothing is computed from them on this path. A host's hundreds of busy
    devices cost a split and a ``map(int)`` per field instead of a Python loop per line. The identity
    columns are checked only when they differ from ``previous`` (last tick's table), which passed, and
    a counter column whose words are those of ``previous`` takes its numbers (the same list object,
    which device_rates_columns reads as no change) instead of converting them again.
    """
    if not text.isascii():  # no Unicode digits, which int() would accept
        return None
    words = text.split()
    lines = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    if not lines or len(words) % lines:
        return None
    width = len(words) // lines
    if width not in (3 + _MIN_COUNTERS, 3 + 15, 3 + _MAX_COUNTERS):
        return None
    names, majors, minors = words[2::width], words[0::width], words[1::width]
    if previous is not None and previous.names == names:
        names = previous.names  # the same list object tells later ticks nothing moved
    # A line with a word too few and a later one with a word too many put a number into the name
    # column (refused here) or a name into a number column (int() refuses it below).
    elif any(map(str.isdigit, names)):
        return None
    if previous is None or previous.majors != majors or previous.minors != minors:
        try:
            if not (0 <= min(map(int, majors)) <= max(map(int, majors)) <= MAX_MAJOR):
                return None
            if not (0 <= min(map(int, minors)) <= max(map(int, minors)) <= MAX_MINOR):
                return None
        except ValueError:
            return None
    wanted = (*RATE_COUNTERS, SECTORS_DISCARDED) if width > 3 + _MIN_COUNTERS else RATE_COUNTERS
    counters: dict[int, list[int]] = {}
    columns: dict[int, list[str]] = {}
    known_words, known_counters = (previous.words or {}, previous.counters) if previous is not None else ({}, {})
    # int() also takes a sign and underscores, which no kernel prints: a negative is refused, "+5"
    # and "1_0" read as the numbers they spell. Without a "-" anywhere (device-mapper names have one)
    # no value can be negative, and the check is skipped.
    signed = "-" in text
    try:
        for field in wanted:
            column = words[3 + field :: width]
            columns[field] = column
            if known_words.get(field) == column:
                # The same words give the same numbers, which passed these checks last tick.
                counters[field] = known_counters[field]
                continue
            values = list(map(int, column))
            if max(values) > U64_MAX or (signed and min(values) < 0):
                return None
            counters[field] = values
    except ValueError:  # a word that is not a number, or one of more than 4300 digits
        return None
    return DiskstatsColumns(width, names, majors, minors, counters, columns)


def parse_diskstats(text: str, names: Container[str] | None = None) -> dict[str, DiskCounters]:
    """Every device in a /proc/diskstats text, or only those in names (others are not even converted)."""
    devices: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        if names is not None:
            # The name is the third field; skipping unwanted lines before int() keeps big hosts cheap.
            fields = line.split(None, 3)
            if len(fields) < 3 or fields[2] not in names:
                continue
        counters = parse_diskstats_line(line)
        if counters is not None:
            devices[counters.name] = counters
    return devices


def parse_block_stat(name: str, text: str, major: int = 0, minor: int = 0) -> DiskCounters | None:
    """A /sys/block/<dev>/stat text: the same counters as diskstats without the identity fields."""
    parts = text.split()
    if len(parts) < _MIN_COUNTERS:
        return None
    numbers = parse_counters(parts[:_MAX_COUNTERS])
    if numbers is None:
        return None
    values = (name, major, minor, *numbers)
    return _new_tuple(DiskCounters, values + _MISSING[len(values) :])


def read_block_stat(root: SystemRoot, name: str) -> DiskCounters | None:
    """One whole device's counters from /sys/block/<name>/stat, with major:minor from its dev file."""
    text = root.read_text(f"/sys/block/{name}/stat")
    if text is None:
        return None
    major = minor = 0
    dev = root.read_text(f"/sys/block/{name}/dev")
    if dev and ":" in dev:
        major_text, _, minor_text = dev.partition(":")
        major_number, minor_number = parse_int(major_text, hi=MAX_MAJOR), parse_int(minor_text, hi=MAX_MINOR)
        if major_number is not None and minor_number is not None:
            major, minor = major_number, minor_number
    return parse_block_stat(name, text, major, minor)


def read_block_stats(root: SystemRoot, names: Container[str] | None = None) -> dict[str, DiskCounters]:
    """Counters for whole devices from /sys/block/*/stat; slower than diskstats, one file per device."""
    devices: dict[str, DiskCounters] = {}
    for name in root.listdir("/sys/block"):
        if names is not None and name not in names:
            continue
        counters = read_block_stat(root, name)
        if counters is not None:
            devices[name] = counters
    return devices
