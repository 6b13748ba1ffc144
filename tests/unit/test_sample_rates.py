"""Tests for the counter-to-rate maths: exact rates, wraps, resets and missing counters."""

from __future__ import annotations

import pytest

from mdtui.probe.cpu import CpuTimes
from mdtui.probe.diskstats import DiskCounters
from mdtui.sample.rates import counter_delta, cpu_percentages, device_rates, thread_cpu_percent


def disk(name: str = "sda", major: int = 8, minor: int = 0, **fields: int) -> DiskCounters:
    base = dict.fromkeys(DiskCounters._fields[3:14], 0)
    return DiskCounters(name, major, minor, **{**base, **fields})


def test_counter_delta() -> None:
    assert counter_delta(10, 15) == 5
    assert counter_delta(10, 10) == 0
    assert counter_delta(2**32 - 10, 5) is None  # a 32-bit wrap
    assert counter_delta(None, 5) is None
    assert counter_delta(5, None) is None


def test_device_rates_exact() -> None:
    before = disk(reads_completed=1000, sectors_read=8000, read_ms=500, writes_completed=200, sectors_written=4000,
                  write_ms=300, io_ms=1000, weighted_io_ms=2000)
    after = disk(reads_completed=1100, sectors_read=10048, read_ms=700, writes_completed=250, sectors_written=4400,
                 write_ms=400, in_flight=3, io_ms=2500, weighted_io_ms=5000)
    rates = device_rates(after, before, 2.0)
    assert rates.read_bytes_per_s == 524288.0  # 2048 sectors of 512 bytes in 2 s
    assert rates.write_bytes_per_s == 102400.0
    assert rates.read_iops == 50.0
    assert rates.write_iops == 25.0
    assert rates.read_await_ms == 2.0
    assert rates.write_await_ms == 2.0
    assert rates.utilisation_percent == 75.0
    assert rates.average_queue == 1.5
    assert rates.discard_bytes_per_s is None  # a kernel without discard counters
    assert (rates.in_flight, rates.read_bytes, rates.write_bytes) == (3, 10048 * 512, 4400 * 512)


def test_utilisation_is_capped_and_idle_has_no_await() -> None:
    rates = device_rates(disk(io_ms=2100), disk(io_ms=0), 2.0)
    assert rates.utilisation_percent == 100.0
    assert rates.read_await_ms is None and rates.write_await_ms is None
    assert rates.read_iops == 0.0


def test_wrapped_counter_gives_no_rate_for_that_field_only() -> None:
    before = disk(sectors_read=2**32 - 100, sectors_written=1000, io_ms=2**32 - 5)
    after = disk(sectors_read=156, sectors_written=3048, io_ms=995)
    rates = device_rates(after, before, 1.0)
    assert rates.read_bytes_per_s is None
    assert rates.utilisation_percent is None
    assert rates.write_bytes_per_s == 2048 * 512


def test_discards() -> None:
    before = disk(discards_completed=1, sectors_discarded=0)
    after = disk(discards_completed=2, sectors_discarded=2048)
    assert device_rates(after, before, 1.0).discard_bytes_per_s == 1048576.0


@pytest.mark.parametrize(
    ("previous", "interval"),
    [(None, 1.0), (disk(), None), (disk(), 0.0), (disk(major=7), 1.0)],
    ids=["new-device", "first-sample", "zero-interval", "re-created-with-new-major"],
)
def test_no_rates_without_a_comparable_previous(previous: DiskCounters | None, interval: float | None) -> None:
    rates = device_rates(disk(sectors_read=100), previous, interval)
    assert rates.read_bytes_per_s is None and rates.utilisation_percent is None and rates.read_iops is None
    assert rates.read_bytes == 100 * 512


def test_cpu_percentages() -> None:
    before = CpuTimes(user=100, system=100, idle=700, iowait=100)
    after = CpuTimes(user=150, system=150, idle=1000, iowait=200, guest=30)
    busy, iowait = cpu_percentages(after, before)
    assert busy == 20.0
    assert iowait == 20.0
    assert cpu_percentages(after, None) == (None, None)
    assert cpu_percentages(before, before) == (None, None)  # no time passed on this CPU
    # iowait stepping back (NO_HZ kernels do this) voids the tick instead of skewing it.
    assert cpu_percentages(CpuTimes(user=200, idle=800, iowait=90), before) == (None, None)


def test_thread_cpu_percent() -> None:
    assert thread_cpu_percent(150, 100, 2.0, 100) == 25.0
    assert thread_cpu_percent(150, 100, 0.25, 100) == 100.0  # tick rounding, capped at one core
    assert thread_cpu_percent(150, None, 1.0, 100) is None
    assert thread_cpu_percent(50, 100, 1.0, 100) is None
    assert thread_cpu_percent(150, 100, None, 100) is None
