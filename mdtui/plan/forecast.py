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
from mdtui.model.disk import Disk
from mdtui.model.link import Link
from mdtui.plan.figures import FIELD, LINK, MEMBER_FIGURE_NAMES, RANDOM_BLOCK_BYTES, Figure, MemberFigures, Prediction
from mdtui.plan.levels import LINEAR, RaidLevel
from mdtui.plan.md_limits import DEFAULT_STRIPE_CACHE, FIELD_CEILINGS, MdCeilings, small_write_ios
from mdtui.plan.md_model import predict
from mdtui.plan.member_bounds import device_class, unmeasured_figures, with_unmeasured
from mdtui.plan.safety_cost import NO_SAFETY, WriteSafety

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
    """One planned member: the figures the model predicts from and where they come from. A member nobody
    measured still has figures: what bounds it (its link, or a hard disk's platter; member_bounds.unmeasured_figures),
    so every prediction answers and says what it rests on."""

    name: str
    figures: MemberFigures
    note: str  # "measured 3 d ago", or "not measured: its link, Gen4 16 GT/s x4 (7,877 MB/s)"
    missing: str = ""  # what is not measured and the command that measures it; "" when every figure is
    never_measured: bool = False  # no figure of any workload stored
    # The same for every member of a plan: member_sources reads it once per prediction.
    md: CeilingsChoice = FIELD_CHOICE

    @property
    def measured(self) -> bool:
        return not self.missing


def unmeasured_source(
    name: str,
    link: Link | None,
    rotational: bool | None,
    *,
    missing: str,
    never_measured: bool = True,
    md: CeilingsChoice = FIELD_CHOICE,
    stored: MemberFigures | None = None,
    stored_note: str = "",
) -> MemberSource:
    """A member without (all of) its own figures: what bounds it fills the gaps (member_bounds.unmeasured_figures: the
    link where it limits the device, else a platter; its kind of disk's field figures for random I/O and latency),
    and the note says which. ``stored``: the figures that were measured (``stored_note``: "measured 3 d ago"),
    kept where present."""
    bandwidth = link.bandwidth_bytes_per_s if link is not None else None
    bound = unmeasured_figures(bandwidth, rotational, link.kind if link is not None else None)
    if bound.seq_read_bytes_per_s is None:
        seq_note = "no link speed known"
    elif bound.basis == LINK and link is not None:
        seq_note = f"its link, {link.describe_current()} ({rate_mb_s(bandwidth)})"
    else:
        carries = (
            f"; its link ({link.describe_current()}) carries {rate_mb_s(bandwidth)}"
            if link is not None and bandwidth
            else ""
        )
        seq_note = f"a hard disk's platter ({rate_mb_s(bound.seq_read_bytes_per_s)}, {FIELD}){carries}"
    if stored is None:
        return MemberSource(name, bound, f"not measured: {_bound_note(seq_note, bound, rotational, link)}", missing,
                            never_measured, md)  # fmt: skip
    # Measured figures stay; each one not measured comes from the bound, with its own basis and range.
    figures = with_unmeasured(stored, bound)
    filled = [figure for figure in MEMBER_FIGURE_NAMES if getattr(stored, figure) is None]
    note = f"{stored_note} in part"
    if filled:
        note += f"; the rest: {_bound_note(seq_note, bound, rotational, link, filled)}"
    return MemberSource(name, figures, note, missing, never_measured, md)


def _bound_note(
    seq_note: str,
    bound: MemberFigures,
    rotational: bool | None,
    link: Link | None,
    figures: Sequence[str] = MEMBER_FIGURE_NAMES,
) -> str:
    """What stands in for ``figures`` of a member nobody measured, in words: the sequential bound, then where its
    random I/O and latency come from (its kind of disk's field figures, or what its link carries in 4 KiB)."""
    parts = [seq_note] if seq_note and any(f.startswith("seq") for f in figures) else []
    others = [f for f in figures if not f.startswith("seq") and getattr(bound, f) is not None]
    linked = [f for f in others if bound.basis_of(f) == LINK]
    fielded = [f for f in others if bound.basis_of(f) == FIELD]
    if linked:
        iops = shown(Figure(getattr(bound, linked[0]), "", LINK), linked[0])
        parts.append(f"random I/O {iops} (its link in 4 KiB requests)")
    if fielded:
        kind = device_class(rotational, link.kind if link is not None else None).name
        what = "random I/O and Q1 latency" if not linked and any(f.endswith("iops") for f in fielded) else "Q1 latency"
        parts.append(f"{what}: {kind}'s field figures")
    return "; ".join(parts) if parts else "nothing known"


def link_sources(disks: Sequence[Disk], md: CeilingsChoice = FIELD_CHOICE) -> list[MemberSource]:
    """Each disk as the model sees it with nothing measured: what bounds it."""
    return [
        unmeasured_source(d.name, d.link, d.rotational, missing=f"{d.name} has no member figures", md=md)
        for d in disks
    ]


def significant(value: float, digits: int = SHOWN_DIGITS) -> float:
    """``value`` to ``digits`` significant figures: 2213.4 → 2200.0."""
    if value <= 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(value)))


def shown(figure: Figure, key: str, *, compact: bool = False) -> str:
    """A figure as shown: unit, and no more precision than its basis or SHOWN_DIGITS; "at most" before a value that
    is an upper bound (a link's). ``compact``: for a table cell ("≤360k IOPS")."""
    rounded = figure.rounded
    if rounded is None:
        return "unknown"
    value = significant(rounded)
    if key.endswith("bytes_per_s"):
        text = rate_mb_s(value)
    elif key.endswith("iops"):
        text = f"{value / 1000:,.0f}k IOPS" if compact and value >= 1000 else f"{value:,.0f} IOPS"
    else:
        text = f"{value * 1e6:,.0f} µs"
    if not figure.value_at_most:
        return text
    return f"≤{text}" if compact else f"at most {text}"


def forecast(
    level: RaidLevel,
    members: Sequence[MemberSource],
    *,
    layout: str | None,
    chunk_bytes: int | None,
    stripe_cache_size: int | None = DEFAULT_STRIPE_CACHE,
    safety: WriteSafety = NO_SAFETY,
) -> Prediction | None:
    """The model's prediction over the members' figures (measured, or what bounds them); None without members.

    ``stripe_cache_size``: an existing array's own (None when it cannot be read); a planned one gets md's default.
    ``safety``: an existing array's bitmap and consistency policy (what they cost is in the figures).
    """
    if not members:
        return None
    ceilings = members[0].md.for_level(level.name)
    return predict(
        level,
        [m.figures for m in members],
        layout=layout,
        chunk_bytes=chunk_bytes,
        ceilings=ceilings,
        stripe_cache_size=stripe_cache_size,
        safety=safety,
    )


def missing_lines(members: Sequence[MemberSource]) -> list[str]:
    """Which members lack measured figures, and the command that measures them: one line for all the members
    never measured (the same command measures each), one per member measured in part."""
    missing = [m for m in members if not m.measured]
    never = [m for m in missing if m.never_measured]
    lines = []
    if len(never) > 1:
        bounds = {LINK: "their links", FIELD: "a hard disk's platter"}
        rest = ", ".join(dict.fromkeys(bounds.get(m.figures.basis, m.figures.basis) for m in never))
        lines.append(
            f"{', '.join(m.name for m in never)} have no member figures (until measured, {rest} and field figures "
            "for their kind of disk stand in): measure each alone with `mdtui bench --preset member-matrix --target "
            "/dev/DISK`"
        )
    lines += [
        f"{m.missing} (until then, {m.note.removeprefix('not measured: ')})" if m.never_measured else m.missing
        for m in missing
        if len(never) <= 1 or not m.never_measured
    ]
    return lines


def forecast_lines(prediction: Prediction | None, members: Sequence[MemberSource]) -> list[str]:
    """``prediction`` (forecast's, over ``members``, with the plan's write safety) as lines, each figure with its
    bound and basis, then where each member's figures come from and how to measure those that were not."""
    if prediction is None:
        return []
    lines = ["what it will do   (the members' figures through a model of md; saturating jobs)"]
    values = [shown(getattr(prediction, key), key) for _, key, _ in WORKLOADS]
    width = max(len(v) for v in values)
    for (name, key, job), value in zip(WORKLOADS, values, strict=True):
        figure: Figure = getattr(prediction, key)
        lines.append(f"  {name:<16}  {job:<11}  {value:>{width}}  bound: {figure.bound} ({figure.basis})")
    lines += [f"  note: {note}" for note in prediction.notes]
    if members[0].md.note:
        lines.append(f"  note: {members[0].md.note}")
    lines.append("  members: " + "; ".join(f"{m.name} {m.note}" for m in members))
    lines += [f"  {line}" for line in missing_lines(members)]
    return lines


# What finding 4 (docs/findings.md: four SAS3 SSDs, RND4KQ32T8) measured for random 4 KiB writes, quoted
# beside each level's small-write cost.
_FINDING_4_WRITES = {
    "raid0": "RAID0 of 4 SSDs gave 613K IOPS of random 4K writes vs 169K for one disk",
    "raid1": "RAID1 gave 154K IOPS of random 4K writes vs 169K for one disk",
    "raid10": "RAID10 gave 276K IOPS of random 4K writes vs 169K for one disk",
    "raid4": "RAID5 gave 58.3K IOPS of random 4K writes vs 169K for one disk",
    "raid5": "RAID5 gave 58.3K IOPS of random 4K writes vs 169K for one disk",
    "raid6": "RAID6 gave 65.4K IOPS of random 4K writes vs 169K for one disk",
}


def small_write_text(level: RaidLevel, members: int, layout: str | None, chunk_bytes: int | None) -> str:
    """One 4 KiB random write's cost in words, from :func:`small_write_ios` (md's own choice)."""
    reads, writes = small_write_ios(level, members, level.effective_layout(layout), RANDOM_BLOCK_BYTES, chunk_bytes)
    parity = level.parity_disks
    cite = f" (docs/findings.md, finding 4: {_FINDING_4_WRITES[level.name]})" if level.name in _FINDING_4_WRITES else ""
    if level is LINEAR:
        return "each small write is one member write; members are concatenated, not striped"
    if not parity:
        if writes == 1:
            return f"each small write is one member write{cite}"
        return f"each small write goes to {writes} members{cite}"
    old = "old parity" if parity == 1 else "old P and Q"
    if reads == 1 + parity:
        how = f"read-modify-write: md reads the old data and {old}, then writes new data and parity"
    else:
        how = (
            f"reconstruct-write: md reads the stripe's other data ({reads} unit{'s' if reads != 1 else ''}, fewer "
            f"than the old data and {old}), then writes new data and parity"
        )
    return f"each small write costs {reads} read{'s' if reads != 1 else ''} + {writes} writes ({how}){cite}"


# Short column heads of the level table, in WORKLOADS order.
TABLE_HEADS = ("seq read", "seq write", "rand read", "rand write", "Q1 lat")


@dataclass(frozen=True)
class LevelRow:
    level: str
    cells: tuple[str, ...]  # in WORKLOADS order, as shown()
    bounds: tuple[str, ...]


def level_table(
    levels: Sequence[RaidLevel], members: Sequence[MemberSource], *, chunk_bytes: int | None = None
) -> list[LevelRow]:
    """Each level that fits the member count, side by side on every workload: forecast() for each, so a cell
    is what `mdtui predict` says (unknown only where a member's figure is)."""
    rows = []
    for level in levels:
        if len(members) < level.min_members:
            continue
        prediction = forecast(level, members, layout=None, chunk_bytes=chunk_bytes if level.uses_chunk else None)
        if prediction is None:
            continue
        cells = tuple(shown(getattr(prediction, key), key, compact=True) for _, key, _ in WORKLOADS)
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
