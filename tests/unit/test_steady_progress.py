"""Live progress of a step that ends once steady: "steady in ~N s" or how far it still moves, never a countdown
to an end that may not come.

The window test is fio's own: on real fio output its figure over fio's own window must equal the criterion
value fio reports (slope and largest deviation, in percent of the window's mean).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mdtui.bench.progress import StepFinished, StepOutcome, StepProgress, StepUpdate, steady_note, window_movement
from mdtui.cli.bench import ProgressPrinter, step_update_line
from mdtui.execute.argv import fio_argv
from mdtui.execute.presets import Step
from mdtui.model.job import (
    DirectionStats,
    JobResult,
    JobSpec,
    JobStats,
    JobStatus,
    Progress,
    RwMode,
    SteadyOutcome,
    SteadyState,
)

MB = 1_000_000
WRITES = SteadyState("bw", "slope", 1.0, window_s=10, ramp_s=5)


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize(
    ("steady", "extra"),
    [
        (SteadyState("bw", "slope", 5.0, window_s=3, ramp_s=1), ("--rate=16m",)),
        (SteadyState("bw", "deviation", 0.1, window_s=2, ramp_s=1),
         ("--rate=16m", "--thinktime=400000", "--thinktime_blocks=32")),
    ],
)  # fmt: skip
def test_the_window_test_is_fios_own(tmp_path: Path, steady: SteadyState, extra: tuple[str, ...]) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"\0" * (8 << 20))
    spec = JobSpec("w", str(target), 64 << 10, runtime_s=6, steady=steady)
    argv = [a for a in fio_argv(spec) if not a.startswith(("--status-interval", "--direct", "--ioengine"))]
    done = subprocess.run([*argv, "--ioengine=psync", "--direct=0", *extra], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, check=True)  # fmt: skip
    section = json.loads(done.stdout)["jobs"][0]["steadystate"]
    fio_says = float(section["criterion"].rstrip("%"))
    mine = window_movement(steady, section["data"]["bw"])
    assert mine is not None and mine == pytest.approx(fio_says, rel=1e-3, abs=1e-4)


def test_the_note_says_steady_in_n_s_then_how_far_the_window_still_moves() -> None:
    assert steady_note(WRITES, 3.0, 120, []) == "steady in ~12 s if it holds, ceiling 120 s"
    flat = [500 * MB] * 10
    assert steady_note(WRITES, 16.0, 120, flat) == "steady in ~1 s (slope +0.0% within 1%), ceiling 120 s"
    falling = [900 * MB - i * 30 * MB for i in range(10)]  # a write cache filling: 900 MB/s falling 30 MB/s a second
    note = steady_note(WRITES, 40.0, 120, falling)
    assert note.startswith("judging steady state: last 10 s slope -3.9% (needs 1%)") and note.endswith(
        "ceiling 120 s, 80 s left"
    )
    assert steady_note(WRITES, 16.0, 120, flat[:4]) == "judging steady state, ceiling 120 s"  # not a whole window yet
    assert window_movement(WRITES, [0.0] * 10) is None  # nothing moved: no mean to take a percent of


def test_a_steady_step_shows_the_note_instead_of_a_countdown() -> None:
    job = JobSpec("w", "/dev/md0", 1 << 20, rw=RwMode.WRITE, runtime_s=120, steady=WRITES)
    tracker = StepProgress([Step("seq write", (job,))], 0)
    updates: list[StepUpdate] = []
    for second in range(1, 31):
        rate = 900 * MB - second * 20 * MB  # still falling at 30 s
        update = tracker.update(job, Progress(float(second), 0, second * MB, 0.0, rate, 0.0, rate / MB))
        assert update is not None
        updates.append(update)
    assert updates[0].steady_note == "steady in ~14 s if it holds, ceiling 120 s"
    line = step_update_line(updates[-1])
    assert "judging steady state: last 10 s slope -" in line and "ceiling 120 s, 90 s left" in line
    assert "/ 120 s" not in line and "run at most 1m30s" in line

    fixed = JobSpec("f", "/dev/md0", 1 << 20, runtime_s=30)
    update = StepProgress([Step("fixed", (fixed,))], 0).update(fixed, Progress(4.0, 0, 0, 50 * MB, 0.0, 50.0, 0.0))
    assert update is not None and update.steady_note is None
    assert step_update_line(update).endswith("4 s / 30 s  remaining 26s")


def test_the_line_a_finished_step_leaves_says_how_it_ended() -> None:
    job = JobSpec("w", "/dev/md0", 1 << 20, rw=RwMode.WRITE, runtime_s=120, steady=WRITES)

    def finished(steady: SteadyOutcome | None) -> str:
        stats = JobStats("w", DirectionStats(), DirectionStats(bytes_per_s=900 * MB, iops=900.0), steady=steady)
        result = JobResult(job, JobStatus.COMPLETE, (), 0, 120.0, total=stats)
        outcome = StepOutcome(0, Step("seq write", (job,)), (result,), JobStatus.COMPLETE, 0.0, 120.0)
        out = io.StringIO()
        ProgressPrinter(out, live=False)(StepFinished(outcome, 1))
        return out.getvalue()

    assert finished(SteadyOutcome(True, "bw_slope:1.000000%", "0.2%", 41.0)).endswith("IOPS, steady after 41 s\n")
    unsteady = finished(SteadyOutcome(False, "bw_slope:1.000000%", "-3.1%", 120.0))
    assert unsteady.endswith("IOPS, NOT steady at its 120 s ceiling (still moving: not the sustained figure)\n")
    assert finished(None).endswith("900 IOPS\n")  # a fixed-time step says nothing of steadiness
