"""Fleet compare: one metric of one step on every host, each host as a ratio to the hosts' median.

The slowest host is named: it is the weakest link one level up, the box that holds a replicated or
sharded service back the way one slow member holds a stripe back.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mdtui import jsondoc
from mdtui.errors import MdtuiError
from mdtui.store.cells import format_metric, unit_text
from mdtui.store.export import markdown_table
from mdtui.store.records import MetricInfo, RunRecord, RunStatus, metric_info

FLEET_FORMATS = ("md", "csv", "json")


def fleet_of(run: RunRecord) -> str | None:
    fleet = run.context.get("fleet")
    if isinstance(fleet, dict) and isinstance(fleet.get("id"), str):
        return fleet["id"]
    return None


def host_of(run: RunRecord) -> str:
    host = run.context.get("host")
    return host if isinstance(host, str) else "?"


def step_of(run: RunRecord) -> str:
    step = run.params.get("step")
    return step if isinstance(step, str) else run.preset


def fleet_ids(runs: Sequence[RunRecord]) -> list[str]:
    """Fleets in the runs, newest first (runs come newest first from the store)."""
    return list(dict.fromkeys(fid for run in runs if (fid := fleet_of(run)) is not None))


@dataclass(frozen=True)
class FleetRow:
    host: str
    run_id: int | None
    status: str
    value: float | None
    ratio: float | None  # value / the median of the hosts that have one
    error: str = ""


@dataclass(frozen=True)
class FleetTable:
    fleet_id: str
    step: str
    metric: MetricInfo
    rows: tuple[FleetRow, ...]
    median: float | None

    @property
    def slowest(self) -> FleetRow | None:
        """The host furthest on the wrong side: lowest for a throughput, highest for a latency."""
        measured = [row for row in self.rows if row.value is not None]
        if len(measured) < 2:
            return None
        pick = min if self.metric.higher_is_better else max
        return pick(measured, key=lambda row: row.value or 0.0)

    @property
    def failed(self) -> tuple[FleetRow, ...]:
        return tuple(row for row in self.rows if row.value is None)

    def summary(self) -> str:
        slowest = self.slowest
        parts = []
        if slowest is not None and slowest.ratio is not None:
            parts.append(
                f"slowest host: {slowest.host} at {slowest.ratio:.2f}× the median "
                f"({format_metric(self.metric, slowest.value)} vs {format_metric(self.metric, self.median)} "
                f"{unit_text(self.metric)})"
            )
        for row in self.failed:
            parts.append(f"{row.host}: {row.status}{f' ({row.error})' if row.error else ''}")
        return "; ".join(parts) or "fewer than two hosts measured"


def default_metric(runs: Sequence[RunRecord]) -> str:
    """Read bandwidth when the step read, else write bandwidth."""
    for run in runs:
        if run.metrics.get("read_bw_bytes_per_s"):
            return "read_bw_bytes_per_s"
        if run.metrics.get("write_bw_bytes_per_s"):
            return "write_bw_bytes_per_s"
    return "read_bw_bytes_per_s"


def fleet_tables(runs: Sequence[RunRecord], fleet_id: str, metric: str | None = None) -> list[FleetTable]:
    """One table per step of the fleet, hosts in the order the fleet listed them."""
    members = [run for run in runs if fleet_of(run) == fleet_id]
    if not members:
        raise MdtuiError(f"no stored runs belong to fleet {fleet_id}")
    order: list[str] = []
    for run in members:
        fleet = run.context.get("fleet") or {}
        for host in fleet.get("hosts") or []:
            if isinstance(host, str) and host not in order:
                order.append(host)
    steps: dict[str, list[RunRecord]] = {}
    for run in sorted(members, key=lambda r: (r.params.get("step_index") or 0, r.id)):
        steps.setdefault(step_of(run), []).append(run)
    tables = []
    for step, step_runs in steps.items():
        info = metric_info(metric or default_metric(step_runs))
        by_host = {host_of(run): run for run in step_runs}  # the newest run of a host wins (ids ascend)
        hosts = order + [h for h in by_host if h not in order]
        values = [
            v
            for run in by_host.values()
            if run.status is RunStatus.COMPLETE and (v := run.metrics.get(info.name)) is not None
        ]
        median = statistics.median(values) if values else None
        rows = []
        for host in hosts:
            host_run = by_host.get(host)
            if host_run is None:
                rows.append(FleetRow(host, None, "not run", None, None, "an earlier step failed or was stopped"))
                continue
            value = host_run.metrics.get(info.name) if host_run.status is RunStatus.COMPLETE else None
            ratio = value / median if value is not None and median else None
            rows.append(
                FleetRow(
                    host, host_run.id, host_run.status.value, value, ratio, host_run.error if value is None else ""
                )
            )
        tables.append(FleetTable(fleet_id, step, info, tuple(rows), median))
    return tables


def _cells(table: FleetTable) -> list[list[str]]:
    slowest = table.slowest
    rows = []
    for row in table.rows:
        mark = " ← slowest" if slowest is not None and row is slowest else ""
        rows.append(
            [
                row.host,
                f"#{row.run_id}" if row.run_id is not None else "-",
                format_metric(table.metric, row.value),
                f"{row.ratio:.2f}×{mark}" if row.ratio is not None else "-",
                row.status if row.value is not None else f"{row.status}: {row.error}".rstrip(": "),
            ]
        )
    return rows


def fleet_markdown(tables: Sequence[FleetTable]) -> str:
    parts = []
    for table in tables:
        headers = ["host", "run", f"{table.metric.label}", "vs median", "status"]
        parts.append(f"### {table.step} ({table.fleet_id})\n")
        parts.append(markdown_table(headers, _cells(table), [False, True, True, True, False]))
        parts.append(f"\n{table.summary()}\n")
    return "\n".join(parts)


def fleet_text(tables: Sequence[FleetTable]) -> str:
    """A narrow plain-text view for a screen: host, figure, ratio, status; errors below the table."""
    parts = []
    for table in tables:
        rows = [
            [row.host, format_metric(table.metric, row.value), cells[3], row.status]
            for row, cells in zip(table.rows, _cells(table), strict=True)
        ]
        headers = ["host", table.metric.label, "vs median", "status"]
        widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(4)]
        parts.append(f"{table.step}")
        for row in [headers, *rows]:
            parts.append(
                "  ".join((c.ljust if i in (0, 3) else c.rjust)(widths[i]) for i, c in enumerate(row)).rstrip()
            )
        slowest = table.slowest
        if slowest is not None and slowest.ratio is not None:
            parts.append(f"slowest host: {slowest.host} ({slowest.ratio:.2f}× the median)")
        parts += [f"{row.host}: {row.error}" for row in table.failed if row.error]
        parts.append("")
    return "\n".join(parts)


def fleet_csv(tables: Sequence[FleetTable]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["fleet", "step", "host", "run", "metric", "value", "ratio_to_median", "slowest", "status", "error"]
    )
    for table in tables:
        slowest = table.slowest
        for row in table.rows:
            writer.writerow(
                [
                    table.fleet_id,
                    table.step,
                    row.host,
                    row.run_id if row.run_id is not None else "",
                    table.metric.name,
                    repr(row.value) if row.value is not None else "",
                    f"{row.ratio:.6f}" if row.ratio is not None else "",
                    "yes" if row is slowest else "",
                    row.status,
                    row.error,
                ]
            )
    return out.getvalue()


def fleet_to_dict(table: FleetTable) -> dict[str, Any]:
    slowest = table.slowest
    return {
        "fleet": table.fleet_id,
        "step": table.step,
        "metric": table.metric.name,
        "unit": table.metric.unit,
        "median": table.median,
        "slowest": slowest.host if slowest is not None else None,
        "hosts": [
            {
                "host": row.host,
                "run": row.run_id,
                "status": row.status,
                "value": row.value,
                "ratio_to_median": row.ratio,
                "error": row.error,
            }
            for row in table.rows
        ],
    }


def export_fleet(tables: Sequence[FleetTable], fmt: str) -> str:
    if fmt == "md":
        return fleet_markdown(tables)
    if fmt == "csv":
        return fleet_csv(tables)
    if fmt == "json":
        return jsondoc.dumps({"format": "mdtui-fleet", "tables": [fleet_to_dict(t) for t in tables]}) + "\n"
    raise MdtuiError(f"unknown format {fmt!r}; use one of {', '.join(FLEET_FORMATS)}")
