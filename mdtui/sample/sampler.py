"""The live sampler: reads every source once per tick and hands out immutable snapshots."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator

from mdtui.errors import MdtuiError
from mdtui.model.snapshot import Snapshot
from mdtui.probe.root import SystemRoot
from mdtui.sample.arrays import ArraySource
from mdtui.sample.cpu import CpuSource
from mdtui.sample.devices import DeviceFilter, DeviceSource
from mdtui.sample.source import Tick
from mdtui.sample.threads import ThreadSource

DEFAULT_INTERVAL_S = 1.0
MIN_INTERVAL_S = 0.1
# Ten minutes at the default interval. A snapshot of 64 devices and 16 CPUs holds about 37 KB, so an
# hour would pin 130 MB and make every full garbage collection walk it.
DEFAULT_HISTORY_LENGTH = 600
# Governor, EPP and frequency limits change only when someone changes them: re-read every few seconds.
DEFAULT_SETTINGS_REFRESH_S = 5.0
# md threads come and go with arrays and syncs, and array details with /proc/mdstat, all of which the
# sampler notices itself; the periodic rescan of /proc/*/comm and md sysfs only catches the rest.
DEFAULT_RESCAN_S = 30.0

SnapshotCallback = Callable[[Snapshot], Awaitable[object] | object]


class SampleIntervalError(MdtuiError, ValueError):
    """The requested sampling interval is too short to measure anything but the sampler itself."""


def check_interval(interval: float) -> float:
    if not interval >= MIN_INTERVAL_S:
        raise SampleIntervalError(f"sampling interval {interval} s is too short; use {MIN_INTERVAL_S} s or more")
    return float(interval)


class History:
    """The last maxlen snapshots, oldest first; older ones fall off the end."""

    def __init__(self, maxlen: int = DEFAULT_HISTORY_LENGTH) -> None:
        self._snapshots: deque[Snapshot] = deque(maxlen=maxlen)

    @property
    def maxlen(self) -> int:
        return self._snapshots.maxlen or 0

    def append(self, snapshot: Snapshot) -> None:
        self._snapshots.append(snapshot)

    def snapshots(self) -> tuple[Snapshot, ...]:
        # tuple() copies the deque in one C call under the GIL, so a reader on the UI thread never
        # sees "deque mutated during iteration" while the sampler thread appends.
        return tuple(self._snapshots)

    def latest(self) -> Snapshot | None:
        try:
            return self._snapshots[-1]
        except IndexError:
            return None

    def since(self, timestamp: float) -> tuple[Snapshot, ...]:
        return tuple(s for s in self.snapshots() if s.timestamp >= timestamp)

    def clear(self) -> None:
        self._snapshots.clear()

    def __len__(self) -> int:
        return len(self._snapshots)

    def __iter__(self) -> Iterator[Snapshot]:
        return iter(self.snapshots())


class Sampler:
    """Samples devices, CPUs, md arrays and md threads; call sample() from one thread at a time."""

    def __init__(
        self,
        root: SystemRoot,
        devices: DeviceFilter = None,
        *,
        history_length: int = DEFAULT_HISTORY_LENGTH,
        clock_ticks_per_s: int | None = None,
        settings_refresh_s: float = DEFAULT_SETTINGS_REFRESH_S,
        rescan_s: float = DEFAULT_RESCAN_S,
    ) -> None:
        self.root = root
        self.history = History(history_length)
        self.settings_refresh_s = settings_refresh_s
        self.rescan_s = rescan_s
        self.skipped_deliveries = 0  # snapshots run() replaced before a slow callback could take them
        # run() samples in worker threads and an owner may take an extra sample (the benchmark's
        # closing one at the end of a step): one sample at a time keeps the counters consistent.
        self._sample_lock = threading.Lock()
        self.devices = DeviceSource(root, devices)
        self.cpu = CpuSource(root)
        self.arrays = ArraySource(root)
        self.threads = ThreadSource(root, self.arrays, clock_ticks_per_s)
        self._previous_time: float | None = None
        self._settings_read_at: float | None = None
        self._settings_forced = False
        self._rescanned_at: float | None = None
        self._rescan_forced = False

    @property
    def clock_ticks_per_s(self) -> int:
        return self.threads.clock_ticks_per_s

    def sample(self, now: float | None = None) -> Snapshot:
        """Read everything once and turn it into rates against the previous sample.

        now stamps the snapshot and measures the interval; tests pass it to get exact rates. By
        default the wall clock stamps it and the monotonic clock measures the interval, so a clock
        step cannot distort the rates. Use one way or the other for a sampler's whole life.
        Safe to call from several threads: samples are taken one at a time.
        """
        with self._sample_lock:
            return self._sample(now)

    def _sample(self, now: float | None) -> Snapshot:
        if now is None:
            timestamp, clock = time.time(), time.monotonic()
        else:
            timestamp = clock = now
        interval = clock - self._previous_time if self._previous_time is not None else None
        if interval is not None and interval <= 0:
            interval = None
        self._previous_time = clock

        # Everything slow was read in full on the first tick (or when the reader was made).
        if self._settings_read_at is None or self._rescanned_at is None:
            self._settings_read_at = self._rescanned_at = clock
        settings_due = self._settings_forced or clock - self._settings_read_at >= self.settings_refresh_s
        if settings_due:
            self._settings_read_at = clock
            self._settings_forced = False
        rescan_due = self._rescan_forced or clock - self._rescanned_at >= self.rescan_s
        if rescan_due:
            self._rescanned_at = clock
            self._rescan_forced = False

        tick = Tick(interval, settings_due, rescan_due)
        devices = self.devices.read(tick)
        cpu = self.cpu.read(tick)
        arrays = self.arrays.read(tick)
        threads = self.threads.read(tick)  # after the arrays: it follows theirs
        snapshot = Snapshot(timestamp, interval, devices, cpu, arrays, threads)
        self.history.append(snapshot)
        return snapshot

    def refresh_settings(self) -> None:
        """Re-read governors, EPP, frequency caps and array details on the next tick, not in seconds.

        For callers that just changed one of them (an A/B run switching the governor).
        """
        self._settings_forced = True
        self._rescan_forced = True

    def close(self) -> None:
        """Close the kept-open kernel files; the sampler reopens them if sampled again."""
        self.devices.close()
        self.cpu.close()
        self.threads.close()
        self.arrays.close()

    def __enter__(self) -> Sampler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # Descriptors are plain ints, which the garbage collector would not close by itself.
        with contextlib.suppress(Exception):
            self.close()

    async def run(
        self,
        interval: float = DEFAULT_INTERVAL_S,
        callback: SnapshotCallback | None = None,
        *,
        count: int | None = None,
    ) -> None:
        """Sample every interval seconds until cancelled (or count samples), handing each to callback.

        Sampling keeps its own schedule: reads happen in a worker thread, and the callback runs in a
        separate task that always gets the newest snapshot; one that arrives while the callback is
        still busy replaces the pending one (all of them are in history). Coroutine callbacks are
        awaited on the loop; plain callables run in a worker thread so a blocking one cannot stall
        sampling (Textual's post_message is thread-safe). An exception from the callback stops run.
        """
        interval = check_interval(interval)
        loop = asyncio.get_running_loop()
        pending: list[Snapshot] = []
        wake = asyncio.Event()
        stopping = False

        async def deliver() -> None:
            assert callback is not None
            while True:
                if not pending:
                    if stopping:
                        return
                    await wake.wait()
                    wake.clear()
                    continue
                snapshot = pending.pop()
                if inspect.iscoroutinefunction(callback):
                    await callback(snapshot)
                else:
                    result = await asyncio.to_thread(callback, snapshot)
                    if inspect.isawaitable(result):
                        await result

        consumer = asyncio.create_task(deliver()) if callback is not None else None
        try:
            deadline = loop.time()
            taken = 0
            while count is None or taken < count:
                snapshot = await asyncio.to_thread(self.sample)
                taken += 1
                if consumer is not None:
                    if consumer.done():
                        await consumer  # re-raises the callback's exception
                    if pending:
                        self.skipped_deliveries += 1
                    pending[:] = [snapshot]
                    wake.set()
                if count is not None and taken >= count:
                    break
                deadline = _next_deadline(deadline, interval, loop.time())
                await asyncio.sleep(deadline - loop.time())
            if consumer is not None:
                stopping = True
                wake.set()
                await consumer
        finally:
            if consumer is not None and not consumer.done():
                consumer.cancel()

    def iterate(self, interval: float = DEFAULT_INTERVAL_S, count: int | None = None) -> Iterator[Snapshot]:
        """Blocking snapshots every interval seconds, for the CLI; a slow consumer skips ticks, not drifts."""
        interval = check_interval(interval)
        deadline = time.monotonic()
        taken = 0
        while count is None or taken < count:
            yield self.sample()
            taken += 1
            if count is not None and taken >= count:
                return
            deadline = _next_deadline(deadline, interval, time.monotonic())
            time.sleep(max(0.0, deadline - time.monotonic()))


def _next_deadline(deadline: float, interval: float, now: float) -> float:
    """The next tick on the original grid; ticks already missed are skipped, not replayed in a burst."""
    deadline += interval
    if deadline < now:
        deadline += ((now - deadline) // interval + 1) * interval
    return deadline


__all__ = [
    "DEFAULT_INTERVAL_S",
    "MIN_INTERVAL_S",
    "DeviceFilter",
    "History",
    "SampleIntervalError",
    "Sampler",
    "SnapshotCallback",
    "check_interval",
]
