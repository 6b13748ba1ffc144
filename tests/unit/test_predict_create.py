"""create --dry-run (and the plan preview, through describe_create) predicts every workload from the members'
stored member-matrix figures, to two significant figures, naming bound and basis; a member without figures is
predicted from what bounds it (its link) and named with the command that measures it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mdtui.cli.main import main
from mdtui.execute.presets import member_matrix
from mdtui.plan.figures import MEASURED, Figure, MemberFigures
from mdtui.plan.forecast import MemberSource, forecast, forecast_lines, shown, significant
from mdtui.plan.levels import level_from_name
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
# Uneven figures on purpose: a prediction printed with all its digits would show them (2 × 1,113 = 2,226).
FIGURES = (
    Metrics(read_bw_bytes_per_s=1113.4e6),
    Metrics(write_bw_bytes_per_s=1021.7e6),
    Metrics(read_iops=181_234.0),
    Metrics(write_iops=169_876.0),
    Metrics(read_lat_mean_ns=58_321.0),
    Metrics(write_lat_mean_ns=21_456.0),
)


def store_member(db: Path, device: str, days_ago: float, skip: int | None = None) -> None:
    started = datetime.now(UTC) - timedelta(days=days_ago)
    with ResultsStore(db) as store:
        for index, (step, metrics) in enumerate(zip(member_matrix(f"/dev/{device}"), FIGURES, strict=True)):
            if index == skip:
                continue
            setup = RunSetup(preset="member-matrix", params={"step": step.label}, target=f"/dev/{device}")
            store.add_run(setup, metrics=metrics, status=RunStatus.COMPLETE, started_at=started, ended_at=started)


DRY_RUN = ["--root", str(TREE), "create", "--level", "1", "nvme4n1", "loop0", "--allow-mixed-sizes", "--dry-run"]


def test_dry_run_predicts_every_workload_from_stored_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    store_member(db, "nvme4n1", 3.2)
    store_member(db, "loop0", 0)
    assert main([*DRY_RUN, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "sequential read" in out and "2,200 MB/s" in out and "2,227" not in out  # raid1 reads both copies
    assert "sequential write" in out and "1,000 MB/s" in out
    assert "random write" in out and "170,000 IOPS" in out
    assert "bound: members" in out and "(measured)" in out
    assert "nvme4n1 measured 3 d ago" in out and "loop0 measured just now" in out
    assert "predicted read" not in out  # the link estimate gives way to the model

    assert main([*DRY_RUN, "--db", str(db), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["prediction"]["predicted"]["seq_read_mb_s"] > 2000 and plan["prediction_missing"] == []


def test_a_member_without_figures_is_named_with_how_to_measure_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    store_member(db, "nvme4n1", 1)
    store_member(db, "loop0", 1, skip=3)  # its random write was never measured
    assert main([*DRY_RUN, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "loop0 has no measured random write" in out
    assert "mdtui bench --preset member-matrix --target /dev/loop0" in out
    assert "nvme4n1 has no" not in out and "loop0 measured 1 d ago in part" in out
    # Every workload loop0 measured still predicts; the one it did not is unknown, never zero.
    assert "360,000 IOPS" in out and "random write      4 KiB Q32T8       unknown" in out
    assert "predicted read" not in out  # one prediction: the model's
    assert main([*DRY_RUN, "--db", str(tmp_path / "none.db"), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    # Nothing measured: the model still answers from what bounds each member (nvme4n1's link; loop0 has no
    # link, so the sequential figures it would set stay unknown) and says which were not measured.
    assert plan["prediction"]["basis"]["seq_read_mb_s"] == "link" and len(plan["prediction_missing"]) == 2
    assert plan["prediction"]["predicted"]["seq_read_mb_s"] is None


def test_never_more_precision_than_two_figures() -> None:
    assert significant(2226.8) == 2200 and significant(0.0583) == 0.058
    assert shown(Figure(2226.8e6, "members", MEASURED), "seq_read_bytes_per_s") == "2,200 MB/s"
    assert shown(Figure(58.3e-6, "members", MEASURED), "q1_read_latency_s") == "58 µs"
    assert shown(Figure(None, "unknown", MEASURED), "rand_read_iops") == "unknown"
    member = MemberFigures(1e9, 1e9, 1e5, 1e5, 1e-4, rotational=False)
    sources = [MemberSource(f"d{i}", member, "given") for i in range(4)]
    lines = forecast_lines(forecast(level_from_name("raid5"), sources, layout=None, chunk_bytes=None), sources)
    assert any("md stripe thread" in line for line in lines)  # the bound named where md, not the members, limits


def test_the_plan_preview_shows_the_prediction_and_the_missing_member(tmp_path: Path) -> None:
    from mdtui.bench.member_figures import load_member_runs, member_sources
    from mdtui.plan import CreateRequest, plan_create
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot
    from mdtui.ui.common.render import Palette
    from mdtui.ui.create import form as cf
    from mdtui.ui.create.screen import preview_renderable

    db = tmp_path / "r.db"
    store_member(db, "nvme4n1", 2)
    inventory = scan(SystemRoot(str(TREE)))
    disks = tuple(d for d in inventory.disks if d.name in ("nvme4n1", "loop0"))
    request = CreateRequest(device="/dev/md3", level="raid1", members=disks, allow_mixed_sizes=True)
    result = cf.Preview(plan_create(request, member_sources(load_member_runs(str(db)), disks)))
    text = preview_renderable(result, Palette()).plain
    assert "loop0 has no member figures" in text and "--preset member-matrix --target /dev/loop0" in text
    store_member(db, "loop0", 0)
    result = cf.Preview(plan_create(request, member_sources(load_member_runs(str(db)), disks)))
    text = preview_renderable(result, Palette()).plain
    assert "random read" in text and "360,000 IOPS" in text and "nvme4n1 measured 2 d ago" in text


def test_members_never_measured_share_one_line() -> None:
    link = MemberFigures(basis="link")
    never = [MemberSource(f"nvme{i}n1", link, "-", f"nvme{i}n1 has no member figures", True) for i in (0, 1, 2)]
    partly = MemberSource("sdb", MemberFigures(), "measured in part", "sdb has no measured random write: ...")
    members = [*never, partly]
    lines = forecast_lines(forecast(level_from_name("raid6"), members, layout=None, chunk_bytes=None), members)
    assert lines[-2].startswith(
        "  nvme0n1, nvme1n1, nvme2n1 have no member figures (until measured, their links and field figures for "
        "their kind of disk stand in): measure each alone with `mdtui bench --preset member-matrix"
    )
    assert lines[-1] == "  sdb has no measured random write: ..."
    assert sum("have no member figures" in line or "has no" in line for line in lines) == 2


def test_the_level_table_puts_levels_side_by_side() -> None:
    from mdtui.plan.forecast import level_table, level_table_lines
    from mdtui.plan.levels import LEVELS

    member = MemberFigures(1113e6, 1022e6, 181e3, 170e3, 58e-6, rotational=False)
    rows = level_table(LEVELS, [MemberSource(f"d{i}", member, "given") for i in range(4)])
    by_level = {row.level: row for row in rows}
    assert set(by_level) == {"linear", "raid0", "raid1", "raid4", "raid5", "raid6", "raid10"}
    assert by_level["raid0"].cells[3] == "680k IOPS"  # 4 × 170k random writes
    assert by_level["raid5"].bounds[3].startswith("md stripe thread")  # 4 × 170k over 2+2 I/Os, capped by md
    assert by_level["raid10"].cells[1] == "2,000 MB/s"  # two copies of each write over four members
    lines = level_table_lines(rows)
    assert lines[0].split() == ["level", "seq", "read", "seq", "write", "rand", "read", "rand", "write", "Q1", "lat"]
    assert len({len(line) for line in lines}) == 1  # aligned
    # Two members: no raid4/5/6 row; a member without figures leaves the figures unknown, not zero.
    unmeasured = MemberSource("b", MemberFigures(), "not measured: no link speed known", "b has no ...")
    rows = level_table(LEVELS, [MemberSource("a", member, "given"), unmeasured])
    assert {row.level for row in rows} == {"linear", "raid0", "raid1", "raid10"}
    assert all(cell == "unknown" for row in rows for cell in row.cells)


def test_an_unreadable_results_database_does_not_stop_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    db.write_bytes(b"not a database at all" * 100)
    assert main([*DRY_RUN, "--db", str(db)]) == 0
    captured = capsys.readouterr()
    # The plan still predicts, from what bounds each member (its link), and says the figures were not measured.
    assert "what it will do" in captured.out and "nvme4n1 not measured: its link" in captured.out
    assert captured.err.count("\n") == 1 and "no measured member figures" in captured.err
