"""The one place where cumulative kernel counters become rates; everything else only reads them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import repeat
from operator import add, mul, sub, truediv

from mdtui.model.snapshot import DeviceRates
from mdtui.probe.cpu import CpuLines, CpuTimes
from mdtui.probe.diskstats import (
    IN_FLIGHT,
    IO_MS,
    READ_MS,
    READS,
    SECTOR_BYTES,
    SECTORS_DISCARDED,
    SECTORS_READ,
    SECTORS_WRITTEN,
    WEIGHTED_MS,
    WRITE_MS,
    WRITES,
    DiskCounters,
    DiskstatsColumns,
)


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


def device_rates_columns(
    current: DiskstatsColumns, previous: DiskstatsColumns, interval: float
) -> list[DeviceRates] | None:
    """device_rates for every line of two diskstats tables of the same devices, field by field.

    The same figures as device_rates line by line, computed with one C-level map per field over all
    devices (the sampler's cost on a host of hundreds of busy disks). None when a counter went
    backwards on any line (a wrap or a reset), or the tables are not of the same devices: the caller
    then goes line by line, where only that counter's rates are lost.
    """
    if interval <= 0 or not current.same_devices(previous):
        return None
    now, before = current.counters, previous.counters
    count = len(current.names)
    deltas = {}
    for field in (READS, SECTORS_READ, READ_MS, WRITES, SECTORS_WRITTEN, WRITE_MS, IO_MS, WEIGHTED_MS):
        if now[field] is before[field]:
            # The column was printed as last tick printed it (parse_diskstats_columns kept the list).
            deltas[field] = [0] * count
            continue
        delta = list(map(sub, now[field], before[field]))
        if delta and min(delta) < 0:
            return None
        deltas[field] = delta
    interval_ms = interval * 1000.0
    # delta * 512 / interval as delta / (interval / 512), one operation a figure instead of two and equal
    # to the last bit: scaling by a power of two is exact in binary floating point (the int's conversion
    # rounds the same, the divisor loses nothing while it stays a normal number), so both divisions round
    # the same quotient.
    per_sector = interval / SECTOR_BYTES if interval >= _NORMAL_INTERVAL else None
    discards: Iterable[float | None]
    if SECTORS_DISCARDED in now and SECTORS_DISCARDED in before:
        # Discard counters alone may wrap without voiding the tick: that device's discard rate is None.
        if now[SECTORS_DISCARDED] is before[SECTORS_DISCARDED]:
            discards = [0 * SECTOR_BYTES / interval] * count
        else:
            discarded = list(map(sub, now[SECTORS_DISCARDED], before[SECTORS_DISCARDED]))
            if not discarded or min(discarded) >= 0:
                discards = _bytes_per_s(discarded, interval, per_sector)
            else:
                discards = [delta * SECTOR_BYTES / interval if delta >= 0 else None for delta in discarded]
    else:
        discards = [None] * count
    # io_ticks advances in jiffies, so a fully busy device can overshoot wall time by one tick: capped
    # at 100. x * 100.0 / interval_ms grows with x, so when the largest delta stays within 100 all do
    # and min() would return each figure unchanged.
    busy = deltas[IO_MS]
    utilisation: Iterable[float] = _divided(map(mul, busy, repeat(100.0)), interval_ms)
    if busy and max(busy) * 100.0 / interval_ms > 100.0:
        utilisation = map(min, repeat(100.0), utilisation)
    # The same operations in the same order as device_rates, so the figures are equal to the last bit.
    return list(
        map(
            tuple.__new__,
            repeat(DeviceRates),
            zip(
                current.names,
                _bytes_per_s(deltas[SECTORS_READ], interval, per_sector),
                _bytes_per_s(deltas[SECTORS_WRITTEN], interval, per_sector),
                discards,
                _divided(deltas[READS], interval),
                _divided(deltas[WRITES], interval),
                utilisation,
                _divided(deltas[WEIGHTED_MS], interval_ms),
                _awaits(deltas[READ_MS], deltas[READS]),
                _awaits(deltas[WRITE_MS], deltas[WRITES]),
                now[IN_FLIGHT],
                map(mul, now[SECTORS_READ], repeat(SECTOR_BYTES)),
                map(mul, now[SECTORS_WRITTEN], repeat(SECTOR_BYTES)),
                strict=True,
            ),
        )
    )


def _awaits(ms: list[int], completed: list[int]) -> Iterable[float | None]:
    """Milliseconds per completed request, None where none completed."""
    if all(completed):
        return map(truediv, ms, completed)
    return [time / count if count else None for time, count in zip(ms, completed, strict=True)]


def _divided(values: Iterable[int | float], divisor: float) -> Iterator[float]:
    return map(truediv, values, repeat(divisor))


# Past this an interval / 512 would be a subnormal number, which is not exact.
_NORMAL_INTERVAL = 1e-290


def _bytes_per_s(sectors: list[int], interval: float, per_sector: float | None) -> Iterator[float]:
    """delta * SECTOR_BYTES / interval for each delta, as device_rates computes it."""
    if per_sector is not None:
        return map(truediv, sectors, repeat(per_sector))
    return _divided(map(mul, sectors, repeat(SECTOR_BYTES)), interval)


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


def cpu_percentages_columns(
    current: CpuLines, previous: CpuLines
) -> tuple[list[float | None], list[float | None]] | None:
    """cpu_percentages for every cpu line of two readings of the same lines, in line order, as two lists
    (busy % and iowait % of each line), a field at a time: equal to it line by line (integer sums are
    exact in any order; the divisions are the same). None when the lines differ (a CPU came or went)
    or some field went backwards on some line: the caller then goes CPU by CPU. A field that kept last
    tick's list (parse_cpu_lines) has not moved.
    """
    if current.numbers is not previous.numbers and current.numbers != previous.numbers:
        return None
    count = len(current.numbers)
    now, before = current.columns, previous.columns
    deltas: list[list[int] | None] = []
    for field in range(10):
        if now[field] is before[field]:
            deltas.append(None)  # no change on any line
            continue
        delta = list(map(sub, now[field], before[field]))
        if delta and min(delta) < 0:
            return None
        deltas.append(delta)
    # CpuTimes.total sums user to steal; busy is that total less idle and iowait, which in integers is
    # exactly the sum of the other six fields: summed once, then idle and iowait added for the total.
    zeros = [0] * count
    iowait = deltas[4] or zeros
    working = [delta for field, delta in enumerate(deltas[:8]) if delta is not None and field not in (3, 4)]
    busy_ticks = working[0] if working else zeros
    for delta in working[1:]:
        busy_ticks = list(map(add, busy_ticks, delta))
    total = busy_ticks
    for idle_or_wait in (deltas[3], deltas[4]):
        if idle_or_wait is not None:
            total = list(map(add, total, idle_or_wait))
    busy: Iterable[int] = busy_ticks
    if total and min(total) > 0:
        return (
            list(map(truediv, map(mul, busy, repeat(100.0)), total)),
            list(map(truediv, map(mul, iowait, repeat(100.0)), total)),
        )
    pairs = [
        (ticks * 100.0 / whole, waits * 100.0 / whole) if whole > 0 else (None, None)
        for ticks, waits, whole in zip(busy, iowait, total, strict=True)
    ]
    return [pair[0] for pair in pairs], [pair[1] for pair in pairs]


def thread_cpu_percent(
    current_ticks: int, previous_ticks: int | None, interval: float | None, ticks_per_s: int
) -> float | None:
    """A thread's CPU use as a percentage of one core: delta(utime+stime) / (interval × USER_HZ)."""
    delta = counter_delta(previous_ticks, current_ticks)
    if delta is None or not interval or interval <= 0:
        return None
    # A thread runs on one core at a time; more than 100 is tick rounding over a short interval.
    return min(100.0, delta * 100.0 / (interval * ticks_per_s))
