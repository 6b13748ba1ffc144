"""The fio and dd runners: a JobSpec in, its figures (JobResult) out, with live Progress on the way."""

from __future__ import annotations

import asyncio
import codecs
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mdtui.execute import dd as dd_parse
from mdtui.execute import fio as fio_parse
from mdtui.execute.argv import dd_argv, fio_argv
from mdtui.execute.presets import Step
from mdtui.execute.process import INTERRUPT_GRACE_S, TERMINATE_GRACE_S, ProcessRun, Stream, run_streaming
from mdtui.format import plural
from mdtui.model.job import DirectionStats, JobResult, JobSpec, JobStats, JobStatus, Progress, Tool

# fio and dd report once per status interval, even while fio lays out a file; a job silent for this many
# intervals is stalled (stopped with SIGSTOP, or stuck) and is killed rather than waited for.
STALL_INTERVALS = 30

ProgressCallback = Callable[[Progress], None]


def target_size(path: str) -> int | None:
    """A fio target's size in bytes: a regular file's length, a block device's from sysfs; None if not known.

    Nothing is opened: a block device's size is read from /sys/dev/block/MAJ:MIN/size (512-byte sectors).
    """
    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode):
        return info.st_size
    if not stat.S_ISBLK(info.st_mode):
        return None
    sysfs = f"/sys/dev/block/{os.major(info.st_rdev)}:{os.minor(info.st_rdev)}/size"
    try:
        with open(sysfs, encoding="ascii") as handle:
            return int(handle.read().strip()) * 512
    except (OSError, ValueError):
        return None


def default_timeout_s(spec: JobSpec) -> float | None:
    """A time-based job that runs far past its runtime is hung; a size-based one has no natural limit."""
    if spec.runtime_s is None:
        return None
    return spec.runtime_s * 2 + 60


def default_stall_timeout_s(spec: JobSpec) -> float:
    """How long a job may print nothing before it counts as stalled: STALL_INTERVALS status intervals."""
    return float(STALL_INTERVALS * spec.status_interval_s)


@dataclass(frozen=True)
class _Limits:
    """How a runner's caller bounds the job: cancel event, deadline, stall limit and stop graces."""

    cancel: asyncio.Event | None
    timeout_s: float | None
    stall_timeout_s: float | None
    interrupt_grace_s: float
    terminate_grace_s: float


async def _run_tool(
    spec: JobSpec, argv: Sequence[str], stream: Stream, feed: Callable[[str], None], limits: _Limits
) -> ProcessRun:
    """Run argv under limits, handing the text of its reporting stream to feed as it arrives (and at the end)."""
    text = codecs.getincrementaldecoder("utf-8")("replace")

    def on_data(data: bytes) -> None:
        feed(text.decode(data))

    stall_timeout_s = default_stall_timeout_s(spec) if limits.stall_timeout_s is None else limits.stall_timeout_s
    run = await run_streaming(
        argv,
        on_stdout=on_data if stream == "stdout" else None,
        on_stderr=on_data if stream == "stderr" else None,
        cancel=limits.cancel,
        timeout_s=limits.timeout_s,
        stall_timeout_s=stall_timeout_s,
        interrupt_grace_s=limits.interrupt_grace_s,
        terminate_grace_s=limits.terminate_grace_s,
    )
    feed(text.decode(b"", final=True))
    return run


def _stop_message(run: ProcessRun, tool: str, timeout_s: float | None) -> str | None:
    """Why mdtui stopped a job on its own (a stall, a deadline), or None when it did not."""
    if run.stalled_s is not None:
        return (
            f"{tool} stalled: no status report for {run.stalled_s:.0f} s, so it was killed "
            "(SIGCONT, SIGKILL); the figures are from its last report"
        )
    if run.timed_out:
        return f"{tool} ran past its {timeout_s or 0:.0f} s limit and was stopped; the figures cover the part that ran"
    return None


def _status(run: ProcessRun, failed: bool) -> JobStatus:
    if run.returncode == 0 and not failed:
        # It finished just as the stop came: fio and dd exit non-zero when a signal cuts them short.
        return JobStatus.COMPLETE
    if run.timed_out or run.stalled:
        return JobStatus.TIMED_OUT
    if run.cancelled:
        return JobStatus.CANCELLED
    return JobStatus.FAILED if failed else JobStatus.COMPLETE


def _result(
    spec: JobSpec,
    run: ProcessRun,
    *,
    total: JobStats | None,
    jobs: tuple[JobStats, ...],
    partial: bool,
    error: str | None,
    raw: str,
) -> JobResult:
    return JobResult(
        spec=spec,
        status=_status(run, error is not None),
        argv=run.argv,
        returncode=run.returncode,
        duration_s=run.duration_s,
        total=total,
        jobs=jobs,
        partial=partial,
        error=error,
        stderr=run.stderr_text,
        raw=raw,
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return lines[-1] if lines else ""


async def run_fio(
    spec: JobSpec,
    on_progress: ProgressCallback | None = None,
    *,
    cancel: asyncio.Event | None = None,
    timeout_s: float | None = None,
    stall_timeout_s: float | None = None,
    interrupt_grace_s: float = INTERRUPT_GRACE_S,
    terminate_grace_s: float = TERMINATE_GRACE_S,
) -> JobResult:
    """Run a fio job, streaming Progress once per status interval, and return its figures.

    ``timeout_s`` defaults to default_timeout_s(spec), ``stall_timeout_s`` (no status report for that
    long) to default_stall_timeout_s(spec). A cancelled, timed-out or stalled run keeps what fio
    reported until it stopped.
    """
    decoder = fio_parse.FioStreamDecoder()
    tracker = fio_parse.FioProgressTracker()

    def feed(text: str) -> None:
        for document, _ in decoder.feed(text):
            if on_progress is not None:
                on_progress(tracker.update(document))

    timeout_s = default_timeout_s(spec) if timeout_s is None else timeout_s
    limits = _Limits(cancel, timeout_s, stall_timeout_s, interrupt_grace_s, terminate_grace_s)
    run = await _run_tool(spec, fio_argv(spec, target_bytes=target_size(spec.target)), "stdout", feed, limits)
    output = fio_parse.parse_fio_output(run.stdout.decode("utf-8", "replace"))
    stderr = run.stderr_text
    final = output.final
    total, jobs = fio_parse.document_stats(final) if final is not None else (None, ())
    # fio exits by itself after SIGINT (code 128) with its final document; a kill leaves an interim one.
    partial = bool(output.truncated) or (final is not None and (run.returncode or 0) < 0)
    errors: list[str] = []
    stopped_by_us = run.stopped_by_us
    # A job that exits 0 finished just as the stop came: its figures are whole.
    if run.returncode != 0 and (stop_message := _stop_message(run, "fio", timeout_s)) is not None:
        errors.append(stop_message)
    if final is not None and (job_error := fio_parse.document_error(final)):
        errors.append(job_error)
    if run.returncode != 0 and not stopped_by_us:
        messages = fio_parse.fio_messages(stderr) or [m for m in output.skipped if m.startswith("fio:")]
        tail = messages[0] if messages else _last_line(stderr) or "no error output"
        errors.append(f"fio exited with code {run.returncode}: {tail}")
    if final is None and not run.cancelled and not errors:
        errors.append("fio printed no JSON result")
    if output.truncated and not stopped_by_us:
        errors.append("fio's output ended in the middle of a report; the figures are from the one before")
    return _result(
        spec, run, total=total, jobs=jobs, partial=partial, error="; ".join(errors) or None, raw=output.final_raw
    )


async def run_dd(
    spec: JobSpec,
    on_progress: ProgressCallback | None = None,
    *,
    cancel: asyncio.Event | None = None,
    timeout_s: float | None = None,
    stall_timeout_s: float | None = None,
    interrupt_grace_s: float = INTERRUPT_GRACE_S,
    terminate_grace_s: float = TERMINATE_GRACE_S,
) -> JobResult:
    """Run a dd read, streaming Progress from its once-a-second lines, and return its figures.

    Without ``timeout_s`` a dd read has no deadline (its size bounds it); the stall limit still applies.
    """
    parser = dd_parse.DdStreamParser()

    def feed(text: str) -> None:
        for progress in parser.feed(text):
            if on_progress is not None:
                on_progress(progress)

    limits = _Limits(cancel, timeout_s, stall_timeout_s, interrupt_grace_s, terminate_grace_s)
    run = await _run_tool(spec, dd_argv(spec), "stderr", feed, limits)
    parser.close()
    stderr = run.stderr_text
    summary = parser.summary
    total: JobStats | None = None
    partial = False
    if summary is not None:
        read = DirectionStats(
            io_bytes=summary.bytes_copied,
            runtime_s=summary.seconds,
            bytes_per_s=summary.bytes_per_s,
            total_ios=summary.records_in_full + summary.records_in_partial,
            iops=(summary.records_in_full + summary.records_in_partial) / summary.seconds if summary.seconds else 0.0,
        )
        total = JobStats(name=spec.name, read=read, write=DirectionStats())
    elif parser.progress:
        last = parser.progress[-1]
        partial = True
        rate = last.read_bytes / last.elapsed_s if last.elapsed_s else 0.0
        read = DirectionStats(io_bytes=last.read_bytes, runtime_s=last.elapsed_s, bytes_per_s=rate)
        total = JobStats(name=spec.name, read=read, write=DirectionStats())
    stopped_by_us = run.stopped_by_us
    error = _stop_message(run, "dd", timeout_s) if run.returncode != 0 else None
    if run.returncode != 0 and not stopped_by_us:
        tail = parser.errors[0] if parser.errors else _last_line(stderr) or "no error output"
        error = f"dd exited with code {run.returncode}: {tail}"
    elif summary is not None and summary.records_in_partial and not stopped_by_us:
        error = (
            f"dd read {plural(summary.records_in_partial, 'short block')}: the device ended before the requested count"
        )
    jobs = (total,) if total is not None else ()
    return _result(spec, run, total=total, jobs=jobs, partial=partial, error=error, raw=stderr)


async def run_job(
    spec: JobSpec,
    on_progress: ProgressCallback | None = None,
    *,
    cancel: asyncio.Event | None = None,
    timeout_s: float | None = None,
    stall_timeout_s: float | None = None,
) -> JobResult:
    runner = run_fio if spec.tool is Tool.FIO else run_dd
    return await runner(spec, on_progress, cancel=cancel, timeout_s=timeout_s, stall_timeout_s=stall_timeout_s)


async def run_step(
    step: Step,
    on_progress: Callable[[JobSpec, Progress], None] | None = None,
    *,
    cancel: asyncio.Event | None = None,
    timeout_s: float | None = None,
    stall_timeout_s: float | None = None,
) -> tuple[JobResult, ...]:
    """Run a step's jobs at the same time (all members at once, concurrent readers); results in step order.

    ``stall_timeout_s``: seconds a job may go without a status report before it is killed as stalled
    (default: STALL_INTERVALS of its status interval).
    """

    def forward(spec: JobSpec) -> ProgressCallback | None:
        if on_progress is None:
            return None
        return lambda progress: on_progress(spec, progress)

    return tuple(
        await asyncio.gather(
            *(
                run_job(spec, forward(spec), cancel=cancel, timeout_s=timeout_s, stall_timeout_s=stall_timeout_s)
                for spec in step.jobs
            )
        )
    )


__all__ = [
    "STALL_INTERVALS",
    "ProgressCallback",
    "default_stall_timeout_s",
    "default_timeout_s",
    "run_dd",
    "run_fio",
    "run_job",
    "run_step",
]
