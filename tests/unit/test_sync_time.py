"""The sync-time model (plan/sync_time.py): how long md resyncs, rebuilds, checks and reshapes, and what bounds it."""

from __future__ import annotations

import pytest

from mdtui.errors import PlanError
from mdtui.format import about
from mdtui.plan.figures import GIVEN, LINK, MEASURED, MemberFigures
from mdtui.plan.levels import RAID0, RAID1, RAID5, RAID6, RAID10
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.sync_inputs import GeometryChange, SyncLimits, SyncMember
from mdtui.plan.sync_time import (
    CHECK,
    RECOVER,
    REPAIR,
    RESHAPE,
    RESYNC,
    create_sync_action,
    create_sync_time,
    reshape_time,
    sync_span_bytes,
    sync_time,
)
from mdtui.plan.sync_words import bound_now, remaining_seconds

MB = 1e6
MIB = 1 << 20
GIB = 1 << 30
# Loose limits: md's cap never binds unless a test lowers it.
OPEN = SyncLimits(system_min_kib_s=1000, system_max_kib_s=10_000_000)


def member(name: str, read_mb: float | None = 100, write_mb: float | None = 100, basis: str = MEASURED) -> SyncMember:
    figures = MemberFigures(
        seq_read_bytes_per_s=None if read_mb is None else read_mb * MB,
        seq_write_bytes_per_s=None if write_mb is None else write_mb * MB,
        basis=basis,
    )
    return SyncMember(name, figures)


def members(count: int, **kw: float) -> list[SyncMember]:
    return [member(f"d{i}", **kw) for i in range(count)]  # type: ignore[arg-type]


def test_a_raid5_rebuild_reads_the_survivors_and_writes_the_new_member_at_the_slowest_pace() -> None:
    survivors = [member("a", 200), member("b", 150), member("c", 300)]
    new = member("new", write_mb=120)
    answer = sync_time(RECOVER, RAID5, survivors, targets=[new], component_bytes=12 * GIB, limits=OPEN)
    # The new member writes its whole data area at 120 MB/s; every survivor reads faster.
    assert answer.predicted_seconds == pytest.approx(12 * GIB / (120 * MB))
    assert answer.bound == "members: new (writes 120 MB/s)"
    assert answer.rate_bytes_per_s == pytest.approx(120 * MB)
    assert answer.span_bytes == answer.work_bytes == 12 * GIB
    assert answer.basis == MEASURED


def test_the_slowest_survivor_binds_when_it_reads_slower_than_the_new_member_writes() -> None:
    answer = sync_time(
        RECOVER, RAID6, [member("a", 80), *members(4)], targets=[member("new")], component_bytes=GIB, limits=OPEN
    )
    assert answer.bound == "members: a (reads 80 MB/s)"
    assert answer.predicted_seconds == pytest.approx(GIB / (80 * MB))


def test_speed_limit_max_caps_a_fast_rebuild_and_is_named() -> None:
    """md sleeps whenever the rate passes the maximum: NVMe members at 3 GB/s rebuild at 200,000 KiB/s."""
    limits = SyncLimits()  # md's defaults: 1,000 and 200,000 KiB/s
    answer = sync_time(
        RECOVER,
        RAID5,
        members(3, read_mb=3000, write_mb=3000),
        targets=[member("n", 3000, 3000)],
        component_bytes=100 * GIB,
        limits=limits,
    )
    assert answer.bound == "speed_limit_max (200,000 KiB/s)"
    assert answer.rate_bytes_per_s == 200_000 * 1024
    assert answer.predicted_seconds == pytest.approx(100 * GIB / (200_000 * 1024))
    # What a boost of md's limits could reach: the members' own pace.
    assert answer.free_rate_bytes_per_s == pytest.approx(3000 * MB)


def test_the_arrays_own_maximum_overrides_the_systems() -> None:
    limits = SyncLimits(array_max_kib_s=50_000, array="md4")
    answer = sync_time(CHECK, RAID1, members(2), component_bytes=GIB, limits=limits)
    assert answer.bound == "md4's sync_speed_max (50,000 KiB/s)"
    assert answer.predicted_seconds == pytest.approx(GIB / (50_000 * 1024))


def test_a_minimum_above_the_maximum_is_the_cap_as_md_checks_the_minimum_first() -> None:
    """md_do_sync sleeps only when the rate is above the minimum and above the maximum: a boost's minimum lifts
    the cap even where the maximum stays low."""
    limits = SyncLimits(system_max_kib_s=10_000, array_min_kib_s=80_000, array="md0")
    answer = sync_time(RECOVER, RAID5, members(3), targets=[member("n")], component_bytes=GIB, limits=limits)
    assert answer.rate_bytes_per_s == 80_000 * 1024
    assert answer.bound.startswith("md0's sync_speed_min (80,000 KiB/s), above speed_limit_max")


def test_under_competing_io_md_keeps_only_the_minimum() -> None:
    limits = SyncLimits(system_min_kib_s=1000)
    answer = sync_time(RECOVER, RAID5, members(3), targets=[member("n")], component_bytes=GIB, limits=limits)
    assert answer.under_load_seconds == pytest.approx(GIB / (1000 * 1024))
    assert answer.under_load_bound == "speed_limit_min (1,000 KiB/s): md yields to other I/O above it"
    assert answer.under_load_seconds > 50 * answer.predicted_seconds  # type: ignore[operator]


def test_under_load_a_member_slower_than_the_minimum_still_sets_the_pace() -> None:
    limits = SyncLimits(system_min_kib_s=500_000)
    answer = sync_time(CHECK, RAID5, members(3, read_mb=50), component_bytes=GIB, limits=limits)
    assert answer.under_load_seconds == answer.predicted_seconds
    assert answer.under_load_bound == answer.bound


def test_a_minimum_of_zero_says_md_may_stall_it() -> None:
    answer = sync_time(CHECK, RAID1, members(2), component_bytes=GIB, limits=SyncLimits(system_min_kib_s=0))
    assert answer.under_load_seconds is None
    assert "may stall" in answer.under_load_bound


def test_a_bitmap_resyncs_only_the_dirty_share() -> None:
    full = sync_time(RECOVER, RAID1, members(1), targets=[member("back")], component_bytes=4 * GIB, limits=OPEN)
    readd = sync_time(
        RECOVER, RAID1, members(1), targets=[member("back")], component_bytes=4 * GIB, limits=OPEN, dirty_fraction=0.05
    )
    assert readd.predicted_seconds == pytest.approx(0.05 * full.predicted_seconds)  # type: ignore[operator]
    assert readd.span_bytes == full.span_bytes and readd.work_bytes == pytest.approx(0.05 * 4 * GIB, abs=1)
    assert any("bitmap marks 5% dirty" in note for note in readd.notes)


def test_raid1_resync_reads_one_mirror_and_writes_the_others() -> None:
    """raid1.c: a resync reads the first in-sync mirror and writes the rest; a check reads them all."""
    mirrors = [member("first", read_mb=50, write_mb=500), member("second", read_mb=500, write_mb=80)]
    resync = sync_time(RESYNC, RAID1, mirrors, component_bytes=GIB, limits=OPEN)
    assert resync.bound == "members: first (reads 50 MB/s)"
    swapped = sync_time(RESYNC, RAID1, mirrors[::-1], component_bytes=GIB, limits=OPEN)
    # Now the fast reader reads and the slow reader only writes (at 500 MB/s): the slow writer is idle.
    assert swapped.bound == "members: second (reads 500 MB/s)"
    assert swapped.predicted_seconds == pytest.approx(GIB / (500 * MB))
    check = sync_time(CHECK, RAID1, mirrors, component_bytes=GIB, limits=OPEN)
    assert check.bound == "members: first (reads 50 MB/s)"


def test_raid10_resync_counts_array_bytes_and_each_member_reads_its_copies() -> None:
    """md counts a raid10 resync or check over the array: 4 members n2 of 1 GiB run 2 GiB of progress, and the
    cap applies to that count, so each member reads at half the rate md reports."""
    four = members(4, read_mb=100)
    check = sync_time(CHECK, RAID10, four, component_bytes=GIB, limits=OPEN, layout="n2")
    assert check.span_bytes == 2 * GIB
    assert check.rate_bytes_per_s == pytest.approx(200 * MB)  # each member reads 100 MB/s: 2 × in array bytes
    assert check.predicted_seconds == pytest.approx(GIB / (100 * MB))
    capped = sync_time(
        CHECK, RAID10, four, component_bytes=GIB, limits=SyncLimits(system_max_kib_s=100_000), layout="n2"
    )
    assert capped.predicted_seconds == pytest.approx(2 * GIB / (100_000 * 1024))
    rebuild = sync_time(
        RECOVER, RAID10, four[:3], targets=[member("new")], component_bytes=GIB, limits=OPEN, layout="n2"
    )
    assert rebuild.span_bytes == GIB


def test_a_member_without_figures_leaves_the_time_unknown_and_says_which_and_what_md_alone_allows() -> None:
    answer = sync_time(
        RECOVER,
        RAID5,
        [*members(2), SyncMember("sdz", None)],
        targets=[member("n", write_mb=None)],
        component_bytes=GIB,
        limits=SyncLimits(),
    )
    assert answer.predicted_seconds is None
    assert "sdz has no sequential read figure" in answer.bound
    assert "n has no sequential write figure" in answer.bound
    assert any("no sooner than about" in note for note in answer.notes)


def test_link_figures_carry_their_basis() -> None:
    answer = sync_time(
        CHECK, RAID1, [member("a", basis=LINK), member("b", basis=GIVEN)], component_bytes=GIB, limits=OPEN
    )
    assert answer.basis == "link, given"


def test_the_parity_routine_caps_a_parity_sync_where_it_is_known() -> None:
    ceilings = MdCeilings(parity_bytes_per_s=600 * MB)
    answer = sync_time(RESYNC, RAID6, members(6, read_mb=1000), component_bytes=GIB, limits=OPEN, ceilings=ceilings)
    # 4 data members share the routine: 150 MB/s of progress per member.
    assert answer.rate_bytes_per_s == pytest.approx(150 * MB)
    assert answer.bound == "parity CPU (the kernel's xor/raid6 speed)"


def test_levels_without_redundancy_and_wrong_requests_are_refused_in_one_line() -> None:
    with pytest.raises(PlanError, match="raid0 has no redundancy"):
        sync_time(CHECK, RAID0, members(2), component_bytes=GIB, limits=OPEN)
    with pytest.raises(PlanError, match="needs the member it writes to"):
        sync_time(RECOVER, RAID5, members(2), component_bytes=GIB, limits=OPEN)
    with pytest.raises(PlanError, match="reshape_time"):
        sync_time(RESHAPE, RAID5, members(3), component_bytes=GIB, limits=OPEN)
    with pytest.raises(PlanError, match="dirty share"):
        sync_time(RESYNC, RAID1, members(2), component_bytes=GIB, limits=OPEN, dirty_fraction=1.5)


def test_create_starts_a_rebuild_for_raid5_a_resync_for_the_others_and_nothing_when_told_not_to() -> None:
    assert create_sync_action(RAID5) == RECOVER
    assert create_sync_action(RAID5, force=True) == RESYNC
    assert create_sync_action(RAID6) == RESYNC
    assert create_sync_action(RAID1) == RESYNC
    assert create_sync_action(RAID10) == RESYNC
    assert create_sync_action(RAID0) is None
    assert create_sync_action(RAID5, assume_clean=True) is None
    assert create_sync_action(RAID1, build=True) is None
    initial = create_sync_time(RAID5, [*members(3), member("last", write_mb=60)], component_bytes=GIB, limits=OPEN)
    assert initial is not None and initial.action == RECOVER and initial.bound == "members: last (writes 60 MB/s)"
    assert create_sync_time(RAID0, members(2), component_bytes=GIB, limits=OPEN) is None


def test_a_raid5_grow_from_3_to_4_reads_the_old_data_once_and_writes_every_new_stripe() -> None:
    """Each old member reads its data share (2/3 of its area) and writes its whole area: 1 2/3 of the span at
    one shared 100 MB/s throttle; the new member only writes."""
    old = members(3)
    new = member("d3")
    change = GeometryChange(RAID5, 3, RAID5, 4, component_bytes=GIB)
    answer = reshape_time(change, old, [*old, new], limits=OPEN)
    assert answer.action == RESHAPE
    assert answer.span_bytes == GIB
    per_byte = (2 / 3) / (100 * MB) + 1 / (100 * MB)
    assert answer.predicted_seconds == pytest.approx(GIB * per_byte)
    assert answer.bound == "members: d0 (reads 100 MB/s and writes 100 MB/s)"
    assert any("checkpoint" in note for note in answer.notes)


def test_a_reshape_that_adds_no_space_says_the_backup_file_carries_the_data_again() -> None:
    old = members(4)
    change = GeometryChange(RAID5, 4, RAID6, 5, component_bytes=GIB, backup_file=True)
    answer = reshape_time(change, old, [*old, member("d4")], limits=OPEN)
    # raid5 of 4 holds 3 members' data, raid6 of 5 too: each old member reads 3/4 and writes all of it.
    assert answer.predicted_seconds == pytest.approx(GIB * (0.75 + 1) / (100 * MB))
    assert any("backup file" in note for note in answer.notes)


def test_a_reshape_is_capped_by_mds_limits_too() -> None:
    old = members(3, read_mb=2000, write_mb=2000)
    change = GeometryChange(RAID5, 3, RAID5, 4, component_bytes=GIB)
    answer = reshape_time(change, old, [*old, member("x", 2000, 2000)], limits=SyncLimits())
    assert answer.bound == "speed_limit_max (200,000 KiB/s)"


def test_a_raid10_reshape_counts_the_data_and_writes_only_its_copies() -> None:
    old = members(4)
    change = GeometryChange(RAID10, 4, RAID10, 6, component_bytes=GIB, old_layout="n2", new_layout="n2")
    answer = reshape_time(change, old, [*old, member("d4"), member("d5")], limits=OPEN)
    assert answer.span_bytes == 2 * GIB
    # Per progress byte each old member reads 1/4 and writes 2/6.
    assert answer.predicted_seconds == pytest.approx(2 * GIB * (1 / 4 + 1 / 3) / (100 * MB))


def test_reshapes_md_does_not_time_this_way_are_refused() -> None:
    with pytest.raises(PlanError, match="rebuild of each new member"):
        reshape_time(GeometryChange(RAID1, 2, RAID1, 3, component_bytes=GIB), members(2), members(3), limits=OPEN)
    with pytest.raises(PlanError, match="names 2 source"):
        reshape_time(GeometryChange(RAID5, 3, RAID5, 4, component_bytes=GIB), members(2), members(4), limits=OPEN)


def test_the_span_follows_mds_progress_counter() -> None:
    assert sync_span_bytes(RESYNC, RAID5, 4, GIB) == GIB
    assert sync_span_bytes(CHECK, RAID10, 4, GIB, "n2") == 2 * GIB
    assert sync_span_bytes(CHECK, RAID10, 4, GIB, "n2", array_bytes=2 * GIB - 512) == 2 * GIB - 512
    assert sync_span_bytes(RECOVER, RAID10, 4, GIB, "n2") == GIB


def test_json_carries_predicted_seconds_and_the_bound() -> None:
    answer = sync_time(REPAIR, RAID6, members(5), component_bytes=GIB, limits=SyncLimits())
    document = answer.as_json()
    assert document["predicted_seconds"] == pytest.approx(GIB / (100 * MB), rel=0.01)
    assert document["bound"] == "members: d0 (reads 100 MB/s)"
    assert document["under_load"] == {
        "predicted_seconds": pytest.approx(GIB / 1024_000, rel=0.01),
        "bound": "speed_limit_min (1,000 KiB/s): md yields to other I/O above it",
    }


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0.2, "about 1 s"),
        (12.4, "about 12 s"),
        (95, "about 95 s"),
        (2400, "about 40 min"),
        (9000, "about 2.5 h"),
        (53.7 * 3600, "about 2.2 d"),
        (36 * 3600, "about 36 h"),
    ],
)
def test_times_in_words_have_two_significant_figures(seconds: float, words: str) -> None:
    assert about(seconds) == words


def test_what_bounds_a_running_pass_now() -> None:
    limits = SyncLimits(system_min_kib_s=1000, system_max_kib_s=200_000)
    predicted = sync_time(RECOVER, RAID5, members(3, read_mb=100), targets=[member("new", write_mb=100)],
                          component_bytes=GIB, limits=OPEN)  # fmt: skip
    assert bound_now(None, limits, predicted) == "not known yet (md reports no speed)"
    assert bound_now(199_000 * 1024, limits, predicted) == "speed_limit_max (200,000 KiB/s)"
    assert bound_now(95e6, limits, predicted) == "members: d0 (reads 100 MB/s)"
    assert bound_now(1.2e6, limits, predicted, foreground_io=True).startswith("foreground I/O: md yields to it")
    assert bound_now(1.2e6, limits, predicted).startswith("near speed_limit_min (1,000 KiB/s)")
    assert bound_now(1.2e6, limits, predicted, foreground_io=False).startswith("below what the members allow (1% of")
    assert bound_now(30e6, limits, None) == "not known: the members' figures are missing"
    assert remaining_seconds(predicted, 0.75) == pytest.approx(0.25 * predicted.predicted_seconds)  # type: ignore[operator]
    assert remaining_seconds(None, 0.5) is None
