"""The dashboard's core: who stands out among members, level traffic factors, target views and series."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdtui.model.array import ArrayMember, MdArray, SyncStatus
from mdtui.model.snapshot import CoreState, CpuState, DeviceRates, MdThreadCpu, Snapshot
from mdtui.probe.root import SystemRoot
from mdtui.sample.dashboard import (
    CoreFrequencies,
    WholeDisks,
    build_view,
    frequency_series,
    next_target,
    pick_target,
    traffic_factors,
)
from mdtui.sample.members import MemberLoad, standouts
from mdtui.sample.series import ALL_DISKS, DiskTotals, past, target_series


def rates(name: str, busy: float = 40.0, read_ms: float | None = 2.0, iops: float = 100.0, mb: float = 100.0):
    return DeviceRates(
        name,
        read_bytes_per_s=mb * 1e6,
        write_bytes_per_s=0.0,
        read_iops=iops,
        write_iops=0.0,
        utilisation_percent=busy,
        average_queue=0.2,
        read_await_ms=read_ms,
    )


def member(name: str, role: str = "0", **kwargs: float | None) -> MemberLoad:
    return MemberLoad(name, role, rates(name, **kwargs))  # type: ignore[arg-type]


def array(level: str = "raid0", names: tuple[str, ...] = ("sda", "sdb", "sdc", "sdd"), **kwargs: object) -> MdArray:
    members = tuple(ArrayMember(name, slot, ("in_sync",)) for slot, name in enumerate(names))
    return MdArray("md0", "clean", level, members, raid_disks=len(names), **kwargs)  # type: ignore[arg-type]


def snapshot(
    timestamp: float,
    devices: tuple[DeviceRates, ...],
    arrays: tuple[MdArray, ...] = (),
    cores: tuple[CoreState, ...] = (),
    threads: tuple[MdThreadCpu, ...] = (),
) -> Snapshot:
    return Snapshot(timestamp, 1.0, devices, CpuState(bool(cores), cores, 20.0, 5.0), arrays, threads)


def test_evenly_loaded_members_do_not_stand_out() -> None:
    assert standouts([member(n) for n in ("a", "b", "c", "d")]) == {}


def test_the_saturated_member_stands_out_against_the_median_of_the_others() -> None:
    members = [member("a"), member("b", busy=45.0), member("c", busy=35.0), member("d", busy=100.0)]
    assert standouts(members) == {"d": "busy 100% vs 40% for its peers"}


def test_busy_needs_both_the_floor_and_the_margin() -> None:
    # 45 % against 20 %: a clear margin, but a member under half busy holds nobody back.
    assert standouts([member("a", busy=20.0), member("b", busy=20.0), member("c", busy=45.0)]) == {}
    # 95 % against 80 %: busy, but within the margin of its peers.
    assert standouts([member("a", busy=80.0), member("b", busy=80.0), member("c", busy=95.0)]) == {}


def test_slow_member_by_time_per_request() -> None:
    members = [member("a"), member("b"), member("c", read_ms=5.0)]
    assert standouts(members) == {"c": "slow 5.0 ms per request vs 2.0 ms for its peers"}
    # Twice as slow but only by half a millisecond: jitter on fast devices, not a finding.
    assert standouts([member("a", read_ms=0.4), member("b", read_ms=0.4), member("c", read_ms=0.9)]) == {}
    # A handful of requests gives no stable mean time.
    assert standouts([member("a", iops=2.0), member("b", iops=2.0), member("c", iops=2.0, read_ms=50.0)]) == {}


def test_two_members_are_each_set_against_the_other_and_spares_do_not_count() -> None:
    assert standouts([member("a", busy=100.0), member("b", busy=30.0)]) == {"a": "busy 100% vs 30% for its peers"}
    spare = MemberLoad("s", "spare", rates("s", busy=0.0))
    faulty = MemberLoad("f", "faulty", rates("f", busy=0.0))
    assert standouts([member("a", busy=60.0), spare, faulty]) == {}  # one active member: no peers
    assert standouts([member("a", busy=60.0), member("b", busy=60.0), spare]) == {}


def test_traffic_factors_for_clean_arrays() -> None:
    assert traffic_factors(array("raid0")) == (1.0, 1.0)
    assert traffic_factors(array("linear")) == (1.0, 1.0)
    assert traffic_factors(array("raid1", ("sda", "sdb"))) == (1.0, 2.0)
    assert traffic_factors(array("raid5")) == (1.0, pytest.approx(4 / 3))
    assert traffic_factors(array("raid6")) == (1.0, 2.0)
    assert traffic_factors(array("raid10", layout="far=2")) == (1.0, 2.0)
    assert traffic_factors(array("raid10", ("a", "b", "c", "d", "e", "f"), layout="near=3")) == (1.0, 3.0)
    # A sync or a missing member adds traffic the array never sees: no expectation.
    assert traffic_factors(array("raid6", sync=SyncStatus("resync"))) == (None, None)
    assert traffic_factors(array("raid5", degraded=1)) == (None, None)
    assert traffic_factors(MdArray("md9", "inactive", None)) == (None, None)


def test_build_view_for_an_array() -> None:
    md0 = array("raid6")
    thread = MdThreadCpu(300, "md0_raid6", "md0", "raid6", 9.5)
    other = MdThreadCpu(301, "md1_raid1", "md1", "raid1", 1.0)
    devices = (
        rates("md0", mb=200.0),
        rates("sda"),
        rates("sdb"),
        rates("sdc", busy=100.0),
        rates("sdd"),
        rates("vda", mb=7.0),
    )
    earlier = snapshot(99.0, tuple(rates(d.name, mb=1.0) for d in devices), (md0,))
    view = build_view([earlier, snapshot(100.0, devices, (md0,), threads=(thread, other))], "md0")
    assert view.name == "md0" and view.array is md0
    assert [(m.name, m.role) for m in view.members] == [("sda", "0"), ("sdb", "1"), ("sdc", "2"), ("sdd", "3")]
    assert [m.name for m in view.members if m.standout] == ["sdc"]
    assert view.total is not None and view.total.read_bytes_per_s == 200e6
    assert view.member_read_bytes_per_s == 400e6
    assert (view.expected_read_factor, view.expected_write_factor) == (1.0, 2.0)
    assert view.threads == (thread,)
    assert view.series.seconds_ago == (-1.0, 0.0)
    assert view.series.read_bytes_per_s == (1e6, 200e6)


def test_build_view_for_all_disks_and_an_array_that_went_away() -> None:
    devices = (rates("md0", mb=300.0), rates("sda", mb=150.0), rates("sda1", mb=150.0), rates("sdb", mb=150.0))
    latest = snapshot(10.0, devices)  # md0 is no longer in /proc/mdstat
    view = build_view([latest], "md0", frozenset({"sda", "sdb"}))
    assert view.name == ALL_DISKS and view.array is None
    assert [m.name for m in view.members] == ["sda", "sdb"]
    assert view.total is not None and view.total.read_bytes_per_s == 300e6  # sda1 and md0 not counted again
    assert view.total.utilisation_percent is None  # busy % does not add up across disks
    assert view.series.read_bytes_per_s == (300e6,)
    with pytest.raises(ValueError):
        build_view([], "md0")


def test_a_member_without_counters_and_a_tick_without_rates() -> None:
    md0 = array("raid0", ("sda", "sdb"))
    first = Snapshot(1.0, None, (DeviceRates("md0"), DeviceRates("sda")), CpuState(False), (md0,))
    second = snapshot(2.0, (rates("md0"), rates("sda")), (md0,))
    view = build_view([first, second], "md0")
    assert view.members[1].rates is None  # sdb has no diskstats line: unknown, not zero
    assert view.series.read_bytes_per_s == (None, 100e6)


def test_target_series_keeps_the_window() -> None:
    snapshots = [snapshot(float(t), (rates("sda", mb=float(t)),)) for t in range(0, 300, 10)]
    series = target_series(snapshots, ALL_DISKS, frozenset({"sda"}), window_s=60.0)
    assert series.seconds_ago == (-60.0, -50.0, -40.0, -30.0, -20.0, -10.0, 0.0)
    assert series.read_bytes_per_s[-1] == 290e6
    assert target_series([], "md0").seconds_ago == ()


def test_frequency_series_per_core_and_spread() -> None:
    def cores(count: int, base: float) -> tuple[CoreState, ...]:
        return tuple(CoreState(cpu, freq_mhz=base + cpu * 100, max_freq_mhz=4200.0) for cpu in range(count))

    two = frequency_series([snapshot(1.0, (), cores=cores(2, 1000)), snapshot(2.0, (), cores=cores(2, 2000))])
    assert two.seconds_ago == (-1.0, 0.0)
    assert two.lines == (("cpu0", (1000.0, 2000.0)), ("cpu1", (1100.0, 2100.0)))
    many = frequency_series([snapshot(1.0, (), cores=cores(16, 1000))])
    assert [label for label, _ in many.lines] == ["max", "mean", "min"]
    assert [values[0] for _, values in many.lines] == [2500.0, 1750.0, 1000.0]
    assert frequency_series([snapshot(1.0, ())]).lines == ()  # no cpufreq: nothing to draw, not zeros


def test_kept_core_frequencies_give_the_same_series_and_work_out_each_snapshot_once() -> None:
    def cores(count: int, base: float) -> tuple[CoreState, ...]:
        # cpu3 reports no frequency: left out of the spread, not counted as 0 MHz.
        return tuple(CoreState(cpu, freq_mhz=None if cpu == 3 else base + cpu * 10) for cpu in range(count))

    history = [snapshot(float(t), (), cores=cores(12, 1000.0 + t)) for t in range(10)]
    kept = CoreFrequencies()
    for end in range(1, len(history) + 1):
        assert frequency_series(history[:end], window_s=4.0, cores=kept) == frequency_series(history[:end], 4.0)
    assert len(kept._kept) == 5  # the window's five snapshots; those that left it are forgotten
    worked_out = kept.of(history[-1])
    assert kept.of(history[-1])[0] is worked_out[0]  # not worked out again
    assert worked_out[1] == pytest.approx((1009.0, 1009.0 + 630 / 11, 1009.0 + 110))  # min, mean, max; no cpu3


def test_all_disks_view_takes_its_totals_from_the_kept_ones() -> None:
    history = [snapshot(float(t), (rates("sda", mb=float(t)), rates("sdb", mb=1.0))) for t in range(1, 4)]
    totals = DiskTotals()
    disks = frozenset({"sda", "sdb"})
    view = build_view(history, ALL_DISKS, disks, totals=totals)
    assert view.total is totals.total(history[-1], disks)  # the same object: summed once this tick
    assert view.total is not None and view.total.read_bytes_per_s == 4e6
    assert view.member_read_bytes_per_s == 4e6 and view.member_write_bytes_per_s == 0.0
    assert view.series.read_bytes_per_s == (2e6, 3e6, 4e6)
    assert build_view(history, ALL_DISKS, disks) == view  # the same view without kept totals


def test_kept_target_figures_are_worked_out_once_per_snapshot_and_target() -> None:
    history = [snapshot(float(t), (rates("md0", mb=float(t)), rates("md1", mb=2.0 * t))) for t in range(1, 6)]
    totals = DiskTotals()
    first = target_series(history[:4], "md0", totals=totals)
    kept = totals.row(history[0], "md0", frozenset())
    assert target_series(history, "md0", totals=totals) == target_series(history, "md0")
    assert totals.row(history[0], "md0", frozenset()) is kept  # not looked up again
    assert first.read_bytes_per_s == (1e6, 2e6, 3e6, 4e6)
    # Another target: its own figures, not the kept ones of the first.
    assert target_series(history, "md1", totals=totals).read_bytes_per_s == (2e6, 4e6, 6e6, 8e6, 10e6)
    assert target_series(history, "gone", totals=totals).read_iops == (None,) * 5


def test_targets_pick_and_cycle() -> None:
    md0, md1 = array("raid0"), MdArray("md1", "clean", "raid1")
    inactive = MdArray("md2", "inactive", None)
    latest = snapshot(1.0, (), (md0, md1, inactive))
    assert pick_target(latest, None) == "md0"
    assert pick_target(latest, "/dev/md1") == "md1"
    assert pick_target(latest, "md2") == "md0"  # inactive: nothing to watch
    assert pick_target(snapshot(1.0, ()), "md0") == ALL_DISKS
    assert [next_target(latest, name) for name in ("md0", "md1", ALL_DISKS, "gone")] == ["md1", ALL_DISKS, "md0", "md0"]


def test_whole_disks_leave_out_partitions_and_stacked_devices(tmp_path: Path) -> None:
    for name in ("sda", "md0", "dm-0", "loop0", "loop1", "zram0"):
        (tmp_path / "sys" / "block" / name).mkdir(parents=True)
    (tmp_path / "sys/block/loop0/loop").mkdir()
    (tmp_path / "sys/block/loop0/loop/backing_file").write_text("/srv/disk.img\n")
    disks = WholeDisks(SystemRoot(tmp_path))
    # As the inventory lists them: loop1 has no file behind it, zram0 is RAM (issue 44: watch listed loop1).
    assert disks.names(["sda", "sda1", "md0", "dm-0", "loop0", "loop1", "zram0"]) == {"sda", "loop0"}
    (tmp_path / "sys" / "block" / "sdb").mkdir()
    assert disks.names(["sda", "sda1"]) == {"sda"}  # no new name: /sys/block is not listed again
    assert disks.names(["sda", "sdb"]) == {"sda", "sdb"}  # a new name: listed again
    # The same disks as last time come back as the same set, which kept totals compare by identity.
    assert disks.names(["sdb", "sda", "sda1"]) is disks.names(["sda", "sdb"])
    # A tree without /sys/block: every unstacked device counts.
    assert WholeDisks(SystemRoot(tmp_path / "none")).names(["vda", "md0"]) == {"vda"}


def test_watch_lists_the_disks_the_inventory_lists(tmp_path: Path) -> None:
    """One rule for both: the captured tree's unattached loop1..loop7 are in /proc/diskstats, not disks."""
    from mdtui.probe.inventory import scan

    tree = SystemRoot(Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links")
    listed = {disk.name for disk in scan(tree, privileged=True).disks}
    in_diskstats = [line.split()[2] for line in tree.path("/proc/diskstats").read_text().splitlines()]
    assert "loop1" in in_diskstats and "loop0" in listed
    assert WholeDisks(tree).names(in_diskstats) == listed


def test_a_loop_device_is_a_row_but_not_counted_twice_in_the_total() -> None:
    """A loop device's reads are its file's, which the disk holding the file counts again (issue 44)."""
    latest = snapshot(1.0, (rates("sda", mb=300.0), rates("loop0", mb=300.0), rates("sdb", mb=100.0)))
    disks = frozenset({"sda", "sdb", "loop0"})
    view = build_view([latest], ALL_DISKS, disks)
    assert {m.name for m in view.members} == {"sda", "sdb", "loop0"}
    assert view.total is not None and view.total.read_bytes_per_s == 400e6
    kept = build_view([latest], ALL_DISKS, disks, totals=DiskTotals())
    assert kept.total is not None and kept.total.read_bytes_per_s == 400e6
    assert kept.series.read_bytes_per_s == (400e6,)
    assert past(latest).row(ALL_DISKS, disks)[0] == 400e6
