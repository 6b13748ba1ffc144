"""The process runner with real fio and dd on a loop device: figures, progress, cancel, timeout, crashes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from ci import in_ci

from mdtui.errors import MdtuiError
from mdtui.execute.presets import offset_sweep
from mdtui.execute.process import GroupProcess, group_members, run_streaming
from mdtui.execute.runners import run_dd, run_fio, run_job, run_step
from mdtui.model.job import MIB, JobSpec, JobStatus, Progress, RwMode, Tool

LOOP_SIZE = 64 * MIB


def _skip_or_fail(reason: str) -> None:
    # In CI a missing loop device is a broken setup, not a reason to skip.
    if in_ci():
        pytest.fail(reason)
    pytest.skip(reason)


def _losetup(*args: str) -> str:
    return subprocess.run(["losetup", *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def loop_image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.geteuid() != 0:
        _skip_or_fail("needs root to attach loop devices")
    image = tmp_path_factory.mktemp("loop") / "disk.img"
    image.write_bytes(os.urandom(LOOP_SIZE))
    return image


def _attach(image: Path, *extra: str) -> Iterator[str]:
    try:
        device = _losetup("--find", "--show", *extra, str(image))
    except (OSError, subprocess.CalledProcessError) as exc:
        _skip_or_fail(f"losetup could not attach a loop device: {exc}")
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], check=False)


@pytest.fixture(scope="module")
def loop_device(loop_image: Path) -> Iterator[str]:
    yield from _attach(loop_image)


@pytest.fixture(scope="module")
def readonly_loop_device(loop_image: Path) -> Iterator[str]:
    yield from _attach(loop_image, "--read-only")


def unique_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def pids_running(pattern: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def pgrep_group(pgid: int) -> str:
    return subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True).stdout.strip()


def read_spec(device: str, name: str, runtime_s: int, **kwargs: object) -> JobSpec:
    return JobSpec(
        name=name,
        target=device,
        rw=RwMode.READ,
        block_size_bytes=MIB,
        iodepth=4,
        numjobs=2,
        runtime_s=runtime_s,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_fio_figures_equal_fios_own_json_and_progress_streams(loop_device: str) -> None:
    updates: list[tuple[float, Progress]] = []
    spec = read_spec(loop_device, unique_name("bw"), runtime_s=2)
    result = await run_fio(spec, lambda p: updates.append((time.monotonic(), p)))
    finished = time.monotonic()
    assert result.status is JobStatus.COMPLETE, result.error
    assert result.returncode == 0 and not result.partial and result.error is None
    final = json.loads(result.raw)
    job = final["jobs"][0]
    assert result.total is not None
    assert result.total.read.bytes_per_s == job["read"]["bw_bytes"]
    assert result.total.read.io_bytes == job["read"]["io_bytes"] > 0
    assert result.total.read.bytes_per_s == pytest.approx(result.total.read.io_bytes / result.total.read.runtime_s)
    assert result.total.read.runtime_s == pytest.approx(2.0, abs=0.2)
    assert result.total.read.latency.p99_ns is not None
    assert result.total.usr_cpu_percent is not None
    # Progress came while fio ran (one status document a second), not only at the end.
    assert len(updates) >= 2
    assert finished - updates[0][0] > 0.5
    assert [p.read_bytes for _, p in updates] == sorted(p.read_bytes for _, p in updates)
    assert updates[-1][1].read_bytes == result.total.read.io_bytes
    assert result.argv[0] == "fio" and f"--filename={loop_device}" in result.argv


async def test_cancel_mid_run_keeps_figures_and_leaves_no_process(loop_device: str) -> None:
    name = unique_name("cancel")
    cancel = asyncio.Event()
    seen: dict[str, int] = {}

    def on_progress(progress: Progress) -> None:
        if "pid" not in seen:
            pids = pids_running(f"--name={name}")
            seen["pid"] = pids[0] if pids else -1
        cancel.set()

    started = time.monotonic()
    result = await run_fio(read_spec(loop_device, name, runtime_s=30), on_progress, cancel=cancel)
    assert time.monotonic() - started < 10
    assert result.status is JobStatus.CANCELLED
    # SIGINT lets fio write its final document: figures for the part that ran, not marked partial.
    assert result.returncode == 128 and not result.partial
    assert result.total is not None and result.total.read.io_bytes > 0
    assert 0.5 < result.total.read.runtime_s < 10
    assert seen["pid"] > 0
    assert pgrep_group(seen["pid"]) == ""
    assert pids_running(f"--name={name}") == []


async def test_cancelling_the_task_stops_the_process_group(loop_device: str) -> None:
    name = unique_name("taskcancel")
    task = asyncio.create_task(run_fio(read_spec(loop_device, name, runtime_s=30)))
    deadline = time.monotonic() + 5
    while not (pids := pids_running(f"--name={name}")) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert pids
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pgrep_group(pids[0]) == ""
    assert pids_running(f"--name={name}") == []


async def test_timeout_stops_a_hung_dd_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    spec = JobSpec(
        name="hung",
        target=str(fifo),
        tool=Tool.DD,
        block_size_bytes=MIB,
        size_bytes=MIB,
        direct=False,
    )
    started = time.monotonic()
    # dd blocks opening a FIFO that nobody writes.
    result = await run_dd(spec, timeout_s=0.5, interrupt_grace_s=0.5, terminate_grace_s=1.0)
    assert time.monotonic() - started < 4
    assert result.status is JobStatus.TIMED_OUT
    assert result.returncode is not None and result.returncode != 0
    # dd still prints its summary on SIGINT: nothing read.
    assert result.total is None or result.total.read.io_bytes == 0
    assert not result.stderr or "records in" in result.stderr


async def test_timeout_stops_sleep_and_kills_the_group() -> None:
    run = await run_streaming(["sleep", "60"], timeout_s=0.3, interrupt_grace_s=1.0)
    assert run.timed_out and not run.cancelled
    assert run.returncode == -2  # sleep dies on the first signal, SIGINT
    assert run.duration_s < 2


async def test_crashed_process_keeps_its_stderr() -> None:
    code = "import os, signal, sys; sys.stderr.write('about to crash\\n'); sys.stderr.flush(); os.abort()"
    run = await run_streaming([sys.executable, "-c", code])
    assert run.returncode == -6
    assert run.stderr_text == "about to crash\n"
    assert not run.cancelled and not run.timed_out


async def test_fio_failure_surfaces_stderr_and_json_error(readonly_loop_device: str) -> None:
    spec = JobSpec(
        name=unique_name("rowrite"),
        target=readonly_loop_device,
        rw=RwMode.WRITE,
        block_size_bytes=4096,
        size_bytes=MIB,
    )
    result = await run_fio(spec)
    assert result.status is JobStatus.FAILED
    assert result.returncode == 1
    assert "fio: io_u error" in result.stderr
    assert result.error is not None
    assert "error 1" in result.error and "fio exited with code 1: fio: io_u error" in result.error
    assert result.total is not None and result.total.error == 1


async def test_dd_read_figures_and_progress(loop_device: str) -> None:
    spec = JobSpec(
        name="dd-read",
        target=loop_device,
        tool=Tool.DD,
        block_size_bytes=16 * MIB,
        size_bytes=2 * 16 * MIB,
        offset_bytes=16 * MIB,
    )
    result = await run_job(spec)
    assert result.status is JobStatus.COMPLETE, result.error
    assert result.argv[-3:] == ("count=2", "skip=1", "status=progress")
    assert result.total is not None
    assert result.total.read.io_bytes == 32 * MIB
    assert result.total.read.bytes_per_s == pytest.approx(32 * MIB / result.total.read.runtime_s)
    assert "records in" in result.raw


async def test_dd_cancel_keeps_its_summary() -> None:
    # /dev/zero never ends, so the cancel cannot race the end of the read.
    spec = JobSpec(
        name="dd-endless",
        target="/dev/zero",
        tool=Tool.DD,
        block_size_bytes=512,
        size_bytes=512 * 1024**3,
        direct=False,
    )
    cancel = asyncio.Event()
    updates: list[tuple[float, Progress]] = []

    def on_progress(progress: Progress) -> None:
        updates.append((time.monotonic(), progress))
        cancel.set()

    started = time.monotonic()
    result = await run_dd(spec, on_progress, cancel=cancel, timeout_s=20)
    assert result.status is JobStatus.CANCELLED
    assert result.returncode == -2  # dd prints its summary, then dies of the SIGINT
    # The first progress line is reported when dd prints it (after ~1 s), not a second later.
    assert updates[0][0] - started < 1.8
    assert updates[0][1].read_bytes > 0 and updates[0][1].elapsed_s == 1.0
    assert not result.partial and result.total is not None
    assert updates[0][1].read_bytes <= result.total.read.io_bytes
    assert result.total.read.bytes_per_s == pytest.approx(result.total.read.io_bytes / result.total.read.runtime_s)


async def test_missing_program_is_a_typed_error() -> None:
    with pytest.raises(MdtuiError, match="not installed"):
        await run_streaming(["mdtui-no-such-program-xyz"])


async def test_group_process_iterates_both_streams() -> None:
    code = "import sys; print('out', flush=True); sys.stderr.write('err\\n')"
    process = GroupProcess([sys.executable, "-c", code])
    await process.start()
    chunks = [(c.stream, c.data) async for c in process]
    assert await process.wait() == 0
    assert b"".join(data for stream, data in chunks if stream == "stdout") == b"out\n"
    assert b"".join(data for stream, data in chunks if stream == "stderr") == b"err\n"
    assert os.getpgid(os.getpid()) != process.pid  # it ran in its own group
    assert group_members(process.pid) == []


async def test_a_process_ignoring_sigint_and_sigterm_is_killed() -> None:
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    cancel = asyncio.Event()
    run = await run_streaming(
        [sys.executable, "-c", code],
        on_stdout=lambda data: cancel.set(),
        cancel=cancel,
        interrupt_grace_s=0.3,
        terminate_grace_s=0.3,
    )
    assert run.cancelled and run.returncode == -9
    assert run.strongest_signal is not None and run.strongest_signal.name == "SIGKILL"


async def test_descendants_that_left_the_group_are_stopped_too() -> None:
    # fio's job processes call setsid(); this child does the same and would otherwise be orphaned.
    code = (
        "import subprocess, time\n"
        "child = subprocess.Popen(['sleep', '61'], start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    cancel = asyncio.Event()
    run = await run_streaming([sys.executable, "-c", code], on_stdout=lambda data: cancel.set(), cancel=cancel)
    escaped = int(run.stdout.split()[0])
    assert run.cancelled
    deadline = time.monotonic() + 3
    while Path(f"/proc/{escaped}").exists() and time.monotonic() < deadline:
        state = Path(f"/proc/{escaped}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            break  # dead, only waiting for a reaper
        await asyncio.sleep(0.05)
    else:
        assert not Path(f"/proc/{escaped}").exists()


async def test_a_step_runs_its_jobs_at_the_same_time(loop_device: str) -> None:
    steps = offset_sweep(loop_device, LOOP_SIZE)  # 4 blocks of 16 MiB: one-block reads
    results = await run_step(steps[-1])
    assert [r.spec for r in results] == list(steps[-1].jobs)
    assert all(r.status is JobStatus.COMPLETE for r in results), [r.error for r in results]
    assert [r.total.read.io_bytes for r in results if r.total] == [16 * MIB] * 5
    # On 4 blocks the 75% and 100% points both read the last block.
    assert [r.argv[-2] for r in results] == ["skip=0", "skip=1", "skip=2", "skip=3", "skip=3"]
