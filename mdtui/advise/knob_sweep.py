"""The knob sweep: one stored run per value of an md or queue knob, every original put back afterwards.

Each value is written through mdtui.tune's KnobChanger (the originals are journalled before the first
write, so even a killed sweep is undone by the next mdtui start), read back, and the preset runs on the
array; the benchmark engine stores the knobs as read from sysfs in each run's context. The summary names
the best value by the preset's main figure and what it costs (memory for the stripe cache, CPU from the
runs).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mdtui.advise.experiments import ExperimentResult, ExperimentRun, RunPreset, _check_cancel, _run
from mdtui.advise.sweep_stop import skipped_note, sweep_stop
from mdtui.errors import PlanError
from mdtui.format import iec_bytes
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore
from mdtui.tune.catalogue import Knob, Scope
from mdtui.tune.journal import KnobChanger
from mdtui.tune.read import array_shape, member_names, read_value

KNOB_SWEEP = "knob-sweep"
# The figure a sweep is judged by, in order of preference: the first one the first run measured.
SWEEP_METRICS = ("write_bw_bytes_per_s", "read_bw_bytes_per_s", "write_iops", "read_iops")


def sweep_devices(knob: Knob, array: MdArray) -> list[str]:
    if knob.scope is Scope.MEMBER:
        return member_names(array)
    return [""] if knob.scope is Scope.GLOBAL else [array.name]


def check_values(root: SystemRoot, knob: Knob, array: MdArray, values: Sequence[str]) -> tuple[str, ...]:
    """The values as they will be written, each checked against the knob's range before anything changes."""
    if not values:
        raise PlanError("give at least one value to sweep (--values a,b,c)")
    if not knob.applies_to(array.level):
        raise PlanError(f"{knob.name} does not apply to {array.name} ({array.level or 'no level'})")
    devices = sweep_devices(knob, array)
    if not devices:
        raise PlanError(f"{array.name} has no members to set {knob.name} on")
    current = read_value(root, knob, devices[0])
    if current is None:
        raise PlanError(f"{knob.system_path(devices[0])} does not exist: {knob.name} cannot be swept here")
    checked = tuple(knob.check_value(value, current.choices) for value in values)
    if len(set(checked)) != len(checked):
        raise PlanError(f"a value is named twice in {', '.join(values)}")
    return checked


@dataclass(frozen=True)
class SweepPoint:
    value: str
    read_back: tuple[str, ...]  # what each device's file said after the write
    run_ids: tuple[int, ...]


def _figure(runs: Sequence[RunRecord], metric: str) -> float | None:
    values = [v for run in runs if (v := run.metrics.get(metric)) is not None]
    return sum(values) / len(values) if values else None


def _cpu(runs: Sequence[RunRecord]) -> str:
    parts = []
    for metric, name in (("md_thread_cpu_pct", "md thread"), ("cpu_sys_pct", "fio sys")):
        value = _figure(runs, metric)
        if value is not None:
            parts.append(f"{name} {value:.0f}%")
    return ", ".join(parts) or "not measured"


def summarise(
    knob: Knob, array: MdArray, points: Sequence[SweepPoint], store: ResultsStore, inventory: Inventory | None
) -> list[str]:
    """A line per value (read back, figure, × the first value, memory, CPU, runs), then the best value named."""
    if not points:
        return []
    shape = array_shape(array, inventory)
    runs = {point.value: store.get_runs(list(point.run_ids)) for point in points}
    first_runs = runs[points[0].value]
    metric = next((m for m in SWEEP_METRICS if _figure(first_runs, m) is not None), None)
    if metric is None:
        return ["no figure to compare: the runs measured nothing"]
    unit = "MB/s" if metric.endswith("bytes_per_s") else "IOPS"
    scale = 1e6 if unit == "MB/s" else 1.0
    base = _figure(first_runs, metric)
    lines = [f"{knob.name} by {metric} ({unit}), each value read back from sysfs:"]
    scored = []
    for point in points:
        figure = _figure(runs[point.value], metric)
        ratio = f"{figure / base:.2f}×" if figure is not None and base else "—"
        memory = knob.memory_bytes(point.value, shape)
        cost = f", memory {iec_bytes(memory)}" if memory is not None else ""
        shown = f"{figure / scale:,.1f}" if figure is not None else "no figure"
        ids = ", ".join(f"#{i}" for i in point.run_ids)
        lines.append(
            f"  {knob.name}={point.value} (read back {' / '.join(sorted(set(point.read_back)))}): {shown} {unit}, "
            f"{ratio}{cost}, CPU {_cpu(runs[point.value])}; runs {ids}"
        )
        if figure is not None:
            scored.append((figure, point))
    if len(scored) > 1 and base:
        figure, best = max(scored, key=lambda item: item[0])
        first = points[0]
        memory = knob.memory_bytes(best.value, shape)
        cost = f"; it costs {iec_bytes(memory)} of memory" if memory is not None else ""
        lines.append(
            f"best: {knob.name}={best.value}, {figure / base:.2f}× the {unit} of {first.value} here "
            f"(run #{best.run_ids[0]} vs #{first.run_ids[0]}){cost}"
        )
    return lines


def _stop(store: ResultsStore, done: Sequence[ExperimentRun]) -> str | None:
    """The rule on the figure summarise judges by: the first of SWEEP_METRICS the first point measured."""
    first = store.get_runs(list(done[0].run_ids))
    metric = next((m for m in SWEEP_METRICS if _figure(first, m) is not None), None)
    return None if metric is None else sweep_stop(store, [(run.label, run.run_ids) for run in done], metric)


def knob_sweep(
    run_preset: RunPreset,
    array: MdArray,
    knob: Knob,
    values: Sequence[str],
    *,
    root: SystemRoot,
    store: ResultsStore,
    inventory: Inventory | None = None,
    preset_key: str = "custom",
    quick: bool = False,
    cancel: threading.Event | None = None,
    changer: KnobChanger | None = None,
    full_sweep: bool = False,
    **options: Any,
) -> ExperimentResult:
    """Set ``knob`` to each value in turn, run the preset on the array, and put every original back.

    Unless ``full_sweep``, it stops early by sweep_stop's rule on the figure the summary judges by.

    Values are checked before the first write. The originals are restored when the sweep ends for any
    reason; the notes say what each value read back as, the summary and what was restored.
    """
    checked = check_values(root, knob, array, values)
    devices = sweep_devices(knob, array)
    changer = changer or KnobChanger(root, purpose=f"a knob sweep of {knob.name} on {array.name}")
    points: list[SweepPoint] = []
    done: list[ExperimentRun] = []
    stopped: list[str] = []
    try:
        for position, value in enumerate(checked):
            _check_cancel(cancel, done)
            if not full_sweep and done and (reason := _stop(store, done)):
                stopped = [reason, skipped_note([f"{knob.name}={v}" for v in checked[position:]])]
                break
            read_back = tuple(
                changer.set(knob, device, value, array=array.name, array_uuid=array.uuid or "") for device in devices
            )
            label = f"{knob.name}={value}"
            run_ids = _run(run_preset, preset_key, array.dev_path, quick, label, options)
            done.append(ExperimentRun(label, run_ids))
            points.append(SweepPoint(value, read_back, run_ids))
    finally:
        restored = changer.restore()
    notes = summarise(knob, array, points, store, inventory) + stopped
    notes += [item.text if not item.ok else f"restored: {item.text}" for item in restored]
    return ExperimentResult(KNOB_SWEEP, tuple(done), tuple(notes))
