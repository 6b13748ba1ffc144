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
("measured", "given", "field figure", "link"); it is rounded to what its basis can claim.

The workloads are the saturating jobs of the member-matrix (CrystalDiskMark's names):

========================  ======================================================
sequential read / write   1 MiB blocks, 8 jobs × queue depth 8 (SEQ1MQ8T8)
random read / write       4 KiB blocks, 8 jobs × queue depth 32 (RND4KQ32T8)
Q1 read latency           4 KiB random reads, 1 job, queue depth 1 (RND4KQ1T1)
========================  ======================================================
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from mdtui.errors import PlanError
from mdtui.plan.levels import LINEAR, RaidLevel

SEQ_BLOCK_BYTES = 1 << 20
# Concurrent sequential streams in the workload the figures are for (SEQ1MQ8T8: 8 jobs).
SEQ_STREAMS = 8
# md's default stripe_cache_size (stripe heads; one 4 KiB page per member each).
DEFAULT_STRIPE_CACHE = 256
RANDOM_BLOCK_BYTES = 4096
# md handles a raid4/5/6 write in 4 KiB stripe units (one page per member): a 4 KiB write covers one.
STRIPE_UNIT_BYTES = 4096

MEASURED = "measured"
GIVEN = "given"
FIELD = "field figure"
LINK = "link"
# Significant digits each basis can claim: a figure from a field report or a link's nominal rate is
# known to a few tens of percent, a measurement to a few percent.
_DIGITS = {MEASURED: 3, GIVEN: 3, FIELD: 2, LINK: 2}


@dataclass(frozen=True)
class MemberFigures:
    """One member measured alone (or given for a disk not bought yet). None: not known."""

    seq_read_bytes_per_s: float | None = None
    seq_write_bytes_per_s: float | None = None
    rand_read_iops: float | None = None
    rand_write_iops: float | None = None
    q1_read_latency_s: float | None = None
    rotational: bool | None = None
    basis: str = MEASURED


@dataclass(frozen=True)
class MdCeilings:
    """md's own limits on this host (calibrated here) or, failing that, from the field.

    ``stripe_write_bytes_per_s`` and ``stripe_small_write_iops``: one raid5d thread's full-stripe write
    throughput and 4 KiB random-write IOPS with ``group_thread_cnt`` 0; ``parity_bytes_per_s``: the
    kernel's xor/raid6 routine speed (its boot benchmark); ``layer_latency_s``: what md adds to a Q1
    request.
    """

    stripe_write_bytes_per_s: float | None = None
    stripe_small_write_iops: float | None = None
    parity_bytes_per_s: float | None = None
    layer_latency_s: float | None = None
    basis: str = FIELD


# Field figures (docs/findings.md, finding 4: four SAS3 SSDs, 256 KiB chunk, no bitmap): raid5 wrote
# 985 MB/s sequentially and 58.3K random 4 KiB IOPS where its members allowed 3369 MB/s and ~170K,
# raid6 951 MB/s and 65.4K: one stripe thread's limit on that host. Q1 random reads fell from 17.3K
# IOPS on the raw disk (58 µs) to 7-9K through md (~125 µs): md added ~65 µs a request there.
FIELD_CEILINGS = MdCeilings(
    stripe_write_bytes_per_s=985e6,
    stripe_small_write_iops=60e3,
    parity_bytes_per_s=None,
    layer_latency_s=65e-6,
    basis=FIELD,
)


# A hard disk's platter read sequentially at its outer tracks: docs/findings.md, finding 5 (three 4 TB disks,
# 16 MiB direct reads) read about 200 MiB/s, 210 MB/s, at offset 0. A spinning disk gives no more whatever its
# link carries, so a link limits it only below this (a 1.5 Gbps SATA link, 150 MB/s); 3, 6 or 12 Gbit never do.
PLATTER_BYTES_PER_S = 210e6


def device_ceiling(rotational: bool | None) -> float | None:
    """What a member nobody measured can read at most by itself: a platter's field figure for a hard disk;
    None for flash, which is built to fill the link it was made for (its link's maximum is its own)."""
    return PLATTER_BYTES_PER_S if rotational else None


def link_limits(link_bytes_per_s: float | None, rotational: bool | None) -> bool:
    """Whether a link carrying this much is the member's limit: only where the device could go faster than it
    (a 16 TB hard disk on a 6 Gbit link is held by its platter, not the link)."""
    ceiling = device_ceiling(rotational)
    return link_bytes_per_s is not None and (ceiling is None or link_bytes_per_s < ceiling)


def unmeasured_figures(link_bytes_per_s: float | None, rotational: bool | None) -> MemberFigures:
    """A member nobody measured: its sequential read and write from what bounds it, decided here once: its
    link where the link limits the device (basis "link"), else a platter's field figure (basis "field
    figure"). A link says nothing of random I/O or latency: those stay unknown."""
    if link_limits(link_bytes_per_s, rotational):
        value, basis = link_bytes_per_s, LINK
    else:
        value, basis = device_ceiling(rotational), (FIELD if rotational else LINK)
    return MemberFigures(
        seq_read_bytes_per_s=value, seq_write_bytes_per_s=value, rotational=rotational, basis=basis
    )


@dataclass(frozen=True)
class SharedLink:
    """A link ``members`` of the array share (by index), with what it carries per second."""

    name: str  # "HBA link x8 Gen3"
    bytes_per_s: float
    members: tuple[int, ...]


@dataclass(frozen=True)
class Figure:
    """One predicted figure, what bounds it and what it rests on; value None when it cannot be said."""

    value: float | None
    bound: str
    basis: str

    @property
    def rounded(self) -> float | None:
        """The value to the significant digits its basis allows."""
        if self.value is None or self.value <= 0:
            return self.value
        digits = _DIGITS.get(self.basis.split(",")[0].strip(), 2)
        magnitude = math.floor(math.log10(self.value))
        return round(self.value, digits - 1 - magnitude)


@dataclass(frozen=True)
class Prediction:
    level: str
    members: int
    layout: str | None
    chunk_bytes: int | None
    seq_read_bytes_per_s: Figure
    seq_write_bytes_per_s: Figure
    rand_read_iops: Figure
    rand_write_iops: Figure
    q1_read_latency_s: Figure
    notes: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, dict[str, float | str | None]]:
        """The document `mdtui predict --json` prints (MB = 10^6 bytes)."""
        figures = {
            "seq_read_mb_s": (self.seq_read_bytes_per_s, 1e-6),
            "seq_write_mb_s": (self.seq_write_bytes_per_s, 1e-6),
            "rand_read_iops": (self.rand_read_iops, 1.0),
            "rand_write_iops": (self.rand_write_iops, 1.0),
            "q1_read_latency_us": (self.q1_read_latency_s, 1e6),
        }
        predicted: dict[str, float | str | None] = {}
        bounds: dict[str, float | str | None] = {}
        basis: dict[str, float | str | None] = {}
        for key, (figure, scale) in figures.items():
            rounded = figure.rounded
            predicted[key] = None if rounded is None else _tidy(rounded * scale)
            bounds[key] = figure.bound
            basis[key] = figure.basis
        return {"predicted": predicted, "bounds": bounds, "basis": basis}


def _tidy(value: float) -> float:
    """A rounded figure scaled back without binary noise (1112.0000000001 -> 1112.0)."""
    return float(f"{value:.6g}")


def _slowest(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else min(v for v in values if v is not None)


def _basis(members: Sequence[MemberFigures], *extra: str) -> str:
    kinds = list(dict.fromkeys([m.basis for m in members] + [e for e in extra if e]))
    # The weakest basis first: it sets the precision of the figure.
    kinds.sort(key=lambda kind: _DIGITS.get(kind, 0))
    return ", ".join(kinds)


def _capped(value: float | None, caps: Sequence[tuple[float | None, str, str]], bound: str, basis: str) -> Figure:
    """The lowest of the members' figure and every (cap, name, basis) that applies."""
    if value is None:
        return Figure(None, "unknown: a member's figure is missing", basis)
    best, best_bound, best_basis = value, bound, basis
    for cap, name, cap_basis in caps:
        if cap is not None and cap < best:
            best, best_bound, best_basis = cap, name, cap_basis
    return Figure(best, best_bound, best_basis)


def _copies(level: RaidLevel, members: int, layout: str | None) -> int:
    return level.copies(members, layout)


def _parity(level: RaidLevel) -> int:
    if not level.parity:
        return 0
    return 2 if level.name == "raid6" else 1


def small_write_ios(
    level: RaidLevel, members: int, layout: str | None, io_bytes: int, chunk_bytes: int | None
) -> tuple[int, int]:
    """(member reads, member writes) one random write of ``io_bytes`` costs, as md would do it.

    Parity levels work in 4 KiB stripe units: a write touching k units of a stripe of D data units either
    reads the old data and parity (read-modify-write: k + p reads) or the stripe's other data
    (reconstruct-write: D - k reads), whichever reads less, then writes k + p units. A write that covers a
    whole stripe (chunk × data disks) reads nothing.
    """
    copies = _copies(level, members, layout)
    parity = _parity(level)
    if not parity:
        return (0, copies)
    data = members - parity
    if chunk_bytes is not None and io_bytes >= chunk_bytes * data:
        return (0, members)
    touched = max(1, min(data, math.ceil(io_bytes / STRIPE_UNIT_BYTES)))
    reads = min(touched + parity, data - touched)
    return (reads, touched + parity)


def stripe_heads_for_full_stripes(chunk_bytes: int, streams: int = SEQ_STREAMS) -> int:
    """Stripe heads md needs so that ``streams`` sequential writers each fill a whole chunk row at once."""
    return streams * max(1, chunk_bytes // STRIPE_UNIT_BYTES)


def predict(
    level: RaidLevel,
    members: Sequence[MemberFigures],
    *,
    layout: str | None = None,
    chunk_bytes: int | None = None,
    ceilings: MdCeilings = FIELD_CEILINGS,
    links: Sequence[SharedLink] = (),
    stripe_cache_size: int | None = DEFAULT_STRIPE_CACHE,
) -> Prediction:
    """Each workload's figure for an array of ``members`` at ``level``; see the module docstring.

    ``stripe_cache_size``: the array's (raid4/5/6), md's default 256 when not given; None when unknown.
    """
    n = len(members)
    if n < level.min_members:
        raise PlanError(f"{level.name} needs at least {level.min_members} members; {n} given")
    layout = level.effective_layout(layout)
    if level.uses_chunk and chunk_bytes is None:
        chunk_bytes = 512 * 1024  # mdadm's default
    copies = _copies(level, n, layout)
    parity = _parity(level)
    data = n - parity
    base = _basis(members)
    notes: list[str] = []

    seq_r = _slowest([m.seq_read_bytes_per_s for m in members])
    seq_w = _slowest([m.seq_write_bytes_per_s for m in members])
    rr = _slowest([m.rand_read_iops for m in members])
    rw = _slowest([m.rand_write_iops for m in members])
    q1 = _slowest([m.q1_read_latency_s for m in members])
    rotational = any(m.rotational for m in members)

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

    seq_write_factor = 1.0 if level is LINEAR else (n / copies if not parity else float(data))
    reads, writes = small_write_ios(level, n, layout, RANDOM_BLOCK_BYTES, chunk_bytes)

    seq_read_value = None if seq_r is None else seq_r * seq_read_factor
    seq_write_value = None if seq_w is None else seq_w * seq_write_factor
    rand_read_value = None if rr is None else rr * rand_read_factor
    if level is LINEAR:
        rand_write_value = None if rw is None else rw * n
    elif rw is None or (reads and rr is None):
        rand_write_value = None
    elif not reads or rr is None:
        rand_write_value = rw * n / writes
    else:
        # n members share the work: each write costs `reads` reads and `writes` writes of member time.
        rand_write_value = n / (reads / rr + writes / rw)

    # Links members share carry the array's traffic, parity and second copies included; a cap is in the
    # figure's own unit (bytes/s, or IOPS of `unit_bytes` blocks).
    def link_caps(traffic_per_byte: float, unit_bytes: float = 1.0) -> list[tuple[float | None, str, str]]:
        return [
            (link.bytes_per_s / (len(link.members) / n * traffic_per_byte) / unit_bytes, link.name, LINK)
            for link in links
            if link.members
        ]

    write_traffic = n / data if parity else float(copies)
    stripe_bw: list[tuple[float | None, str, str]] = []
    stripe_iops: list[tuple[float | None, str, str]] = []
    if parity:
        thread = "md stripe thread (group_thread_cnt 0)"
        stripe_bw.append((ceilings.stripe_write_bytes_per_s, thread, ceilings.basis))
        stripe_bw.append((ceilings.parity_bytes_per_s, "parity CPU (the kernel's xor/raid6 speed)", ceilings.basis))
        stripe_iops.append((ceilings.stripe_small_write_iops, thread, ceilings.basis))

    def members_bound(factor: float) -> str:
        return f"members (slowest × {factor:.3g})"

    rand_write_bound = (
        f"members ({reads} reads + {writes} writes per write over {n})" if reads else members_bound(n / writes)
    )
    seq_read = _capped(seq_read_value, link_caps(1.0), members_bound(seq_read_factor), base)
    seq_write = _capped(seq_write_value, stripe_bw + link_caps(write_traffic), members_bound(seq_write_factor), base)
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
        if stripe_cache_size < needed:
            # Part-written stripes read before they write and writers wait for heads: the members' figure
            # is not what md gives then, and nothing here says how far below it lands.
            lifted = "" if seq_write.value is None else f" (the members' {seq_write.value / 1e6:.3g} MB/s)"
            notes.append(
                f"sequential writes: stripe_cache_size {stripe_cache_size} holds fewer stripe heads than "
                f"{SEQ_STREAMS} streams × {needed // SEQ_STREAMS} (a {chunk_bytes // 1024} KiB chunk row each) "
                f"need for full stripes; {needed} or more gives the full-stripe figure{lifted}"
            )
            seq_write = Figure(None, f"md stripe cache (stripe_cache_size {stripe_cache_size})", seq_write.basis)
    rand_read = _capped(rand_read_value, link_caps(1.0, RANDOM_BLOCK_BYTES), members_bound(rand_read_factor), base)
    rand_write = _capped(
        rand_write_value, stripe_iops + link_caps(write_traffic, RANDOM_BLOCK_BYTES), rand_write_bound, base
    )
    if q1 is None:
        latency = Figure(None, "unknown: a member's Q1 latency is missing", base)
    elif ceilings.layer_latency_s is None:
        latency = Figure(q1, "the member (md's own latency not known)", base)
    else:
        latency = Figure(q1 + ceilings.layer_latency_s, "the member plus md's layer", _basis(members, ceilings.basis))
    if parity and reads:
        how = "read-modify-write" if reads == 1 + parity else "reconstruct-write"
        notes.append(
            f"a 4 KiB random write costs {reads} member read{'s' if reads > 1 else ''} and {writes} writes "
            f"({how}, as md chooses for {n} members)"
        )
    return Prediction(
        level=level.name,
        members=n,
        layout=layout,
        chunk_bytes=chunk_bytes if level.uses_chunk else None,
        seq_read_bytes_per_s=seq_read,
        seq_write_bytes_per_s=seq_write,
        rand_read_iops=rand_read,
        rand_write_iops=rand_write,
        q1_read_latency_s=latency,
        notes=tuple(notes),
    )


def parse_member_figures(text: str) -> MemberFigures:
    """``seq-read=1112MB/s,seq-write=1123MB/s,rand-read=180k,rand-write=169k,q1-read=58us,rotational=no``.

    Rates in MB/s (10^6 bytes), GB/s or MiB/s; IOPS as plain numbers with an optional k or M; latency in
    us, ms or s. PlanError (one line) for anything else.
    """
    values: dict[str, float | bool] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, raw = part.partition("=")
        key, raw = key.strip().lower(), raw.strip()
        if not sep or not raw:
            raise PlanError(f"--member-figures: {part!r} is not NAME=VALUE")
        try:
            if key in ("seq-read", "seq-write"):
                values[key] = _rate(raw)
            elif key in ("rand-read", "rand-write"):
                values[key] = _count(raw)
            elif key == "q1-read":
                values[key] = _seconds(raw)
            elif key == "rotational":
                if raw.lower() not in ("yes", "no", "true", "false", "1", "0"):
                    raise ValueError("say yes or no")
                values[key] = raw.lower() in ("yes", "true", "1")
            else:
                raise PlanError(
                    f"--member-figures: unknown figure {key!r} (seq-read, seq-write, rand-read, rand-write, "
                    "q1-read, rotational)"
                )
        except ValueError as exc:
            raise PlanError(f"--member-figures: {part!r}: {exc}") from None

    def number(key: str) -> float | None:
        value = values.get(key)
        return None if value is None or isinstance(value, bool) else float(value)

    rotational = values.get("rotational")
    return MemberFigures(
        seq_read_bytes_per_s=number("seq-read"),
        seq_write_bytes_per_s=number("seq-write"),
        rand_read_iops=number("rand-read"),
        rand_write_iops=number("rand-write"),
        q1_read_latency_s=number("q1-read"),
        rotational=rotational if isinstance(rotational, bool) else None,
        basis=GIVEN,
    )


_RATE_UNITS = {"b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "kib/s": 1024.0, "mib/s": 1 << 20, "gib/s": 1 << 30}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _positive(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a positive number")
    return value


def _rate(raw: str) -> float:
    lowered = raw.lower()
    for unit in sorted(_RATE_UNITS, key=len, reverse=True):
        if lowered.endswith(unit):
            return _positive(lowered[: -len(unit)]) * _RATE_UNITS[unit]
    raise ValueError("give a rate with its unit, e.g. 1112MB/s (MB = 10^6 bytes) or 1060MiB/s")


def _count(raw: str) -> float:
    lowered = raw.lower()
    scale = {"k": 1e3, "m": 1e6}.get(lowered[-1:], 1.0)
    return _positive(lowered[:-1] if scale != 1.0 else lowered) * scale


def _seconds(raw: str) -> float:
    lowered = raw.lower()
    for unit in sorted(_TIME_UNITS, key=len, reverse=True):
        if lowered.endswith(unit):
            return _positive(lowered[: -len(unit)]) * _TIME_UNITS[unit]
    raise ValueError("give a time with its unit, e.g. 58us or 0.06ms")
