"""A sampler tick as the values a benchmark run stores beside its figures."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.model.snapshot import Snapshot


def sample_values(
    snapshot: Snapshot, devices: Sequence[str], focus: Sequence[str], array: str | None
) -> dict[str, float]:
    """One sampler tick as stored values; unknown rates are left out.

    Each device's rates, the focus devices' sums under the store's metric names (so the results
    views can plot them), CPU load and frequency, and the array's md thread CPU.
    """
    values: dict[str, float] = {}
    totals: dict[str, float] = {}
    for name in devices:
        rates = snapshot.device(name)
        if rates is None:
            continue
        for key, metric, value in (
            ("read_bytes_per_s", "read_bw_bytes_per_s", rates.read_bytes_per_s),
            ("write_bytes_per_s", "write_bw_bytes_per_s", rates.write_bytes_per_s),
            ("read_iops", "read_iops", rates.read_iops),
            ("write_iops", "write_iops", rates.write_iops),
            ("util_pct", None, rates.utilisation_percent),
        ):
            if value is None:
                continue
            values[f"{name}.{key}"] = value
            if metric is not None and name in focus:
                totals[metric] = totals.get(metric, 0.0) + value
    values.update(totals)
    cpu = snapshot.cpu
    if cpu.total_busy_percent is not None:
        values["cpu_busy_pct"] = cpu.total_busy_percent
    if cpu.iowait_percent is not None:
        values["cpu_iowait_pct"] = cpu.iowait_percent
    frequencies = [core.freq_mhz for core in cpu.cores if core.freq_mhz is not None]
    if frequencies:
        values["cpu_mhz_mean"] = sum(frequencies) / len(frequencies)
    for thread in snapshot.md_threads:
        if (array is None or thread.array == array) and thread.cpu_percent is not None:
            values[f"{thread.name}.cpu_pct"] = thread.cpu_percent
    return values


__all__ = ["sample_values"]
