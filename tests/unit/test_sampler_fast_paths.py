"""The sampler's shortcuts for a busy host (issue 17) give exactly what the reference paths give.

- parse_diskstats_columns takes last tick's numbers for a column printed as last tick printed it;
- device_rates_columns reads such a column as no change, skips the 100 % cap when no device reaches
  it and divides await times in one pass when every device completed requests;
- the sampler shows every line without testing each when all of them had done I/O last tick;
- parse_cpu_lines keeps last tick's numbers for a /proc/stat field printed as before, and
  cpu_percentages_columns turns the fields into busy and iowait percentages a field at a time;
- ArrayReader copies an array with its new sync instead of going through dataclasses.replace, and
  reads sysfs through descriptors kept open for its full re-reads.

Each is held equal, bit for bit, to the line-by-line path (parse_diskstats, device_rates) or to the
function it stands in for, over generated sequences of ticks.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.model.array import ArrayMember, MdArray, SyncStatus
from mdtui.probe.arrays import ArrayReader, _with_sync, read_arrays
from mdtui.probe.cpu import CpufreqReader, parse_cpu_lines, parse_proc_stat
from mdtui.probe.diskstats import (
    IN_FLIGHT,
    SECTORS_DISCARDED,
    DiskCounters,
    parse_diskstats,
    parse_diskstats_columns,
)
from mdtui.probe.root import SystemRoot
from mdtui.sample.rates import (
    cpu_percentages,
    cpu_percentages_columns,
    device_rates,
    device_rates_columns,
)
from mdtui.sample.sampler import Sampler

FIELDS = DiskCounters._fields[3:]


def table(names: list[str], rows: list[list[int]]) -> str:
    return "".join(
        f"{8 + i // 16:4d} {(i % 16) * 16:7d} {name} {' '.join(map(str, values))}\n"
        for i, (name, values) in enumerate(zip(names, rows, strict=True))
    )


@st.composite
def tick_sequences(draw: st.DrawFn) -> tuple[list[str], list[list[list[int]]], float]:
    """A few ticks of one set of devices: some columns stay as they were, some devices stay idle,
    in-flight comes and goes, and now and then a counter steps back (a wrap or a reset)."""
    width = draw(st.sampled_from([11, 15, 17]))
    count = draw(st.integers(min_value=1, max_value=8))
    names = [f"sd{chr(97 + i)}" for i in range(count)]
    idle = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    rows = [[0] * width if quiet else draw(st.lists(st.integers(0, 10**12), min_size=width, max_size=width))
            for quiet in idle]  # fmt: skip
    ticks = [rows]
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        frozen = draw(st.sets(st.integers(0, width - 1)))  # fields no device changes this tick
        step = draw(st.integers(0, 3))  # 0: nothing moves; up to 3: big steps that reach the 100 % cap
        rows = [
            [
                value if field in frozen or quiet else
                draw(st.integers(0, 3)) if field == IN_FLIGHT else
                draw(st.integers(0, value)) if draw(st.integers(0, 30)) == 0 else
                value + draw(st.integers(0, 10 ** (step * 2)))
                for field, value in enumerate(row)
            ]
            for row, quiet in zip(rows, idle, strict=True)
        ]  # fmt: skip
        if draw(st.booleans()):
            # An idle device starts a request: shown for its in-flight alone, then maybe not again.
            index = draw(st.integers(0, count - 1))
            rows[index][IN_FLIGHT] = draw(st.integers(0, 2))
        ticks.append(rows)
    interval = draw(st.sampled_from([0.25, 1.0, 2.0, 3.7]))
    return names, ticks, interval


@settings(max_examples=300, deadline=None)
@given(tick_sequences())
def test_columns_kept_from_last_tick_give_the_line_by_line_rates(
    sequence: tuple[list[str], list[list[list[int]]], float],
) -> None:
    names, ticks, interval = sequence
    previous = parse_diskstats_columns(table(names, ticks[0]))
    by_line_previous = parse_diskstats(table(names, ticks[0]))
    for before, rows in itertools.pairwise(ticks):
        text = table(names, rows)
        current = parse_diskstats_columns(text, previous)
        assert current is not None and previous is not None
        fresh = parse_diskstats_columns(text)  # converted without last tick's help
        assert fresh is not None and current.counters == fresh.counters
        for field, values in current.counters.items():
            if [row[field] for row in rows] == [row[field] for row in before]:
                assert values is previous.counters[field]  # the same words: last tick's list, kept
        by_line = parse_diskstats(text)
        rates = device_rates_columns(current, previous, interval)
        if rates is not None:
            expected = [device_rates(by_line[name], by_line_previous[name], interval) for name in names]
            assert rates == expected  # equal to the last bit
            assert [r.utilisation_percent for r in rates] == [e.utilisation_percent for e in expected]
        previous, by_line_previous = current, by_line


def test_an_unchanged_discard_column_reads_zero_and_a_wrapped_one_none() -> None:
    one = table(["sda", "sdb"], [[10, 0, 80, 5, 10, 0, 80, 5, 0, 10, 10, 7, 0, 64, 3]] * 2)
    two = table(
        ["sda", "sdb"],
        [[20, 0, 90, 6, 20, 0, 90, 6, 0, 20, 20, 7, 0, 64, 3], [20, 0, 90, 6, 20, 0, 90, 6, 1, 20, 20, 8, 0, 8, 3]],
    )
    first, second = parse_diskstats_columns(one), parse_diskstats_columns(two)
    assert first is not None and second is not None
    third = parse_diskstats_columns(two, second)
    assert third is not None and third.counters[SECTORS_DISCARDED] is second.counters[SECTORS_DISCARDED]
    rates = device_rates_columns(second, first, 2.0)
    assert rates is not None
    assert [r.discard_bytes_per_s for r in rates] == [0.0, None]  # sdb's discard count went back
    still = device_rates_columns(third, second, 2.0)
    assert still is not None and [r.discard_bytes_per_s for r in still] == [0.0, 0.0]
    assert [r.read_await_ms for r in still] == [None, None]  # nothing completed: no await


def test_utilisation_is_capped_only_past_100_percent() -> None:
    names = ["sda", "sdb"]
    before = parse_diskstats_columns(table(names, [[1, 0, 8, 1, 1, 0, 8, 1, 0, 0, 0]] * 2))
    under = parse_diskstats_columns(table(names, [[2, 0, 9, 2, 2, 0, 9, 2, 0, io, 5] for io in (999, 1000)]))
    over = parse_diskstats_columns(table(names, [[2, 0, 9, 2, 2, 0, 9, 2, 0, io, 5] for io in (500, 1004)]))
    assert before is not None and under is not None and over is not None
    assert [r.utilisation_percent for r in device_rates_columns(under, before, 1.0) or []] == [99.9, 100.0]
    assert [r.utilisation_percent for r in device_rates_columns(over, before, 1.0) or []] == [50.0, 100.0]


@settings(max_examples=150, deadline=None)
@given(tick_sequences())
def test_the_sampler_shows_the_devices_and_rates_of_the_reference(
    sequence: tuple[list[str], list[list[list[int]]], float],
) -> None:
    """Every tick's snapshot equals device_rates over parse_diskstats, with the idle devices hidden."""
    names, ticks, interval = sequence
    with tempfile.TemporaryDirectory() as directory:
        proc = Path(directory) / "proc"
        proc.mkdir()
        sampler = Sampler(SystemRoot(directory))
        previous: dict[str, DiskCounters] = {}
        for tick, rows in enumerate(ticks):
            text = table(names, rows)
            (proc / "diskstats").write_text(text)
            snapshot = sampler.sample(now=tick * interval)
            current = parse_diskstats(text)
            shown = sorted(
                (c for c in current.values() if c.reads_completed or c.writes_completed or c.in_flight),
                key=lambda c: c.name,
            )
            expected = tuple(device_rates(c, previous.get(c.name), snapshot.interval) for c in shown)
            assert snapshot.devices == expected, tick
            previous = current
        sampler.close()


def test_an_array_with_a_new_sync_is_what_replace_gives() -> None:
    array = MdArray(
        name="md0", state="active", level="raid6", members=(ArrayMember("sda", 0, ("in_sync",)),),
        raid_disks=4, size_bytes=1 << 40, chunk_bytes=512 << 10, layout="left-symmetric", metadata="1.2",
        bitmap="internal", uuid="u", degraded=1, sync=SyncStatus("resync", done_sectors=5, total_sectors=10),
    )  # fmt: skip
    for sync in (None, SyncStatus("check", state="delayed"), SyncStatus("resync", done_sectors=6, total_sectors=10)):
        copied, replaced = _with_sync(array, sync), dataclasses.replace(array, sync=sync)
        assert copied == replaced and copied.sync is sync and type(copied) is MdArray
        assert dataclasses.asdict(copied) == dataclasses.asdict(replaced)
        assert hash(copied) == hash(replaced)
    assert array.sync == SyncStatus("resync", done_sectors=5, total_sectors=10)  # the original is untouched


@st.composite
def cpu_sequences(draw: st.DrawFn) -> list[str]:
    """/proc/stat texts of a few ticks: some fields frozen on every CPU, some stepping back now and then."""
    count = draw(st.integers(min_value=1, max_value=6))
    rows = [draw(st.lists(st.integers(0, 10**9), min_size=10, max_size=10)) for _ in range(count + 1)]
    texts = []
    for _ in range(draw(st.integers(min_value=2, max_value=5))):
        labels = ["cpu "] + [f"cpu{i}" for i in range(count)]
        texts.append(
            "".join(f"{label} {' '.join(map(str, row))}\n" for label, row in zip(labels, rows, strict=True))
            + "intr 1 2\nctxt 5\n"
        )
        frozen = draw(st.sets(st.integers(0, 9)))
        rows = [
            [
                value if field in frozen else
                max(0, value - draw(st.integers(0, 3))) if draw(st.integers(0, 40)) == 0 else
                value + draw(st.integers(0, 10**4))
                for field, value in enumerate(row)
            ]
            for row in rows
        ]  # fmt: skip
    return texts


@settings(max_examples=300, deadline=None)
@given(cpu_sequences())
def test_cpu_fields_kept_from_last_tick_give_the_percentages_of_cpu_by_cpu(texts: list[str]) -> None:
    previous = parse_cpu_lines(texts[0])
    for before_text, text in itertools.pairwise(texts):
        current = parse_cpu_lines(text, previous)
        fresh = parse_cpu_lines(text)
        assert previous is not None and current is not None and fresh is not None
        assert current.values == fresh.values and current.times() == parse_proc_stat(text)
        assert list(current.columns) == [fresh.values[field::10] for field in range(10)]
        columns = cpu_percentages_columns(current, previous)
        # None exactly when some field stepped back on some line: the sampler then goes CPU by CPU.
        stepped_back = any(now < then for now, then in zip(current.values, previous.values, strict=True))
        assert (columns is None) == stepped_back
        if columns is not None:
            now, then = parse_proc_stat(text), parse_proc_stat(before_text)
            expected = [cpu_percentages(now.total, then.total)] + [
                cpu_percentages(times, then.per_cpu[cpu]) for cpu, times in now.per_cpu.items()
            ]
            assert list(zip(*columns, strict=True)) == expected
        previous = current


REAL_LINKS = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


def test_full_rereads_through_kept_files_read_what_read_arrays_reads(tmp_path: Path) -> None:
    """ArrayReader's full re-reads (every rescan period) read sysfs through descriptors kept open: each
    equals a fresh read_arrays after sysfs-only changes, and a descriptor the kernel revoked (an array
    stopped, a member removed) is replaced by what the path holds now."""
    root_dir = tmp_path / "root"
    shutil.copytree(REAL_LINKS, root_dir, symlinks=True)
    root = SystemRoot(root_dir)
    reader = ArrayReader(root)
    text = (root_dir / "proc" / "mdstat").read_text()
    assert reader.read(text, full=True) == read_arrays(root, text)
    md = root_dir / "sys" / "devices" / "virtual" / "block" / "md2" / "md"
    kept = {path for path in reader._files if "/md2/md/" in path}
    assert "/sys/block/md2/md/array_state" in kept and any(path.endswith("/state") for path in kept)
    for name, value in (("array_state", "active-idle"), ("dev-sdd/state", "in_sync,write_mostly"), ("degraded", "1")):
        (md / name).write_text(value + "\n")  # in place, as sysfs changes under an open descriptor
        arrays = reader.read(text, full=True)
        assert arrays == read_arrays(root, text), name
    md2 = next(a for a in arrays if a.name == "md2")
    assert md2.state == "active-idle" and md2.degraded == 1
    # The member's state file is gone and made again (a member removed and added back): the kept
    # descriptor fails as sysfs's does, and the path is opened again for what it holds now.
    state = md / "dev-sdd" / "state"
    file = reader._files["/sys/block/md2/md/dev-sdd/state"]
    assert file.is_open
    os.close(file._fd)  # type: ignore[arg-type]  # revoked: the next pread fails
    state.unlink()
    state.write_text("faulty\n")
    arrays = reader.read(text, full=True)
    assert arrays == read_arrays(root, text)
    assert "faulty" in next(m for a in arrays if a.name == "md2" for m in a.members if m.name == "sdd").states
    # A member removed for good: the next full read lets its kept files go.
    shutil.rmtree(md / "dev-sdd")
    for link in md.glob("rd*"):
        if os.readlink(link).endswith("dev-sdd"):
            link.unlink()
    assert reader.read(text, full=True) == read_arrays(root, text)
    assert not [path for path in reader._files if "/dev-sdd/" in path]
    assert "/sys/block/md2/md/array_state" in reader._files
    reader.close()
    assert not reader._files


def reference_mhz(data: bytes | None) -> float | None:
    """The sampler's reading of a scaling_cur_freq file before it kept each file's last bytes."""
    value = int(data) if data is not None and data.strip().isdigit() and len(data) < 32 else None
    return value / 1000.0 if value is not None and value <= 100_000_000 else None


FREQUENCIES = st.sampled_from(
    ["800000\n", "2400000\n", "2400000\n", "4100000", "+5\n", "1_0\n", "٤\n", "", "999999999999\n", "12 34\n", None]
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(FREQUENCIES, min_size=3, max_size=3), min_size=1, max_size=6))
def test_frequencies_read_each_tick_are_each_files_reading(ticks: list[list[str | None]]) -> None:
    """Three policies, the first shared by CPUs 0 and 1, CPU 3 without one: each tick's MHz are what
    each file holds now, the same bytes as last tick giving the same figure as reading them anew."""
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        cpufreq = base / "sys/devices/system/cpu/cpufreq"
        for number, cpus in enumerate(("0 1", "2", "4")):
            (cpufreq / f"policy{number}").mkdir(parents=True)
            (cpufreq / f"policy{number}" / "affected_cpus").write_text(cpus + "\n")
            (cpufreq / f"policy{number}" / "scaling_cur_freq").write_text("1000000\n")
        stat = base / "proc" / "stat"
        stat.parent.mkdir()
        sampler = Sampler(SystemRoot(base))
        for tick, values in enumerate(ticks):
            stat.write_text("".join(f"cpu{c} {tick} 0 0 {tick} 0 0 0 0 0 0\n" for c in range(5)))
            for number, value in enumerate(values):
                path = cpufreq / f"policy{number}" / "scaling_cur_freq"
                if value is None:
                    path.write_bytes(b"")
                else:
                    with open(path, "r+b") as file:  # in place, as a kept descriptor sees sysfs change
                        file.truncate(0)
                        file.write(value.encode())
            cores = sampler.sample(now=float(tick)).cpu.cores
            # A scan reads the same files the same way (probe.cpu.parse_khz): one reading of a CPU's frequency.
            scanned = CpufreqReader(SystemRoot(base)).current_khz()
            assert {c.cpu: c.freq_mhz for c in cores if c.cpu != 3} == {
                cpu: None if khz is None else khz / 1000.0 for cpu, khz in scanned.items()
            }, tick
            files = [None if v is None else v.encode() for v in values]
            wanted = [reference_mhz(files[0] or b""), reference_mhz(files[0] or b""), reference_mhz(files[1] or b""),
                      None, reference_mhz(files[2] or b"")]  # fmt: skip
            assert [(c.cpu, c.freq_mhz) for c in cores] == list(enumerate(wanted)), tick
        sampler.close()
