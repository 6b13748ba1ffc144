"""The timed check pass: a redundant array's md check run and followed after the benchmark."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from mdtui.ascii_numbers import U64_MAX, parse_int
from mdtui.bench.md_thread import MdThreadMeter
from mdtui.bench.targets import SECTOR_BYTES
from mdtui.errors import MdtuiError
from mdtui.model.job import JobStatus
from mdtui.probe.root import SystemRoot
from mdtui.tune.journal import write_sysfs

CHECK_POLL_S = 0.5


@dataclass(frozen=True)
class CheckUpdate:
    """A check pass as last polled."""

    elapsed_s: float
    fraction: float | None
    speed_bytes_per_s: float | None

    @property
    def remaining_s(self) -> float | None:
        if not self.fraction or self.fraction >= 1:
            return None
        return self.elapsed_s * (1 - self.fraction) / self.fraction


@dataclass(frozen=True)
class CheckOutcome:
    """How long md took to read and verify every stripe, and the CPU its threads spent doing it."""

    array: str
    status: JobStatus
    duration_s: float = 0.0
    component_bytes: int | None = None  # per member, as sync_completed counts
    md_thread_cpu_pct: float | None = None
    md_threads: tuple[str, ...] = ()
    mismatch_sectors: int | None = None
    skipped: str = ""  # why no check ran
    error: str = ""
    run_id: int | None = None

    @property
    def bytes_per_s(self) -> float | None:
        """Per-member check rate, as /proc/mdstat's speed counts it."""
        if not self.component_bytes or self.duration_s <= 0 or self.status is not JobStatus.COMPLETE:
            return None
        return self.component_bytes / self.duration_s


def _sync_completed(text: str | None) -> tuple[int, int] | None:
    parts = (text or "").replace(" ", "").split("/")
    if len(parts) != 2:
        return None
    done, total = (parse_int(part, hi=U64_MAX // 512) for part in parts)
    return (done, total) if done is not None and total is not None else None


async def run_check_pass(
    root: SystemRoot,
    array: str,
    *,
    cancel: asyncio.Event | None = None,
    on_update: Callable[[CheckUpdate], None] | None = None,
    poll_s: float = CHECK_POLL_S,
) -> CheckOutcome:
    """Start `check` on an array and follow sync_action until it is idle again; cancel sets it back to idle."""
    action_path = f"/sys/block/{array}/md/sync_action"
    current = root.read_text(action_path)
    if current is None:
        return CheckOutcome(array, JobStatus.FAILED, skipped=f"{action_path} is missing: {array} has no check")
    if current != "idle":
        return CheckOutcome(array, JobStatus.FAILED, skipped=f"{array} is busy with {current}; no check pass")
    meter = MdThreadMeter(root, array)
    meter.start()
    started = time.monotonic()
    write_sysfs(root, action_path, "check", f"check pass of {array}")
    total_sectors: int | None = None
    status = JobStatus.COMPLETE
    try:
        while True:
            await asyncio.sleep(poll_s)
            meter.poll()
            action = root.read_text(action_path)
            completed = _sync_completed(root.read_text(f"/sys/block/{array}/md/sync_completed"))
            speed_kib = root.read_int(f"/sys/block/{array}/md/sync_speed")
            if completed is not None:
                total_sectors = completed[1]
            if on_update is not None:
                on_update(
                    CheckUpdate(
                        elapsed_s=time.monotonic() - started,
                        fraction=completed[0] / completed[1] if completed and completed[1] else None,
                        speed_bytes_per_s=speed_kib * 1024 if speed_kib is not None else None,
                    )
                )
            if action != "check":
                break
            if cancel is not None and cancel.is_set():
                status = JobStatus.CANCELLED
                write_sysfs(root, action_path, "idle", f"check pass of {array}: stopped")
    except asyncio.CancelledError:
        with contextlib.suppress(MdtuiError):
            write_sysfs(root, action_path, "idle", f"check pass of {array}: stopped")
        raise
    duration = time.monotonic() - started
    cpu = meter.stop()
    if total_sectors is None:
        # The pass ended before the first poll: a small array. md_size is KiB per member.
        kib = root.read_int(f"/sys/block/{array}/md/component_size")
        total_sectors = kib * 2 if kib is not None else None
    return CheckOutcome(
        array=array,
        status=status,
        duration_s=duration,
        component_bytes=total_sectors * SECTOR_BYTES if total_sectors is not None else None,
        md_thread_cpu_pct=cpu,
        md_threads=meter.threads,
        mismatch_sectors=root.read_int(f"/sys/block/{array}/md/mismatch_cnt"),
    )
