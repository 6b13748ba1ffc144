"""The one way to run a benchmark from a thread and stop it from another (mdtui.bench.background), with real fio
on a file: the bench screen, the guide, the experiments and the knob sweeps all go through it, and the UI reaches
its screens from workers only by messages."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

import mdtui
from mdtui.bench.background import Stop, run_bench_in_thread
from mdtui.bench.plan import BenchPlan, plan_bench
from mdtui.bench.progress import BenchEvent, StepUpdate
from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.model.inventory import Inventory
from mdtui.model.job import IoEngine, RwMode
from mdtui.probe.root import SystemRoot
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore

# A stopped run must end well before its runtime: the stop, not the ceiling, ended it. The runtime is long
# against fio's start-up on a loaded 2-core host (a second or two); the bound is a share of it.
RUNTIME_S = 30
STOPPED_WITHIN_SHARE = 0.5
UI = Path(mdtui.__file__).parent / "ui"


def _plan(target: Path) -> BenchPlan:
    options = JobOptions(rw=RwMode.READ, block_size_bytes=4096, runtime_s=RUNTIME_S, ioengine=IoEngine.SYNC,
                         direct=False)  # fmt: skip
    inventory = Inventory(disks=(), arrays=(), privileged=True, udev=True)
    return plan_bench(BenchRequest("custom", str(target), options=options), inventory, SystemRoot("/"))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "fio.dat"
    path.write_bytes(b"\0" * (4 << 20))
    return path


def test_a_stop_set_from_another_thread_ends_a_real_fio_run_with_its_reason(data: Path, tmp_path: Path) -> None:
    stop = Stop()
    updates: list[StepUpdate] = []

    def seen(event: BenchEvent) -> None:
        if isinstance(event, StepUpdate):
            updates.append(event)
            if len(updates) == 2:  # fio is running and reporting: stop it from a thread of its own
                threading.Thread(target=stop.set, args=("stopped by the test",)).start()

    started = time.monotonic()
    with ResultsStore(tmp_path / "results.db") as store:
        result = run_bench_in_thread(
            _plan(data), stop=stop, root=SystemRoot("/"), store=store, on_event=seen, sample_interval_s=None
        )
        (run,) = store.list_runs()
    took = time.monotonic() - started
    assert result.status is RunStatus.CANCELLED and run.status is RunStatus.CANCELLED
    assert "stopped by the test" in run.error, run.error
    assert run.metrics.read_bw_bytes_per_s  # the figures so far are kept
    assert took < RUNTIME_S * STOPPED_WITHIN_SHARE, f"ran {took:.1f} s of a {RUNTIME_S} s job after the stop"


def test_a_stop_set_before_the_run_starts_runs_nothing_long(data: Path, tmp_path: Path) -> None:
    stop = Stop()
    stop.set("closed before it began")
    started = time.monotonic()
    with ResultsStore(tmp_path / "results.db") as store:
        result = run_bench_in_thread(_plan(data), stop=stop, root=SystemRoot("/"), store=store, sample_interval_s=None)
    assert result.status is RunStatus.CANCELLED
    assert time.monotonic() - started < RUNTIME_S * STOPPED_WITHIN_SHARE


def test_a_cleared_stop_forgets_its_reason_and_listeners_go_with_their_block() -> None:
    stop = Stop()
    heard: list[str] = []
    with stop.listening(heard.append):
        stop.set("first")
        stop.set("second")  # the first reason stands
    stop.set("after")  # nobody listens any more
    assert heard == ["first", "first"] and stop.reason == "first"
    stop.clear()
    assert not stop.is_set() and stop.reason == ""


def test_the_ui_reaches_screens_from_workers_only_by_messages() -> None:
    """One idiom: a thread worker posts a message. No screen runs an event loop of its own (the bench screen did,
    under a lock), calls back through call_from_thread, or cancels a benchmark another way."""
    found = []
    for path in sorted(UI.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"call_from_thread|asyncio\.run\(|new_event_loop|run_until_complete|run_bench\(", line):
                found.append(f"{path.relative_to(UI)}:{number}: {line.strip()}")
    assert found == []
    runner = (UI.parent / "advise" / "runner.py").read_text()
    assert "asyncio" not in runner and "run_bench_in_thread" in runner
