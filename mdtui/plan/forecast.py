"""A planned array's prediction in words, from each member's stored figures: what create --dry-run, the create
screen's plan preview, the guide's level table and stored runs show.

A prediction is a model's output, so it is shown to two significant figures at most (fewer when its basis
claims fewer): "2,200 MB/s", never "2,213 MB/s".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mdtui.format import rate_mb_s
from mdtui.plan.levels import RaidLevel
from mdtui.plan.md_model import (
    DEFAULT_STRIPE_CACHE,
    FIELD_CEILINGS,
    NO_SAFETY,
    Figure,
    MdCeilings,
    MemberFigures,
    Prediction,
    WriteSafety,
    predict,
)

# Shown predictions claim no more than this many significant figures, whatever their basis.
SHOWN_DIGITS = 2
WORKLOADS: tuple[tuple[str, str, str], ...] = (
    ("sequential read", "seq_read_bytes_per_s", "1 MiB Q8T8"),
    ("sequential write", "seq_write_bytes_per_s", "1 MiB Q8T8"),
    ("random read", "rand_read_iops", "4 KiB Q32T8"),
    ("random write", "rand_write_iops", "4 KiB Q32T8"),
    ("Q1 read latency", "q1_read_latency_s", "4 KiB Q1T1"),
)

FORECAST_NAMES = {key: name for name, key, _ in WORKLOADS}


@dataclass(frozen=True)
class CeilingsChoice:
    """md's ceilings a prediction uses: per parity level when calibrated on this host (store.calibration),
    else the field figures, with a note saying why."""

    by_level: Mapping[str, MdCeilings] = field(default_factory=dict)
    default: MdCeilings = FIELD_CEILINGS
    note: str = ""

    def for_level(self, level: str) -> MdCeilings:
        return self.by_level.get(level, self.default)


FIELD_CHOICE = CeilingsChoice()


@dataclass(frozen=True)
class MemberSource:
    """One planned member: its figures (None when it has none to predict from) and where they come from."""

    name: str
    figures: MemberFigures | None
    note: str  # "measured 3 d ago", or why there are no figures and how to measure them
    never_measured: bool = False  # no figure of any workload stored
    # The same for every member of a plan: member_sources reads it once per prediction.
    md: CeilingsChoice = FIELD_CHOICE


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
    level: RaidLevel,
    members: Sequence[MemberSource],
    *,
    layout: str | None,
    chunk_bytes: int | None,
    stripe_cache_size: int | None = DEFAULT_STRIPE_CACHE,
    safety: WriteSafety = NO_SAFETY,
) -> Prediction | None:
    """The model's prediction, or None when a member has no figures.

    ``stripe_cache_size``: an existing array's own (None when it cannot be read); a planned one gets md's default.
    ``safety``: an existing array's bitmap and consistency policy (what they cost is in the figures).
    """
    figures = [m.figures for m in members]
    if not figures or any(f is None for f in figures):
        return None
    ceilings = members[0].md.for_level(level.name)
    return predict(
        level,
        [f for f in figures if f is not None],
        layout=layout,
        chunk_bytes=chunk_bytes,
        ceilings=ceilings,
        stripe_cache_size=stripe_cache_size,
        safety=safety,
    )


def forecast_lines(
    level: RaidLevel, members: Sequence[MemberSource], *, layout: str | None, chunk_bytes: int | None
) -> list[str]:
    """The prediction as lines, each figure with its bound and basis; or which members lack figures and how
    to measure them."""
    missing = [m for m in members if m.figures is None]
    if missing:
        lines = ["what it will do   not predicted for every workload: a member has no figures of its own"]
        # Members never measured at all share one line: the same command measures each.
        never = [m.name for m in missing if m.never_measured]
        if len(never) > 1:
            lines.append(
                f"  {', '.join(never)} have no member figures: measure each alone with "
                "`mdtui bench --preset member-matrix --target /dev/DISK`"
            )
        lines += [f"  {m.note}" for m in missing if len(never) <= 1 or not m.never_measured]
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
    if members[0].md.note:
        lines.append(f"  note: {members[0].md.note}")
    lines.append("  members: " + "; ".join(f"{m.name} {m.note}" for m in members))
    return lines


# Short column heads of the level table, in WORKLOADS order.
TABLE_HEADS = ("seq read", "seq write", "rand read", "rand write", "Q1 lat")


@dataclass(frozen=True)
class LevelRow:
    level: str
    cells: tuple[str, ...]  # in WORKLOADS order, as shown()
    bounds: tuple[str, ...]


def _short(figure: Figure, key: str) -> str:
    """A table cell, compact: "2,200 MB/s", "360k IOPS", "120 µs"."""
    text = shown(figure, key)
    if key.endswith("iops") and figure.rounded is not None:
        value = significant(figure.rounded)
        return f"{value / 1000:,.0f}k IOPS" if value >= 1000 else f"{value:,.0f} IOPS"
    return text


def level_table(
    levels: Sequence[RaidLevel], members: Sequence[MemberSource], *, chunk_bytes: int | None = None
) -> list[LevelRow]:
    """Each level that fits the member count, side by side on every workload; a member without figures
    leaves the figures it would set unknown."""
    figures = [m.figures if m.figures is not None else MemberFigures() for m in members]
    rows = []
    for level in levels:
        if len(figures) < level.min_members:
            continue
        ceilings = members[0].md.for_level(level.name) if members else FIELD_CEILINGS
        prediction = predict(level, figures, chunk_bytes=chunk_bytes if level.uses_chunk else None, ceilings=ceilings)
        cells = tuple(_short(getattr(prediction, key), key) for _, key, _ in WORKLOADS)
        bounds = tuple(getattr(prediction, key).bound for _, key, _ in WORKLOADS)
        rows.append(LevelRow(level.name, cells, bounds))
    return rows


def level_table_lines(rows: Sequence[LevelRow], heads: Sequence[str] = TABLE_HEADS) -> list[str]:
    """The rows as aligned text lines, a head line first."""
    widths = [max([len(head)] + [len(row.cells[i]) for row in rows]) for i, head in enumerate(heads)]
    name_width = max([len("level")] + [len(row.level) for row in rows])
    lines = ["  ".join([f"{'level':<{name_width}}"] + [f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)])]
    for row in rows:
        cells = [f"{c:>{w}}" for c, w in zip(row.cells, widths, strict=True)]
        lines.append("  ".join([f"{row.level:<{name_width}}", *cells]))
    return lines
