"""Export runs and comparisons as Markdown (to paste), CSV (raw units, for spreadsheets) and JSON."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from mdtui import jsondoc
from mdtui.store.cells import (
    UNSTEADY_MARK,
    format_metric,
    format_ratio,
    format_setting,
    format_time,
    steady_to_dict,
    steady_words,
    unit_text,
)
from mdtui.store.compare import Comparison, ConfigDifference, NormalisedTable, RatioTable, run_settings
from mdtui.store.fio_import import parse_fio_output
from mdtui.store.records import METRICS, RunRecord, Steadiness

FORMATS = ("md", "csv", "json")


# -- cells only exports write ----------------------------------------------------------------------------


def _csv_number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _unsteady_titles(runs: Sequence[RunRecord]) -> list[str]:
    return [run.title for run in runs if run.steadiness is Steadiness.NOT_REACHED]


# -- tables ------------------------------------------------------------------------------------------


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A GitHub-flavoured Markdown table, padded so it also reads well as plain text."""
    cells = [[str(cell).replace("|", "\\|") for cell in row] for row in [headers, *rows]]
    widths = [max(3, *(len(row[i]) for row in cells)) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        padded = (cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(row, widths, right, strict=True))
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right, strict=True))
    return "\n".join([line(cells[0]), rule + "|", *(line(row) for row in cells[1:])])


def _csv(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return out.getvalue()


def _json(document: dict[str, Any]) -> str:
    """A JSON export, with the schema version every mdtui JSON document carries (mdtui.jsondoc)."""
    return jsondoc.dumps(document, ensure_ascii=False) + "\n"


def _differences_table(differences: Sequence[ConfigDifference], runs: Sequence[RunRecord]) -> str:
    headers = ["Setting", *(run.title for run in runs)]
    rows = [[d.key, *(format_setting(d.key, v) for v in d.values)] for d in differences]
    return markdown_table(headers, rows, [False] * len(headers))


# -- runs --------------------------------------------------------------------------------------------

_ARRAY_ROWS = (("Level", "array.level"), ("Chunk", "array.chunk_bytes"), ("Layout", "array.layout"))


def runs_markdown(runs: Sequence[RunRecord]) -> str:
    """One column per run: how it was made, then every figure any of them measured."""
    settings = [run_settings(run) for run in runs]
    rows: list[list[str]] = [
        ["Started", *(format_time(run.started_at) for run in runs)],
        ["Status", *(run.status.value for run in runs)],
        ["Preset", *(run.preset for run in runs)],
        ["Target", *(run.target or "-" for run in runs)],
    ]
    if any(run.steadiness is not Steadiness.NOT_JUDGED for run in runs):
        rows.insert(2, ["Steady", *(steady_words(run) for run in runs)])
    for title, key in (*_ARRAY_ROWS, ("Members", "array.members"), ("Member models", "array.member_models")):
        if any(s.get(key) not in (None, "") for s in settings):
            rows.append([title, *(format_setting(key, s.get(key)) for s in settings)])
    for metric in METRICS:
        values = [run.metrics.get(metric.name) for run in runs]
        if any(value is not None for value in values):
            rows.append([metric.label, *(format_metric(metric, value) for value in values)])
    headers = ["Run", *(run.title for run in runs)]
    return markdown_table(headers, rows, [False] + [True] * len(runs)) + "\n"


_RUN_CSV_FIELDS = ("id", "label", "status", "started_at", "ended_at", "preset", "target")
_RUN_CSV_ARRAY = ("level", "raid_disks", "chunk_bytes", "layout", "bitmap")


def runs_csv(runs: Sequence[RunRecord]) -> str:
    """One row per run, figures in stored units (bytes/s, IOPS, ns, %), settings as JSON columns."""
    headers = [
        *_RUN_CSV_FIELDS,
        *(f"array_{key}" for key in _RUN_CSV_ARRAY),
        *(metric.name for metric in METRICS),
        "steady",
        "steady_after_s",
        "steady_criterion",
        "params",
        "context",
        "note",
    ]
    rows = []
    for run in runs:
        rows.append(
            [
                str(run.id),
                run.label,
                run.status.value,
                _iso(run.started_at) or "",
                _iso(run.ended_at) or "",
                run.preset,
                run.target,
                *("" if run.array.get(key) is None else str(run.array[key]) for key in _RUN_CSV_ARRAY),
                *(_csv_number(run.metrics.get(metric.name)) for metric in METRICS),
                run.steadiness.value,
                _csv_number(outcome.after_s if (outcome := run.steady) else None),
                outcome.criterion if outcome else "",
                json.dumps(run.params, sort_keys=True, default=str),
                json.dumps(run.context, sort_keys=True, default=str),
                run.note,
            ]
        )
    return _csv(headers, rows)


def run_to_dict(run: RunRecord, *, include_samples: bool = True, include_raw: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": run.id,
        "label": run.label,
        "note": run.note,
        "status": run.status.value,
        "error": run.error,
        "started_at": _iso(run.started_at),
        "ended_at": _iso(run.ended_at),
        "duration_s": run.duration_s,
        "preset": run.preset,
        "target": run.target,
        "params": run.params,
        "array": run.array,
        "context": run.context,
        "metrics": run.metrics.as_dict(),
        "steady": steady_to_dict(run),
    }
    if include_samples:
        out["samples"] = [{"t_s": point.t_s, **point.values} for point in run.samples]
    if include_raw:
        documents = parse_fio_output(run.fio_json) if run.fio_json else []
        # Status-interval output keeps every document; a single run is just the one.
        out["fio"] = documents[0] if len(documents) == 1 else documents or None
    return out


def runs_json(runs: Sequence[RunRecord], *, include_raw: bool = False, include_samples: bool = True) -> str:
    """The one JSON shape for runs (`results list/show --json`, `export --format json`)."""
    return _json(
        {
            "format": "mdtui-results",
            "runs": [run_to_dict(run, include_raw=include_raw, include_samples=include_samples) for run in runs],
        }
    )


def export_runs(runs: Sequence[RunRecord], fmt: str, *, include_raw: bool = False) -> str:
    if fmt == "md":
        return runs_markdown(runs)
    if fmt == "csv":
        return runs_csv(runs)
    if fmt == "json":
        return runs_json(runs, include_raw=include_raw)
    raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")


# -- comparison --------------------------------------------------------------------------------------


def comparison_markdown(comparison: Comparison) -> str:
    """What changed between the runs, then each metric with its ratio to the baseline."""
    base = comparison.baseline
    tolerance = f"{comparison.tolerance * 100:g}%"
    parts = [
        f"Baseline {base.title}; ratios are run ÷ baseline, called better or worse beyond ±{tolerance}.",
        "",
    ]
    if comparison.differences:
        parts += [_differences_table(comparison.differences, comparison.runs), ""]
    else:
        parts += ["No recorded setting differs between these runs.", ""]
    headers = ["Metric", base.title]
    for run in comparison.candidates:
        headers += [run.title, f"vs {base.title}"]
    rows = []
    marked = False
    for row in comparison.rows:
        cells = [row.metric.label, format_metric(row.metric, row.baseline)]
        for run, value, ratio, verdict in zip(comparison.candidates, row.values, row.ratios, row.verdicts, strict=True):
            text = format_ratio(ratio, verdict)
            if text != "-" and Steadiness.NOT_REACHED in (base.steadiness, run.steadiness):
                text += f" {UNSTEADY_MARK}"
                marked = True
            cells += [format_metric(row.metric, value), text]
        rows.append(cells)
    parts.append(markdown_table(headers, rows, [False] + [True] * (len(headers) - 1)))
    unsteady = _unsteady_titles(comparison.runs)
    if marked:
        parts += [
            "",
            f"{UNSTEADY_MARK} involves a figure that was still moving when its step hit the time ceiling "
            f"({', '.join(unsteady)} not steady): not a ratio of sustained figures.",
        ]
    return "\n".join(parts) + "\n"


def comparison_csv(comparison: Comparison) -> str:
    """Long format: one line per metric and run, the baseline's with empty ratio and verdict."""
    headers = ["metric", "unit", "higher_is_better", "run", "role", "value", "ratio_vs_baseline", "verdict", "steady"]
    base = comparison.baseline
    rows = []
    for row in comparison.rows:
        info = [row.metric.name, row.metric.unit, "true" if row.metric.higher_is_better else "false"]
        rows.append([*info, str(base.id), "baseline", _csv_number(row.baseline), "", "", base.steadiness.value])
        for run, value, ratio, verdict in zip(comparison.candidates, row.values, row.ratios, row.verdicts, strict=True):
            rows.append(
                [
                    *info,
                    str(run.id),
                    "candidate",
                    _csv_number(value),
                    _csv_number(ratio),
                    verdict.value,
                    run.steadiness.value,
                ]
            )
    return _csv(headers, rows)


def comparison_to_dict(comparison: Comparison) -> dict[str, Any]:
    return {
        "baseline": comparison.baseline.id,
        "candidates": [run.id for run in comparison.candidates],
        "tolerance": comparison.tolerance,
        "differences": [
            {"key": d.key, "values": {str(run.id): v for run, v in zip(comparison.runs, d.values, strict=True)}}
            for d in comparison.differences
        ],
        "metrics": [
            {
                "name": row.metric.name,
                "unit": row.metric.unit,
                "higher_is_better": row.metric.higher_is_better,
                "baseline": row.baseline,
                "candidates": [
                    {
                        "run": run.id,
                        "value": value,
                        "ratio": ratio,
                        "verdict": verdict.value,
                        # A ratio with a figure still moving at its ceiling is not one of sustained figures.
                        "unsteady": Steadiness.NOT_REACHED in (comparison.baseline.steadiness, run.steadiness),
                    }
                    for run, value, ratio, verdict in zip(
                        comparison.candidates, row.values, row.ratios, row.verdicts, strict=True
                    )
                ],
            }
            for row in comparison.rows
        ],
        "runs": [run_to_dict(run, include_samples=False) for run in comparison.runs],
    }


def comparison_json(comparison: Comparison) -> str:
    return _json({"format": "mdtui-comparison", **comparison_to_dict(comparison)})


def export_comparison(comparison: Comparison, fmt: str) -> str:
    if fmt == "md":
        return comparison_markdown(comparison)
    if fmt == "csv":
        return comparison_csv(comparison)
    if fmt == "json":
        return comparison_json(comparison)
    raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")


# -- reference ratios and normalised sweeps ----------------------------------------------------------


def ratio_table_markdown(table: RatioTable) -> str:
    headers = ["Run", table.metric.label, *(f"vs {ref.title}" for ref in table.references)]
    rows = [
        [row.run.title, format_metric(table.metric, row.value), *(format_ratio(r) for r in row.ratios)]
        for row in table.rows
    ]
    return markdown_table(headers, rows, [False] + [True] * (len(headers) - 1)) + "\n"


def ratio_table_csv(table: RatioTable) -> str:
    headers = ["run", "label", table.metric.name, *(f"ratio_vs_{ref.id}" for ref in table.references)]
    rows = [
        [str(row.run.id), row.run.label, _csv_number(row.value), *(_csv_number(r) for r in row.ratios)]
        for row in table.rows
    ]
    return _csv(headers, rows)


def ratio_table_json(table: RatioTable) -> str:
    return _json(
        {
            "format": "mdtui-ratios",
            "metric": table.metric.name,
            "unit": table.metric.unit,
            "references": [ref.id for ref in table.references],
            "rows": [
                {
                    "run": row.run.id,
                    "label": row.run.label,
                    "value": row.value,
                    "ratios": {str(ref.id): r for ref, r in zip(table.references, row.ratios, strict=True)},
                }
                for row in table.rows
            ],
        }
    )


def normalised_markdown(table: NormalisedTable) -> str:
    speed = f"{format_metric(table.metric, table.device_speed)} {unit_text(table.metric)}"
    source = f" (run {table.device_run.title})" if table.device_run else ""
    unit = table.metric.label
    intro = f"{unit} ÷ (device {speed}{source} × data disks); 1.00 = every data disk at the device's speed."
    keys = [d.key for d in table.differences]
    headers = ["Run", *keys, "Data disks", unit, "Normalised"]
    rows = []
    for row, *values in zip(table.rows, *(d.values for d in table.differences), strict=True):
        rows.append(
            [
                row.run.title,
                *(format_setting(key, value) for key, value in zip(keys, values, strict=True)),
                f"{row.data_disks:g}",
                format_metric(table.metric, row.value),
                "-" if row.normalised is None else f"{row.normalised:.2f}",
            ]
        )
    right = [False] * (1 + len(keys)) + [True] * 3
    return intro + "\n\n" + markdown_table(headers, rows, right) + "\n"


def normalised_csv(table: NormalisedTable) -> str:
    keys = [d.key for d in table.differences]
    headers = ["run", "label", *keys, "data_disks", table.metric.name, "device_speed", "normalised"]
    rows = []
    for row, *values in zip(table.rows, *(d.values for d in table.differences), strict=True):
        rows.append(
            [
                str(row.run.id),
                row.run.label,
                *("" if value is None else str(value) for value in values),
                _csv_number(row.data_disks),
                _csv_number(row.value),
                _csv_number(table.device_speed),
                _csv_number(row.normalised),
            ]
        )
    return _csv(headers, rows)


def normalised_json(table: NormalisedTable) -> str:
    return _json(
        {
            "format": "mdtui-normalised",
            "metric": table.metric.name,
            "unit": table.metric.unit,
            "device_speed": table.device_speed,
            "device_run": table.device_run.id if table.device_run else None,
            "rows": [
                {
                    "run": row.run.id,
                    "label": row.run.label,
                    "settings": {d.key: d.values[i] for d in table.differences},
                    "data_disks": row.data_disks,
                    "value": row.value,
                    "normalised": row.normalised,
                }
                for i, row in enumerate(table.rows)
            ],
        }
    )


def export_ratio_table(table: RatioTable, fmt: str) -> str:
    return {"md": ratio_table_markdown, "csv": ratio_table_csv, "json": ratio_table_json}[_check(fmt)](table)


def export_normalised(table: NormalisedTable, fmt: str) -> str:
    return {"md": normalised_markdown, "csv": normalised_csv, "json": normalised_json}[_check(fmt)](table)


def _check(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt
