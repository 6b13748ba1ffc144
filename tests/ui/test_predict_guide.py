"""The guide's plan step puts every level the picked disks can make side by side, from their stored
member-matrix figures (the md model), and names a disk without figures with the command that measures it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mdtui.execute.presets import member_matrix
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore
from mdtui.ui.guide.steps import PlanStep

from .test_guide import Recorder, make_app, open_guide, pick_disks, recorder, settle, text_of, tree

__all__ = ["recorder", "tree"]  # the fixtures, imported for pytest to find


def store_member(db: Path, device: str, days_ago: float) -> None:
    """Every member-matrix step of ``device``, as the bench engine stores them."""
    started = datetime.now(UTC) - timedelta(days=days_ago)
    figures = (
        Metrics(read_bw_bytes_per_s=1113e6),
        Metrics(write_bw_bytes_per_s=1022e6),
        Metrics(read_iops=181e3),
        Metrics(write_iops=170e3),
        Metrics(read_lat_mean_ns=58e3),
        Metrics(write_lat_mean_ns=21e3),
    )
    with ResultsStore(db) as store:
        for step, metrics in zip(member_matrix(f"/dev/{device}"), figures, strict=True):
            setup = RunSetup(preset="member-matrix", params={"step": step.label}, target=f"/dev/{device}")
            store.add_run(setup, metrics=metrics, status=RunStatus.COMPLETE, started_at=started, ended_at=started)


async def test_the_plan_step_shows_each_level_side_by_side(recorder: Recorder) -> None:
    store_member(recorder.db_path, "loop0", 1)
    app = make_app(recorder)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_guide(pilot)
        await pick_disks(pilot, screen, workload_index=1)  # database: random I/O
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(screen.query_one(PlanStep), PlanStep)
        body = text_of(pilot, "#plan-body")
    assert "What each level would do on these members (database: the random columns matter most)" in body
    assert "▸ raid10" in body and "raid0" in body and "raid5" not in body  # two disks: no parity level
    assert "seq read" in body and "rand write" in body
    assert "nvme4n1 has no member figures" in body and "--preset member-matrix --target /dev/nvme4n1" in body
