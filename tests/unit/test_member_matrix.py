"""The member-matrix preset: each member alone on the six workloads predictions start from, stored per step and
read back as member figures (with their age); real fio on a file."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mdtui.bench.member_figures import age_text, stored_member
from mdtui.cli.main import main
from mdtui.errors import PlanError
from mdtui.execute.presets import member_matrix, preset
from mdtui.model.job import KIB, MIB, RwMode
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore


def test_the_preset_is_each_workload_at_its_saturating_depth() -> None:
    steps = member_matrix("/dev/sdb", steady=True)
    shapes = [
        (s.jobs[0].rw, s.jobs[0].block_size_bytes, s.jobs[0].iodepth, s.jobs[0].numjobs, s.jobs[0].steady is not None)
        for s in steps
    ]
    assert shapes == [
        (RwMode.READ, MIB, 8, 8, True),
        (RwMode.WRITE, MIB, 8, 8, True),
        (RwMode.RANDREAD, 4 * KIB, 32, 8, True),
        (RwMode.RANDWRITE, 4 * KIB, 32, 8, True),
        (RwMode.RANDREAD, 4 * KIB, 1, 1, True),
        (RwMode.RANDWRITE, 4 * KIB, 1, 1, True),
    ]
    assert len({s.label for s in steps}) == 6 and preset("member-matrix").writes


def test_an_array_is_not_a_member(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mdtui.bench.plan import plan_bench
    from mdtui.bench.requests import BenchRequest
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot

    root = SystemRoot(str(Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"))
    inventory = scan(root)
    array = inventory.arrays[0].name
    with pytest.raises(PlanError, match="one disk alone"):
        plan_bench(BenchRequest("member-matrix", array), inventory, root)


def test_real_fio_stores_each_step_and_predict_reads_them_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = tmp_path / "member.img"
    image.write_bytes(os.urandom(16 * MIB))
    db = tmp_path / "r.db"
    args = ["bench", "--preset", "member-matrix", "--target", str(image), "--runtime", "1", "--yes", "--json"]
    code = main([*args, "--db", str(db)])
    assert code == 0, capsys.readouterr().err
    with ResultsStore(db) as store:
        runs = store.list_runs()
    assert sorted(r.params["step"] for r in runs) == sorted(s.label for s in member_matrix(str(image)))
    member = stored_member(runs, str(image))
    assert member.missing == () and member.missing_text() == ""
    figures = member.figures
    assert figures.seq_read_bytes_per_s and figures.seq_write_bytes_per_s
    assert figures.rand_read_iops and figures.rand_write_iops
    assert figures.q1_read_latency_s and 0 < figures.q1_read_latency_s < 1
    assert figures.q1_write_latency_s and 0 < figures.q1_write_latency_s < 1
    assert member.age() == "measured just now"
    capsys.readouterr()
    # predict names the member file as a disk: its stored figures are the basis.
    assert main(["predict", "--level", "0", str(image), str(image), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "(measured)" in out and "measured just now" in out and "unknown" not in out


def _run(store: ResultsStore, target: str, step: str, metrics: Metrics, started: datetime) -> int:
    setup = RunSetup(preset="member-matrix", params={"step": step}, target=target)
    return store.add_run(setup, metrics=metrics, status=RunStatus.COMPLETE, started_at=started, ended_at=started)


def test_the_newest_figure_wins_and_a_missing_one_says_how_to_measure(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    labels = [s.label for s in member_matrix("/dev/sdb")]
    with ResultsStore(tmp_path / "r.db") as store:
        _run(store, "/dev/sdb", labels[0], Metrics(read_bw_bytes_per_s=100e6), now - timedelta(days=9))
        _run(store, "/dev/sdb", labels[0], Metrics(read_bw_bytes_per_s=500e6), now - timedelta(days=3, hours=1))
        _run(store, "/dev/sdc", labels[1], Metrics(write_bw_bytes_per_s=400e6), now)
        runs = store.list_runs()
    sdb = stored_member(runs, "sdb")
    assert sdb.figures.seq_read_bytes_per_s == 500e6 and sdb.figures.seq_write_bytes_per_s is None
    assert sdb.age(now) == "measured 3 d ago"
    assert "sequential write" in sdb.missing_text()
    assert "mdtui bench --preset member-matrix --target /dev/sdb" in sdb.missing_text()
    assert age_text(None) == "not measured"


def test_a_member_measured_before_the_q1_write_step_still_predicts(tmp_path: Path) -> None:
    """Members measured by the five-step matrix keep predicting; only their Q1 write figure is unknown."""
    now = datetime.now(UTC)
    metrics = [
        Metrics(read_bw_bytes_per_s=500e6),
        Metrics(write_bw_bytes_per_s=400e6),
        Metrics(read_iops=90e3),
        Metrics(write_iops=80e3),
        Metrics(read_lat_mean_ns=90e3),
    ]
    with ResultsStore(tmp_path / "r.db") as store:
        for step, figure in zip(member_matrix("/dev/sdb")[:5], metrics, strict=True):
            _run(store, "/dev/sdb", step.label, figure, now)
        sdb = stored_member(store.list_runs(), "sdb")
    assert sdb.missing == () and sdb.figures.q1_write_latency_s is None
    assert sdb.figures.q1_read_latency_s == pytest.approx(90e-6)
