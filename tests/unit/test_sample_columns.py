"""The column-wise paths of the sampler give exactly what the line-by-line ones give.

/proc/diskstats and /proc/stat are converted field by field for all devices and CPUs at once
(parse_diskstats_columns, device_rates_columns, parse_proc_stat's block path, cpu_percentages_rows);
these tests hold them equal, bit for bit, to parse_diskstats_line, device_rates and cpu_percentages
on generated tables, and check that anything irregular is left to the line-by-line path.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.probe.cpu import CpuTimes, parse_cpu_lines, parse_proc_stat
from mdtui.probe.diskstats import parse_diskstats, parse_diskstats_columns
from mdtui.probe.root import SystemRoot
from mdtui.sample.rates import cpu_percentages, cpu_percentages_columns, device_rates, device_rates_columns
from mdtui.sample.sampler import Sampler

COUNTER = st.integers(min_value=0, max_value=2**64 - 1)
SMALL = st.integers(min_value=0, max_value=10**6)


def table(rows: list[tuple[str, list[int]]]) -> str:
    return "".join(
        f"{8 + i // 16:4d} {(i % 16) * 16:7d} {name} {' '.join(map(str, values))}\n"
        for i, (name, values) in enumerate(rows)
    )


@st.composite
def two_ticks(draw: st.DrawFn) -> tuple[str, str, float]:
    width = draw(st.sampled_from([11, 15, 17]))
    count = draw(st.integers(min_value=1, max_value=12))
    names = [f"sd{chr(97 + i)}" for i in range(count)]
    before = [draw(st.lists(COUNTER, min_size=width, max_size=width)) for _ in names]
    # Mostly growth; sometimes a counter steps back (a wrap or a reset) on some device.
    after = [
        [min(2**64 - 1, value + draw(SMALL)) if draw(st.integers(0, 20)) else draw(COUNTER) for value in row]
        for row in before
    ]
    interval = draw(st.sampled_from([0.25, 1.0, 2.0, 3.7]))
    return table(list(zip(names, before, strict=True))), table(list(zip(names, after, strict=True))), interval


@settings(max_examples=200, deadline=None)
@given(two_ticks())
def test_columns_give_the_rates_of_line_by_line(ticks: tuple[str, str, float]) -> None:
    before_text, after_text, interval = ticks
    before, after = parse_diskstats_columns(before_text), parse_diskstats_columns(after_text, None)
    assert before is not None and after is not None
    by_line_before, by_line_after = parse_diskstats(before_text), parse_diskstats(after_text)
    assert after.names == list(by_line_after)
    rates = device_rates_columns(after, before, interval)
    expected = [device_rates(counters, by_line_before[name], interval) for name, counters in by_line_after.items()]
    if rates is None:
        # Only when some counter the rates use stepped back on some device.
        assert any(
            getattr(by_line_after[name], field) < getattr(by_line_before[name], field)
            for name in by_line_after
            for field in (
                "reads_completed",
                "sectors_read",
                "read_ms",
                "writes_completed",
                "sectors_written",
                "write_ms",
                "io_ms",
                "weighted_io_ms",
            )
        )
    else:
        assert rates == expected  # equal to the last bit: same operations in the same order


def test_irregular_tables_are_left_to_line_by_line() -> None:
    good = "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n"
    assert parse_diskstats_columns(good) is not None
    for bad in (
        good + "   8      16 sdb 1 2 3 4 5 6 7 8 9 10\n",  # a short line
        good + "   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n",  # mixed field counts
        good + "   8      16 sdb 1 2 3 x 5 6 7 8 9 10 11\n",  # a word that is not a number
        good + "   8      16 sdb -1 2 3 4 5 6 7 8 9 10 11\n",  # a sign
        good + "   8      16 sdb ٤ 2 3 4 5 6 7 8 9 10 11\n",  # an Arabic-Indic digit, which int() would take
        good + f"   8      16 sdb {2**64} 2 3 4 5 6 7 8 9 10 11\n",  # past u64
        good + "9999      16 sdb 1 2 3 4 5 6 7 8 9 10 11\n",  # a major past 12 bits
        good + "   8      16 123 1 2 3 4 5 6 7 8 9 10 11\n",  # a number where the name goes
        good + "\n",  # a blank line
        "",
    ):
        assert parse_diskstats_columns(bad) is None, bad
    # The sampler still shows the good line of such a table, line by line.
    assert list(parse_diskstats(good + "   8      16 sdb 1 2 3 x 5 6 7 8 9 10 11\n")) == ["sda"]


def test_a_new_device_or_a_recreated_one_goes_line_by_line() -> None:
    one = parse_diskstats_columns("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n")
    two = parse_diskstats_columns(
        "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11\n"
    )
    moved = parse_diskstats_columns("   8      32 sda 1 2 3 4 5 6 7 8 9 10 11\n")
    assert one is not None and two is not None and moved is not None
    assert device_rates_columns(two, one, 1.0) is None
    assert device_rates_columns(moved, one, 1.0) is None  # same name, new major:minor: a new device


@st.composite
def cpu_ticks(draw: st.DrawFn) -> tuple[str, str]:
    count = draw(st.integers(min_value=1, max_value=8))
    before = [draw(st.lists(st.integers(0, 10**9), min_size=10, max_size=10)) for _ in range(count + 1)]
    after = [
        [value + draw(st.integers(-2, 500)) if value > 2 else value + draw(SMALL) for value in row] for row in before
    ]

    def text(rows: list[list[int]]) -> str:
        labels = ["cpu "] + [f"cpu{i}" for i in range(count)]
        return (
            "".join(f"{label} {' '.join(map(str, row))}\n" for label, row in zip(labels, rows, strict=True))
            + "intr 1 2\n"
        )

    return text(before), text(after)


@settings(max_examples=200, deadline=None)
@given(cpu_ticks())
def test_cpu_lines_give_the_percentages_of_cpu_by_cpu(ticks: tuple[str, str]) -> None:
    before, after = parse_proc_stat(ticks[0]), parse_proc_stat(ticks[1])
    lines_before, lines_after = parse_cpu_lines(ticks[0]), parse_cpu_lines(ticks[1])
    assert lines_before is not None and lines_after is not None
    assert lines_after.numbers is lines_before.numbers  # the same lines: the same tuple, tick after tick
    assert lines_after.times() == after
    columns = cpu_percentages_columns(lines_after, lines_before)
    expected = [cpu_percentages(after.total, before.total)] + [
        cpu_percentages(after.per_cpu[c], before.per_cpu[c]) for c in sorted(after.per_cpu)
    ]
    if columns is None:
        # Only when some field stepped back on some line.
        assert any(now < then for now, then in zip(lines_after.values, lines_before.values, strict=True))
    else:
        assert list(zip(*columns, strict=True)) == expected


def test_proc_stat_block_path_equals_line_by_line() -> None:
    regular = "cpu  10 1 5 100 3 0 1 0 0 0\ncpu0 5 1 2 50 1 0 0 0 0 0\ncpu3 5 0 3 50 2 0 1 0 0 0\nintr 5\n"
    parsed = parse_proc_stat(regular)
    assert parsed.total == CpuTimes(10, 1, 5, 100, 3, 0, 1, 0, 0, 0)
    assert parsed.per_cpu == {0: CpuTimes(5, 1, 2, 50, 1, 0, 0, 0, 0, 0), 3: CpuTimes(5, 0, 3, 50, 2, 0, 1, 0, 0, 0)}
    # An old kernel's eight fields, a bad label and a bad word: each line stands or falls alone.
    assert parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n").per_cpu == {
        0: CpuTimes(1, 2, 3, 4, 5, 6, 7, 8)
    }
    mixed = (
        "cpu  1 2 3 4 5 6 7 8 9 10\ncpuX 1 2 3 4 5 6 7 8 9 10\ncpu1 1 2 3 4 5 6 7 8 9 10\ncpu2 1 2 x 4 5 6 7 8 9 10\n"
    )
    assert sorted(parse_proc_stat(mixed).per_cpu) == [1]
    assert parse_proc_stat("cpu+1 1 2 3 4 5 6 7 8 9 10\n").per_cpu == {}


def test_sampler_rates_match_line_by_line_across_a_device_change(tmp_path: Path) -> None:
    """Regular ticks (columns), a tick with a new device (line by line), and back: rates stay exact."""
    proc = tmp_path / "proc"
    proc.mkdir()
    ticks = [
        [("sda", [10, 0, 80, 1, 5, 0, 40, 1, 0, 2, 2])],
        [("sda", [20, 0, 160, 3, 9, 0, 80, 2, 1, 800, 900])],
        [("sda", [30, 0, 240, 5, 9, 0, 80, 2, 0, 1000, 1200]), ("sdb", [5, 0, 40, 1, 0, 0, 0, 0, 0, 1, 1])],
        [("sda", [40, 0, 320, 7, 9, 0, 80, 2, 0, 1400, 1700]), ("sdb", [9, 0, 72, 2, 0, 0, 0, 0, 0, 2, 2])],
        [("sda", [5, 0, 8, 1, 9, 0, 80, 2, 0, 1500, 1800]), ("sdb", [19, 0, 152, 3, 0, 0, 0, 0, 0, 3, 3])],  # sda reset
    ]
    sampler = Sampler(SystemRoot(tmp_path))
    previous: dict[str, object] = {}
    for tick, rows in enumerate(ticks):
        text = table(rows)
        (proc / "diskstats").write_text(text)
        snapshot = sampler.sample(now=float(tick * 2))
        current = parse_diskstats(text)
        expected = tuple(
            device_rates(c, previous.get(c.name), 2.0 if tick else None)  # type: ignore[arg-type]
            for c in sorted(current.values(), key=lambda c: c.name)
        )
        assert snapshot.devices == expected, tick
        previous = dict(current)


def test_field_positions_name_the_counters_they_say() -> None:
    from mdtui.probe import diskstats as d

    positions = {
        "reads_completed": d.READS, "sectors_read": d.SECTORS_READ, "read_ms": d.READ_MS,
        "writes_completed": d.WRITES, "sectors_written": d.SECTORS_WRITTEN, "write_ms": d.WRITE_MS,
        "in_flight": d.IN_FLIGHT, "io_ms": d.IO_MS, "weighted_io_ms": d.WEIGHTED_MS,
        "sectors_discarded": d.SECTORS_DISCARDED,
    }  # fmt: skip
    for name, position in positions.items():
        assert d.DiskCounters._fields[3 + position] == name
