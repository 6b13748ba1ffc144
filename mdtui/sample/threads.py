"""CPU use of the md kernel threads (mdN_raidX, mdN_resync ...) from /proc/PID/stat."""

from __future__ import annotations

import os

from mdtui.model.snapshot import MdThreadCpu
from mdtui.probe.kept import KeptFile
from mdtui.probe.procstat import MdThread, PidStat, find_md_threads, parse_pid_stat
from mdtui.probe.root import SystemRoot
from mdtui.sample.arrays import ArraySource
from mdtui.sample.rates import thread_cpu_percent
from mdtui.sample.source import Tick


class ThreadSource:
    """Each md thread's CPU percent since the previous tick; read after the arrays of the same tick."""

    def __init__(self, root: SystemRoot, arrays: ArraySource, clock_ticks_per_s: int | None = None) -> None:
        self.root = root
        self._arrays = arrays
        self._proc = root.path("/proc")
        # USER_HZ, the unit of /proc/PID/stat times; 100 on every mainstream architecture.
        self.clock_ticks_per_s = clock_ticks_per_s or os.sysconf("SC_CLK_TCK")
        self._thread_ticks: dict[int, int] = {}
        self._threads: list[tuple[MdThread, KeptFile]] = []  # with each one's /proc/PID/stat
        self._threads_key: tuple[tuple[str, str | None], ...] | None = None

    def read(self, tick: Tick) -> tuple[MdThreadCpu, ...]:
        interval, rescan_due, arrays = tick.interval, tick.rescan_due, self._arrays.latest
        # A new array, a stopped one, or a sync starting or ending adds or removes md threads.
        key = tuple((a.name, a.sync.action if a.sync else None) for a in arrays)
        rescan = rescan_due or key != self._threads_key
        if rescan:
            self._rescan_threads(key)
        stats = self._read_thread_stats()
        if stats is None and not rescan:
            # A thread exited or its pid was reused: find the current set now rather than next tick.
            self._rescan_threads(key)
            stats = self._read_thread_stats()
        stats = stats or []

        previous = self._thread_ticks
        ticks: dict[int, int] = {}
        self._thread_ticks = ticks
        ticks_per_s = self.clock_ticks_per_s
        found = []
        for thread, stat in stats:
            pid, cpu_ticks = stat.pid, stat.utime_ticks + stat.stime_ticks  # PidStat.cpu_ticks
            ticks[pid] = cpu_ticks
            percent = thread_cpu_percent(cpu_ticks, previous.get(pid), interval, ticks_per_s)
            seconds = cpu_ticks / ticks_per_s
            found.append(MdThreadCpu(pid, thread.name, thread.array, thread.role, percent, seconds, stat.processor))
        return tuple(found)

    def _rescan_threads(self, key: tuple[tuple[str, str | None], ...]) -> None:
        # md threads exist only for running arrays, so a host without any is never scanned.
        threads = find_md_threads(self.root) if key else []
        kept = {thread: file for thread, file in self._threads}
        self._threads = [
            (thread, kept[thread] if thread in kept else KeptFile(str(self._proc / str(thread.pid) / "stat")))
            for thread in threads
        ]
        for file in kept.values():
            file.close()
        self._threads_key = key

    def _read_thread_stats(self) -> list[tuple[MdThread, PidStat]] | None:
        """Each known thread's stat, or None when one has gone or is no longer the same thread."""
        found = []
        for thread, file in self._threads:
            data = file.read_small(1024)  # read()'s text as bytes, in one pread while the task lives
            stat = parse_pid_stat(data.decode(errors="replace")) if data is not None else None
            if stat is None or stat.comm != thread.name:
                return None
            found.append((thread, stat))
        return found

    def close(self) -> None:
        for _, file in self._threads:
            file.close()


__all__ = ["ThreadSource"]
