"""Plans as lines of text: what the CLI prints and the app's plan preview shows."""

from __future__ import annotations

import shlex

from mdtui.format import iec_bytes, rate_mb_s
from mdtui.plan.create import CreatePlan
from mdtui.plan.destroy import DestroyPlan


def describe_create(plan: CreatePlan) -> list[str]:
    req = plan.request
    members = len(plan.member_paths)
    lines = [
        f"Plan: {plan.level.name} on {members} member(s) as {req.device}",
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
    lines.append(f"predicted read    {rate_mb_s(prediction.seq_read_bytes_per_s)} (sequential, large blocks)")
    lines.append(f"predicted write   {rate_mb_s(prediction.seq_write_bytes_per_s)}")
    if prediction.slowest_members:
        lines.append(
            f"  from the slowest member {', '.join(prediction.slowest_members)} at "
            f"{rate_mb_s(prediction.slowest_member_bytes_per_s)} ({prediction.basis})"
        )
    lines.append(f"small writes      {plan.small_write_text}")
    if plan.mkfs_ext4_args:
        lines.append(f"align ext4        mkfs.ext4 {shlex.join(plan.mkfs_ext4_args)} {req.device}")
    if plan.mkfs_xfs_args:
        lines.append(f"align xfs         mkfs.xfs {shlex.join(plan.mkfs_xfs_args)} {req.device}")
    if plan.resync_expected:
        lines.append("resync            runs after creation; benchmarks during resync mislead")
    for note in prediction.notes:
        lines.append(f"note: {note}")
    for warning in plan.warnings:
        lines.append(f"⚠ {warning}")
    return lines


def describe_destroy(plan: DestroyPlan) -> list[str]:
    lines = [f"Plan: tear down {plan.array}", ""]
    for step in plan.steps:
        lines.append(f"  {shlex.join(step.argv):<60}  # {step.description}")
    for warning in plan.warnings:
        lines.append(f"⚠ {warning}")
    return lines
