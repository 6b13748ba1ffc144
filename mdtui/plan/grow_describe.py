"""A grow plan in words (what `mdtui grow` prints and the app shows) and as `mdtui grow --json` prints it."""

from __future__ import annotations

from mdtui.format import iec_bytes
from mdtui.plan.describe import overwrite_line, step_lines
from mdtui.plan.grow import GrowPlan
from mdtui.plan.grow_shape import Geometry
from mdtui.plan.sync_time import RECOVER, RESHAPE, RESYNC
from mdtui.plan.sync_words import prediction_words


def describe_grow(plan: GrowPlan) -> list[str]:
    """The plan as the CLI prints it and the app shows it."""
    lines = [f"grow {plan.array}: {plan.before.describe()} → {plan.after.describe()}"]
    lines += step_lines((step.argv, step.description) for step in plan.steps)
    if not plan.steps:
        lines.append("  the array stays as it is")
    lines.append(
        f"  capacity: {iec_bytes(plan.size_before_bytes)} now, {iec_bytes(plan.size_during_bytes)} during, "
        f"{iec_bytes(plan.size_after_bytes)} after"
    )
    lines.append(
        f"  members that may fail: {plan.tolerance_before} now, {plan.tolerance_during} during, "
        f"{plan.tolerance_after} after"
    )
    if plan.pass_action is not None:
        word = {RESHAPE: "reshape", RESYNC: "resync of the new space", RECOVER: "rebuild onto the new members"}[
            plan.pass_action
        ]
        # Worded as repair's, scrub's and create's passes are (sync_words.prediction_words).
        said = prediction_words(plan.time, word) if plan.time is not None else f"{word}: not predicted ({plan.bound})"
        lines.append(f"  time: {said}")
    else:
        lines.append("  time: instant (md moves no data)")
    lines.append(f"  {plan.backup_reason}")
    if plan.backup_file is not None:
        lines.append(
            f"  backup file: {plan.backup_file} ({iec_bytes(plan.backup_bytes)}); keep it until the reshape ends: "
            "an interrupted reshape needs it to assemble"
        )
    lines += [overwrite_line(disk) for disk in plan.new_disks]
    contents = plan.contents
    if contents.kind is not None:
        size = f", {iec_bytes(contents.size_bytes)}" if contents.size_bytes is not None else ""
        mounted = f", mounted at {contents.mount_point}" if contents.mount_point else ""
        lines.append(f"  on it: {contents.kind}{size}{mounted}")
    if plan.followup is not None:
        if plan.followup.argvs:
            commands = "; ".join(" ".join(argv) for argv in plan.followup.argvs)
            lines.append(f"  after: {plan.followup.description}: {commands} (its own confirmation)")
        else:
            lines.append(f"  after: {plan.followup.description}")
    for warning in plan.warnings:
        lines.append(f"  ⚠ {warning}")
    for note in plan.notes:
        lines.append(f"  {note}")
    return lines


def grow_plan_dict(plan: GrowPlan) -> dict[str, object]:
    """The plan as `mdtui grow --json` prints it under "plan"."""
    return {
        "argv": [list(argv) for argv in plan.argvs],
        "backup_file": plan.backup_file,
        "size_before_bytes": plan.size_before_bytes,
        "size_during_bytes": plan.size_during_bytes,
        "size_after_bytes": plan.size_after_bytes,
        "predicted_seconds": plan.time.as_json()["predicted_seconds"]
        if plan.time is not None
        else (0 if plan.pass_action is None else None),
        "bound": plan.bound,
        "pass": plan.pass_action,
        "before": _geometry_dict(plan.before),
        "after": _geometry_dict(plan.after),
        "fault_tolerance": {
            "before": plan.tolerance_before,
            "during": plan.tolerance_during,
            "after": plan.tolerance_after,
        },
        "backup_reason": plan.backup_reason,
        "backup_bytes": plan.backup_bytes,
        "steps": [{"argv": list(s.argv), "description": s.description} for s in plan.steps],
        "time": plan.time.as_json() if plan.time is not None else None,
        "contents": {
            "kind": plan.contents.kind,
            "size_bytes": plan.contents.size_bytes,
            "mount_point": plan.contents.mount_point,
        },
        "follow_up": (
            {"argv": [list(a) for a in plan.followup.argvs], "description": plan.followup.description}
            if plan.followup is not None
            else None
        ),
        "warnings": list(plan.warnings),
        "notes": list(plan.notes),
    }


def _geometry_dict(geometry: Geometry) -> dict[str, object]:
    return {
        "level": geometry.level.name,
        "raid_devices": geometry.members,
        "chunk_bytes": geometry.chunk_bytes,
        "layout": geometry.layout,
        "component_bytes": geometry.component_bytes,
        "size_bytes": geometry.usable_bytes,
    }
