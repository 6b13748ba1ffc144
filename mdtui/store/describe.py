"""A stored run described in plain text: the detail the results screen and `mdtui results show` print, its
parameters and context said in words (yes/no, "2/5 seq write 1M", disks by name and kind), never a Python repr."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mdtui.format import duration
from mdtui.store.cells import format_metric, format_setting
from mdtui.store.compare import run_settings
from mdtui.store.records import METRICS, RunRecord, RunStatus

MISSING = "-"
# Parameters a run records about its place in a preset: said as one "step" (step_text), not as fio options.
STEP_PARAMS = ("step", "step_index", "steps")


def step_text(run: RunRecord) -> str:
    """Which step of its preset a run was: "2/5 seq read 1M", "seq read 1M", or "-"."""
    title = run.params.get("step")
    index, count = run.params.get("step_index"), run.params.get("steps")
    where = f"{index}/{count}" if isinstance(index, int) and isinstance(count, int) and count > 1 else ""
    text = " ".join(part for part in (where, str(title) if title else "") if part)
    return text or MISSING


def device_words(device: dict[str, Any]) -> str:
    """A recorded disk as a sentence fragment: "loop1 (loop, 1.0 GiB)", "sdb (KPM5XRUG1T92, SAS, 1.9 TB, SSD)"."""
    parts = [
        str(device[key]) for key in ("model", "transport") if device.get(key) not in (None, "", "unknown", "other")
    ]
    if isinstance(device.get("size_bytes"), (int, float)) and not isinstance(device.get("size_bytes"), bool):
        parts.append(format_setting("size_bytes", device["size_bytes"]))
    if isinstance(device.get("rotational"), bool):
        parts.append("HDD" if device["rotational"] else "SSD")
    if device.get("link"):
        parts.append(str(device["link"]))
    name = str(device.get("name") or "?")
    return f"{name} ({', '.join(parts)})" if parts else name


def words(key: str, value: Any) -> str:
    """A recorded value as text: yes/no, lists joined with commas, disks by name and kind, never a Python repr."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{name} {words(name, item)}" for name, item in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(device_words(item) if isinstance(item, dict) else words(key, item) for item in value)
    if isinstance(value, float):
        return f"{value:g}"
    return format_setting(key, value)


def readable(run: RunRecord) -> RunRecord:
    """``run`` with its parameters and context as words. A stored prediction is left out: the caller says it
    with its measured figure and ratio (mdtui.bench.predicted, a layer above this one)."""
    params = {
        key: words(key, value)
        for key, value in run.params.items()
        if key not in STEP_PARAMS and not (key == "predicted" and isinstance(value, dict))
    }
    step = step_text(run)
    if step != MISSING:
        params = {"step": step, **params}
    context = {key.replace("_", " "): words(key, value) for key, value in run.context.items()}
    return dataclasses.replace(run, params=params, context=context)


def local_time(moment: datetime | None) -> str:
    """A moment in the local time zone to the minute; "-" when not known."""
    return "-" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


def steady_text(run: RunRecord) -> str:
    """Whether the step's figure was steady by fio's criterion, in words; empty when it had none."""
    outcome = run.steady
    if outcome is None:
        return ""
    after = f"{outcome.after_s:.0f} s" if outcome.after_s is not None else "an unknown time"
    if outcome.attained:
        return f"yes, after {after} ({outcome.criterion})"
    if outcome.fell:
        return (
            f"NO: fell {outcome.fell_percent:.0f}% after looking steady (a write cache running out?); the figure "
            f"is the one after the fall ({after}, {outcome.criterion})"
        )
    return (
        f"NO: still moving when it reached its {after} ceiling ({outcome.criterion}; the last window: "
        f"{outcome.measured}); the figure is not the sustained one"
    )


def describe_run(run: RunRecord, after: Sequence[str] = ()) -> str:
    """Every field of ``run`` worth reading in words, one a line, then its measured metrics, then ``after`` (the
    figure predicted for it, when there was one)."""
    run = readable(run)
    lines = [f"Run {run.title}"]

    def field(name: str, value: str) -> None:
        if value:
            lines.append(f"  {name:<10} {value}")

    status = run.status.value
    if run.status is RunStatus.INTERRUPTED:
        status += " (its process ended without finishing it: a crash or a kill)"
    field("Status", status)
    field("Steady", steady_text(run))
    field("Started", local_time(run.started_at))
    field("Ended", f"{local_time(run.ended_at)} ({duration(run.duration_s)})" if run.ended_at else "-")
    field("Preset", run.preset)
    field("Target", run.target)
    field("Params", " ".join(f"{key}={value}" for key, value in run.params.items()))
    if run.array:
        settings = run_settings(run)
        parts = [
            f"{key.removeprefix('array.')} {format_setting(key, value)}"
            for key, value in settings.items()
            if key.startswith("array.") and not key.startswith("array.member_")
        ]
        field("Array", ", ".join(parts))
        for member in run.array.get("members") or []:
            if not isinstance(member, dict):
                continue
            ident = "  ".join(str(member[key]) for key in ("name", "model", "serial", "link") if member.get(key))
            lines.append(f"  {'':<10}   {ident}")
    field("System", " · ".join(f"{key} {value}" for key, value in run.context.items()))
    field("Error", run.error)
    field("Note", run.note)
    measured = [(m, v) for m in METRICS if (v := run.metrics.get(m.name)) is not None]
    if measured:
        lines.append("")
        width = max(len(m.label) for m, _ in measured)
        lines.extend(f"  {m.label:<{width}}  {format_metric(m, v):>12}" for m, v in measured)
    lines.append("")
    if run.samples:
        lines.append(f"  {len(run.samples)} samples over {duration(run.samples[-1].t_s)}")
    if run.fio_json:
        lines.append(
            f"  raw fio JSON kept ({len(run.fio_json):,} characters): mdtui results export {run.id} --format json --raw"
        )
    text = "\n".join(lines).rstrip()
    return text + "\n\n" + "\n".join(after) if after else text
