"""One tick of live state: device rates, CPU load and frequency, md arrays and md kernel-thread CPU."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from mdtui.model.array import MdArray

# Rates are None when they cannot be known for this tick: the first sample of a device, a counter
# that wrapped or reset, or a kernel that does not report the counter. None is never shown as 0.


class DeviceRates(NamedTuple):
    """I/O rates of one block device over the last interval, as iostat -x computes them.

    A NamedTuple (immutable, like the dataclasses beside it) because the sampler builds one per
    device per tick: hundreds of them are made in one C-level pass (sample.rates.device_rates_columns).
    """

    name: str
    read_bytes_per_s: float | None = None
    write_bytes_per_s: float | None = None
    discard_bytes_per_s: float | None = None  # None also on kernels before 4.18 (no discard counters)
    read_iops: float | None = None
    write_iops: float | None = None
    utilisation_percent: float | None = None  # time with I/O in flight / wall time, capped at 100
    average_queue: float | None = None  # mean requests in flight (iostat's aqu-sz)
    read_await_ms: float | None = None  # mean time per completed read; None when nothing completed
    write_await_ms: float | None = None
    in_flight: int = 0  # requests in flight at the moment of the sample (a gauge, not a rate)
    read_bytes: int = 0  # cumulative since boot or device creation, for before/after differences
    write_bytes: int = 0


class CoreState(NamedTuple):
    """One logical CPU: load over the last interval and its cpufreq settings at the sample.

    A NamedTuple for the same reason as DeviceRates: one per CPU per tick, 32 to 256 of them.
    """

    cpu: int
    busy_percent: float | None = None
    iowait_percent: float | None = None
    freq_mhz: float | None = None
    max_freq_mhz: float | None = None  # cpuinfo_max_freq: what the hardware can reach
    scaling_max_freq_mhz: float | None = None  # the cap the policy currently allows
    governor: str | None = None
    epp: str | None = None  # energy_performance_preference (intel_pstate/amd-pstate active modes)


@dataclass(frozen=True, slots=True)
class CpuState:
    """All CPUs; cpufreq fields are None throughout when cpufreq_available is False."""

    # False when the kernel exposes no cpufreq (VMs, some containers): show "not available", not 0 MHz.
    cpufreq_available: bool
    cores: tuple[CoreState, ...] = ()
    total_busy_percent: float | None = None
    iowait_percent: float | None = None
    driver: str | None = None  # scaling_driver: intel_pstate, intel_cpufreq, amd-pstate-epp, acpi-cpufreq, ...
    pstate_driver: str | None = None  # "intel_pstate" or "amd_pstate" when that driver's status file exists
    pstate_status: str | None = None  # its mode: active, passive, guided, off

    @property
    def governors(self) -> tuple[str, ...]:
        """The distinct governors in use, sorted; usually one."""
        return tuple(sorted({core.governor for core in self.cores if core.governor is not None}))


@dataclass(frozen=True, slots=True)
class MdThreadCpu:
    """An md kernel thread (mdX_raidN, mdX_resync, mdX_reshape) and the CPU it used."""

    pid: int
    name: str  # the thread's comm, e.g. "md127_raid6"
    array: str  # "md127"
    role: str  # "raid6", "resync", "reshape", ...
    cpu_percent: float | None = None  # of one core, so a busy thread reads 100
    cpu_seconds: float = 0.0  # utime + stime since the thread started, for before/after differences
    processor: int | None = None  # the CPU it last ran on


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything the sampler saw at one tick."""

    timestamp: float  # seconds since the epoch when the sample was taken
    interval: float | None  # seconds since the previous sample; None for the first
    devices: tuple[DeviceRates, ...]
    cpu: CpuState
    arrays: tuple[MdArray, ...] = ()
    md_threads: tuple[MdThreadCpu, ...] = ()

    def device(self, name: str) -> DeviceRates | None:
        return next((d for d in self.devices if d.name == name), None)

    def array(self, name: str) -> MdArray | None:
        return next((a for a in self.arrays if a.name == name), None)
