"""CPU time of an array's md kernel thread (md0_raid6) over a step, from /proc/PID/stat."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from mdtui.probe.procstat import find_md_threads, read_pid_stat
from mdtui.probe.root import SystemRoot


class MdThreadMeter:
    """CPU time of an array's md kernel threads over an interval, threads that come and go included.

    A check pass starts an mdX_resync thread and ends it before the pass is seen to end, so threads are
    polled during the interval and each one's last reading kept; one first seen after start() began
    after it, so all of its time counts.
    """

    def __init__(
        self,
        root: SystemRoot,
        array: str,
        *,
        clock_ticks_per_s: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self.array = array
        self.clock_ticks_per_s = clock_ticks_per_s or os.sysconf("SC_CLK_TCK")
        self._clock = clock
        self._base: dict[tuple[int, str], int] = {}
        self._last: dict[tuple[int, str], int] = {}
        self._started = 0.0
        self._elapsed: float | None = None

    def _read(self) -> dict[tuple[int, str], int]:
        found = {}
        for thread in find_md_threads(self.root):
            if thread.array != self.array:
                continue
            pid_stat = read_pid_stat(self.root, thread.pid)
            if pid_stat is not None and pid_stat.comm == thread.name:
                found[(thread.pid, thread.name)] = pid_stat.cpu_ticks
        return found

    def start(self) -> None:
        self._base = self._read()
        self._last = dict(self._base)
        self._started = self._clock()
        self._elapsed = None

    def poll(self) -> None:
        for key, ticks in self._read().items():
            self._base.setdefault(key, 0)
            self._last[key] = ticks

    def stop(self) -> float | None:
        """Percent of one core the threads used since start(); None when the array has no md thread."""
        self.poll()
        self._elapsed = self._clock() - self._started
        return self.cpu_percent()

    def cpu_percent(self) -> float | None:
        if not self._last or not self._elapsed:
            return None
        ticks = sum(self._last[key] - self._base.get(key, 0) for key in self._last)
        return ticks / self.clock_ticks_per_s / self._elapsed * 100

    @property
    def threads(self) -> tuple[str, ...]:
        return tuple(sorted({name for _, name in self._last}))
