"""What an md array will do for each workload, from its members' figures, per level and layout.

The model follows what md itself does, not a fixed penalty per level:

- **Reads** are served by every member that holds the data. With the parallel job the figures are for
  (below), raid1 and raid10 spread reads over all copies; raid4/5/6 skip parity chunks, which costs a
  flash member nothing and a platter a rotation (so a rotational member delivers (n - parity)/n of its
  speed as data).
- **Writes**: mirrored levels write every copy; a parity level's small write costs what md chooses for
  it: read-modify-write (old data and old parity: 1 + p reads) or reconstruct-write (the stripe's other
  data: D - k reads), whichever reads less, then k + p writes; a write covering a whole stripe
  (chunk × data disks) reads nothing.
- **md's stripe cache**: raid4/5/6 build every write in the stripe cache, ``stripe_cache_size`` stripe
  heads of one 4 KiB page per member (256 by default). A sequential stream whose writes are smaller than a
  chunk row (chunk × data disks) writes full stripes only while the cache holds a whole row (chunk / 4 KiB
  heads) for each stream at once, waiting for the stream's next writes; with fewer, md hands
  the stripes over part-written and completes them by reading (the delayed stripes raid5_activate_delayed
  releases for pre-reading), and writers sleep for free heads (raid5_get_active_stripe). What that gives is
  not a member figure: the sequential write is then not predicted, its bound names the cache and a note
  says what size lifts it.
- **md's own ceilings**: raid4/5/6 do their stripe work in one kernel thread per array (raid5d) unless
  ``group_thread_cnt`` is set, which caps full-stripe write throughput and small-write IOPS whatever
  the members could do; md adds latency to every Q1 request; links members share (an HBA's PCIe link,
  a SAS wide port) cap the traffic they carry together.

Each figure names its bound ("members", "md stripe thread", "HBA link x8 Gen3") and its basis
("measured", "given", "field figure", "link"); it is rounded to what its basis can claim, and a figure a link
binds is an upper bound ("at most"), rounded up. A member nobody measured has figures all the same: its link,
and published figures for its kind of disk (``unmeasured_figures``).

The model's parts: the figures and workloads (plan/figures.py), what stands in for a member nobody measured
(plan/member_bounds.py), what md does and where it stops (plan/md_limits.py), what write safety costs
(plan/safety_cost.py), an array degraded, resyncing or seeking (plan/md_conditions.py); this module puts them
together for one array.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mdtui.errors import PlanError
from mdtui.plan.figures import (
    CONDITIONS,
    DEGRADED,
    FIELD,
    JSON_FIGURES,
    LAB_FRACTION,
    LINK,
    OPTIMAL,
    Q1_READ,
    RANDOM_BLOCK_BYTES,
    RESYNC,
    SEQ_BLOCK_BYTES,
    SEQ_STREAMS,
    WORKLOAD_JOBS,
    Cap,
    Figure,
    MemberFigures,
    Prediction,
    capped,
    largest,
    link_bound,
    members_basis,
    slowest,
)
from mdtui.plan.levels import LINEAR, RaidLevel
from mdtui.plan.md_conditions import (
    degraded_read_factors,
    degraded_small_write,
    far_platter_writes,
    less_by,
    resync_parity_writes,
    resync_reads,
)
from mdtui.plan.md_limits import (
    DEFAULT_STRIPE_CACHE,
    FIELD_CEILINGS,
    MdCeilings,
    field_read_iops,
    small_write_ios,
    stripe_cache_fraction,
    stripe_heads_for_full_stripes,
)
from mdtui.plan.safety_cost import (
    BITMAP_CLEAN_AFTER_S,
    NO_SAFETY,
    WriteSafety,
    bitmap_writes_per_write,
    journal_caps,
    partial_write_extra,
    q1_write,
)

# md throttles a resync to speed_limit_min (KiB/s a member) while the array serves other I/O: md's default here.
from mdtui.plan.sync_inputs import KERNEL_SPEED_LIMIT_MIN_KIB


@dataclass(frozen=True)
class SharedLink:
    """A link ``members`` of the array share (by index), with what it carries per second."""

    name: str  # "HBA link x8 Gen3"
    bytes_per_s: float
    members: tuple[int, ...]


def predict(
    level: RaidLevel,
    members: Sequence[MemberFigures],
    *,
    layout: str | None = None,
    chunk_bytes: int | None = None,
    ceilings: MdCeilings = FIELD_CEILINGS,
    links: Sequence[SharedLink] = (),
    stripe_cache_size: int | None = DEFAULT_STRIPE_CACHE,
    condition: str = OPTIMAL,
    safety: WriteSafety = NO_SAFETY,
    jobs: int = WORKLOAD_JOBS,
) -> Prediction:
    """Each workload's figure for an array of ``members`` at ``level``; see the module docstring.

    ``stripe_cache_size``: the array's (raid4/5/6), md's default 256 when not given; None when unknown.
    ``condition``: OPTIMAL, DEGRADED (one member missing) or RESYNC (a sync running under the workload).
    ``safety``: the bitmap and consistency policy (none and resync: md's fastest). ``jobs``: the jobs the
    field's per-job read ceilings are multiplied by (the workloads' 8; a published test's own count).
    """
    if any(m.ranges for m in members):
        # Members known to a range (a device class's field figures): the figure from their middles, its range
        # from the same array with every member at its low end and at its high end.
        def over(figures: Sequence[MemberFigures]) -> Prediction:
            return predict(level, figures, layout=layout, chunk_bytes=chunk_bytes, ceilings=ceilings, links=links,
                           stripe_cache_size=stripe_cache_size, condition=condition, safety=safety,
                           jobs=jobs)  # fmt: skip

        middle = over([replace(m, ranges=()) for m in members])
        return _spread(middle, over([m.at_end(0) for m in members]), over([m.at_end(1) for m in members]))
    n = len(members)
    if n < level.min_members:
        raise PlanError(f"{level.name} needs at least {level.min_members} members; {n} given")
    if condition not in CONDITIONS:
        raise PlanError(f"no array condition {condition!r}: {', '.join(CONDITIONS)}")
    layout = level.effective_layout(layout)
    if level.uses_chunk and chunk_bytes is None:
        chunk_bytes = 512 * 1024  # mdadm's default
    copies = level.copies(n, layout)
    parity = level.parity_disks
    data = n - parity
    base = members_basis(members)
    notes: list[str] = []

    def prediction(figures: Sequence[Figure]) -> Prediction:
        seq_read, seq_write, rand_read, rand_write, q1_read, q1_write = figures
        return Prediction(
            level=level.name,
            members=n,
            layout=layout,
            chunk_bytes=chunk_bytes if level.uses_chunk else None,
            seq_read_bytes_per_s=seq_read,
            seq_write_bytes_per_s=seq_write,
            rand_read_iops=rand_read,
            rand_write_iops=rand_write,
            q1_read_latency_s=q1_read,
            q1_write_latency_s=q1_write,
            notes=tuple(notes),
            condition=condition,
        )

    if condition == DEGRADED and not level.redundant:
        gone = Figure(None, f"{level.name} has no redundancy: a missing member stops the array", base)
        return prediction([gone] * 6)

    seq_r = slowest([m.seq_read_bytes_per_s for m in members])
    seq_w = slowest([m.seq_write_bytes_per_s for m in members])
    rr = slowest([m.rand_read_iops for m in members])
    rw = slowest([m.rand_write_iops for m in members])
    q1 = slowest([m.q1_read_latency_s for m in members])
    q1w = largest([m.q1_write_latency_s for m in members])
    rotational = any(m.rotational for m in members)
    far_layout = level.name == "raid10" and (layout or "").startswith("f")

    # Reads: how many members' worth of reading serves the array.
    if level is LINEAR:
        seq_read_factor: float = 1.0  # one member at a time: a stream walks the members in turn
        notes.append("linear: a sequential stream reads one member at a time; random I/O over the whole array spreads")
    elif parity and rotational:
        seq_read_factor = float(data)  # a platter turns under every parity chunk it skips
    elif parity and level.name == "raid4":
        seq_read_factor = float(data)  # the parity member holds no data
    else:
        seq_read_factor = float(n)
    rand_read_factor = float(data if level.name == "raid4" else n)
    # Sync speed md keeps up under load takes its share of every member.
    resync_share = 0.0
    if condition == DEGRADED:
        seq_read_factor, rand_read_factor = degraded_read_factors(level, n, copies, parity, seq_read_factor)
    elif condition == RESYNC and seq_r is not None:
        resync_share = min(0.5, KERNEL_SPEED_LIMIT_MIN_KIB * 1024 / seq_r)

    seq_write_factor = 1.0 if level is LINEAR else (n / copies if not parity else float(data))
    force_rcw = condition == RESYNC and bool(parity)
    reads, writes = small_write_ios(level, n, layout, RANDOM_BLOCK_BYTES, chunk_bytes)
    reads_f, writes_f = float(reads), float(writes)
    serving = n
    if condition == DEGRADED and parity:
        reads_f, writes_f = degraded_small_write(n, parity)
        serving = n - 1
    ppl_writes, ppl_what = partial_write_extra(safety, parity, n)
    writes_f += ppl_writes

    def random_writes(extra_writes: float, member_reads: float = reads_f) -> float | None:
        if level is LINEAR:
            return None if rw is None else rw * n / (1 + extra_writes)
        if rw is None or (member_reads and rr is None):
            return None
        if not member_reads or rr is None:
            return rw * serving / (writes_f + extra_writes)
        # The serving members share the work: each write costs reads and writes of member time.
        return serving / (member_reads / rr + (writes_f + extra_writes) / rw)

    seq_read_value = None if seq_r is None else seq_r * seq_read_factor
    seq_write_value = None if seq_w is None else seq_w * seq_write_factor
    rand_read_value = None if rr is None else rr * rand_read_factor
    rand_write_value = random_writes(0.0)
    bitmap_extra = 0.0
    if rand_write_value is not None and safety.bitmap != "none":
        for _ in range(3):  # the clean share depends on the write rate it sets: a few rounds settle it
            if rand_write_value is None:
                break
            bitmap_extra = bitmap_writes_per_write(safety, n, rand_write_value)
            rand_write_value = random_writes(bitmap_extra)

    # Links members share carry the array's traffic, parity and second copies included; a cap is in the
    # figure's own unit (bytes/s, or IOPS of `unit_bytes` blocks).
    def link_caps(traffic_per_byte: float, unit_bytes: float = 1.0) -> list[Cap]:
        return [
            (link.bytes_per_s / (len(link.members) / n * traffic_per_byte) / unit_bytes, link.name, LINK)
            for link in links
            if link.members
        ]

    write_traffic = n / data if parity else float(copies)
    md = ceilings.basis
    seq_read_caps: list[Cap] = [(ceilings.seq_read_bytes_per_s, f"md's {level.name} read path", md)]
    rand_read_caps: list[Cap] = []
    if ceilings.rand_read_iops is not None:
        rand_read_caps.append((ceilings.rand_read_iops, f"md's {level.name} read path", md))
    elif (found := field_read_iops(level.name, ceilings.kernel, jobs)) is not None:
        rand_read_caps.append((found[0], found[1], FIELD))
    stripe_bw: list[Cap] = []
    stripe_iops: list[Cap] = []
    if parity:
        thread = "md stripe thread (group_thread_cnt 0)"
        stripe_bw.append((ceilings.stripe_write_bytes_per_s, thread, md))
        stripe_bw.append((ceilings.parity_bytes_per_s, "parity CPU (the kernel's xor/raid6 speed)", md))
        stripe_iops.append((ceilings.stripe_small_write_iops, thread, md))
        if condition == DEGRADED:
            # Reads of the missing member's chunks are rebuilt in stripes by the same thread.
            rebuilt = "md stripe thread rebuilding the missing member's reads"
            if ceilings.stripe_small_write_iops is not None:
                rand_read_caps.append((ceilings.stripe_small_write_iops * n, rebuilt, md))
            if ceilings.stripe_write_bytes_per_s is not None:
                seq_read_caps.append((ceilings.stripe_write_bytes_per_s * n / data, rebuilt, md))
    else:
        stripe_bw.append((ceilings.seq_write_bytes_per_s, f"md's {level.name} write path", md))
        stripe_iops.append((ceilings.rand_write_iops, f"md's {level.name} write path", md))
    journal = journal_caps(safety, parity, data, n, notes)

    def members_bound(factor: float) -> str:
        return f"members (slowest × {factor:.3g})"

    if reads_f and parity:
        rand_write_bound = (
            f"members ({reads_f:.3g} reads + {writes_f + bitmap_extra:.3g} writes per write over {serving})"
        )
    else:
        rand_write_bound = members_bound(serving / (writes_f + bitmap_extra) if level is not LINEAR else n)
    # What each workload's figure rests on: the members' figures it is made of (a parity write reads first).
    writes_read = ("rand_read_iops",) if reads_f and parity else ()
    seq_read_basis = members_basis(members, ("seq_read_bytes_per_s",))
    seq_write_basis = members_basis(members, ("seq_write_bytes_per_s",))
    seq_read = capped(seq_read_value, seq_read_caps + link_caps(1.0), members_bound(seq_read_factor), seq_read_basis,
                       link_bound(members, ("seq_read_bytes_per_s",)))  # fmt: skip
    seq_write = capped(
        seq_write_value,
        stripe_bw + journal[0] + link_caps(write_traffic),
        members_bound(seq_write_factor),
        seq_write_basis,
        link_bound(members, ("seq_write_bytes_per_s",)),
    )
    if far_layout and rotational and seq_write.value is not None and seq_write.bound.startswith("members"):
        seq_write = far_platter_writes(seq_write, seq_w, q1, notes)
    # A 1 MiB write that covers a whole chunk row fills every head of it itself; a smaller one leaves the row
    # waiting in the cache for the stream's next write.
    partial_rows = chunk_bytes is not None and chunk_bytes * data > SEQ_BLOCK_BYTES
    if (
        parity
        and chunk_bytes
        and partial_rows
        and stripe_cache_size is not None
        and seq_write.bound.startswith("members")
    ):
        needed = stripe_heads_for_full_stripes(chunk_bytes)
        if stripe_cache_size < needed and seq_write.value is not None:
            # Part-written stripes read before they write and writers wait for heads: the members' figure
            # times the fraction the lab measured, with its range.
            fraction, low, high = stripe_cache_fraction(stripe_cache_size, needed)
            notes.append(
                f"sequential writes: stripe_cache_size {stripe_cache_size} holds fewer stripe heads than "
                f"{SEQ_STREAMS} streams × {needed // SEQ_STREAMS} (a {chunk_bytes // 1024} KiB chunk row each) "
                f"need for full stripes: {fraction:.2f} of the members' {seq_write.value / 1e6:.3g} MB/s "
                f"(the lab's measured fraction, range {low:.2f}-{high:.2f}); {needed} or more gives the "
                "full-stripe figure"
            )
            full = seq_write.value
            seq_write = replace(
                seq_write,
                value=full * fraction,
                bound=f"md stripe cache (stripe_cache_size {stripe_cache_size})",
                basis=members_basis(members, ("seq_write_bytes_per_s",), LAB_FRACTION),
                low=full * low,
                high=full * high,
            )
    rand_read = capped(rand_read_value, rand_read_caps + link_caps(1.0, RANDOM_BLOCK_BYTES),
                        members_bound(rand_read_factor), members_basis(members, ("rand_read_iops",)),
                        link_bound(members, ("rand_read_iops",)))  # fmt: skip
    rand_write = capped(
        rand_write_value,
        stripe_iops + journal[1] + link_caps(write_traffic, RANDOM_BLOCK_BYTES),
        rand_write_bound,
        members_basis(members, ("rand_write_iops", *writes_read)),
        link_bound(members, ("rand_write_iops", *writes_read)),
    )
    if condition == RESYNC:
        seq_read, rand_read = resync_reads(level, n, copies, seq_read, rand_read, notes)
        if force_rcw and rand_write.value is not None and rand_write.bound.startswith("members"):
            rand_write = resync_parity_writes(level, n, layout, chunk_bytes, rand_write, random_writes, notes)
        if resync_share:
            seq_read, seq_write, rand_read, rand_write = (
                less_by(f, resync_share) for f in (seq_read, seq_write, rand_read, rand_write)
            )
            notes.append(
                f"during a resync md keeps it at speed_limit_min ({KERNEL_SPEED_LIMIT_MIN_KIB:,} KiB/s a member) "
                f"while the array is in use: {resync_share:.1%} of each member's time"
            )
    if q1 is None:
        latency = Figure(None, "unknown: a member's Q1 latency is missing", members_basis(members, Q1_READ))
    elif ceilings.layer_latency_s is None:
        latency = Figure(q1, "the member (md's own latency not known)", members_basis(members, Q1_READ))
    else:
        latency = Figure(
            q1 + ceilings.layer_latency_s, "the member plus md's layer", members_basis(members, Q1_READ, md)
        )
    if condition == DEGRADED and parity and latency.value is not None:
        # One read in n lands on the missing member and is rebuilt from the others through the stripe thread.
        latency = replace(latency, bound=latency.bound + " (1 read in " + str(n) + " rebuilt from the others)")
    write_latency = q1_write(members, level, n, reads, q1, q1w, ceilings, safety, parity, notes)
    if parity and reads_f:
        how = "read-modify-write" if reads == 1 + parity else "reconstruct-write"
        if condition == DEGRADED:
            notes.append(
                f"degraded: a 4 KiB random write costs {reads_f:.3g} member reads and {writes_f:.3g} writes on "
                f"average over the {n - 1} members left"
            )
        else:
            notes.append(
                f"a 4 KiB random write costs {reads} member read{'s' if reads > 1 else ''} and {writes} writes "
                f"({how}, as md chooses for {n} members)"
            )
    if ppl_what and parity:
        notes.append(f"consistency policy ppl: every partial-stripe write adds {ppl_what}")
    if bitmap_extra:
        notes.append(
            f"bitmap: {bitmap_extra:.2g} member writes a random write on average (a chunk with no write in the last "
            f"{BITMAP_CLEAN_AFTER_S:g} s is marked before the data, PREFLUSH and FUA, on every member holding it)"
        )
    return prediction([seq_read, seq_write, rand_read, rand_write, latency, write_latency])


def _spread(middle: Prediction, low: Prediction, high: Prediction) -> Prediction:
    """``middle`` with each figure's range widened to what ``low`` and ``high`` (the same array over its members'
    low and high ends) give."""
    spread: dict[str, Any] = {}
    for attribute, _, _ in JSON_FIGURES:
        figure: Figure = getattr(middle, attribute)
        if figure.value is None:
            continue
        ends = [
            value
            for other in (figure, getattr(low, attribute), getattr(high, attribute))
            for value in (other.value, other.low, other.high)
            if value is not None
        ]
        if min(ends) < figure.value or max(ends) > figure.value:
            spread[attribute] = replace(figure, low=min(ends), high=max(ends))
    return replace(middle, **spread)
