"""The benchmark screen's text: the plan, a step's status line, how a run ended and what it found."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from mdtui.bench.plan import BenchPlan
from mdtui.bench.progress import StepUpdate
from mdtui.bench.result import BenchResult
from mdtui.format import duration, plural, rate_mb_s
from mdtui.store.records import RunStatus
from mdtui.ui.common.render import Palette


def plan_text(plan: BenchPlan | None, error: str | None, palette: Palette) -> Text:
    """The plan in a few lines: what runs how long, read-only or writing, warnings and refusals."""
    if plan is None:
        return Text(f"✖ {error}", style=palette.error)
    lines = plan.describe()
    text = Text()
    text.append(lines[0] + "\n", style="bold")
    text.append(lines[1] + "\n", style=f"bold {palette.warning}" if plan.writes else palette.muted)
    for warning in plan.warnings:
        text.append(f"⚠ {warning}\n", style=palette.warning)
    for refusal in plan.refusals:
        text.append(f"✖ {refusal}\n", style=palette.error)
    return text


def status_line(event: StepUpdate) -> str:
    total = event.elapsed_s + event.step_remaining_s if event.step_remaining_s is not None else None
    parts = [
        f"[{event.index + 1}/{event.count}] {event.label}",
        rate_mb_s(event.bytes_per_s),
        f"{event.iops:,.0f} IOPS",
        f"{event.elapsed_s:.0f} s" + (f" / {total:.0f} s" if total is not None else ""),
    ]
    if event.remaining_s is not None:
        parts.append(f"remaining {duration(event.remaining_s)}")
    return " · ".join(parts)


def ended_line(result: BenchResult) -> str:
    ran = f"{len(result.steps)} of {plural(len(result.plan.steps), 'step')}"
    ids = result.run_ids
    stored = f"stored as runs #{ids[0]}–#{ids[-1]}" if len(ids) > 1 else f"stored as run #{ids[0]}" if ids else ""
    if result.status is RunStatus.COMPLETE:
        head = f"✓ Finished: {ran}"
    elif result.status is RunStatus.CANCELLED:
        head = f"■ Cancelled after {ran}: the figures cover the part that ran"
    else:
        head = f"✖ Failed after {ran}: {result.error}"
    return " · ".join(part for part in (head, stored) if part)


def findings_renderable(result: BenchResult, palette: Palette) -> RenderableType:
    parts: list[RenderableType] = []
    report = result.weakest_link
    if report is not None:
        parts += [Text(f"→ {finding}") for finding in report.findings()]
    check = result.check
    if check is not None:
        if check.skipped:
            parts.append(Text(f"check pass skipped: {check.skipped}", style=palette.warning))
        elif check.mismatch_sectors is not None:
            parts.append(Text(f"check pass: {check.mismatch_sectors} mismatched sectors", style=palette.muted))
    parts += [Text(f"⚠ {warning}", style=palette.warning) for warning in result.plan.warnings]
    parts += [Text(f"note: {note}", style=palette.muted) for note in result.notes]
    return Group(*parts)
