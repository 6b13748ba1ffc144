"""A planned array's prediction in words, from each member's stored figures: what create --dry-run, the create
screen's plan preview, the guide's level table and stored runs show.

A prediction is a model's output, so it is shown to two significant figures at most (fewer when its basis
claims fewer): "2,200 MB/s", never "2,213 MB/s".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.format import rate_mb_s
from mdtui.plan.levels import RaidLevel
from mdtui.plan.md_model import Figure, MemberFigures, Prediction, predict

# Shown predictions claim no more than this many significant figures, whatever their basis.
SHOWN_DIGITS = 2
WORKLOADS: tuple[tuple[str, str, str], ...] = (
    ("sequential read", "seq_read_bytes_per_s", "1 MiB Q8T8"),
    ("sequential write", "seq_write_bytes_per_s", "1 MiB Q8T8"),
    ("random read", "rand_read_iops", "4 KiB Q32T8"),
    ("random write", "rand_write_iops", "4 KiB Q32T8"),
    ("Q1 read latency", "q1_read_latency_s", "4 KiB Q1T1"),
)


@dataclass(frozen=True)
class MemberSource:
    """One planned member: its figures (None when it has none to predict from) and where they come from."""

    name: str
    figures: MemberFigures | None
    note: str  # "measured 3 d ago", or why there are no figures and how to measure them


def significant(value: float, digits: int = SHOWN_DIGITS) -> float:
    """``value`` to ``digits`` significant figures: 2213.4 → 2200.0."""
    if value <= 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(value)))


def shown(figure: Figure, key: str) -> str:
    """A figure as shown: unit, and no more precision than its basis or SHOWN_DIGITS."""
    rounded = figure.rounded
    if rounded is None:
        return "unknown"
    value = significant(rounded)
    if key.endswith("bytes_per_s"):
        return rate_mb_s(value)
    if key.endswith("iops"):
        return f"{value:,.0f} IOPS"
    return f"{value * 1e6:,.0f} µs"


def forecast(
    level: RaidLevel, members: Sequence[MemberSource], *, layout: str | None, chunk_bytes: int | None
) -> Prediction | None:
    """The model's prediction, or None when a member has no figures."""
    figures = [m.figures for m in members]
    if not figures or any(f is None for f in figures):
        return None
    return predict(level, [f for f in figures if f is not None], layout=layout, chunk_bytes=chunk_bytes)


def forecast_lines(
    level: RaidLevel, members: Sequence[MemberSource], *, layout: str | None, chunk_bytes: int | None
) -> list[str]:
    """The prediction as lines, each figure with its bound and basis; or which members lack figures and how
    to measure them."""
    missing = [m for m in members if m.figures is None]
    if missing:
        lines = ["what it will do   not predicted for every workload: a member has no figures of its own"]
        lines += [f"  {m.note}" for m in missing]
        return lines
    prediction = forecast(level, members, layout=layout, chunk_bytes=chunk_bytes)
    if prediction is None:
        return []
    lines = ["what it will do   (each member's own figures through a model of md; saturating jobs)"]
    values = [shown(getattr(prediction, key), key) for _, key, _ in WORKLOADS]
    width = max(len(v) for v in values)
    for (name, key, job), value in zip(WORKLOADS, values, strict=True):
        figure: Figure = getattr(prediction, key)
        lines.append(f"  {name:<16}  {job:<11}  {value:>{width}}  bound: {figure.bound} ({figure.basis})")
    lines += [f"  note: {note}" for note in prediction.notes]
    lines.append("  members: " + "; ".join(f"{m.name} {m.note}" for m in members))
    return lines
