"""CPU load from /proc/stat, and each CPU's frequency and cpufreq settings."""

from __future__ import annotations

from itertools import repeat
from typing import Any, cast

from mdtui.model.snapshot import CoreState, CpuState
from mdtui.probe.cpu import (
    CpufreqReader,
    CpuLines,
    PolicySettings,
    ProcStatCpu,
    parse_cpu_lines,
    parse_khz,
    parse_proc_stat,
)
from mdtui.probe.kept import KeptFile
from mdtui.probe.root import TABLE_LIMIT, SystemRoot
from mdtui.sample.rates import cpu_percentages, cpu_percentages_columns
from mdtui.sample.source import Tick

MAX_KEPT_FREQUENCY_FILES = 256
MAX_KEPT_SETTING_FILES = 3 * MAX_KEPT_FREQUENCY_FILES  # governor, scaling_max_freq and EPP per policy


class CpuSource:
    """Busy and iowait percentages per CPU, with each CPU's MHz and (when due) its governor, cap and EPP."""

    def __init__(self, root: SystemRoot) -> None:
        self._stat = KeptFile(str(root.path("/proc/stat")), limit=TABLE_LIMIT, table=True)
        # Last tick's cpu lines (flat when regular) and the CPU number of each line.
        self._cpu_previous: CpuLines | ProcStatCpu = ProcStatCpu(None, {})
        self._cpu_numbers: tuple[int, ...] | None = None
        # Governor, cap and EPP files are re-read when due through kept descriptors, as the
        # frequencies are: a pread each instead of stat, open, fstat, read and close.
        self._setting_files: dict[str, KeptFile] = {}
        # Every setting file the last refresh read, in its order, with the bytes it got: when each still
        # holds those bytes, a refresh would read the same files, get the same bytes and keep everything.
        self._settings_reads: list[tuple[KeptFile, bytes | None]] | None = None
        self._settings_log: list[tuple[KeptFile, bytes | None]] | None = None
        self._cpufreq = CpufreqReader(root, self._read_setting)
        self._frequency_files: list[tuple[KeptFile, list[int]]] = []
        # Each file with the positions of its CPUs among those shown, and its last bytes and MHz.
        # (file, CPU positions, [the file's last bytes, the MHz they read as]): a two-slot cache per file.
        self._frequency_plan: list[tuple[KeptFile, list[int], list[Any]]] | None = None
        self._frequency_cpus: list[int] | None = None
        self._open_frequency_files()
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

    def read(self, tick: Tick) -> CpuState:
        settings_due = tick.settings_due
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
        if columns is not None and isinstance(current, CpuLines):
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
            lines = cast(list[int], core_lines)  # every core has its line when _core_has_times
            core_busy, core_iowait = list(map(busy.__getitem__, lines)), list(map(iowait.__getitem__, lines))
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
                # Read as a scan reads it (probe.cpu.parse_khz); only a file whose bytes changed is parsed again.
                khz = parse_khz(data)
                last[:] = data, khz / 1000.0 if khz is not None else None
            for index in positions:
                mhz[index] = last[1]
        return mhz

    def close(self) -> None:
        self._stat.close()
        for file, _ in self._frequency_files:
            file.close()
        for file in self._setting_files.values():
            file.close()


def _mhz(khz: int | None) -> float | None:
    return khz / 1000.0 if khz is not None else None


__all__ = ["MAX_KEPT_FREQUENCY_FILES", "MAX_KEPT_SETTING_FILES", "CpuSource"]
