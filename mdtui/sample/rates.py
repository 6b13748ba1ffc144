"""The one place where cumulative kernel counters become rates; everything else only reads them."""

from __future__ import annotations

from operator import sub

from mdtui.model.snapshot import DeviceRates
from mdtui.probe.cpu import CpuTimes
from mdtui.probe.diskstats import SECTOR_BYTES, DiskCounters


def counter_delta(previous: int | None, current: int | None) -> int | None:
    """current - previous; None when either is unknown or the counter went backwards.

    A counter that goes backwards wrapped (32-bit fields on older or 32-bit kernels, the millisecond
    fields on any kernel) or was reset (the device was re-created). Guessing a wrap width would turn
    a reset into a giant rate, so that tick simply has no rate.
    """
    if previous is None or current is None:
        return None
    delta = current - previous
    return delta if delta >= 0 else None


def per_second(delta: int | None, interval: float, scale: float = 1.0) -> float | None:
    return delta * scale / interval if delta is not None else None


def device_rates(current: DiskCounters, previous: DiskCounters | None, interval: float | None) -> DeviceRates:
    """Rates over interval seconds; a device without a previous sample (new, or re-created) has none."""
    if (
        previous is None
        or not interval
        or interval <= 0
        # A new major:minor under the same name is a different device whose counters started at 0.
        or previous.major != current.major
        or previous.minor != current.minor
    ):
        return DeviceRates(
            current.name,
            in_flight=current.in_flight,
            read_bytes=current.sectors_read * SECTOR_BYTES,
            write_bytes=current.sectors_written * SECTOR_BYTES,
        )
    reads = current.reads_completed - previous.reads_completed
    sectors_read = current.sectors_read - previous.sectors_read
    read_ms = current.read_ms - previous.read_ms
    writes = current.writes_completed - previous.writes_completed
    sectors_written = current.sectors_written - previous.sectors_written
    write_ms = current.write_ms - previous.write_ms
    io_ms = current.io_ms - previous.io_ms
    weighted_ms = current.weighted_io_ms - previous.weighted_io_ms
    if min(reads, sectors_read, read_ms, writes, sectors_written, write_ms, io_ms, weighted_ms) < 0:
        return _device_rates_after_wrap(current, previous, interval)

    # This runs for every device on every tick, so the common case (no counter went backwards) is
    # plain arithmetic without the per-field None checks of the wrap case.
    interval_ms = interval * 1000.0
    return DeviceRates(
        current.name,
        sectors_read * SECTOR_BYTES / interval,
        sectors_written * SECTOR_BYTES / interval,
        per_second(counter_delta(previous.sectors_discarded, current.sectors_discarded), interval, SECTOR_BYTES),
        reads / interval,
        writes / interval,
        # io_ticks advances in jiffies, so a fully busy device can overshoot wall time by one tick.
        min(100.0, io_ms * 100.0 / interval_ms),
        weighted_ms / interval_ms,
        read_ms / reads if reads else None,
        write_ms / writes if writes else None,
        current.in_flight,
        current.sectors_read * SECTOR_BYTES,
        current.sectors_written * SECTOR_BYTES,
    )


def _device_rates_after_wrap(current: DiskCounters, previous: DiskCounters, interval: float) -> DeviceRates:
    """device_rates when some counter went backwards: that counter's rates are None, the rest stand."""
    reads = counter_delta(previous.reads_completed, current.reads_completed)
    writes = counter_delta(previous.writes_completed, current.writes_completed)
    read_ms = counter_delta(previous.read_ms, current.read_ms)
    write_ms = counter_delta(previous.write_ms, current.write_ms)
    io_ms = counter_delta(previous.io_ms, current.io_ms)
    weighted_ms = counter_delta(previous.weighted_io_ms, current.weighted_io_ms)
    interval_ms = interval * 1000.0
    return DeviceRates(
        current.name,
        per_second(counter_delta(previous.sectors_read, current.sectors_read), interval, SECTOR_BYTES),
        per_second(counter_delta(previous.sectors_written, current.sectors_written), interval, SECTOR_BYTES),
        per_second(counter_delta(previous.sectors_discarded, current.sectors_discarded), interval, SECTOR_BYTES),
        per_second(reads, interval),
        per_second(writes, interval),
        min(100.0, io_ms * 100.0 / interval_ms) if io_ms is not None else None,
        weighted_ms / interval_ms if weighted_ms is not None else None,
        read_ms / reads if read_ms is not None and reads else None,
        write_ms / writes if write_ms is not None and writes else None,
        current.in_flight,
        current.sectors_read * SECTOR_BYTES,
        current.sectors_written * SECTOR_BYTES,
    )


def cpu_percentages(current: CpuTimes, previous: CpuTimes | None) -> tuple[float | None, float | None]:
    """(busy %, iowait %) of the time that passed on this CPU; (None, None) without a usable delta.

    Any field going backwards voids the tick: iowait is known to step back on NO_HZ kernels, and
    a partial delta would make the percentages add up to more or less than 100.
    """
    if previous is None:
        return None, None
    user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice = map(sub, current, previous)
    if min(user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice) < 0:
        return None, None
    # Same sum as CpuTimes.total: guest time is already inside user and nice.
    total = user + nice + system + idle + iowait + irq + softirq + steal
    if total <= 0:
        return None, None
    return (total - idle - iowait) * 100.0 / total, iowait * 100.0 / total


def thread_cpu_percent(
    current_ticks: int, previous_ticks: int | None, interval: float | None, ticks_per_s: int
) -> float | None:
    """A thread's CPU use as a percentage of one core: delta(utime+stime) / (interval × USER_HZ)."""
    delta = counter_delta(previous_ticks, current_ticks)
    if delta is None or not interval or interval <= 0:
        return None
    # A thread runs on one core at a time; more than 100 is tick rounding over a short interval.
    return min(100.0, delta * 100.0 / (interval * ticks_per_s))
