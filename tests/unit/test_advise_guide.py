"""The guide's core: the draft level for a workload and member count, the disk check, summary and first run."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.advise.experiments import ExperimentResult, ExperimentRun
from mdtui.advise.findings import workload
from mdtui.advise.guide import (
    GuideState,
    check_disks,
    draft_level,
    draft_request,
    mark_guide_seen,
    should_show_guide,
    suggested_experiment,
    summary_lines,
)
from mdtui.errors import PlanError
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.plan.create import plan_create
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

REPO = Path(__file__).resolve().parents[2]
REAL_LINKS = REPO / "tests" / "fixtures" / "trees" / "real-links"


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return scan(REAL_LINKS, privileged=True)


def free(inventory: Inventory, *names: str) -> tuple[Disk, ...]:
    return tuple(dataclasses.replace(d, in_use=()) for name in names if (d := inventory.disk(name)) is not None)


@pytest.mark.parametrize(
    ("key", "members", "expected"),
    [
        ("backups", 4, "raid6"),
        ("backups", 3, "raid5"),  # raid6 needs four
        ("backups", 2, "raid10"),
        ("database", 2, "raid10"),
        ("scratch", 2, "raid0"),
        ("database", 1, None),
    ],
)
def test_draft_level_falls_back_to_what_the_members_allow(key: str, members: int, expected: str | None) -> None:
    level = draft_level(workload(key), members)
    assert (level.name if level else None) == expected


def test_draft_request_takes_the_workload_chunk(inventory: Inventory) -> None:
    disks = free(inventory, "nvme2n1", "nvme3n1")
    request = draft_request(workload("database"), disks, "/dev/md3")
    assert request is not None
    assert (request.chunk_kib, request.bitmap, request.assume_clean) == (64, "none", False)
    assert plan_create(request).level.name == "raid10"


def test_check_disks_finds_the_slow_member_of_the_draft(inventory: Inventory) -> None:
    check = check_disks(SystemRoot(REAL_LINKS), workload("scratch"), free(inventory, "nvme0n1", "nvme1n1"), "/dev/md3")
    assert check.plan is not None and check.plan.level.name == "raid0"
    ids = [f.id for f in check.findings]
    # nvme1n1 sits in a PCIe 1.0 slot next to a Gen3 x4 drive; md0's resync elsewhere is not about these disks.
    assert ids == ["slow-member:/dev/md3 (planned)"]


def test_check_disks_without_a_plan_still_checks_links(inventory: Inventory) -> None:
    check = check_disks(SystemRoot(REAL_LINKS), workload("database"), free(inventory, "nvme1n1"), "/dev/md3")
    assert check.request is None and check.plan is None
    assert [f.id for f in check.findings] == ["link-downgraded:nvme1n1"]


def test_check_disks_reports_why_the_draft_is_refused(inventory: Inventory) -> None:
    # loop0 (256 MiB) and nvme4n1 (1 GiB): mdtui refuses to waste over half the space.
    check = check_disks(SystemRoot(REAL_LINKS), workload("database"), free(inventory, "loop0", "nvme4n1"), "/dev/md3")
    assert check.plan is None and check.request is not None
    assert any("differ so much in size" in problem for problem in check.problems)


def test_suggested_experiment(inventory: Inventory) -> None:
    check = check_disks(SystemRoot(REAL_LINKS), workload("scratch"), free(inventory, "nvme0n1", "nvme1n1"), "/dev/md3")
    assert suggested_experiment(check.findings) == "parallelism-sweep"
    governor = dataclasses.replace(check.findings[0], experiment="governor-ab")
    assert suggested_experiment([governor]) == "governor-ab"


def test_summary_lists_what_was_done(inventory: Inventory, tmp_path: Path) -> None:
    disks = free(inventory, "nvme2n1", "nvme3n1")
    request = draft_request(workload("database"), disks, "/dev/md3")
    assert request is not None
    moment = datetime(2026, 5, 1, tzinfo=UTC)
    with ResultsStore(tmp_path / "r.db") as store:
        ids = [
            store.add_run(RunSetup("custom", label=label), status=RunStatus.COMPLETE, started_at=moment,
                          ended_at=moment, metrics=Metrics(read_bw_bytes_per_s=figure))
            for label, figure in (("guide: weakest link", 480e6), ("numjobs 1", 300e6))
        ]
        runs = store.get_runs(ids)
    state = GuideState(
        workload=workload("database"),
        disks=disks,
        plan=plan_create(request),
        device="/dev/md3",
        weakest_link_runs=(ids[0],),
        experiment=ExperimentResult("parallelism-sweep", (ExperimentRun("numjobs 1", (ids[1],)),)),
        skipped=("links",),
    )
    lines = summary_lines(state, runs)
    assert lines[0].startswith("Purpose: Database")
    assert "Created: /dev/md3, raid10 on 2 members, chunk 64 KiB" in lines
    assert f"  #{ids[0]} guide: weakest link: read 480 MB/s" in lines
    assert f"  #{ids[1]} numjobs 1: read 300 MB/s" in lines
    assert lines[-1] == "Skipped: Links"


def test_first_run_needs_no_runs_and_no_flag(tmp_path: Path) -> None:
    db, flag = tmp_path / "results.db", tmp_path / "state" / "guide-seen"
    assert should_show_guide(db, flag)  # no database yet
    assert not db.exists()
    moment = datetime(2026, 5, 1, tzinfo=UTC)
    with ResultsStore(db) as store:
        assert should_show_guide(db, flag)  # a database without runs
        store.add_run(RunSetup("custom"), status=RunStatus.COMPLETE, started_at=moment, ended_at=moment,
                      metrics=Metrics())
    assert not should_show_guide(db, flag)
    other_db = tmp_path / "other.db"
    mark_guide_seen(flag)
    assert not should_show_guide(other_db, flag)


def test_unknown_experiment_is_refused() -> None:
    from mdtui.advise.guide import run_experiment

    with pytest.raises(PlanError, match="offers"):
        run_experiment("chunk-sweep", lambda *a, **k: (), "/dev/md3", root=SystemRoot("/"))


def test_a_resync_on_the_new_array_is_named_before_the_run(inventory: Inventory) -> None:
    from mdtui.advise.findings import Severity
    from mdtui.advise.guide import before_run_findings

    (finding,) = before_run_findings(inventory, "/dev/md0")  # md0 is resyncing in the tree
    assert finding.severity is Severity.CRITICAL
    assert before_run_findings(inventory, "/dev/md2") == ()
