"""The benchmark engine and `mdtui bench` with real fio on files: figures, store, samples, cancel, refusals."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from mdtui.bench.plan import plan_bench
from mdtui.bench.progress import StepUpdate
from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.bench.session import run_bench
from mdtui.cli.main import main
from mdtui.model.job import MIB, RwMode
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore

REPO = Path(__file__).resolve().parents[2]
TREE = REPO / "tests" / "fixtures" / "trees" / "real-links"


@pytest.fixture
def image(tmp_path: Path) -> Path:
    path = tmp_path / "disk.img"
    path.write_bytes(os.urandom(16 * MIB))
    return path


def fio_running(name: str) -> list[str]:
    return subprocess.run(["pgrep", "-f", "--", f"--name={name}"], capture_output=True, text=True).stdout.split()


async def test_stored_figures_are_fios_own_and_samples_are_taken(image: Path, tmp_path: Path) -> None:
    root = SystemRoot("/")
    request = BenchRequest("custom", str(image), options=JobOptions(rw=RwMode.RANDREAD, runtime_s=2))
    plan = plan_bench(request, scan(root), root)
    updates: list[StepUpdate] = []
    with ResultsStore(tmp_path / "r.db") as store:
        result = await run_bench(
            plan, root=root, store=store, on_event=lambda e: updates.append(e) if isinstance(e, StepUpdate) else None
        )
        assert result.status is RunStatus.COMPLETE, result.error
        (run_id,) = result.run_ids
        stored = store.get_run(run_id)
    final = json.loads(result.steps[0].results[0].raw)["jobs"][0]
    assert stored.metrics.read_bw_bytes_per_s == final["read"]["bw_bytes"] > 0
    assert stored.metrics.read_iops == final["read"]["iops"]
    assert result.steps[0].bytes_per_s == final["read"]["bw_bytes"]
    assert json.loads(stored.fio_json)["jobs"][0]["read"]["bw_bytes"] == final["read"]["bw_bytes"]
    assert stored.params["rw"] == "randread" and stored.params["runtime"] == 2 and stored.target == str(image)
    assert stored.context["fio_version"].startswith("fio-") and stored.context["kernel"] == os.uname().release
    # The sampler ran alongside once a second: CPU load at least, stored with the run.
    assert len(stored.samples) >= 2 and any("cpu_busy_pct" in p.values for p in stored.samples)
    assert len(updates) >= 1 and updates[-1].remaining_s is not None and updates[-1].bytes_per_s > 0


async def test_cancel_stops_fio_and_keeps_partial_figures(image: Path, tmp_path: Path) -> None:
    root = SystemRoot("/")
    name = f"cancel-{uuid.uuid4().hex[:8]}"
    request = BenchRequest("custom", str(image), options=JobOptions(runtime_s=30, name=name))
    plan = plan_bench(request, scan(root), root)
    cancel = asyncio.Event()
    started = time.monotonic()
    with ResultsStore(tmp_path / "r.db") as store:
        seen: list[list[str]] = []

        def on_event(event: object) -> None:
            if isinstance(event, StepUpdate) and not cancel.is_set():
                seen.append(fio_running(name))
                cancel.set()

        result = await run_bench(plan, root=root, store=store, cancel=cancel, on_event=on_event)
        stored = store.get_run(result.run_ids[0])
    assert time.monotonic() - started < 15
    assert result.status is RunStatus.CANCELLED and result.partial
    assert stored.status is RunStatus.CANCELLED and stored.error.startswith("cancelled")
    assert stored.metrics.read_bw_bytes_per_s and stored.metrics.read_bw_bytes_per_s > 0
    assert seen[0], "fio was not seen running while it reported progress"
    assert fio_running(name) == []


def test_cli_json_write_on_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "new.img"
    db = tmp_path / "r.db"
    args = ["bench", "--preset", "custom", "--target", str(target), "--rw", "write", "--bs", "64k"]
    code = main([*args, "--size", "4m", "--yes", "--json", "--db", str(db)])
    out = capsys.readouterr()
    assert code == 0, out.err
    document = json.loads(out.out)
    assert document["status"] == "complete" and document["writes"] is True
    (step,) = document["steps"]
    assert step["write_bytes_per_s"] > 0
    assert step["jobs"][0]["argv"][:3] == ["fio", "--name=custom", f"--filename={target}"]
    assert "--size=4m" in step["jobs"][0]["argv"] and target.stat().st_size == 4 * MIB
    with ResultsStore(db) as store:
        assert store.get_run(document["run_ids"][0]).metrics.write_bw_bytes_per_s == step["write_bytes_per_s"]
    assert "WRITES to" in out.err  # the plan went to stderr, so stdout is only JSON


@pytest.mark.usefixtures("tree_stands_for_live")
def test_cli_refuses_a_write_on_a_mounted_disk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--root", str(TREE), "bench", "--preset", "custom", "--rw", "write", "--target", "sda", "--yes"])
    err = capsys.readouterr().err
    assert code == 2
    assert "refusing to run custom on /dev/sda: it writes" in err and "mounted at /mnt/data" in err


@pytest.mark.usefixtures("tree_stands_for_live")
def test_cli_asks_for_confirmation_and_checks_options(capsys: pytest.CaptureFixture[str]) -> None:
    # pytest's stdin is not a terminal, so without --yes nothing can be confirmed.
    base = ["--root", str(TREE), "bench", "--target", "nvme4n1"]
    assert main([*base, "--preset", "disk-mark"]) == 2
    assert "without confirmation: pass --yes" in capsys.readouterr().err
    assert main([*base, "--preset", "disk-mark", "--bs", "4k"]) == 2
    assert "--bs only apply to --preset custom" in capsys.readouterr().err
    assert main(["bench", "--preset", "custom"]) == 2
    assert "give --preset NAME and --target DEV" in capsys.readouterr().err


def test_cli_lists_presets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    for key in ("weakest-link", "disk-mark", "member-matrix", "sync-random", "parity-cost", "offset-sweep", "custom"):
        assert f"\n{key}  (" in "\n" + out
    assert "832 × 4 = 3,328" in out


def test_ctrl_c_cancels_cleanly_and_keeps_the_partial_result(image: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    env = {**os.environ, "MDTUI_DB": str(db), "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "mdtui", "bench", "--preset", "custom", "--target", str(image)]
    proc = subprocess.Popen(
        [*argv, "--runtime", "30", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        # Wait until fio has been running a moment, so there are figures to keep.
        while time.monotonic() < deadline and not (db.exists() and fio_running("custom")):
            time.sleep(0.1)
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    document = json.loads(out)
    assert document["status"] == "cancelled" and document["partial"] is True
    assert document["steps"][0]["read_bytes_per_s"] > 0
    assert "stopping; the figures so far are kept" in err
    with ResultsStore(db) as store:
        (run,) = store.list_runs()
    assert run.status is RunStatus.CANCELLED and run.metrics.read_bw_bytes_per_s


async def test_a_step_shorter_than_the_interval_still_stores_a_sample(image: Path, tmp_path: Path) -> None:
    # A 1 MiB read ends long before the sampler's first tick with rates (one interval after the
    # start); the closing sample at the end of the step is what gives it a time series.
    root = SystemRoot("/")
    request = BenchRequest("custom", str(image), options=JobOptions(rw=RwMode.READ, size_bytes=MIB))
    plan = plan_bench(request, scan(root), root)
    with ResultsStore(tmp_path / "r.db") as store:
        result = await run_bench(plan, root=root, store=store, sample_interval_s=5.0)
        assert result.status is RunStatus.COMPLETE, result.error
        assert result.duration_s < 5.0
        (run_id,) = result.run_ids
        stored = store.get_run(run_id)
    assert len(stored.samples) >= 1 and any("cpu_busy_pct" in p.values for p in stored.samples)
