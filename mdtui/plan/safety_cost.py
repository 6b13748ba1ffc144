"""What write safety costs an array's writes: the write-intent bitmap's updates, the partial parity log's and a
write journal's writes, at the workload's depth and at queue depth 1."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.plan.figures import (
    Q1_READ,
    RANDOM_BLOCK_BYTES,
    RANDOM_IN_FLIGHT,
    Cap,
    Figure,
    MemberFigures,
    members_basis,
)
from mdtui.plan.levels import RaidLevel
from mdtui.plan.md_limits import MdCeilings

# md clears a write-intent bitmap bit once its chunk has seen no write for one to two passes of the bitmap
# daemon (md-bitmap.c: a counter of 2 drops to 1, then to 0 and the bit clears), daemon_sleep 5 s by default.
BITMAP_DAEMON_SLEEP_S = 5.0
BITMAP_CLEAN_AFTER_S = 1.5 * BITMAP_DAEMON_SLEEP_S
# One on-disk bitmap page holds a bit per chunk: 4 KiB × 8.
BITMAP_CHUNKS_PER_PAGE = 4096 * 8
# Member requests one bitmap page write costs: md writes it with PREFLUSH and FUA (md_super_write), so a member
# with a volatile write cache flushes it first, then takes the write with FUA (2; 3 where the device emulates FUA
# by a second flush, 1 where it reports write-through and the block layer drops both). Not confirmed in the lab:
# its Q1 writes through a QEMU iops throttle are the emulator's latency (docs/predictions.md, write safety).
BITMAP_UPDATE_REQUESTS = 2


@dataclass(frozen=True)
class WriteSafety:
    """What protects the array's writes: the write-intent bitmap and the consistency policy.

    ``bitmap``: "none", "internal" (on every member, beside the superblock), "file" (an external file) or
    "lockless" (kernel 6.18's); ``bitmap_chunk_bytes``: the region one bit covers (None: mdadm's choice);
    ``policy``: "resync" (md's default), "ppl" (raid5's partial parity log) or "journal" (a write journal
    device, raid4/5/6); ``journal``: that device's figures when known; ``array_bytes``: the array's size,
    which with the chunk sets how many bits random writes spread over (None: large, every write a new one).
    """

    bitmap: str = "none"
    bitmap_chunk_bytes: int | None = None
    policy: str = "resync"
    journal: MemberFigures | None = None
    array_bytes: int | None = None


NO_SAFETY = WriteSafety()
# mdadm 4.2 picks a bitmap chunk of at least 64 MiB when it is not given (a bitmap of at most 2^21 bits).
MDADM_DEFAULT_BITMAP_CHUNK = 64 << 20


def bitmap_clean_share(safety: WriteSafety, writes_per_s: float) -> float:
    """The share of random writes that land in a bitmap chunk with no write in the last
    BITMAP_CLEAN_AFTER_S, each of which makes md write the bitmap before the data (0 without a bitmap)."""
    if safety.bitmap == "none":
        return 0.0
    chunk = safety.bitmap_chunk_bytes or MDADM_DEFAULT_BITMAP_CHUNK
    if safety.array_bytes is None:
        return 1.0  # an array far larger than the writes' reach: every write finds a clean chunk
    chunks = max(1.0, safety.array_bytes / chunk)
    return math.exp(-writes_per_s * BITMAP_CLEAN_AFTER_S / chunks)


def bitmap_pages(safety: WriteSafety) -> float:
    """On-disk bitmap pages (one bit a chunk); unknown size counts as more pages than writes in flight."""
    if safety.array_bytes is None:
        return float(RANDOM_IN_FLIGHT)
    chunk = safety.bitmap_chunk_bytes or MDADM_DEFAULT_BITMAP_CHUNK
    return max(1.0, math.ceil(safety.array_bytes / chunk / BITMAP_CHUNKS_PER_PAGE))


def bitmap_writes_per_write(safety: WriteSafety, members: int, writes_per_s: float) -> float:
    """Member writes the bitmap adds to one random array write at the workload's depth: each flush writes
    every dirty page to every member holding the bitmap (internal: all), and one flush carries the writes
    in flight, so a bitmap of few pages costs little however small its chunk."""
    if safety.bitmap in ("none", "file"):
        return 0.0  # a file's writes go to the device holding it, not to the members
    share = bitmap_clean_share(safety, writes_per_s)
    pages_per_write = min(1.0, bitmap_pages(safety) / RANDOM_IN_FLIGHT)
    return share * members * pages_per_write * BITMAP_UPDATE_REQUESTS


def partial_write_extra(safety: WriteSafety, parity: int, members: int) -> tuple[float, str]:
    """Member writes a consistency policy adds to a partial-stripe write at the workload's depth, and what it is."""
    if parity and safety.policy == "ppl":
        # raid5-ppl.c: a stripe's partial parity goes to the log on its parity member before the data, but the
        # log gathers the stripes in flight into one io_unit a member (a header and a page each), so at the
        # workload's depth it is about one log write a member per flight, not one a write. (In the lab, raid5
        # with ppl over 500-IOPS members wrote 483 IOPS where the same members without it wrote 503.)
        return (members / RANDOM_IN_FLIGHT, "the partial parity log's writes (one io_unit a member per flight)")
    return (0.0, "")


def journal_caps(safety: WriteSafety, parity: int, data: int, n: int, notes: list[str]) -> tuple[list[Cap], list[Cap]]:
    """Caps a write journal puts on (sequential, random) writes: every write goes to the journal device
    first, data and parity, as a sequential log."""
    if not parity or safety.policy != "journal":
        return ([], [])
    journal = safety.journal
    if journal is None or journal.seq_write_bytes_per_s is None:
        notes.append(
            "write journal: every write goes to the journal device first; its own sequential write figure is not "
            "known, so it does not bound these figures (measure it with member-matrix)"
        )
        return ([], [])
    name = "the write journal device (data and parity logged first)"
    basis = journal.basis
    seq = journal.seq_write_bytes_per_s * data / n
    rand = journal.seq_write_bytes_per_s / (RANDOM_BLOCK_BYTES * (1 + parity))
    return ([(seq, name, basis)], [(rand, name, basis)])


def q1_write(
    members: Sequence[MemberFigures],
    level: RaidLevel,
    n: int,
    reads: int,
    q1: float | None,
    q1w: float | None,
    ceilings: MdCeilings,
    safety: WriteSafety,
    parity: int,
    notes: list[str],
) -> Figure:
    """A 4 KiB write at queue depth 1: the slowest copy's write (a parity level first reads what it needs),
    md's own share, and what the bitmap, the partial parity log or the journal put before it."""
    names = ("q1_write_latency_s", *(Q1_READ if parity and reads else ()))
    base = members_basis(members, names)
    if q1w is None:
        return Figure(None, "unknown: a member's Q1 write latency is missing (member-matrix measures it)", base)
    value = q1w
    parts = ["the slowest copy's write"]
    if parity and reads:
        if q1 is None:
            return Figure(None, "unknown: a member's Q1 read latency is missing (a parity write reads first)", base)
        value += q1
        parts = ["a member read, then the writes"]
    layer = ceilings.write_latency_s if ceilings.write_latency_s is not None else ceilings.layer_latency_s
    basis = base
    if layer is None:
        parts.append("md's own share not known")
    else:
        value += layer
        parts.append("md's layer")
        basis = members_basis(members, names, ceilings.basis)
    if safety.bitmap != "none":
        # The bitmap page (a flush, then the write with FUA) before the data, on a write to a clean chunk.
        share = bitmap_clean_share(safety, 1 / value)
        value += share * q1w * BITMAP_UPDATE_REQUESTS
        parts.append(f"the bitmap on {share:.0%} of writes")
    if parity and safety.policy == "ppl":
        value += q1w
        parts.append("the partial parity log's write")
    if parity and safety.policy == "journal":
        journal = None if safety.journal is None else safety.journal.q1_write_latency_s
        if journal is None:
            notes.append("write journal: each write waits for the journal device first; its Q1 write latency is "
                         "not known, so it is not in the Q1 write figure")  # fmt: skip
        else:
            value += journal
            parts.append("the journal device's write")
    return Figure(value, " + ".join(parts), basis)
