"""Plans as lines of text: what the CLI prints and the app's plan preview shows."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

from mdtui.format import iec_bytes, plural, rate_mb_s
from mdtui.plan.create import CreatePlan
from mdtui.plan.destroy import DestroyPlan
from mdtui.plan.forecast import MemberSource, forecast, forecast_lines


def describe_create(plan: CreatePlan, sources: Sequence[MemberSource] | None = None) -> list[str]:
    """The plan in lines; with ``sources`` (each member's stored figures) the model's prediction of every
    workload replaces the sequential estimate from the slowest member."""
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
    prediction = plan.prediction
    # With every member's own figures the model replaces the estimate from the slowest member's link.
    modelled = sources is not None and all(source.figures is not None for source in sources)
    if not modelled:
        lines.append(f"predicted read    {rate_mb_s(prediction.seq_read_bytes_per_s)} (sequential, large blocks)")
        lines.append(f"predicted write   {rate_mb_s(prediction.seq_write_bytes_per_s)}")
    if not modelled and prediction.slowest_members:
        lines.append(
            f"  from the slowest member {', '.join(prediction.slowest_members)} at "
            f"{rate_mb_s(prediction.slowest_member_bytes_per_s)} ({prediction.basis})"
        )
    if sources is not None:
        lines += forecast_lines(plan.level, sources, layout=plan.layout, chunk_bytes=plan.chunk_bytes)
    lines.append(f"small writes      {plan.small_write_text}")
    if plan.mkfs_ext4_args:
        lines.append(f"align ext4        mkfs.ext4 {shlex.join(plan.mkfs_ext4_args)} {req.device}")
    if plan.mkfs_xfs_args:
        lines.append(f"align xfs         mkfs.xfs {shlex.join(plan.mkfs_xfs_args)} {req.device}")
    if plan.resync_expected:
        lines.append("resync            runs after creation; benchmarks during resync mislead")
    for note in prediction.notes if not modelled else ():
        lines.append(f"note: {note}")
    for warning in plan.warnings:
        lines.append(f"⚠ {warning}")
    return lines


def create_plan_dict(plan: CreatePlan, members: Sequence[MemberSource] | None = None) -> dict:
    """The plan as plain JSON types, for `mdtui create --json` and for scripts; with ``members``, "prediction"
    is `mdtui predict --json`'s document (null when a member has no figures, "prediction_missing" says which)."""
    prediction = plan.prediction
    extra: dict = {}
    if members is not None:
        model = forecast(plan.level, members, layout=plan.layout, chunk_bytes=plan.chunk_bytes)
        extra["prediction"] = model.as_json() if model is not None else None
        extra["prediction_missing"] = [m.note for m in members if m.figures is None]
    return extra | {
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
        "build": plan.request.build,
        "assume_clean": plan.request.assume_clean,
        "data_disks": float(plan.data_disks),
        "usable_bytes": plan.usable_bytes,
        "fault_tolerance": plan.fault_tolerance,
        "stripe_width_bytes": plan.stripe_width_bytes,
        "small_write_ios": [plan.small_write_reads, plan.small_write_writes],
        "predicted_read_bytes_per_s": prediction.seq_read_bytes_per_s,
        "predicted_write_bytes_per_s": prediction.seq_write_bytes_per_s,
        "slowest_members": list(prediction.slowest_members),
        "prediction_basis": prediction.basis,
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


def step_lines(steps: Iterable[tuple[Sequence[str], str]]) -> list[str]:
    """A plan's steps as every verb prints them: the number and the argv, what it does under it."""
    lines = []
    for number, (argv, description) in enumerate(steps, start=1):
        lines.append(f"  {number}. {' '.join(argv)}")
        lines.append(f"     {description}")
    return lines
