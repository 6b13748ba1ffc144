"""The live sampler: reads every counter once per tick and hands out immutable snapshots."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Iterator
from itertools import repeat
from operator import or_

from mdtui.errors import MdtuiError
from mdtui.model.array import MdArray
from mdtui.model.names import kernel_name_key
from mdtui.model.snapshot import CoreState, CpuState, DeviceRates, MdThreadCpu, Snapshot
from mdtui.probe.arrays import ArrayReader
from mdtui.probe.cpu import (
    MAX_KHZ,
    CpufreqReader,
    CpuLines,
    PolicySettings,
    ProcStatCpu,
    parse_cpu_lines,
    parse_proc_stat,
)
from mdtui.probe.diskstats import (
    IN_FLIGHT,
    READS,
    WRITES,
    DiskCounters,
    DiskstatsColumns,
    parse_diskstats_columns,
    parse_diskstats_lines,
    read_block_stats,
)
from mdtui.probe.kept import KeptFile
from mdtui.probe.procstat import MdThread, PidStat, find_md_threads, parse_pid_stat
from mdtui.probe.root import TABLE_LIMIT, SystemRoot
from mdtui.sample.rates import (
    cpu_percentages,
    cpu_percentages_columns,
    device_rates,
    device_rates_columns,
    thread_cpu_percent,
)

DEFAULT_INTERVAL_S = 1.0
MIN_INTERVAL_S = 0.1
# Ten minutes at the default interval. A snapshot of 64 devices and 16 CPUs holds about 37 KB, so an
# hour would pin 130 MB and make every full garbage collection walk it.
DEFAULT_HISTORY_LENGTH = 600
# Governor, EPP and frequency limits change only when someone changes them: re-read every few seconds.
DEFAULT_SETTINGS_REFRESH_S = 5.0
MAX_KEPT_FREQUENCY_FILES = 256
MAX_KEPT_SETTING_FILES = 3 * MAX_KEPT_FREQUENCY_FILES  # governor, scaling_max_freq and EPP per policy
# md threads come and go with arrays and syncs, and array details with /proc/mdstat, all of which the
# sampler notices itself; the periodic rescan of /proc/*/comm and md sysfs only catches the rest.
DEFAULT_RESCAN_S = 30.0

# Which devices a snapshot holds: a collection of kernel names, a predicate on the name, or None
# for every device that has done any I/O since it appeared (hides the idle ram*, loop*, fd0, sr0 rows).
DeviceFilter = Collection[str] | Callable[[str], bool] | None
SnapshotCallback = Callable[[Snapshot], Awaitable[object] | object]


class SampleIntervalError(MdtuiError, ValueError):
    """The requested sampling interval is too short to measure anything but the sampler itself."""


def check_interval(interval: float) -> float:
    if not interval >= MIN_INTERVAL_S:
        raise SampleIntervalError(f"sampling interval {interval} s is too short; use {MIN_INTERVAL_S} s or more")
    return float(interval)


def _ever_used(counters: DiskCounters) -> bool:
    return bool(counters.reads_completed or counters.writes_completed or counters.in_flight)


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
        # USER_HZ, the unit of /proc/PID/stat times; 100 on every mainstream architecture.
        self.clock_ticks_per_s = clock_ticks_per_s or os.sysconf("SC_CLK_TCK")
        self.skipped_deliveries = 0  # snapshots run() replaced before a slow callback could take them

        self._names: frozenset[str] | None = None
        self._predicate: Callable[[str], bool] | None = None
        if callable(devices):
            self._predicate = devices
        elif devices is not None:
            self._names = frozenset(devices)

        # run() samples in worker threads and an owner may take an extra sample (the benchmark's
        # closing one at the end of a step): one sample at a time keeps the counters consistent.
        self._sample_lock = threading.Lock()
        # Whole tables: one that exists but cannot be read (a FIFO, a device, binary) stops sampling with
        # a RefusedFileError naming it, as it stops a scan.
        self._diskstats = KeptFile(str(root.path("/proc/diskstats")), limit=TABLE_LIMIT, table=True)
        self._stat = KeptFile(str(root.path("/proc/stat")), limit=TABLE_LIMIT, table=True)
        self._mdstat = KeptFile(str(root.path("/proc/mdstat")), limit=TABLE_LIMIT, table=True)
        self._proc = root.path("/proc")

        self._previous_time: float | None = None
        # Last tick's diskstats: as columns when it was regular (the usual case), as text, and as
        # counters per device only when that tick (or a line-by-line one after it) needed them.
        self._table: DiskstatsColumns | None = None
        self._table_text: str | None = None
        self._disks: dict[str, DiskCounters] | None = {}
        self._lines: dict[str, DiskCounters] = {}
        # Which lines are shown, in name order, for the names list they were worked out for.
        self._order_names: list[str] | None = None
        self._order: list[int] = []
        self._named: list[int] | None = None
        # The names list of the last column tick when every one of its lines had done reads or writes.
        self._all_used: list[str] | None = None
        # Last tick's cpu lines (flat when regular) and the CPU number of each line.
        self._cpu_previous: CpuLines | ProcStatCpu = ProcStatCpu(None, {})
        self._cpu_numbers: tuple[int, ...] | None = None
        self._thread_ticks: dict[int, int] = {}

        # Governor, cap and EPP files are re-read every settings_refresh_s through kept descriptors,
        # as the frequencies are: a pread each instead of stat, open, fstat, read and close.
        self._setting_files: dict[str, KeptFile] = {}
        # Every setting file the last refresh read, in its order, with the bytes it got: when each still
        # holds those bytes, a refresh would read the same files, get the same bytes and keep everything.
        self._settings_reads: list[tuple[KeptFile, bytes | None]] | None = None
        self._settings_log: list[tuple[KeptFile, bytes | None]] | None = None
        self._cpufreq = CpufreqReader(root, self._read_setting)
        self._frequency_files: list[tuple[KeptFile, list[int]]] = []
        # Each file with the positions of its CPUs among those shown, and its last bytes and MHz.
        self._frequency_plan: list[tuple[KeptFile, list[int], list[bytes | float | None]]] | None = None
        self._frequency_cpus: list[int] | None = None
        self._open_frequency_files()
        self._settings_read_at: float | None = None
        self._settings_forced = False
        self._drivers_for: dict[int, PolicySettings] | None = None
        # The CPUs of the last layout (hotplug and settings reads change it), with their fixed columns.
        self._core_cpus: list[int] = []
        self._core_lines: list[int | None] = []
        self._total_line: int | None = None
        self._core_has_times = False
        self._core_fixed: tuple[list[float | None], list[float | None], list[str | None], list[str | None]] = (
            [],
            [],
            [],
            [],
        )
        self._core_policy: list[bool] = []
        self._drivers: str | None = None
        self._mdstat_text: str | None = None
        self._arrays: tuple[MdArray, ...] = ()
        self._array_reader = ArrayReader(root)
        self._threads: list[tuple[MdThread, KeptFile]] = []  # with each one's /proc/PID/stat
        self._threads_key: tuple[tuple[str, str | None], ...] | None = None
        self._rescanned_at: float | None = None
        self._rescan_forced = False

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

        devices = self._sample_devices(interval)
        cpu = self._sample_cpu(settings_due)
        arrays = self._sample_arrays(rescan_due)
        threads = self._sample_threads(interval, arrays, rescan_due)
        snapshot = Snapshot(timestamp, interval, devices, cpu, arrays, threads)
        self.history.append(snapshot)
        return snapshot

    def refresh_settings(self) -> None:
        """Re-read governors, EPP, frequency caps and array details on the next tick, not in seconds.

        For callers that just changed one of them (an A/B run switching the governor).
        """
        self._settings_forced = True
        self._rescan_forced = True

    def _sample_devices(self, interval: float | None) -> tuple[DeviceRates, ...]:
        text = self._diskstats.read()
        if text is None:
            # Captured trees may hold only sysfs; /sys/block/*/stat costs a file per device but is exact.
            self._table = self._table_text = self._all_used = None
            return self._rates_by_line(read_block_stats(self.root, self._names), interval)
        # The usual tick: the same devices on the same lines as last tick, converted and turned into
        # rates field by field for all of them at once. Anything else goes line by line.
        previous, previous_text = self._table, self._table_text
        table = parse_diskstats_columns(text, previous)
        self._table, self._table_text = table, text
        if table is not None and previous is not None and interval is not None:
            rates = device_rates_columns(table, previous, interval)
            if rates is not None:
                self._disks = None  # rebuilt from previous_text if a later tick goes line by line
                return tuple(map(rates.__getitem__, self._chosen_lines(table)))
        self._all_used = None
        if self._disks is None and previous_text is not None:
            self._disks = self._parse_diskstats(previous_text)
        return self._rates_by_line(self._parse_diskstats(text), interval)

    def _chosen_lines(self, table: DiskstatsColumns) -> list[int]:
        """The lines of the devices this sampler shows, in name order."""
        if table.names is not self._order_names:
            # Same devices as last tick (device_rates_columns checked): the order is the same too.
            if self._order_names is None or table.names != self._order_names:
                keys = list(map(kernel_name_key, table.names))
                self._order = sorted(range(len(keys)), key=keys.__getitem__)
                names = self._names
                self._named = [i for i in self._order if table.names[i] in names] if names is not None else None
            self._order_names = table.names
        if self._named is not None:
            return self._named
        names = table.names
        if self._predicate is not None:
            predicate = self._predicate
            return [i for i in self._order if predicate(names[i])]
        if self._all_used is names:
            # Every line had done reads or writes last tick, and on this path neither count went
            # back (device_rates_columns checked): every line has still done some and is shown.
            return self._order
        counters = table.counters
        reads, writes, in_flight = counters[READS], counters[WRITES], counters[IN_FLIGHT]
        if all(map(or_, reads, writes)):
            self._all_used = names
            return self._order
        self._all_used = None
        return [i for i in self._order if reads[i] or writes[i] or in_flight[i]]

    def _rates_by_line(self, current: dict[str, DiskCounters], interval: float | None) -> tuple[DeviceRates, ...]:
        previous = self._disks or {}
        self._disks = current
        if self._predicate is not None:
            chosen = [c for name, c in current.items() if self._predicate(name)]
        elif self._names is not None:
            chosen = list(current.values())
        else:
            chosen = [c for c in current.values() if _ever_used(c)]
        chosen.sort(key=lambda counters: kernel_name_key(counters.name))
        return tuple(device_rates(counters, previous.get(counters.name), interval) for counters in chosen)

    def _parse_diskstats(self, text: str) -> dict[str, DiskCounters]:
        """parse_diskstats, but a line identical to one seen last tick reuses that tick's counters."""
        previous_lines = self._lines
        names = self._names
        # Lines that changed since last tick are converted together (parse_diskstats_lines), in file order.
        changed = []
        for line in text.splitlines():
            if line in previous_lines:
                continue
            if names is not None:
                fields = line.split(None, 3)
                if len(fields) < 3 or fields[2] not in names:
                    continue
            changed.append(line)
        parsed = dict(zip(changed, parse_diskstats_lines(changed), strict=True))
        lines: dict[str, DiskCounters] = {}
        devices: dict[str, DiskCounters] = {}
        for line in text.splitlines():
            counters = previous_lines.get(line) or parsed.get(line)
            if counters is None:
                continue
            lines[line] = counters
            devices[counters.name] = counters
        self._lines = lines
        return devices

    def _sample_cpu(self, settings_due: bool) -> CpuState:
        text = self._stat.read()
        # The usual tick: the same cpu lines as last tick, every one regular, turned into percentages
        # from the flat counters; anything else goes CPU by CPU.
        current: CpuLines | ProcStatCpu = ProcStatCpu(None, {})
        previous = self._cpu_previous
        if text is not None:
            last = previous if isinstance(previous, CpuLines) else None
            current = parse_cpu_lines(text, last) or parse_proc_stat(text)
        self._cpu_previous = current
        columns = None
        if isinstance(current, CpuLines) and isinstance(previous, CpuLines):
            columns = cpu_percentages_columns(current, previous)
        if columns is not None:
            numbers = current.numbers
            busy, iowait = columns
        else:
            now = current.times() if isinstance(current, CpuLines) else current
            before = previous.times() if isinstance(previous, CpuLines) else previous
            numbers = ((-1,) if now.total is not None else ()) + tuple(now.per_cpu)
            load = [cpu_percentages(now.total, before.total)] if now.total is not None else []
            load += [cpu_percentages(times, before.per_cpu.get(cpu)) for cpu, times in now.per_cpu.items()]
            busy, iowait = [pair[0] for pair in load], [pair[1] for pair in load]

        reader = self._cpufreq
        cpus_changed = numbers != self._cpu_numbers
        if cpus_changed and self._cpu_numbers is not None:
            # CPUs went on- or offline, and their cpufreq policies may have come or gone with them.
            reader.discover()
            self._open_frequency_files()
            self._settings_reads = None  # discovery read them its own way
        elif settings_due and not self._settings_unchanged():
            self._refresh_settings()
        settings = reader.settings()
        if cpus_changed or settings is not self._drivers_for:
            self._cpu_numbers = numbers
            self._drivers_for = settings
            self._drivers = ", ".join(sorted({s.driver for s in settings.values() if s.driver})) or None
            self._lay_out_cores(numbers, settings)
        cpus, fixed = self._core_cpus, self._core_fixed

        total = self._total_line
        total_busy, total_iowait = (busy[total], iowait[total]) if total is not None else (None, None)
        core_lines = self._core_lines
        if self._core_has_times:
            core_busy, core_iowait = list(map(busy.__getitem__, core_lines)), list(map(iowait.__getitem__, core_lines))
        else:
            core_busy = [busy[line] if line is not None else None for line in core_lines]
            core_iowait = [iowait[line] if line is not None else None for line in core_lines]
        mhz = self._read_frequencies(cpus)
        cores = tuple(
            map(tuple.__new__, repeat(CoreState), zip(cpus, core_busy, core_iowait, mhz, *fixed, strict=True))
        )
        return CpuState(
            reader.available,
            cores,
            total_busy,
            total_iowait,
            self._drivers,
            reader.pstate_driver,
            reader.pstate_status,
        )

    def _lay_out_cores(self, numbers: tuple[int, ...], settings: dict[int, PolicySettings]) -> None:
        """The CPUs shown, in order, the line of each, and what stays the same for each between settings reads."""
        line_of = {number: line for line, number in enumerate(numbers)}
        self._total_line = line_of.pop(-1, None)
        cpus = sorted(line_of.keys() | settings.keys())
        self._core_cpus = cpus
        self._core_lines = [line_of.get(cpu) for cpu in cpus]
        self._core_has_times = None not in self._core_lines
        policies = [settings.get(cpu) for cpu in cpus]
        self._core_fixed = (
            [_mhz(p.cpuinfo_max_khz) if p else None for p in policies],
            [_mhz(p.scaling_max_khz) if p else None for p in policies],
            [p.governor if p else None for p in policies],
            [p.epp if p else None for p in policies],
        )
        self._core_policy = [p is not None for p in policies]

    def _settings_unchanged(self) -> bool:
        """Whether every file the last refresh read still holds the bytes it read then."""
        reads = self._settings_reads
        if reads is None:
            return False
        return all(file.read_small() == data for file, data in reads)

    def _refresh_settings(self) -> None:
        """CpufreqReader.refresh_settings, noting each file it reads and the bytes it gets."""
        log: list[tuple[KeptFile, bytes | None]] = []
        self._settings_log = log
        try:
            self._cpufreq.refresh_settings()
        finally:
            self._settings_log = None
        self._settings_reads = log

    def _open_frequency_files(self) -> None:
        for file, _ in self._frequency_files:
            file.close()
        by_path: dict[str, list[int]] = {}
        for cpu, path in self._cpufreq.current_files().items():
            by_path.setdefault(path, []).append(cpu)
        # One descriptor per policy; past a few hundred (huge hosts) reopen each time to spare the fd limit.
        keep_open = len(by_path) <= MAX_KEPT_FREQUENCY_FILES
        self._frequency_files = [(KeptFile(path, keep_open), cpus) for path, cpus in by_path.items()]
        self._frequency_plan = None

    def _read_setting(self, path: str) -> str | None:
        """A cpufreq setting as probe.cpu reads it (stripped, None when missing, refused or empty)."""
        data = self._read_setting_bytes(path)
        return (data.decode(errors="replace").strip() or None) if data is not None else None

    def _read_setting_bytes(self, path: str) -> bytes | None:
        """A cpufreq setting file's bytes, through a descriptor kept open (None when missing or refused)."""
        file = self._setting_files.get(path)
        if file is None:
            keep_open = len(self._setting_files) < MAX_KEPT_SETTING_FILES
            file = KeptFile(path, keep_open)
            if keep_open:
                self._setting_files[path] = file
        data = file.read_small()
        if self._settings_log is not None:
            self._settings_log.append((file, data))
        return data

    def _read_frequencies(self, cpus: list[int]) -> list[float | None]:
        """Each CPU's current MHz (None without a policy or a reading), read through the kept-open files."""
        plan = self._frequency_plan
        if plan is None or self._frequency_cpus is not cpus:
            # Where each file's reading goes among the CPUs shown: those sharing it that have a policy.
            policies = zip(cpus, self._core_policy, strict=True)
            position = {cpu: index for index, (cpu, policy) in enumerate(policies) if policy}
            plan = [
                (file, [position[cpu] for cpu in sharing if cpu in position], [None, None])
                for file, sharing in self._frequency_files
            ]
            self._frequency_plan, self._frequency_cpus = plan, cpus
        mhz: list[float | None] = [None] * len(cpus)
        for file, positions, last in plan:
            data = file.read_small()
            if data is None or data != last[0]:
                # A plain ASCII number, as parse_int demands (int() alone would take "+5", "1_0" or "٤").
                value = int(data) if data is not None and data.strip().isdigit() and len(data) < 32 else None
                last[:] = data, value / 1000.0 if value is not None and value <= MAX_KHZ else None
            for index in positions:
                mhz[index] = last[1]
        return mhz

    def close(self) -> None:
        """Close the kept-open kernel files; the sampler reopens them if sampled again."""
        for file in (self._diskstats, self._stat, self._mdstat):
            file.close()
        for file, _ in self._frequency_files:
            file.close()
        for file in self._setting_files.values():
            file.close()
        for _, file in self._threads:
            file.close()
        self._array_reader.close()

    def __enter__(self) -> Sampler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # Descriptors are plain ints, which the garbage collector would not close by itself.
        with contextlib.suppress(Exception):
            self.close()

    def _sample_arrays(self, rescan_due: bool) -> tuple[MdArray, ...]:
        text = self._mdstat.read()
        # mdstat changes whenever anything worth showing live changes (members, sync progress and
        # speed), so an unchanged text means the dozens of sysfs reads behind read_arrays can wait,
        # and a text changed only in an array's progress line re-reads just that array's sync files
        # (ArrayReader). Only sysfs-only details such as clean/active flips lag, by at most rescan_s.
        if text != self._mdstat_text or rescan_due:
            self._mdstat_text = text
            self._arrays = tuple(self._array_reader.read(text, full=rescan_due))
        return self._arrays

    def _sample_threads(
        self, interval: float | None, arrays: tuple[MdArray, ...], rescan_due: bool
    ) -> tuple[MdThreadCpu, ...]:
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
            (thread, kept.pop(thread, None) or KeptFile(str(self._proc / str(thread.pid) / "stat")))
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


def _mhz(khz: int | None) -> float | None:
    return khz / 1000.0 if khz is not None else None


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
