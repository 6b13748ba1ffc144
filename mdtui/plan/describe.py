"""Plans as lines of text: what the CLI prints and the app's plan preview shows."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

from mdtui.format import ident_text, iec_bytes, plural
from mdtui.model.disk import Disk
from mdtui.plan.create import CreatePlan
from mdtui.plan.destroy import DestroyPlan
from mdtui.plan.forecast import forecast_lines
from mdtui.plan.request import member_path
from mdtui.plan.validate import safety_choice
from mdtui.plan.write_safety import cost_lines


def describe_create(plan: CreatePlan) -> list[str]:
    """The plan in lines, with what the array will do for every workload (the md model over the members'
    figures, as `mdtui predict` words it)."""
    req = plan.request
    members = len(plan.member_paths)
    lines = [
        f"Plan: {plan.level.name} on {plural(members, 'member')} as {req.device}",
        "",
        "  " + shlex.join(plan.argv),
        "",
        f"usable capacity   {iec_bytes(plan.usable_bytes)}",
        f"fault tolerance   {plan.fault_tolerance_text}",
        f"data disks        {plan.data_disks:g}",
    ]
    if plan.chunk_bytes:
        lines.append(f"chunk             {iec_bytes(plan.chunk_bytes)}")
    if plan.layout:
        lines.append(f"layout            {plan.layout}")
    if plan.stripe_width_bytes:
        lines.append(f"stripe width      {iec_bytes(plan.stripe_width_bytes)}")
    lines += forecast_lines(plan.prediction, plan.sources)
    lines.append(f"small writes      {plan.small_write_text}")
    lines += _safety_lines(plan)
    if plan.mkfs_ext4_args:
        lines.append(f"align ext4        mkfs.ext4 {shlex.join(plan.mkfs_ext4_args)} {req.device}")
    if plan.mkfs_xfs_args:
        lines.append(f"align xfs         mkfs.xfs {shlex.join(plan.mkfs_xfs_args)} {req.device}")
    if plan.resync_expected:
        lines.append("resync            runs after creation; benchmarks during resync mislead")
    for warning in plan.warnings:
        lines.append(f"⚠ {warning}")
    return lines


def _safety_lines(plan: CreatePlan) -> list[str]:
    """The bitmap and consistency policy: what they protect, and what they cost over the members' figures."""
    if not plan.level.redundant or plan.request.build:
        return []
    return cost_lines(
        plan.level,
        [source.figures for source in plan.sources],
        safety_choice(plan.request),
        layout=plan.layout,
        chunk_bytes=plan.chunk_bytes,
        ceilings=plan.sources[0].md.for_level(plan.level.name),
        array_bytes=plan.usable_bytes,
    )


def create_plan_dict(plan: CreatePlan) -> dict:
    """The plan as plain JSON types, for `mdtui create --json` and for scripts. "prediction" is `mdtui predict
    --json`'s document for these members; "prediction_missing" says which members were not measured and how to
    measure them (their figures are what bounds them: a link or a platter)."""
    prediction = plan.prediction
    return {
        "prediction": prediction.as_json(),
        "prediction_missing": [m.missing for m in plan.sources if not m.measured],
        "device": plan.request.device,
        "level": plan.level.name,
        "argv": list(plan.argv),
        "members": [d.name for d in plan.request.members],
        "member_paths": list(plan.member_paths),
        "spares": [d.name for d in plan.request.spares],
        "chunk_bytes": plan.chunk_bytes,
        "layout": plan.layout,
        "metadata": plan.metadata,
        "bitmap": plan.request.bitmap,
        "bitmap_chunk_kib": plan.request.bitmap_chunk_kib,
        "consistency_policy": plan.request.policy,
        "write_journal": None if plan.request.journal is None else member_path(plan.request.journal),
        "build": plan.request.build,
        "assume_clean": plan.request.assume_clean,
        "data_disks": float(plan.data_disks),
        "usable_bytes": plan.usable_bytes,
        "fault_tolerance": plan.fault_tolerance,
        "stripe_width_bytes": plan.stripe_width_bytes,
        "small_write_ios": [plan.small_write_reads, plan.small_write_writes],
        # The same figures as prediction's seq_read_mb_s and seq_write_mb_s, in bytes/s.
        "predicted_read_bytes_per_s": plan.seq_read_bytes_per_s,
        "predicted_write_bytes_per_s": plan.seq_write_bytes_per_s,
        "slowest_members": list(plan.pace_setters),
        "prediction_basis": prediction.seq_read_bytes_per_s.basis,
        "mkfs_ext4_args": list(plan.mkfs_ext4_args or ()),
        "mkfs_xfs_args": list(plan.mkfs_xfs_args or ()),
        "resync_expected": plan.resync_expected,
        "warnings": list(plan.warnings),
    }


def describe_destroy(plan: DestroyPlan) -> list[str]:
    lines = [f"Plan: tear down {plan.array}", ""]
    for step in plan.steps:
        lines.append(f"  {shlex.join(step.argv):<60}  # {step.description}")
    for warning in plan.warnings:
        lines.append(f"⚠ {warning}")
    return lines


def overwrite_line(disk: Disk) -> str:
    """The plan line for a disk a step writes whole, named so its drive can be told apart (repair, grow)."""
    return f"  writes {disk.name} ({ident_text(disk.model, disk.serial)}): everything on it is overwritten"


def step_lines(steps: Iterable[tuple[Sequence[str], str]]) -> list[str]:
    """A plan's steps as every verb prints them: the number and the argv, what it does under it."""
    lines = []
    for number, (argv, description) in enumerate(steps, start=1):
        lines.append(f"  {number}. {' '.join(argv)}")
        lines.append(f"     {description}")
    return lines
