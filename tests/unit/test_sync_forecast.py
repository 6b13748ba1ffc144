"""A pass over a real array predicted (bench/sync_forecast): md's limits read from sysfs/procfs
(tune/read.read_sync_limits), the members' stored figures or links, the captured raid6 of the real-links tree."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mdtui.bench.sync_forecast import (
    array_level,
    create_time,
    pass_time,
    rebuild_if_one_fails,
    running_pass_time,
    scrub_time,
)
from mdtui.execute.presets import member_matrix
from mdtui.plan import CreateRequest, plan_create
from mdtui.plan.figures import LINK, MEASURED
from mdtui.plan.sync_inputs import BASIS_DEFAULT
from mdtui.plan.sync_time import CHECK, RECOVER
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunRecord, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore
from mdtui.tune.read import read_sync_limits

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
MD0 = "sys/devices/virtual/block/md0/md"  # raid6 of nvme0n1..nvme3n1, resyncing, sync_speed_max "2000 (system)"
SEQ = (
    Metrics(read_bw_bytes_per_s=500e6),
    Metrics(write_bw_bytes_per_s=400e6),
    Metrics(read_iops=181e3),
    Metrics(write_iops=170e3),
    Metrics(read_lat_mean_ns=58e3),
    Metrics(write_lat_mean_ns=25e3),
)


def member_runs(db: Path, devices: list[str], figures: tuple[Metrics, ...]) -> list[RunRecord]:
    """Each device's member-matrix steps stored as bench stores them, a day old."""
    started = datetime.now(UTC) - timedelta(days=1)
    with ResultsStore(db) as store:
        for device in devices:
            for step, metrics in zip(member_matrix(f"/dev/{device}"), figures, strict=True):
                setup = RunSetup(preset="member-matrix", params={"step": step.label}, target=f"/dev/{device}")
                store.add_run(setup, metrics=metrics, status=RunStatus.COMPLETE, started_at=started, ended_at=started)
        return store.list_runs()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    copy = tmp_path / "tree"
    shutil.copytree(TREE, copy, symlinks=True)
    return copy


def set_limits(tree: Path, *, system: tuple[int, int] | None, own: tuple[str, str] | None = None) -> None:
    if system is not None:
        raid = tree / "proc" / "sys" / "dev" / "raid"
        raid.mkdir(parents=True, exist_ok=True)
        (raid / "speed_limit_min").write_text(f"{system[0]}\n")
        (raid / "speed_limit_max").write_text(f"{system[1]}\n")
    if own is not None:
        (tree / MD0 / "sync_speed_min").write_text(own[0] + "\n")
        (tree / MD0 / "sync_speed_max").write_text(own[1] + "\n")


def test_limits_come_from_proc_and_the_arrays_own_files(tree: Path) -> None:
    set_limits(tree, system=(1500, 300000), own=("1500 (system)", "90000 (local)"))
    limits = read_sync_limits(SystemRoot(str(tree)), "md0")
    assert (limits.system_min_kib_s, limits.system_max_kib_s) == (1500, 300000)
    assert (limits.array_min_kib_s, limits.array_max_kib_s) == (None, 90000)
    assert limits.read and limits.max_name == "md0's sync_speed_max (90,000 KiB/s)"


def test_without_proc_the_system_values_are_read_from_the_arrays_system_words() -> None:
    """The captured tree has no /proc/sys/dev/raid, but md prints the system's value beside "(system)"."""
    limits = read_sync_limits(SystemRoot(str(TREE)), "md0")
    assert (limits.system_min_kib_s, limits.system_max_kib_s) == (1000, 2000)
    assert limits.array_min_kib_s is None and limits.array_max_kib_s is None


def test_nothing_readable_is_mds_default_and_says_so(tmp_path: Path) -> None:
    limits = read_sync_limits(SystemRoot(str(tmp_path)), "md0")
    assert (limits.system_min_kib_s, limits.system_max_kib_s) == (1000, 200000)
    assert not limits.read and limits.basis == BASIS_DEFAULT


@pytest.mark.parametrize("bad", ["lots", "-5", "99999999999999999999", "1000 (system"])
def test_a_damaged_limit_is_not_believed(tree: Path, bad: str) -> None:
    set_limits(tree, system=None, own=(bad, bad))
    limits = read_sync_limits(SystemRoot(str(tree)), "md0")
    assert limits.array_max_kib_s is None or limits.array_max_kib_s < 2**31


def test_a_check_of_measured_members_is_bound_by_the_slowest_read_or_mds_limit(tree: Path, tmp_path: Path) -> None:
    set_limits(tree, system=(1000, 10_000_000))
    inventory = scan(SystemRoot(str(tree)))
    md0 = inventory.array("md0")
    assert md0 is not None and md0.component_bytes == 1046528 * 1024
    runs = member_runs(tmp_path / "r.db", ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"], SEQ)
    check = scrub_time(SystemRoot(str(tree)), md0, inventory, runs)
    assert check is not None and check.action == CHECK
    assert check.bound == "members: nvme0n1 (reads 500 MB/s)" and check.basis == MEASURED
    assert check.predicted_seconds == pytest.approx(1046528 * 1024 / 500e6)
    set_limits(tree, system=(1000, 100_000))
    capped = scrub_time(SystemRoot(str(tree)), md0, inventory, runs)
    assert capped is not None and capped.bound == "speed_limit_max (100,000 KiB/s)"


def test_if_a_member_fails_now_the_rebuild_writes_a_disk_like_it(tree: Path, tmp_path: Path) -> None:
    set_limits(tree, system=(1000, 10_000_000))
    inventory = scan(SystemRoot(str(tree)))
    md0 = inventory.array("md0")
    assert md0 is not None
    runs = member_runs(tmp_path / "r.db", ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"], SEQ)
    found = rebuild_if_one_fails(SystemRoot(str(tree)), md0, inventory, runs)
    assert found is not None
    answer, member = found
    assert answer.action == RECOVER and member == "nvme0n1"
    assert answer.bound == "members: a disk like nvme0n1 (writes 400 MB/s)"
    assert answer.predicted_seconds == pytest.approx(1046528 * 1024 / 400e6)


def test_members_never_measured_fall_back_to_their_link(tree: Path) -> None:
    """No stored figures: the NVMe links (2.5 GT/s x4 and x1 in this tree) stand in, an upper bound."""
    set_limits(tree, system=(1000, 10_000_000))
    inventory = scan(SystemRoot(str(tree)))
    md0 = inventory.array("md0")
    assert md0 is not None
    check = scrub_time(SystemRoot(str(tree)), md0, inventory, [])
    assert check is not None and check.basis == LINK and check.bound.startswith("members: ")


def test_a_running_resync_is_predicted_whole_and_a_rebuild_names_its_target(tree: Path) -> None:
    inventory = scan(SystemRoot(str(tree)))
    md0 = inventory.array("md0")
    assert md0 is not None and md0.sync is not None and md0.sync.action == "resync"
    running = running_pass_time(SystemRoot(str(tree)), md0, inventory, [])
    assert running is not None and running.bound == "speed_limit_max (2,000 KiB/s)"
    # md's own figures agree: sync_completed's total is the span the model counts.
    assert running.span_bytes == md0.sync.total_sectors * 512  # type: ignore[operator]
    assert pass_time(SystemRoot(str(tree)), md0, inventory, [], RECOVER) is None  # no target named


def test_arrays_without_redundancy_have_no_pass(tree: Path) -> None:
    inventory = scan(SystemRoot(str(tree)))
    md1 = inventory.array("md1")  # a raid1 left with one member: nothing can fail and be rebuilt from it
    assert md1 is not None
    assert rebuild_if_one_fails(SystemRoot(str(tree)), md1, inventory, []) is None
    assert array_level(inventory.array("md2"))[1] == "f2"  # type: ignore[arg-type]


def test_a_planned_raid5_rebuilds_its_last_member_and_raid0_has_no_initial_sync(tmp_path: Path) -> None:
    inventory = scan(SystemRoot(str(TREE)))
    # Three disks taken as free (two are members in the captured tree).
    free = [dataclasses.replace(d, in_use=()) for d in inventory.disks if d.name in ("nvme4n1", "sdc", "sdd")]
    runs = member_runs(tmp_path / "r.db", [d.name for d in free], SEQ)
    raid5 = plan_create(CreateRequest(device="/dev/md9", level="raid5", members=tuple(free)))
    answer = create_time(SystemRoot(str(TREE)), raid5, runs)
    assert answer is not None and answer.action == RECOVER
    # 400 MB/s members outrun md's default maximum; the tree has no /proc/sys, so the basis says it is md's default.
    assert answer.bound == "speed_limit_max (200,000 KiB/s)" and answer.basis == BASIS_DEFAULT
    raid0 = plan_create(CreateRequest(device="/dev/md9", level="raid0", members=tuple(free)))
    assert create_time(SystemRoot(str(TREE)), raid0, runs) is None


def test_sync_view_shows_the_prediction_it_is_given_and_makes_none(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One prediction per pass, made by the caller: sync_view never predicts again (on a tick, from no figures)."""
    from mdtui.bench import sync_forecast

    system = SystemRoot(str(tree))
    inventory = scan(system)
    md0 = inventory.array("md0")
    assert md0 is not None
    given = running_pass_time(system, md0, inventory, [])
    assert given is not None and given.predicted_seconds is not None

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("sync_view predicted the pass itself")

    monkeypatch.setattr(sync_forecast, "running_pass_time", refused)
    monkeypatch.setattr(sync_forecast, "pass_time", refused)
    monkeypatch.setattr(sync_forecast, "host_ceilings", refused)
    view = sync_forecast.sync_view(system, md0, predicted=given)
    assert view is not None and view.predicted is given and "predicted " in view.prediction_line()
    unknown = sync_forecast.sync_view(system, md0)  # not predicted (yet): md's figures and the bound alone
    assert unknown is not None and unknown.predicted is None and unknown.predicted_left_seconds is None
    assert unknown.prediction_line().startswith("bound: ")


def test_forecasts_read_each_arrays_limits_and_members_once(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An array's running pass, rebuild and check come from one read of its limits and its members' figures,
    and this host's ceilings (cpuinfo, kernel release, calibration) are read once for every array."""
    from mdtui.bench import sync_forecast

    inventory = scan(SystemRoot(str(tree)))
    reads: dict[str, list[str]] = {"limits": [], "ceilings": [], "members": []}

    def counting(name: str, real: Callable[..., Any], key: Callable[..., str]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            reads[name].append(key(*args))
            return real(*args, **kwargs)

        return counted

    monkeypatch.setattr(
        sync_forecast, "read_sync_limits", counting("limits", sync_forecast.read_sync_limits, lambda _r, a=None: a)
    )
    monkeypatch.setattr(sync_forecast, "host_ceilings", counting("ceilings", sync_forecast.host_ceilings, lambda: ""))
    monkeypatch.setattr(
        sync_forecast, "sync_member", counting("members", sync_forecast.sync_member, lambda _r, _i, n: n)
    )
    found = sync_forecast.forecast_arrays(SystemRoot(str(tree)), inventory, [])
    assert found["md0"].running is not None and found["md0"].rebuild is not None and found["md0"].check is not None
    assert sorted(reads["limits"]) == ["md0", "md1", "md2"]
    assert reads["ceilings"] == [""]
    assert sorted(reads["members"]) == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1", "sdc", "sdd", "vda"]
