"""The figures a prediction is made of and gives: a member's figures (measured, given, or what stands in for
them) and an array's, each with what bounds it, what it rests on and, where known only so far, its range; the
workloads they are for; how precisely each basis can be shown; and reading figures a user gives.

The workloads are the saturating jobs of the member-matrix (CrystalDiskMark's names):

========================  ======================================================
sequential read / write   1 MiB blocks, 8 jobs × queue depth 8 (SEQ1MQ8T8)
random read / write       4 KiB blocks, 8 jobs × queue depth 32 (RND4KQ32T8)
Q1 read / write latency   4 KiB random reads / writes, 1 job, queue depth 1 (RND4KQ1T1)
========================  ======================================================
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mdtui.errors import PlanError

SEQ_BLOCK_BYTES = 1 << 20
# Concurrent sequential streams in the workload the figures are for (SEQ1MQ8T8: 8 jobs).
SEQ_STREAMS = 8
# Jobs submitting I/O in the saturating workloads (SEQ1MQ8T8, RND4KQ32T8): what md's CPU cost per request
# is multiplied by.
WORKLOAD_JOBS = 8
# Requests in flight in the random workload (8 jobs × queue depth 32): how many writes one bitmap flush can
# carry at once.
RANDOM_IN_FLIGHT = 8 * 32
RANDOM_BLOCK_BYTES = 4096
# The member figure a Q1 read's prediction is made of (and a parity level's Q1 write, which reads first).
Q1_READ = ("q1_read_latency_s",)

MEASURED = "measured"
GIVEN = "given"
FIELD = "field figure"
LINK = "link"
# A figure scaled by a fraction the lab measured (the stripe cache's): known to a few tens of percent.
LAB_FRACTION = "lab fraction"
# Significant digits each basis can claim: a figure from a field report or a link's nominal rate is
# known to a few tens of percent, a measurement to a few percent.
_DIGITS = {MEASURED: 3, GIVEN: 3, FIELD: 2, LINK: 2, LAB_FRACTION: 2}

# The array's state a prediction is for.
OPTIMAL = "optimal"
DEGRADED = "degraded"  # one member missing
RESYNC = "resync"  # the initial sync (or a resync after a crash) running under the workload
CONDITIONS = (OPTIMAL, DEGRADED, RESYNC)


@dataclass(frozen=True)
class MemberFigures:
    """One member measured alone (or given for a disk not bought yet). None: not known.

    ``basis``: what the figures rest on (for a member nobody measured, what its sequential figures rest on);
    ``bases``: (figure, basis) for each figure that rests on something else (a device class's field figure
    beside a link); ``ranges``: (figure, low, high) for each figure known only to a range.
    """

    seq_read_bytes_per_s: float | None = None
    seq_write_bytes_per_s: float | None = None
    rand_read_iops: float | None = None
    rand_write_iops: float | None = None
    q1_read_latency_s: float | None = None
    rotational: bool | None = None
    basis: str = MEASURED
    q1_write_latency_s: float | None = None
    bases: tuple[tuple[str, str], ...] = ()
    ranges: tuple[tuple[str, float, float], ...] = ()

    def basis_of(self, name: str) -> str:
        """What the figure ``name`` ("rand_read_iops") rests on."""
        return next((basis for figure, basis in self.bases if figure == name), self.basis)

    def range_of(self, name: str) -> tuple[float, float] | None:
        return next(((low, high) for figure, low, high in self.ranges if figure == name), None)

    def at_end(self, end: int) -> MemberFigures:
        """These figures with each one known to a range at its low (0) or high (1) end."""
        ends: dict[str, Any] = {figure: (low, high)[end] for figure, low, high in self.ranges}
        return replace(self, ranges=(), **ends)


# The figures of a member by name, in MemberFigures' order.
MEMBER_FIGURE_NAMES = (
    "seq_read_bytes_per_s",
    "seq_write_bytes_per_s",
    "rand_read_iops",
    "rand_write_iops",
    "q1_read_latency_s",
    "q1_write_latency_s",
)


@dataclass(frozen=True)
class Figure:
    """One predicted figure, what bounds it and what it rests on; value None when it cannot be said.

    ``low`` and ``high``: the range the figure may land in where the model knows it only to a range (a
    fraction the lab measured, a resync's progress, platter seeks), else None.
    """

    value: float | None
    bound: str
    basis: str
    low: float | None = None
    high: float | None = None
    # An upper bound rather than an estimate: a link's nominal rate binds it (the slowest member's figure is
    # what its link carries, or a link members share caps it), and real traffic never quite reaches that. Where
    # the figure has a range (a fraction the lab measured, a resync's progress), the range's top is the bound.
    at_most: bool = False

    @property
    def value_at_most(self) -> bool:
        """Whether the value itself is the upper bound (``at_most`` without a range): shown "at most X"."""
        return self.at_most and (self.low is None or self.high is None)

    @property
    def rounded(self) -> float | None:
        """The value to the significant digits its basis allows (an upper bound rounded up, so it stays one)."""
        return _round(self.value, self.basis, self.at_most)

    @property
    def range_rounded(self) -> tuple[float, float] | None:
        if self.low is None or self.high is None:
            return None
        low, high = _round(self.low, self.basis, self.at_most), _round(self.high, self.basis, self.at_most)
        return None if low is None or high is None else (low, high)


def _kinds(basis: str) -> list[str]:
    return [kind.strip() for kind in basis.split(",")]


def _round(value: float | None, basis: str, at_most: bool = False) -> float | None:
    if value is None or value <= 0:
        return value
    digits = _DIGITS.get(_kinds(basis)[0], 2)
    places = digits - 1 - math.floor(math.log10(value))
    if at_most:
        # An upper bound: rounding it down could put it below what the link allows.
        step = 10.0**-places
        return round(math.ceil(value / step - 1e-9) * step, places)
    return round(value, places)


NOT_PREDICTED = Figure(None, "not predicted", "")

# Workload fields of a Prediction and how `predict --json` names them (MB = 10^6 bytes).
JSON_FIGURES: tuple[tuple[str, str, float], ...] = (
    ("seq_read_bytes_per_s", "seq_read_mb_s", 1e-6),
    ("seq_write_bytes_per_s", "seq_write_mb_s", 1e-6),
    ("rand_read_iops", "rand_read_iops", 1.0),
    ("rand_write_iops", "rand_write_iops", 1.0),
    ("q1_read_latency_s", "q1_read_latency_us", 1e6),
    ("q1_write_latency_s", "q1_write_latency_us", 1e6),
)


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
    q1_write_latency_s: Figure = NOT_PREDICTED
    condition: str = OPTIMAL

    def as_json(self) -> dict[str, Mapping[str, float | str | list[float] | bool | None]]:
        """The document `mdtui predict --json` prints (MB = 10^6 bytes); ``at_most``: the figures a link binds,
        rounded up: the value is an upper bound, or where the figure has a ``range``, the range's top."""
        predicted: dict[str, float | str | list[float] | None] = {}
        bounds: dict[str, float | str | list[float] | None] = {}
        basis: dict[str, float | str | list[float] | None] = {}
        ranges: dict[str, float | str | list[float] | None] = {}
        at_most: dict[str, bool] = {}
        for attribute, key, scale in JSON_FIGURES:
            figure: Figure = getattr(self, attribute)
            rounded = figure.rounded
            predicted[key] = None if rounded is None else _tidy(rounded * scale)
            bounds[key] = figure.bound
            basis[key] = figure.basis
            span = figure.range_rounded
            ranges[key] = None if span is None else [_tidy(span[0] * scale), _tidy(span[1] * scale)]
            at_most[key] = figure.at_most
        return {"predicted": predicted, "bounds": bounds, "basis": basis, "range": ranges, "at_most": at_most}


def _tidy(value: float) -> float:
    """A rounded figure scaled back without binary noise (1112.0000000001 -> 1112.0)."""
    return float(f"{value:.6g}")


def slowest(values: Sequence[float | None]) -> float | None:
    """The least of the members' figures (the one a stripe runs at); None when any is unknown."""
    return None if any(v is None for v in values) else min(v for v in values if v is not None)


def largest(values: Sequence[float | None]) -> float | None:
    """The greatest of the members' figures (the slowest copy's latency); None when any is unknown."""
    return None if any(v is None for v in values) else max(v for v in values if v is not None)


def members_basis(members: Sequence[MemberFigures], names: Sequence[str] = (), *extra: str) -> str:
    """The bases a figure rests on: each member's for the figures ``names`` it is made of (every member's own
    basis when none is named) and ``extra``, the weakest first."""
    own = [m.basis_of(name) for m in members for name in names] if names else [m.basis for m in members]
    kinds = list(dict.fromkeys(own + [e for e in extra if e]))
    # The weakest basis first: it sets the precision of the figure.
    kinds.sort(key=lambda kind: _DIGITS.get(kind, 0))
    return ", ".join(kinds)


Cap = tuple[float | None, str, str]


def capped(value: float | None, caps: Sequence[Cap], bound: str, basis: str, at_most: bool = False) -> Figure:
    """The lowest of the members' figure (``at_most``: an upper bound, see ``link_bound``) and every
    (cap, name, basis) that applies; a link's cap is an upper bound too."""
    if value is None:
        return Figure(None, "unknown: a member's figure is missing", basis)
    best = Figure(value, bound, basis, at_most=at_most)
    for cap, name, cap_basis in caps:
        if cap is not None and cap < (best.value or 0.0):
            best = Figure(cap, name, cap_basis, at_most=cap_basis == LINK)
    return best


def link_bound(members: Sequence[MemberFigures], names: Sequence[str]) -> bool:
    """Whether the slowest member's figure of any of ``names`` (IOPS or bytes/s: the lowest) is what its link
    carries: the array's figure over it is then at most what it says."""
    for name in names:
        values: list[float | None] = [getattr(m, name) for m in members]
        known = [v for v in values if v is not None]
        if len(known) < len(values) or not known:
            continue
        lowest = min(known)
        if any(v == lowest and m.basis_of(name) == LINK for m, v in zip(members, values, strict=True)):
            return True
    return False


def parse_member_figures(text: str) -> MemberFigures:
    """``seq-read=1112MB/s,seq-write=1123MB/s,rand-read=180k,rand-write=169k,q1-read=58us,q1-write=20us,rotational=no``.

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
            elif key in ("q1-read", "q1-write"):
                values[key] = _seconds(raw)
            elif key == "rotational":
                if raw.lower() not in ("yes", "no", "true", "false", "1", "0"):
                    raise ValueError("say yes or no")
                values[key] = raw.lower() in ("yes", "true", "1")
            else:
                raise PlanError(
                    f"--member-figures: unknown figure {key!r} (seq-read, seq-write, rand-read, rand-write, "
                    "q1-read, q1-write, rotational)"
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
        q1_write_latency_s=number("q1-write"),
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
