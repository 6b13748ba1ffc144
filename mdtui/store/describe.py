"""A stored run described in plain text: the detail the results screen and `mdtui results show` print."""

from __future__ import annotations

from datetime import datetime

from mdtui.format import duration
from mdtui.store.compare import run_settings
from mdtui.store.export import format_metric, format_setting
from mdtui.store.records import METRICS, RunRecord, RunStatus


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


def describe_run(run: RunRecord) -> str:
    """Every field of ``run`` worth reading, one a line, then its measured metrics."""
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
    return "\n".join(lines).rstrip()
