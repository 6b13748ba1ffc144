"""A write step fio calls steady is confirmed: the same writes run on, and a figure that then falls is not steady.

The attack: a write cache that holds longer than fio's ramp + window is flat while fio judges it, so fio alone
calls the burst steady and the step stored the burst. Real fio writes a file here at one rate (``--rate``, the
cache) until fio calls it steady, then the confirmation at a lower rate (the cache run out), in one fio process;
and at one rate throughout (a figure that holds).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.steady import rule_unsteady_steps
from mdtui.bench.progress import StepOutcome, StepProgress, steady_note
from mdtui.execute.argv import fio_argv
from mdtui.execute.fio import FioProgressTracker, document_stats, parse_fio_output
from mdtui.execute.presets import READ_STEADY_BW, WRITE_CEILING_S, WRITE_STEADY_BW, Step, parity_cost
from mdtui.model.job import CONFIRM_SUFFIX, JobResult, JobSpec, JobStatus, Progress, RwMode, SteadyState
from mdtui.store.cells import steady_words
from mdtui.store.describe import describe_run
from mdtui.store.fio_import import metrics_from_fio
from mdtui.store.records import Metrics, RunRecord, RunStatus

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
# Short enough for a unit test: steady after 1 s + 3 s at the earliest, a confirmation of 6 s at most.
QUICK = SteadyState("bw", "slope", 2.0, window_s=3, ramp_s=1, confirm=True)
MIB = 1 << 20


def _value(argv: list[str], option: str, start: int = 0) -> str:
    return next(a.split("=", 1)[1] for a in argv[start:] if a.startswith(f"--{option}="))


def test_a_write_step_runs_a_confirmation_job_inside_its_ceiling_and_a_read_step_does_not() -> None:
    write, read = (step.jobs[0] for step in parity_cost("/dev/md0", steady=True))
    assert write.steady == WRITE_STEADY_BW and write.runtime_s == WRITE_CEILING_S
    argv = fio_argv(write)
    second = argv.index(f"--name=parity-write{CONFIRM_SUFFIX}")
    assert argv[second + 1] == "--stonewall"
    first_s, confirm_s = int(_value(argv, "runtime")), int(_value(argv, "runtime", second))
    assert first_s + confirm_s == WRITE_CEILING_S and confirm_s >= WRITE_STEADY_BW.window_s
    assert _value(argv, "steadystate_ramp_time") == "5" and _value(argv, "steadystate_ramp_time", second) == "0"
    for option in ("filename", "rw", "bs", "iodepth", "steadystate", "steadystate_duration"):
        assert _value(argv, option) == _value(argv, option, second), option
    assert "--readonly" not in argv
    assert not any(a.startswith("--name=") for a in fio_argv(read)[2:])
    assert "--runtime=30" in fio_argv(read)
    assert READ_STEADY_BW.confirm_s(30) == 0


def _two_rates(tmp_path: Path, first: str, confirmation: str) -> str:
    """Real fio on a file: the step's own argv, the first job held to ``first``, the confirmation to the other."""
    spec = JobSpec("w", str(tmp_path / "data.bin"), 64 << 10, rw=RwMode.WRITE, runtime_s=24, steady=QUICK)
    (tmp_path / "data.bin").write_bytes(b"\0" * (16 << 20))
    argv = [a for a in fio_argv(spec) if not a.startswith(("--direct", "--ioengine"))]
    second = argv.index(f"--name=w{CONFIRM_SUFFIX}")
    argv[second:second] = [f"--rate={first}", "--ioengine=psync", "--direct=0"]
    argv += [f"--rate={confirmation}", "--ioengine=psync", "--direct=0"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=True)
    return done.stdout


@needs_fio
def test_a_write_that_falls_after_looking_steady_is_not_steady_and_keeps_the_lower_figure(tmp_path: Path) -> None:
    output = _two_rates(tmp_path, "8m", "2m")
    parsed = parse_fio_output(output)
    final = parsed.final
    assert final is not None
    # fio 3.33 reports the two stonewall groups apart even with group_reporting; the first called steady.
    first, confirmation = final["jobs"]
    assert first["jobname"] == "w" and confirmation["jobname"] == f"w{CONFIRM_SUFFIX}"
    assert first["steadystate"]["attained"] == 1 and first["write"]["bw_bytes"] > 3.5 * 2 * MIB
    total, jobs = document_stats(final)
    assert len(jobs) == 1 and total is not None and total.steady is not None
    assert not total.steady.attained and total.steady.fell
    assert total.steady.fell_percent == pytest.approx(75, abs=8)
    # The stored figure is the confirmation's, never the burst: live parse and import alike.
    assert total.write.bytes_per_s == pytest.approx(2 * MIB, rel=0.1)
    assert metrics_from_fio(final).write_bw_bytes_per_s == total.write.bytes_per_s
    assert total.write.io_bytes == first["write"]["io_bytes"] + confirmation["write"]["io_bytes"]
    assert total.steady.after_s is not None and total.steady.after_s * 1000 == pytest.approx(
        first["write"]["runtime"] + confirmation["write"]["runtime"]
    )
    # A stored run says so, and so do the step's last line and the advisor.
    run = RunRecord(
        id=3, status=RunStatus.COMPLETE, started_at=datetime.now(UTC), ended_at=None, preset="parity-cost",
        params={"rw": "write", "step": "64k write"}, target="/dev/md0", array={}, context={},
        metrics=metrics_from_fio(final), fio_json=json.dumps(final),
    )  # fmt: skip
    assert run.steady is not None and run.steady.fell and not run.steady.attained
    assert "NO: fell 7" in describe_run(run) and steady_words(run).startswith("not reached (fell 7")
    spec = JobSpec("w", "/dev/md0", 64 << 10, rw=RwMode.WRITE, runtime_s=24, steady=QUICK)
    result = JobResult(spec, JobStatus.COMPLETE, (), 0, 12.0, total=total, jobs=jobs)
    outcome = StepOutcome(0, Step("64k write", (spec,)), (result,), JobStatus.COMPLETE, 0.0, 12.0)
    assert "NOT steady: fell 7" in outcome.steady_words and "write cache running out" in outcome.steady_words
    (finding,) = rule_unsteady_steps(AdviceInput(runs=(run,)))
    assert "fell 7" in finding.title and "after looking steady" in finding.title and "64k write" in finding.title


@needs_fio
def test_a_write_that_holds_through_its_confirmation_is_steady(tmp_path: Path) -> None:
    output = _two_rates(tmp_path, "4m", "4m")
    parsed = parse_fio_output(output)
    assert parsed.final is not None
    total, _ = document_stats(parsed.final)
    assert total is not None and total.steady is not None
    assert total.steady.attained and not total.steady.fell, total.steady
    assert total.steady.fell_percent is not None and abs(total.steady.fell_percent) < 5
    assert total.write.bytes_per_s == pytest.approx(4 * MIB, rel=0.1)
    # Live: the elapsed time runs on through the second job, and the progress knows the confirmation began.
    tracker = FioProgressTracker()
    updates = [tracker.update(document) for document in parsed.documents]
    elapsed = [u.elapsed_s for u in updates]
    assert elapsed == sorted(elapsed) and elapsed[-1] == pytest.approx(total.steady.after_s, abs=0.01)
    confirming = [u for u in updates if u.confirming_s is not None]
    assert confirming and confirming[0].elapsed_s > QUICK.floor_s - QUICK.window_s
    assert all(u.write_bytes_per_s > 0 for u in updates[1:-1])


def test_live_progress_says_confirming_steady() -> None:
    # Before fio can first judge, the earliest end counts the confirmation too; then fio's own window test.
    assert steady_note(WRITE_STEADY_BW, 3, 120, []).startswith("steady in ~22 s if it holds")
    assert steady_note(WRITE_STEADY_BW, 16, 120, [1.0] * 11).startswith("steady in ~1 s (slope +0.0%")
    assert steady_note(WRITE_STEADY_BW, 20, 120, [1.0] * 15, confirming_s=4).startswith(
        "confirming steady: 4 s of 10 s"
    )
    late = steady_note(WRITE_STEADY_BW, 33, 120, [100.0] * 15 + [50.0 - i for i in range(12)], confirming_s=12)
    assert late.startswith("confirming steady: last 10 s slope -") and "87 s left" in late


def test_a_run_stored_before_confirmations_reads_as_before() -> None:
    job = {"jobname": "w", "write": {"runtime": 16000, "bw_bytes": 3e6, "iops": 45.0, "io_bytes": 48_000_000},
           "steadystate": {"ss": "bw_slope:1.000000%", "attained": 1, "criterion": "0.2%",
                           "data": {"bw_mean": 2e6, "iops_mean": 30.0}}}  # fmt: skip
    total, _ = document_stats({"jobs": [job]})
    assert total is not None and total.steady is not None and total.steady.attained
    assert total.steady.fell_percent is None and total.write.bytes_per_s == 2e6
    assert Metrics.from_dict({}).write_bw_bytes_per_s is None


def test_a_write_steps_live_line_says_confirming_once_its_second_job_runs() -> None:
    write = parity_cost("/dev/md0", steady=True)[0]
    tracker = StepProgress([write], 0)
    spec = write.jobs[0]
    judging = tracker.update(spec, Progress(17.0, 0, 17 * MIB, 0.0, MIB, 0.0, 16.0))
    assert judging is not None and judging.steady_note is not None
    assert not judging.steady_note.startswith("confirming")
    confirming = tracker.update(spec, Progress(21.0, 0, 21 * MIB, 0.0, MIB, 0.0, 16.0, confirming_s=3.0))
    assert confirming is not None and confirming.steady_note is not None
    assert confirming.steady_note.startswith("confirming steady: 3 s of 10 s"), confirming.steady_note


def test_a_remote_hosts_job_file_keeps_the_confirmation_a_job_of_its_own() -> None:
    from mdtui.fleet.client import job_file

    text = job_file(parity_cost("/dev/md0", steady=True)[0].jobs[0])
    first, second = text.split(f"[parity-write{CONFIRM_SUFFIX}]\n")
    assert first.startswith("[parity-write]\n") and "runtime=90\n" in first and "stonewall" not in first
    assert second.startswith("stonewall\n") and "runtime=30\n" in second and "steadystate_ramp_time=0\n" in second
