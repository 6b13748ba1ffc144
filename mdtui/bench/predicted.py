"""The figure an array was predicted to give for a benchmark step, computed when the step is stored (from the
member figures then known) and kept beside what it measured.

It is stored in the run's params JSON as ``params["predicted"]``: a new key in a column that already holds
JSON, so older databases need no migration and older mdtui versions ignore it. Only steps shaped like one of
the model's saturating workloads get one (see WORKLOAD_SHAPES); others store nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mdtui.bench.member_figures import member_sources
from mdtui.format import rate_mb_s
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.model.job import KIB, JobSpec, RwMode
from mdtui.plan.forecast import FORECAST_NAMES, CeilingsChoice, forecast, significant
from mdtui.plan.levels import level_from_name
from mdtui.plan.md_limits import DEFAULT_STRIPE_CACHE
from mdtui.plan.safety_cost import NO_SAFETY, WriteSafety
from mdtui.store.records import METRICS_BY_NAME, RunRecord

# The model's figures are for saturating jobs (1 MiB Q8T8, 4 KiB Q32T8): a step at least this parallel is
# compared with them; a Q1T1 4 KiB random read with the latency figure. Others (Q8T1, 64 KiB writes) are not.
SATURATING_DEPTH = 64
SEQUENTIAL_MIN_BLOCK = 128 * KIB
# Each predicted field's name as stored with a run (the forecast's five, and Q1 writes).
WORKLOAD_NAMES = FORECAST_NAMES | {"q1_write_latency_s": "Q1 write latency"}
# Ratio below which the advisor names a run as far below its prediction.
FAR_BELOW = 0.6


def workload_of(spec: JobSpec) -> tuple[str, str, float] | None:
    """(model field, stored metric, metric units per model unit) of the workload a job is shaped like."""
    depth = spec.iodepth * spec.numjobs
    if spec.rw in (RwMode.READ, RwMode.WRITE) and spec.block_size_bytes >= SEQUENTIAL_MIN_BLOCK:
        if depth < SATURATING_DEPTH:
            return None
        if spec.rw is RwMode.READ:
            return ("seq_read_bytes_per_s", "read_bw_bytes_per_s", 1.0)
        return ("seq_write_bytes_per_s", "write_bw_bytes_per_s", 1.0)
    if spec.block_size_bytes != 4 * KIB:
        return None
    if spec.rw is RwMode.RANDREAD and depth == 1:
        return ("q1_read_latency_s", "read_lat_mean_ns", 1e9)
    if spec.rw is RwMode.RANDWRITE and depth == 1:
        return ("q1_write_latency_s", "write_lat_mean_ns", 1e9)
    if depth < SATURATING_DEPTH:
        return None
    if spec.rw is RwMode.RANDREAD:
        return ("rand_read_iops", "read_iops", 1.0)
    if spec.rw is RwMode.RANDWRITE:
        return ("rand_write_iops", "write_iops", 1.0)
    return None


def predicted_entry(
    array: MdArray,
    jobs: Sequence[JobSpec],
    member_runs: Sequence[RunRecord],
    inventory: Inventory,
    *,
    stripe_cache_size: int | None = DEFAULT_STRIPE_CACHE,
    safety: WriteSafety = NO_SAFETY,
    md: CeilingsChoice | None = None,
) -> dict[str, Any] | None:
    """What to store as ``params["predicted"]`` for a step on ``array``; None when the step is no workload
    the model predicts. ``value`` is None (with ``why``) when a member has no figures, or when the model names
    a bound it cannot put a figure on (the array's stripe cache). ``stripe_cache_size``: the array's own;
    ``safety``: its bitmap and consistency policy as sysfs reports them; ``md``: this host's ceilings, when the
    caller has read them already (member_sources reads them otherwise)."""
    if len(jobs) != 1 or array.level is None:
        return None
    shape = workload_of(jobs[0])
    if shape is None:
        return None
    field, metric, scale = shape
    entry: dict[str, Any] = {"workload": WORKLOAD_NAMES[field], "metric": metric, "value": None}
    try:
        level = level_from_name(array.level)
    except ValueError:
        return None
    names = [m.name for m in array.members if not m.spare and not m.faulty]
    disks = [inventory.disk(name) for name in names]
    if not names or any(d is None for d in disks):
        entry["why"] = "a member is not in the inventory"
        return entry
    sources = member_sources(member_runs, [d for d in disks if d is not None], md)
    # A stored prediction is held against what the run measured: only members' own figures make one (a link
    # or a platter is a bound, not a figure a run falls short of).
    missing = [s.missing for s in sources if not s.measured]
    if missing:
        entry["why"] = "; ".join(missing)
        return entry
    try:
        prediction = forecast(
            level,
            sources,
            layout=level.normalise_layout(array.layout),
            chunk_bytes=array.chunk_bytes,
            stripe_cache_size=stripe_cache_size,
            safety=safety,
        )
    except ValueError:
        return None
    if prediction is None:
        return None
    figure = getattr(prediction, field)
    if figure.rounded is None:
        entry["why"] = figure.bound
        return entry
    entry.update(
        value=significant(figure.rounded) * scale,
        bound=figure.bound,
        basis=figure.basis,
        members="; ".join(f"{s.name} {s.note}" for s in sources),
    )
    return entry


def predicted_of(run: RunRecord) -> tuple[float, float, dict[str, Any]] | None:
    """(predicted, measured, entry) of a stored run with both; None otherwise."""
    entry = run.params.get("predicted")
    if not isinstance(entry, dict):
        return None
    value, metric = entry.get("value"), entry.get("metric")
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0 or not isinstance(metric, str):
        return None
    try:
        measured = run.metrics.get(metric)
    except ValueError:
        return None
    if measured is None or measured <= 0:
        return None
    return float(value), measured, entry


def ratio_of(run: RunRecord) -> float | None:
    """measured / predicted, higher is better (for latency: predicted / measured); None without both."""
    both = predicted_of(run)
    if both is None:
        return None
    predicted, measured, entry = both
    return predicted / measured if str(entry.get("metric", "")).endswith("_ns") else measured / predicted


def metric_text(metric: str, value: float) -> str:
    """A stored metric's value as shown beside its prediction, to two significant figures."""
    if metric.endswith("bytes_per_s"):
        return rate_mb_s(significant(value))
    if metric.endswith("iops"):
        return f"{significant(value):,.0f} IOPS"
    return f"{significant(value / 1e3):,.3g} µs"


def prediction_lines(run: RunRecord) -> list[str]:
    """Predicted, measured and their ratio for a run stored with a prediction; [] for one without."""
    entry = run.params.get("predicted")
    if not isinstance(entry, dict):
        return []
    workload = entry.get("workload", "this workload")
    both = predicted_of(run)
    if both is None:
        why = entry.get("why") or "the run measured no figure to compare"
        return [f"  Predicted  none for {workload}: {why}"]
    predicted, measured, _ = both
    metric = str(entry["metric"])
    ratio = ratio_of(run)
    lines = [
        f"  Predicted  {metric_text(metric, predicted)} {workload} (bound: {entry.get('bound')}; "
        f"basis: {entry.get('basis')})",
        f"  Measured   {metric_text(metric, measured)}",
    ]
    if ratio is not None:
        verdict = f"{ratio:.2f}× the prediction"
        if ratio < FAR_BELOW:
            verdict += f": far below it; the likely bound: {entry.get('bound')}"
        lines.append(f"  Ratio      {verdict}")
    if entry.get("members"):
        lines.append(f"  Members    {entry['members']}")
    return lines


def _measured(run: RunRecord, metric: object) -> float | None:
    return run.metrics.get(metric) if isinstance(metric, str) and metric in METRICS_BY_NAME else None


def predicted_rows(runs: Sequence[RunRecord]) -> list[dict[str, Any]]:
    """Each run stored with a prediction: what was predicted beside what was measured (None: not known)."""
    rows = []
    for run in runs:
        entry = run.params.get("predicted")
        if not isinstance(entry, dict):
            continue
        both = predicted_of(run)
        rows.append(
            {
                "run_id": run.id,
                "label": run.label,
                "step": run.params.get("step"),
                "workload": entry.get("workload"),
                "metric": entry.get("metric"),
                "predicted": both[0] if both else None,
                "measured": both[1] if both else _measured(run, entry.get("metric")),
                "ratio": ratio_of(run),
                "bound": entry.get("bound"),
                "why": entry.get("why"),
            }
        )
    return rows


def predicted_table(runs: Sequence[RunRecord]) -> list[str]:
    """Predicted beside measured for every run of an experiment that has a prediction; [] when none has."""
    rows = predicted_rows(runs)
    if not rows:
        return []
    cells = []
    for row in rows:
        metric = str(row["metric"])
        predicted = metric_text(metric, row["predicted"]) if row["predicted"] is not None else "none"
        measured = metric_text(metric, row["measured"]) if row["measured"] is not None else "-"
        ratio = f"{row['ratio']:.2f}×" if row["ratio"] is not None else "-"
        name = f"#{row['run_id']} {row['label'] or ''} {row['step'] or ''}".strip()
        cells.append((name, str(row["workload"]), predicted, measured, ratio, str(row["bound"] or row["why"] or "")))
    heads = ("run", "workload", "predicted", "measured", "ratio", "bound")
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    lines = ["predicted beside measured (the md model over the members' figures when each run was stored):"]
    lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip())
    for c in cells:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)).rstrip())
    return lines
