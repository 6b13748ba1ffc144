"""A stored run's figures and settings as cells, each in the unit its label names (MB/s as fio prints them, IOPS, µs,
%), ratios, times and steadiness in words: what exports, results show, the app's tables and the fleet's comparison
print."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mdtui.format import iec_bytes, times
from mdtui.store.compare import Verdict
from mdtui.store.records import METRICS_BY_NAME, MetricInfo, RunRecord, Steadiness


def format_metric(metric: MetricInfo, value: float | None) -> str:
    """A figure in the unit its label names: MB/s (decimal, as fio prints), IOPS, µs, %."""
    if value is None:
        return "-"
    if metric.unit == "bytes/s":
        return f"{value / 1e6:,.1f}"
    if metric.unit == "IOPS":
        return f"{value:,.0f}"
    if metric.unit == "ns":
        return f"{value / 1e3:,.1f}"
    return f"{value:.1f}"


def total_iops(run: RunRecord) -> float | None:
    """Read and write IOPS together; None when the run measured neither."""
    read, write = run.metrics.read_iops, run.metrics.write_iops
    return None if read is None and write is None else (read or 0) + (write or 0)


def read_write_text(run: RunRecord) -> str:
    """Both bandwidths in one cell, for a narrow table: "R 1,118.5", "W 4,211.0", "R 28.0 W 28.0"."""
    bandwidth = METRICS_BY_NAME["read_bw_bytes_per_s"]
    parts = [
        f"{letter} {format_metric(bandwidth, value)}"
        for letter, value in (("R", run.metrics.read_bw_bytes_per_s), ("W", run.metrics.write_bw_bytes_per_s))
        if value is not None
    ]
    return " ".join(parts) or "-"


def unit_text(metric: MetricInfo) -> str:
    """The unit format_metric prints the metric in."""
    return {"bytes/s": "MB/s", "IOPS": "IOPS", "ns": "µs"}.get(metric.unit, metric.unit)


def format_ratio(value: float | None, verdict: Verdict | None = None) -> str:
    if value is None:
        # A zero baseline has no ratio, yet going from nothing to something is still a direction.
        return verdict.value if verdict in (Verdict.BETTER, Verdict.WORSE) else "-"
    text = times(value)
    if verdict in (Verdict.BETTER, Verdict.WORSE):
        text += f" {verdict.value}"
    return text


def format_setting(key: str, value: Any) -> str:
    if value is None or value == "" or value == []:
        return "-"
    if key.endswith("_bytes") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return iec_bytes(value)
    if isinstance(value, (list, tuple)):
        # Devices and models read as a list ("nvme0n1, nvme1n1"), not as JSON.
        return ", ".join(format_setting(key, item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{name}={format_setting(name, item)}" for name, item in value.items())
    return str(value)


def format_time(moment: datetime | None) -> str:
    if moment is None:
        return "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def steady_words(run: RunRecord) -> str:
    """A run's steadiness for an export cell: "reached after 7 s", "not reached (120 s ceiling)", "not judged"."""
    outcome, state = run.steady, run.steadiness
    after = None if outcome is None or outcome.after_s is None else f"{outcome.after_s:.0f} s"
    if state is Steadiness.REACHED:
        return f"reached after {after}" if after else "reached"
    if state is Steadiness.NOT_REACHED:
        if outcome is not None and outcome.fell:
            return f"not reached (fell {outcome.fell_percent:.0f}% after looking steady)"
        return f"not reached ({after} ceiling)" if after else "not reached"
    return "not judged (fixed time)"


def steady_to_dict(run: RunRecord) -> dict[str, Any]:
    """A run's steadiness for JSON: a state string, never false for a step that was not judged."""
    outcome = run.steady
    return {
        "state": run.steadiness.value,
        "criterion": None if outcome is None else outcome.criterion,
        "after_s": None if outcome is None else outcome.after_s,
        "last_window": None if outcome is None else outcome.measured,
    }


UNSTEADY_MARK = "~"
