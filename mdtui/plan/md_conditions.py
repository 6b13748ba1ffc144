"""How an array's figures change where it is not whole and quiet, or its layout makes a platter seek: one member
missing, a resync running under the workload, raid10's far layout on hard disks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from mdtui.plan.figures import RANDOM_BLOCK_BYTES, SEQ_BLOCK_BYTES, SEQ_STREAMS, Figure
from mdtui.plan.levels import RaidLevel
from mdtui.plan.md_limits import small_write_ios


def degraded_read_factors(level: RaidLevel, n: int, copies: int, parity: int, seq_factor: float) -> tuple[float, float]:
    """(sequential, random) members' worth of reading with one member missing."""
    if parity:
        data = n - parity
        # A read of the missing member's chunk reads the data disks' worth of the others to rebuild it.
        random_reads = (n - 1) / n + data / n
        # A stripe whose missing chunk is data is read twice: its present chunks directly, then all n - 1
        # into the stripe cache to rebuild the missing one.
        stripe_reads = data / n * (2 * data - 1) + parity / n * data
        return (data * (n - 1) / stripe_reads, (n - 1) / random_reads)
    # Mirrors: the set that lost a member serves its share of the reads with one copy fewer.
    factor = (copies - 1) * n / copies
    return (factor, factor)


def degraded_small_write(n: int, parity: int) -> tuple[float, float]:
    """Average (member reads, member writes) of a 4 KiB write with one member missing: onto the missing
    member's data it reconstructs (the other data disks' worth of reads, parity written); onto a stripe
    whose parity is missing it writes the data (and the other syndrome, raid6); else read-modify-write."""
    data = n - parity
    onto_missing = (data - 1, parity)
    parity_missing = (parity - 1 + (1 if parity > 1 else 0), parity)
    normal = (1 + parity, 1 + parity)
    weights = ((1 / n, onto_missing), (parity / n, parity_missing), ((data - 1) / n, normal))
    return (sum(w * c[0] for w, c in weights), sum(w * c[1] for w, c in weights))


def far_platter_writes(figure: Figure, seq_w: float | None, q1: float | None, notes: list[str]) -> Figure:
    """raid10 far on platters: every member writes two regions half a disk apart, so a head seeks between
    them; the elevator sorts the 8 streams' requests, so a seek per stream's write is the worst case."""
    if seq_w is None or q1 is None or figure.value is None:
        notes.append("raid10 far on platters: each write seeks between the near and far copy; without the "
                     "members' Q1 latency the seeks are not in the figure")  # fmt: skip
        return figure
    per_mib = SEQ_BLOCK_BYTES / seq_w
    worst = per_mib / (per_mib + q1)
    sorted_share = per_mib / (per_mib + q1 / SEQ_STREAMS)
    notes.append(
        f"raid10 far on platters: a member writes both copies half a disk apart; a seek ({q1 * 1e3:.3g} ms, the "
        f"member's Q1 latency) per {SEQ_STREAMS} writes sorted, per write at worst"
    )
    return replace(figure, value=figure.value * sorted_share, bound="platter seeks between the far layout's copies",
                   low=figure.value * worst, high=figure.value)  # fmt: skip


def resync_reads(
    level: RaidLevel, n: int, copies: int, seq_read: Figure, rand_read: Figure, notes: list[str]
) -> tuple[Figure, Figure]:
    """Mirrors read the region the sync has not reached from one copy only (raid1/raid10 read_balance):
    from the members' figure at the sync's end down to one copy's share at its start."""
    if level.name not in ("raid1", "raid10") or copies < 2:
        return (seq_read, rand_read)
    notes.append(
        "resync: reads past the sync point come from one copy only; the figure is half-way, the range from the "
        "sync's start to its end"
    )
    out = []
    for figure in (seq_read, rand_read):
        if figure.value is None or not figure.bound.startswith("members"):
            out.append(figure)
            continue
        one_copy = figure.value / copies
        half_way = 1 / (0.5 / figure.value + 0.5 / one_copy)
        out.append(replace(figure, value=half_way, bound=figure.bound + ", one copy past the sync point",
                           low=one_copy, high=figure.value))  # fmt: skip
    return (out[0], out[1])


def resync_parity_writes(
    level: RaidLevel,
    n: int,
    layout: str | None,
    chunk_bytes: int | None,
    figure: Figure,
    random_writes: Callable[[float, float], float | None],
    notes: list[str],
) -> Figure:
    """Past the sync point md forces reconstruct-write (its parity is not known good): the figure is half-way,
    the range from all writes reconstructing (the sync's start) to none (its end)."""
    reads, _ = small_write_ios(level, n, layout, RANDOM_BLOCK_BYTES, chunk_bytes, force_rcw=True)
    forced = random_writes(0.0, float(reads))
    if forced is None or figure.value is None:
        return figure
    low, high = sorted((forced, figure.value))
    half_way = 1 / (0.5 / figure.value + 0.5 / forced)
    notes.append(f"resync: past the sync point a 4 KiB write reconstructs ({reads} reads); the range runs from the "
                 "sync's start to its end")  # fmt: skip
    return replace(figure, value=half_way, bound=figure.bound + ", reconstruct-write past the sync point", low=low,
                   high=high)  # fmt: skip


def less_by(figure: Figure, share: float) -> Figure:
    if figure.value is None:
        return figure
    scale = 1 - share
    low = None if figure.low is None else figure.low * scale
    high = None if figure.high is None else figure.high * scale
    return replace(figure, value=figure.value * scale, low=low, high=high)
