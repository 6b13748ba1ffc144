"""The write-safety A/B: one stored run per bitmap and consistency policy on a live array, each beside what the md
model predicted for it, and the array's own bitmap and policy put back afterwards (a restore journal first, as
the knob sweep's, so even a killed experiment is undone by the next mdtui start)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mdtui.advise.experiments import ExperimentResult, ExperimentRun, RunPreset, _check_cancel, _run
from mdtui.errors import PlanError
from mdtui.model.array import MdArray
from mdtui.model.job import KIB, RwMode
from mdtui.plan.figures import MemberFigures
from mdtui.plan.levels import RaidLevel
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.write_safety import SafetyChoice, costs
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore
from mdtui.tune.safety_journal import SafetyChanger, chunk_kib

SAFETY_AB = "write-safety"
# The A/B's default job: 4 KiB random writes at the predictions' saturating depth (RND4KQ32T8), where a bitmap's
# flushes and ppl's log writes cost most.
DEFAULT_OPTIONS: dict[str, Any] = {"rw": RwMode.RANDWRITE, "block_size_bytes": 4 * KIB, "iodepth": 32, "numjobs": 8}


def parse_choices(text: str) -> tuple[SafetyChoice, ...]:
    """``none,internal:4K,internal:64M,ppl,lockless:64M`` as choices; PlanError (one line) for anything else."""
    found = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        kind, _, chunk = part.partition(":")
        if kind == "ppl":
            found.append(SafetyChoice("none", None, "ppl"))
            continue
        if kind not in ("none", "internal", "lockless"):
            raise PlanError(f"--choices: {part!r}: give none, internal:SIZE, lockless:SIZE or ppl")
        try:
            found.append(SafetyChoice(kind, chunk_kib(chunk) if chunk else None))
        except Exception as exc:  # chunk_kib's one line
            raise PlanError(f"--choices: {part!r}: {exc}") from None
    if len(found) < 2 or len(set(found)) != len(found):
        raise PlanError("--choices: give at least two different choices, e.g. none,internal:64M")
    return tuple(found)


def _workload(options: dict[str, Any]) -> tuple[str, str, float] | None:
    """(model field, stored metric, metric units a model unit) of the A/B's job, where the model predicts one."""
    rw = options.get("rw")
    block = options.get("block_size_bytes")
    depth = int(options.get("iodepth", 1)) * int(options.get("numjobs", 1))
    if rw is RwMode.RANDWRITE and block == 4 * KIB:
        if depth == 1:
            return ("q1_write_latency_s", "write_lat_mean_ns", 1e9)
        if depth >= 64:
            return ("rand_write_iops", "write_iops", 1.0)
    if rw is RwMode.WRITE and (block or 0) >= 128 * KIB and depth >= 64:
        return ("seq_write_bytes_per_s", "write_bw_bytes_per_s", 1.0)
    return None


@dataclass(frozen=True)
class Point:
    choice: SafetyChoice
    run_ids: tuple[int, ...]
    predicted: float | None  # in the stored metric's units


def _measured(runs: Sequence[RunRecord], metric: str) -> float | None:
    values = [v for run in runs if (v := run.metrics.get(metric)) is not None]
    return sum(values) / len(values) if values else None


def _shown(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    if metric.endswith("_ns"):
        return f"{value / 1e3:,.0f} µs"
    if metric.endswith("bytes_per_s"):
        return f"{value / 1e6:,.1f} MB/s"
    return f"{value:,.0f} IOPS"


def summarise(points: Sequence[Point], store: ResultsStore, metric: str) -> list[str]:
    """A line per choice: measured, × the first choice, predicted and × predicted (latency: predicted ÷ measured,
    so above 1 is better either way), and the measured against the predicted cost of each choice."""
    latency = metric.endswith("_ns")
    lines = [f"write safety A/B by {metric} (predicted: the md model over the members' figures):"]
    base = _measured(store.get_runs(list(points[0].run_ids)), metric) if points else None
    base_predicted = points[0].predicted if points else None
    for point in points:
        measured = _measured(store.get_runs(list(point.run_ids)), metric)
        vs_first = vs_predicted = cost = "-"
        if measured and base:
            vs_first = f"{(base / measured if latency else measured / base):.2f}×"
        if measured and point.predicted:
            vs_predicted = f"{(point.predicted / measured if latency else measured / point.predicted):.2f}"
        if point.predicted and base_predicted:
            cost = f"{(base_predicted / point.predicted if latency else point.predicted / base_predicted):.2f}×"
        ids = ", ".join(f"#{i}" for i in point.run_ids)
        lines.append(
            f"  {point.choice.describe()}: measured {_shown(metric, measured)} ({vs_first} the first), predicted "
            f"{_shown(metric, point.predicted)} ({cost} the first), measured/predicted {vs_predicted}; runs {ids}"
        )
    return lines


def safety_ab(
    run_preset: RunPreset,
    array: MdArray,
    level: RaidLevel,
    choices: Sequence[SafetyChoice],
    *,
    store: ResultsStore,
    changer: SafetyChanger,
    kernel: str | None,
    figures: Sequence[MemberFigures] | None = None,
    ceilings: MdCeilings | None = None,
    array_bytes: int | None = None,
    preset_key: str = "custom",
    quick: bool = False,
    cancel: threading.Event | None = None,
    **options: Any,
) -> ExperimentResult:
    """Set each choice in turn on ``array``, run the preset, and put the array's own back (whatever ends it)."""
    job = DEFAULT_OPTIONS | options if preset_key == "custom" else options
    workload = _workload(job) if preset_key == "custom" else None
    points: list[Point] = []
    done: list[ExperimentRun] = []
    ran: list[str] = []
    try:
        for choice in choices:
            _check_cancel(cancel, done)
            ran += changer.set(array.name, array.uuid, level, choice, kernel)
            predicted = None
            if workload is not None and figures is not None and ceilings is not None:
                field, _, scale = workload
                _, prediction = costs(
                    level, figures, choice, layout=level.normalise_layout(array.layout), chunk_bytes=array.chunk_bytes,
                    ceilings=ceilings, array_bytes=array_bytes,
                )  # fmt: skip
                value = getattr(prediction, field).value
                predicted = None if value is None else value * scale
            label = f"write safety: {choice.describe()}"
            run_ids = _run(run_preset, preset_key, array.dev_path, quick, label, job)
            done.append(ExperimentRun(label, run_ids))
            points.append(Point(choice, run_ids, predicted))
    finally:
        restored = changer.restore()
    notes = [f"ran: {line}" for line in ran]
    if workload is not None:
        notes += summarise(points, store, workload[1])
    notes += [f"restored: {line}" if " restored" in line else line for line in restored]
    return ExperimentResult(SAFETY_AB, tuple(done), tuple(notes))
