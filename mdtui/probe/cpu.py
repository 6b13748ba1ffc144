"""CPU counters and frequency: /proc/stat cpu lines, cpufreq per CPU, intel_pstate/amd_pstate status."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import NamedTuple

from mdtui.ascii_numbers import U64_MAX, parse_counters, parse_int
from mdtui.probe.root import SystemRoot, read_attribute

PROC_STAT = "/proc/stat"
CPU_SYSFS = "/sys/devices/system/cpu"
PSTATE_DRIVERS = ("intel_pstate", "amd_pstate")

# The run of lines starting "cpu" (the last may lack its newline).
_CPU_LINES_RE = re.compile(r"(?:cpu[^\n]*(?:\n|\Z))*")
_CPU_DIR_RE = re.compile(r"cpu([0-9]+)", re.ASCII)
_POLICY_DIR_RE = re.compile(r"policy[0-9]+", re.ASCII)
# Linux allows at most 8192 CPUs (NR_CPUS); a larger number in a file is damage, not a CPU.
MAX_CPUS = 1 << 16
# 100 GHz: no CPU runs faster, so a larger kHz figure is damage.
MAX_KHZ = 100_000_000


class CpuTimes(NamedTuple):
    """One cpu line of /proc/stat, in USER_HZ ticks. Older kernels print fewer fields; those read 0."""

    user: int = 0
    nice: int = 0
    system: int = 0
    idle: int = 0
    iowait: int = 0
    irq: int = 0
    softirq: int = 0
    steal: int = 0
    guest: int = 0
    guest_nice: int = 0

    @property
    def total(self) -> int:
        # guest and guest_nice are already counted inside user and nice; adding them would count twice.
        return self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal

    @property
    def busy(self) -> int:
        return self.total - self.idle - self.iowait


class ProcStatCpu(NamedTuple):
    """The aggregate "cpu" line and one line per online CPU, keyed by CPU number."""

    total: CpuTimes | None
    per_cpu: dict[int, CpuTimes]


class CpuLines(NamedTuple):
    """The cpu lines of /proc/stat field by field: what a sampler keeps between ticks.

    ``numbers`` holds each line's CPU number (-1 for the aggregate "cpu" line) and is the same tuple
    object for as long as the kernel prints the same lines, so ``is`` tells a tick that no CPU came
    or went; ``columns`` holds the ten counters field by field (user of every line, then nice, ...)
    and ``words`` each field's words as printed: a field printed as last tick printed it keeps last
    tick's list, unconverted.
    """

    numbers: tuple[int, ...]
    columns: tuple[list[int], ...]
    words: tuple[list[str], ...] = ()

    @property
    def values(self) -> list[int]:
        """The ten counters of every line, line after line (built on demand: the sampler's usual tick
        works on the columns and never needs them)."""
        values = [0] * (10 * len(self.numbers))
        for field, column in enumerate(self.columns):
            values[field::10] = column
        return values

    def times(self) -> ProcStatCpu:
        rows = map(_new_tuple, repeat(CpuTimes), zip(*[iter(self.values)] * 10, strict=True))
        total = None
        per_cpu: dict[int, CpuTimes] = {}
        for number, times in zip(self.numbers, rows, strict=True):
            if number < 0:
                total = times
            else:
                per_cpu[number] = times
        return ProcStatCpu(total, per_cpu)


def parse_proc_stat(text: str) -> ProcStatCpu:
    """The cpu lines of /proc/stat; the rest (intr can be tens of kilobytes) is never split.

    A line whose label or counters are not plain numbers (Unicode digits, too many digits, a sign) is
    skipped: that CPU is unknown.
    """
    block = _cpu_block(text)
    regular = _block_lines(block)
    if regular is not None:
        return regular.times()
    total: CpuTimes | None = None
    per_cpu: dict[int, CpuTimes] = {}
    for line in block.splitlines():
        label, *values = line.split()
        numbers = parse_counters(values[:10])
        if numbers is None:
            continue
        # A bare tuple.__new__ skips NamedTuple's generated __new__; this runs per CPU per tick.
        times = _new_tuple(CpuTimes, numbers + _ZEROS[len(numbers) :])
        if label == "cpu":
            total = times
        elif label[3:].isdigit() and (number := parse_int(label[3:], hi=MAX_CPUS)) is not None:
            per_cpu[number] = times
    return ProcStatCpu(total, per_cpu)


def _cpu_block(text: str) -> str:
    """The cpu lines: the kernel prints them first, so only the text before the first other line."""
    start = 0 if text.startswith("cpu") else text.find("\ncpu") + 1
    match = _CPU_LINES_RE.match(text, start)
    return match[0] if match is not None else ""


def parse_cpu_lines(text: str, previous: CpuLines | None = None) -> CpuLines | None:
    """/proc/stat's cpu lines when every one has ten counters, converted a field at a time for all CPUs
    (a 256-CPU host prints 257 lines a tick); None when a line is not like that (older kernels print
    fewer fields, or a word is damaged), and parse_proc_stat goes line by line. A field whose words
    are those of ``previous`` (last tick's lines: guest, steal and nice mostly stay 0) takes its numbers.
    """
    return _block_lines(_cpu_block(text), previous)


def _block_lines(block: str, previous: CpuLines | None = None) -> CpuLines | None:
    # No Unicode digits, signs or underscores, which int() would accept and no kernel prints.
    if not block.isascii() or "-" in block or "+" in block or "_" in block:
        return None
    words = block.split()
    lines = block.count("\n") + (0 if block.endswith("\n") else 1)
    if not words or len(words) != 11 * lines:
        return None
    numbers = _cpu_numbers(tuple(words[0::11]))
    if numbers is None:
        return None
    fields = tuple(words[1 + field :: 11] for field in range(10))
    known_words, known_columns = (previous.words, previous.columns) if previous is not None else ((), ())
    columns = []
    for field, column in enumerate(fields):
        if known_words and known_words[field] == column:
            columns.append(known_columns[field])  # the same words: the numbers that passed last tick
            continue
        try:
            converted = list(map(int, column))
        except ValueError:  # a word that is not a number (int() refuses it), or one of over 4300 digits
            return None
        if max(converted) > U64_MAX:
            return None
        columns.append(converted)
    return CpuLines(numbers, tuple(columns), fields)


@functools.lru_cache(maxsize=8)
def _cpu_numbers(labels: tuple[str, ...]) -> tuple[int, ...] | None:
    """Each cpu line's CPU number (-1 for the aggregate "cpu" line); None when a label is not one."""
    numbers = []
    for label in labels:
        if label == "cpu":
            numbers.append(-1)
        else:
            digits = label[3:] if label.startswith("cpu") else ""
            number = parse_int(digits, hi=MAX_CPUS) if digits.isdigit() else None
            if number is None:
                return None
            numbers.append(number)
    return tuple(numbers)


_ZEROS = (0,) * len(CpuTimes._fields)
_new_tuple = tuple.__new__


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """One cpufreq policy directory's settings (shared by its related CPUs)."""

    governor: str | None = None
    driver: str | None = None
    cpuinfo_max_khz: int | None = None
    cpuinfo_min_khz: int | None = None
    scaling_max_khz: int | None = None
    epp: str | None = None  # energy_performance_preference, only under intel_pstate/amd-pstate active modes


@dataclass(frozen=True, slots=True)
class CoreFrequency:
    cpu: int
    cur_khz: int | None
    settings: PolicySettings


@dataclass(frozen=True, slots=True)
class CpufreqState:
    """cpufreq for every CPU that has it; available is False when none has (not zeros)."""

    available: bool
    cores: tuple[CoreFrequency, ...] = ()
    pstate_driver: str | None = None
    pstate_status: str | None = None


def cpufreq_dirs(root: SystemRoot) -> dict[int, Path]:
    """CPU number → its cpufreq directory, for every CPU that has one.

    On a live system cpuN/cpufreq is a symlink to ../cpufreq/policyM; captured trees store such links
    as files holding the target, so both are followed. Policies name their CPUs in affected_cpus,
    which covers trees that kept the policies but not the per-CPU links.
    """
    base = root.path(CPU_SYSFS)
    found: dict[int, Path] = {}
    for entry in root.listdir(base):
        match = _CPU_DIR_RE.fullmatch(entry)
        cpu = parse_int(match[1], hi=MAX_CPUS) if match is not None else None
        if cpu is None:
            continue
        link = base / entry / "cpufreq"
        if link.is_dir():
            found[cpu] = link
        elif link.is_file() and (target := root.read_text(link)) and not target.startswith("/"):
            resolved = base / entry / target
            if resolved.is_dir():
                found[cpu] = resolved
    policies = base / "cpufreq"
    for entry in root.listdir(policies):
        if not _POLICY_DIR_RE.fullmatch(entry):
            continue
        cpus = root.read_text(policies / entry / "affected_cpus") or ""
        for word in cpus.split():
            if (cpu := parse_int(word, hi=MAX_CPUS)) is not None:
                found.setdefault(cpu, policies / entry)
    return dict(sorted(found.items()))


def read_policy_settings(
    root: SystemRoot,
    directory: Path,
    known: PolicySettings | None = None,
    read: Callable[[str], str | None] | None = None,
) -> PolicySettings:
    """A policy's settings; given an earlier reading, only what an admin can change is read again.

    The driver and the cpuinfo limits are the hardware's and cannot change while the policy exists.
    Re-reads use plain os calls because a many-core host has a policy per CPU; read, when given,
    reads those (a sampler passes one that keeps the files open), with _read_small's results.
    """
    read = read or _read_small
    prefix = f"{directory}{os.sep}"
    governor = read(prefix + "scaling_governor")
    scaling_max = read(prefix + "scaling_max_freq")
    scaling_max_khz = parse_khz(scaling_max)
    epp = read(prefix + "energy_performance_preference")
    if known is not None:
        if (governor, scaling_max_khz, epp) == (known.governor, known.scaling_max_khz, known.epp):
            return known
        return dataclasses.replace(known, governor=governor, scaling_max_khz=scaling_max_khz, epp=epp)
    return PolicySettings(
        governor=governor,
        driver=root.read_text(directory / "scaling_driver") or None,
        cpuinfo_max_khz=root.read_int(directory / "cpuinfo_max_freq", hi=MAX_KHZ),
        cpuinfo_min_khz=root.read_int(directory / "cpuinfo_min_freq", hi=MAX_KHZ),
        scaling_max_khz=scaling_max_khz,
        epp=epp,
    )


def read_pstate_status(
    root: SystemRoot, read: Callable[[str], str | None] | None = None
) -> tuple[str | None, str | None]:
    """(driver, mode) from intel_pstate/status or amd_pstate/status; (None, None) when neither exists."""
    read = read or _read_small
    for driver in PSTATE_DRIVERS:
        status = read(str(root.path(f"{CPU_SYSFS}/{driver}/status")))
        if status:
            return driver, status
    return None, None


class CpufreqReader:
    """Reads cpufreq repeatedly at three speeds: current frequencies, settings, and discovery.

    Current frequencies are what a live view needs every tick. Governors, limits and EPP change only
    when someone changes them, and the set of policies only with CPU hotplug; reading every file of
    every policy each tick would cost more than the rest of a sample on a many-core host.
    """

    def __init__(self, root: SystemRoot, read_setting: Callable[[str], str | None] | None = None) -> None:
        """read_setting: how refresh_settings re-reads a setting file (see read_policy_settings)."""
        self.root = root
        self._read_setting = read_setting
        self._dirs: dict[int, Path] = {}
        self._settings: dict[Path, PolicySettings] = {}
        self._cpu_settings: dict[int, PolicySettings] = {}
        self._current_files: dict[int, str] = {}
        self.pstate_driver: str | None = None
        self.pstate_status: str | None = None
        self.discover()

    @property
    def available(self) -> bool:
        return bool(self._dirs)

    def discover(self) -> None:
        """Find every CPU's policy again and read all of its settings (after CPU hotplug)."""
        self._dirs = cpufreq_dirs(self.root)
        self._settings = {d: read_policy_settings(self.root, d) for d in set(self._dirs.values())}
        self._current_files = {}
        for cpu, directory in self._dirs.items():
            # scaling_cur_freq is world-readable; cpuinfo_cur_freq (the hardware's view) usually needs root.
            for name in ("scaling_cur_freq", "cpuinfo_cur_freq"):
                if (directory / name).is_file():
                    self._current_files[cpu] = str(directory / name)
                    break
        self._finish_settings()

    def refresh_settings(self) -> None:
        """Re-read governors, frequency caps, EPP and the pstate driver mode."""
        read = self._read_setting
        settings = {d: read_policy_settings(self.root, d, known, read) for d, known in self._settings.items()}
        if any(settings[d] is not known for d, known in self._settings.items()):
            self._settings = settings
            self._cpu_settings = {cpu: settings[d] for cpu, d in self._dirs.items()}
        # Otherwise settings() keeps returning the same dict, which tells a caller nothing changed.
        self.pstate_driver, self.pstate_status = read_pstate_status(self.root, read)

    def _finish_settings(self) -> None:
        self._cpu_settings = {cpu: self._settings[d] for cpu, d in self._dirs.items()}
        self.pstate_driver, self.pstate_status = read_pstate_status(self.root)

    def current_files(self) -> dict[int, str]:
        """CPU number → the file its current frequency is read from (shared by a policy's CPUs)."""
        return dict(self._current_files)

    def settings(self) -> dict[int, PolicySettings]:
        """CPU number → its policy's settings as last read."""
        return self._cpu_settings

    def current_khz(self) -> dict[int, int | None]:
        """CPU number → current frequency; CPUs sharing a policy read the same file, so it is read once."""
        read: dict[str, int | None] = {}
        current: dict[int, int | None] = {}
        for cpu, path in self._current_files.items():
            if path not in read:
                read[path] = _read_khz(path)
            current[cpu] = read[path]
        return current

    def read(self) -> CpufreqState:
        if not self._dirs:
            return CpufreqState(False, (), self.pstate_driver, self.pstate_status)
        current = self.current_khz()
        cores = tuple(CoreFrequency(cpu, current.get(cpu), settings) for cpu, settings in self._cpu_settings.items())
        return CpufreqState(True, cores, self.pstate_driver, self.pstate_status)


def _read_small(path: str) -> str | None:
    """A one-line sysfs value, stripped; None when missing, unreadable, refused or empty.

    Plain strings instead of pathlib: cpufreq files are read for every policy, some on every tick,
    and pathlib costs four times as much per file.
    """
    return read_attribute(path) or None


def parse_khz(text: str | bytes | None) -> int | None:
    """A cpufreq frequency file's content (scaling_cur_freq, cpuinfo_cur_freq): kHz as a plain ASCII number up
    to MAX_KHZ; None for anything else. The one reading of a CPU's frequency, for a scan and the sampler."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    digits = (text or "").strip()
    # The kernel prints an unsigned number: a sign, "1_0" or a non-ASCII digit is damage, not a frequency.
    return parse_int(digits, hi=MAX_KHZ) if digits.isascii() and digits.isdigit() else None


def _read_khz(path: str) -> int | None:
    return parse_khz(_read_small(path))


