"""Steps end when their figure is steady by fio's own criterion (--steadystate), and say so.

Real fio reads a file here: one job held to a steady rate (fio's --rate) ends long before its ceiling and
reports the criterion reached; one whose criterion cannot hold runs to its ceiling and is stored as not
steady. The presets, --fixed-time and --runtime choose between the two ways of ending a step.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.bench.plan import plan_bench
from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.errors import PlanError
from mdtui.execute.argv import fio_argv
from mdtui.execute.fio import document_stats, parse_fio_output
from mdtui.execute.presets import READ_STEADY_BW, WRITE_CEILING_S, disk_mark, weakest_link
from mdtui.model.job import JobSpec, RwMode, SteadyState, Tool
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.describe import describe_run
from mdtui.store.records import Metrics, RunRecord, RunStatus

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def test_a_steady_step_asks_fio_to_end_it_and_keeps_its_runtime_as_the_ceiling() -> None:
    spec = JobSpec("s", "/dev/md0", 1 << 20, runtime_s=30, steady=READ_STEADY_BW)
    argv = fio_argv(spec)
    assert "--runtime=30" in argv and "--time_based" in argv
    assert argv[argv.index("--runtime=30") + 1 :][:3] == [
        "--steadystate=bw_slope:2%",
        "--steadystate_duration=5",
        "--steadystate_ramp_time=2",
    ]
    with pytest.raises(PlanError, match="shorter than the steady-state ramp"):
        JobSpec("s", "/dev/md0", 4096, runtime_s=5, steady=READ_STEADY_BW)
    with pytest.raises(PlanError, match="only a time-based fio job"):
        JobSpec("s", "/dev/md0", 1 << 20, tool=Tool.DD, size_bytes=1 << 20, steady=READ_STEADY_BW)
    with pytest.raises(PlanError):
        SteadyState("latency", "slope")


def test_presets_end_reads_and_writes_by_their_own_criteria() -> None:
    steps = disk_mark("/dev/md0", steady=True)
    seq_read = next(s for s in steps if s.label == "SEQ1MQ8T8 read").jobs[0]
    rand_write = next(s for s in steps if s.label == "RND4KQ32T8 write").jobs[0]
    assert seq_read.steady is not None and seq_read.steady.fio_criterion == "bw_slope:2%"
    assert seq_read.runtime_s == 20  # a read's ceiling is the old fixed time
    assert rand_write.steady is not None and rand_write.steady.fio_criterion == "iops_slope:1%"
    assert rand_write.runtime_s == WRITE_CEILING_S  # writes may need long to show a cache filling
    assert all(job.steady is None for step in disk_mark("/dev/md0") for job in step.jobs)  # the old way
    assert all(job.steady is None for step in weakest_link(["/dev/sdb"], "/dev/md0", quick=True, steady=True)
               for job in step.jobs)  # fmt: skip


def test_fixed_time_and_an_explicit_runtime_run_the_whole_step() -> None:
    root = SystemRoot(REAL)
    inventory = scan(root, privileged=True)

    def jobs(**kwargs: object) -> list[JobSpec]:
        plan = plan_bench(BenchRequest("weakest-link", "md0", **kwargs), inventory, root)  # type: ignore[arg-type]
        return [job for step in plan.steps for job in step.jobs]

    assert all(job.steady is not None and job.runtime_s == 30 for job in jobs())
    assert all(job.steady is None and job.runtime_s == 30 for job in jobs(fixed_time=True))
    assert all(job.steady is None and job.runtime_s == 7 for job in jobs(options=JobOptions(runtime_s=7)))


def _run_fio(tmp_path: Path, spec: JobSpec, *extra: str) -> dict[str, object]:
    target = tmp_path / "data.bin"
    target.write_bytes(b"\0" * (8 << 20))
    argv = [a for a in fio_argv(spec) if not a.startswith(("--status-interval", "--direct", "--ioengine"))]
    argv += ["--ioengine=psync", "--direct=0", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=True)
    (document,) = parse_fio_output(done.stdout).documents
    return document


@needs_fio
def test_real_fio_ends_a_steady_job_early_and_says_it_was_steady(tmp_path: Path) -> None:
    spec = JobSpec("steady", str(tmp_path / "data.bin"), 64 << 10, runtime_s=60,
                   steady=SteadyState("bw", "slope", 5.0, window_s=3, ramp_s=1))  # fmt: skip
    document = _run_fio(tmp_path, spec, "--rate=16m")
    total, _ = document_stats(document)
    assert total is not None and total.steady is not None
    assert total.steady.attained and total.steady.criterion.startswith("bw_slope:5")
    assert total.steady.after_s is not None and total.steady.after_s < 30  # far short of its 60 s ceiling


@needs_fio
def test_real_fio_that_never_settles_runs_to_its_ceiling_and_is_stored_as_not_steady(tmp_path: Path) -> None:
    # A rate that alternates every second between 16 MB/s and nothing cannot hold a 0.1 % deviation.
    spec = JobSpec("unsteady", str(tmp_path / "data.bin"), 64 << 10, runtime_s=6,
                   steady=SteadyState("bw", "deviation", 0.1, window_s=2, ramp_s=1))  # fmt: skip
    document = _run_fio(tmp_path, spec, "--rate=16m", "--thinktime=400000", "--thinktime_blocks=32")
    total, _ = document_stats(document)
    assert total is not None and total.steady is not None and not total.steady.attained
    assert total.steady.after_s is not None and total.steady.after_s >= 5
    run = RunRecord(
        id=7, status=RunStatus.COMPLETE, started_at=datetime.now(UTC), ended_at=None, preset="custom",
        params={}, target="x", array={}, context={}, metrics=Metrics(), fio_json=json.dumps(document),
    )  # fmt: skip
    assert run.steady is not None and not run.steady.attained
    assert "Steady     NO: still moving when it reached its" in describe_run(run)


def test_a_run_without_a_criterion_says_nothing_of_steadiness() -> None:
    document = {"jobs": [{"jobname": "x", "read": {"runtime": 1000}, "write": {"runtime": 0}}]}
    run = RunRecord(
        id=8, status=RunStatus.COMPLETE, started_at=datetime.now(UTC), ended_at=None, preset="custom",
        params={}, target="x", array={}, context={}, metrics=Metrics(), fio_json=json.dumps(document),
    )  # fmt: skip
    assert run.steady is None and "Steady" not in describe_run(run)
    assert RwMode.READ.writes is False


def _burst_then_held(directory: Path) -> str:
    """Real fio writing 64 KiB blocks at 48 a second for 3 s (a drive's write cache taking them), then 16 a
    second for 9 s (the sustained rate), replayed from a timed I/O log (iolog version 3, microseconds)."""
    target = directory / "burst.bin"
    target.write_bytes(b"\0" * (8 << 20))
    lines = ["fio version 3 iolog", f"0 {target} add", f"0 {target} open"]
    offset = 0
    for second in range(12):
        count = 48 if second < 3 else 16
        for index in range(count):
            lines.append(f"{(second * 1000 + index * 1000 // count) * 1000} {target} write {offset % (8 << 20)} 65536")
            offset += 65536
    lines.append(f"{12_000_000} {target} close")
    log = directory / "burst.log"
    log.write_text("\n".join(lines) + "\n")
    argv = ["fio", "--name=burst", f"--read_iolog={log}", "--ioengine=psync", "--steadystate=bw_slope:2%",
            "--steadystate_duration=4", "--steadystate_ramp_time=4", "--output-format=json"]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True, cwd=directory).stdout


@needs_fio
def test_a_steady_figure_is_the_steady_windows_not_the_burst_before_it(tmp_path: Path) -> None:
    from mdtui.store.fio_import import metrics_from_fio

    output = _burst_then_held(tmp_path)
    (document,) = parse_fio_output(output).documents
    job = document["jobs"][0]
    assert job["steadystate"]["attained"] == 1, job["steadystate"]
    sustained = 16 * 65536
    whole_step = job["write"]["bw_bytes"]
    assert whole_step > 1.15 * sustained  # fio's own mean carries the burst
    total, _ = document_stats(document)
    assert total is not None and total.steady is not None and total.steady.attained
    # Live parse and import read the same figure: the window's, at the sustained rate.
    assert abs(total.write.bytes_per_s - sustained) < 0.1 * sustained, (total.write.bytes_per_s, whole_step)
    imported = metrics_from_fio(json.loads(output))
    assert imported.write_bw_bytes_per_s == total.write.bytes_per_s
    assert total.write.iops == pytest.approx(16, rel=0.1)
