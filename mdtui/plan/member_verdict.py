"""One verdict on an array's members from their figures: which are slow, which sets the array's pace, which are
only spread, and whether they share a limit. bench's weakest-link report, the advisor and the create plan render
it; none of them decides it again.

What the array "should" read with its members as they are is the md model's figure (plan/md_model.py): a stripe
runs at its slowest member × how many members serve a read (docs/findings.md, finding 1: 832 × 4 = 3,328 MB/s
predicted, 3,322 MB/s measured).

- A member is *slow* when it reads under SLOW_RATIO × the median of the others.
- A slow member is *named* (the cause) when the array read what the model gives with every member at its figure
  (within ±ONE_FIGURE), the others could carry the array clearly above that, and its gap to its peers is beyond
  the scatter this host shows (its own stored repeats, else its peers in the same run) or its link explains it.
- A slow member that explains the array but whose gap is within that scatter is *unsure*: a repeat run tells.
- A slow member that does not explain the array is *spread*: a note, never the cause.
- Members read together under (1 - ONE_FIGURE) × their sum alone *share a limit* (an HBA, a PCIe switch, the
  CPU); an array under (1 - ONE_FIGURE) × both what its members allow alone and what they read together is
  *short of parallelism*.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from mdtui.errors import PlanError
from mdtui.format import rate_mb_s
from mdtui.model.disk import Disk
from mdtui.plan.figures import Figure, MemberFigures, Prediction
from mdtui.plan.forecast import CeilingsChoice, MemberSource, forecast, shown
from mdtui.plan.levels import RAID0, RaidLevel, running_level
from mdtui.plan.md_limits import FIELD_CEILINGS, MdCeilings
from mdtui.plan.md_model import predict
from mdtui.plan.member_bounds import link_limits

# A member reading under this share of the median of the others is slower than its peers. Members of one kind
# on equal links read within a few percent of each other alone (the lab's four NVMe throttled alike to 40 MB/s:
# 39.7-41.3 MB/s in one weakest-link run; to 10 MB/s: 9.7-10.1); a member 20 % below the others is outside that,
# and finding 1's slot-bound drive read 0.50×.
SLOW_RATIO = 0.8
# Two figures within ±15 % are one figure: every member-bound prediction the lab measured landed within
# 0.87-1.05 of it (docs/predictions.md), and a raid0 over four read 1.015-1.037 × slowest × 4 (docs/testing.md).
# It decides "the array runs at this member's pace", "the members share a limit" and "short of parallelism".
ONE_FIGURE = 0.15
SEQ_READ = "seq_read_bytes_per_s"


@dataclass(frozen=True)
class Stripe:
    """How an array's sequential read follows its members' read figures: the md model's answer for its level
    (``level`` None: a plain stripe over ``members``, as a weakest-link run over listed devices is)."""

    level: RaidLevel | None
    members: int
    layout: str | None = None
    rotational: bool | None = None
    ceilings: MdCeilings = FIELD_CEILINGS

    def reads(self, values: Sequence[float], basis: str = "measured") -> Figure:
        """The model's sequential read with each member at its own figure (bytes/s)."""
        figures = [MemberFigures(seq_read_bytes_per_s=v, rotational=self.rotational, basis=basis) for v in values]
        level = self.level or RAID0
        try:
            prediction = predict(level, figures, layout=self.layout, ceilings=self.ceilings)
        except (PlanError, ValueError):
            # Fewer members than the level needs (a degraded array's survivors): they stripe as they are.
            return Figure(min(values) * len(values) if values else None, f"members (slowest × {len(values)})", basis)
        return prediction.seq_read_bytes_per_s

    def pace(self, member_bytes_per_s: float) -> float:
        """What the array reads when ``member_bytes_per_s`` is every member's figure: the pace it sets."""
        return self.reads([member_bytes_per_s] * self.members).value or 0.0

    @property
    def factor(self) -> float:
        """The array's read as a multiple of one member's where the members bound it ("slowest × 4")."""
        return self.pace(1e9) / 1e9

    @property
    def factor_text(self) -> str:
        """The factor as "slowest × N" shows it: "4", "3.5"."""
        return f"{self.factor:.3g}"


def array_stripe(level_name: str | None, members: int, disks: Iterable[Disk | None], md: CeilingsChoice) -> Stripe:
    """The stripe of an array as md names its level ("raid6"; None or unknown: a plain stripe), over these
    member disks, with md's ceilings for the level as `mdtui predict` takes them (store.calibration.host_ceilings)."""
    level = running_level(level_name, None)[0]
    known = [d for d in disks if d is not None]
    rotational = any(d.rotational for d in known) if known else None
    return Stripe(level, members, rotational=rotational, ceilings=md.for_level(level.name) if level else md.default)


def slower_than_peers(figures: Mapping[str, float]) -> list[str]:
    """Members under SLOW_RATIO × the median of the others, slowest first."""
    if len(figures) < 2:
        return []
    slow = [
        name
        for name, value in figures.items()
        if value < SLOW_RATIO * statistics.median(v for other, v in figures.items() if other != name)
    ]
    return sorted(slow, key=lambda name: figures[name])


@dataclass(frozen=True)
class NoiseBand:
    """How far apart figures of healthy members are here: a member's own stored repeats, or its peers in the
    same run (members of one kind that nothing holds back); none when neither was measured."""

    ratio: float  # largest / smallest figure
    text: str  # the ratio and where it comes from, for the finding
    measured: bool = True
    own: bool = False  # from the member's own repeats (else shared by every member of the comparison)

    @property
    def reach(self) -> float:
        """The widest gap still within the scatter: two or three figures understate it, so a measured band is
        widened by ONE_FIGURE (figures ±15 % apart are one figure)."""
        return self.ratio * (1 + ONE_FIGURE) if self.measured else self.ratio


NO_BAND = NoiseBand(1.0, "not measured: no repeat runs and fewer than two peers", measured=False)


def noise_band(repeats: Sequence[tuple[float, int]], peers: Mapping[str, float] | None = None) -> NoiseBand:
    """A member's scatter: its stored figures (bytes/s, run id) when it has two or more; else the spread of its
    peers' figures in this run (two or more); else none."""
    values = [value for value, _ in repeats if value > 0]
    if len(values) >= 2:
        ratio = max(values) / min(values)
        runs = ", ".join(f"#{run_id}" for _, run_id in sorted(repeats, key=lambda f: f[1]))
        text = f"{ratio:.2f}× over its repeat runs ({runs}: {rate_mb_s(min(values))} to {rate_mb_s(max(values))})"
        return NoiseBand(ratio, text, own=True)
    peer_values = [v for v in (peers or {}).values() if v > 0]
    if len(peer_values) >= 2:
        ratio = max(peer_values) / min(peer_values)
        low, high = rate_mb_s(min(peer_values)), rate_mb_s(max(peer_values))
        return NoiseBand(ratio, f"{ratio:.2f}× between its peers in this run ({low} to {high})")
    return NO_BAND


@dataclass(frozen=True)
class Judged:
    """Members of one comparison sorted by what their figures support."""

    figures: Mapping[str, float]  # every member compared, name → bytes/s
    named: tuple[str, ...]  # the cause: the array runs at their pace
    unsure: tuple[str, ...]  # would explain the array, but the gap is within the scatter
    spread: tuple[str, ...]  # slower than their peers, not the cause
    peers: float  # median of the members not slower than their peers
    bands: Mapping[str, NoiseBand]  # each slow member's scatter
    stripe: Stripe
    array: float | None  # what the array read, when it was measured

    @property
    def n(self) -> int:
        return self.stripe.members

    def ratio(self, name: str) -> float:
        return self.figures[name] / self.peers

    def pace(self, name: str) -> float:
        """What the array reads at this member's pace (the model, every member at its figure)."""
        return self.stripe.pace(self.figures[name])

    def within_noise(self, name: str) -> bool:
        return _within(self.peers, self.figures[name], self.bands.get(name, NO_BAND))

    def scatter_text(self, names: Sequence[str]) -> str:
        """The scatter of these members: the one they share once, or each one's own repeats."""
        bands = [(name, self.bands.get(name, NO_BAND)) for name in names]
        shared = list(dict.fromkeys(band.text for _, band in bands if not band.own))
        own = [f"{name}: {band.text}" for name, band in bands if band.own]
        return "; ".join([*shared, *own])

    @property
    def others_floor(self) -> float | None:
        """What the array could read with the named ones fixed: the model at the slowest member not named."""
        others = [value for name, value in self.figures.items() if name not in self.named]
        return self.stripe.pace(min(others)) if others else None


def _within(peers: float, figure: float, band: NoiseBand) -> bool:
    """Whether a member's gap to its peers is no wider than the scatter."""
    return figure > 0 and peers / figure <= band.reach


def at_pace(array: float, pace: float) -> bool:
    """Whether the array read the pace a member sets, within ±ONE_FIGURE."""
    return pace > 0 and abs(array / pace - 1) <= ONE_FIGURE


def member_link(disk: Disk | None, peers: Sequence[Disk]) -> tuple[str | None, bool]:
    """What a member's link says, and whether it explains a slow figure: a link that trained down or is slower
    than its peers' (under SLOW_RATIO × their median), where the link is what limits the device at all
    (member_bounds.link_limits: never a hard disk's 3 Gbit or faster link)."""
    if disk is None or disk.link is None:
        return None, False
    link = disk.link
    mine = link.bandwidth_bytes_per_s
    theirs = [p.link.bandwidth_bytes_per_s for p in peers if p.link is not None and p.link.bandwidth_bytes_per_s]
    slower = mine is not None and bool(theirs) and mine < SLOW_RATIO * statistics.median(theirs)
    if (link.downgraded or slower) and link_limits(mine, disk.rotational):
        return f"{disk.name}'s link trained at {link.describe_current()} (max {link.describe_max()})", True
    return f"{disk.name}'s link ({link.describe_current()}) is like its peers'", False


def links_of(
    figures: Mapping[str, float], disks: Mapping[str, Disk | None]
) -> dict[str, tuple[str | None, bool]]:
    """What each member slower than its peers' link says (member_link), against the others' links."""
    slower = set(slower_than_peers(figures))
    peers = [d for name in figures if name not in slower and (d := disks.get(name)) is not None]
    return {name: member_link(disks.get(name), peers) for name in slower}


def judge(
    figures: Mapping[str, float],
    stripe: Stripe,
    *,
    array: float | None,
    repeats: Mapping[str, Sequence[tuple[float, int]]] | None = None,
    link_explains: Collection[str] = (),
) -> Judged | None:
    """Sort the members slower than their peers into named, unsure and spread; None when none is slower.
    ``array`` None (no array figure, as for the same job run on each member): a member beyond the scatter is
    named, one within it is unsure."""
    slow = slower_than_peers(figures)
    peer_figures = {name: value for name, value in figures.items() if name not in slow}
    if not slow or not peer_figures or statistics.median(peer_figures.values()) <= 0:
        return None
    median = statistics.median(peer_figures.values())
    bands = {name: noise_band((repeats or {}).get(name, ()), peer_figures) for name in figures}
    named, unsure, spread = [], [], []
    for name in slow:
        explains = array is None or at_pace(array, stripe.pace(figures[name]))
        if not explains:
            spread.append(name)
        elif _within(median, figures[name], bands[name]) and name not in link_explains:
            unsure.append(name)
        else:
            named.append(name)
    judged = Judged(figures, tuple(named), tuple(unsure), tuple(spread), median, bands, stripe, array)
    floor = judged.others_floor
    if named and array is not None and floor is not None and floor < (1 + ONE_FIGURE) * array:
        # The others would hold the array near the same figure: the named ones are not what limits it alone.
        judged = replace(judged, named=(), unsure=(*named, *unsure))
    return judged


@dataclass(frozen=True)
class WeakestLinkVerdict:
    """A weakest-link run judged: each member alone, all together, the array."""

    judged: Judged | None  # None: no member slower than its peers
    stripe: Stripe
    alone: Mapping[str, float]
    together: float | None  # every member read at once, summed
    array: float | None
    allowed: float | None  # the model's read with each member at its own figure alone

    @property
    def slowest(self) -> str | None:
        return min(self.alone, key=lambda name: self.alone[name]) if self.alone else None

    @property
    def named(self) -> tuple[str, ...]:
        return self.judged.named if self.judged is not None else ()

    @property
    def alone_sum(self) -> float | None:
        return sum(self.alone.values()) if self.alone else None

    @property
    def shared_limit(self) -> bool:
        """All members at once read clearly less than their sum alone: something they share caps them."""
        alone = self.alone_sum
        return self.together is not None and bool(alone) and self.together < (1 - ONE_FIGURE) * (alone or 0.0)

    @property
    def short_of_parallelism(self) -> bool:
        """The array read clearly less than its members allow, alone (the model) and together."""
        if self.array is None:
            return False
        bounds = [b for b in (self.allowed, self.together) if b]
        return bool(bounds) and self.array < (1 - ONE_FIGURE) * min(bounds)


def weakest_link_verdict(
    alone: Mapping[str, float],
    stripe: Stripe,
    *,
    together: float | None,
    array: float | None,
    repeats: Mapping[str, Sequence[tuple[float, int]]] | None = None,
    link_explains: Collection[str] = (),
) -> WeakestLinkVerdict:
    judged = judge(alone, stripe, array=array, repeats=repeats, link_explains=link_explains)
    allowed = stripe.reads(list(alone.values())).value if alone else None
    return WeakestLinkVerdict(judged, stripe, dict(alone), together, array, allowed)


@dataclass(frozen=True)
class SlowMembers:
    """Members whose own figures (measured, or what bounds them) hold an array below what its peers allow."""

    names: tuple[str, ...]
    now: Prediction  # the model over the members as they are
    possible: Prediction  # the same with the slow ones as fast as the next slowest member
    figures: Mapping[str, float]  # each member's sequential read figure
    bases: Mapping[str, str]  # what each member's figure rests on ("measured", "link", "field figure")

    @property
    def cost(self) -> float:
        """The share of sequential reads the slow members cost."""
        now, possible = self.now.seq_read_bytes_per_s.value, self.possible.seq_read_bytes_per_s.value
        return 0.0 if not now or not possible or possible <= now else 1 - now / possible


def slow_members(
    level: RaidLevel, sources: Sequence[MemberSource], *, layout: str | None, chunk_bytes: int | None
) -> SlowMembers | None:
    """The members under SLOW_RATIO × their peers' sequential read figure, and what the model says they cost;
    None when none is, or when raising them to the next slowest member's figures would not lift the array."""
    figures = {s.name: s.figures.seq_read_bytes_per_s for s in sources}
    known = {name: value for name, value in figures.items() if value is not None}
    if len(known) != len(sources) or len(known) < 2:
        return None
    slow = slower_than_peers(known)
    if not slow:
        return None
    peers = [s for s in sources if s.name not in slow]
    next_peer = min(peers, key=lambda s: known[s.name])
    raised = [replace(s, figures=next_peer.figures) if s.name in slow else s for s in sources]
    now = forecast(level, sources, layout=layout, chunk_bytes=chunk_bytes)
    possible = forecast(level, raised, layout=layout, chunk_bytes=chunk_bytes)
    if now is None or possible is None:
        return None
    found = SlowMembers(tuple(slow), now, possible, known, {s.name: s.figures.basis_of(SEQ_READ) for s in sources})
    return found if found.cost > 0 else None


def member_figure_text(name: str, value: float, basis: str) -> str:
    """A member's figure and what it rests on: "nvme2n1 at 250 MB/s (link)"."""
    return f"{name} at {rate_mb_s(value)} ({basis})"


def slow_members_warning(found: SlowMembers, array: str) -> str:
    """The one line a plan shows for slow members, with the model's figures as `mdtui predict` shows them."""
    described = ", ".join(member_figure_text(name, found.figures[name], found.bases[name]) for name in found.names)
    verb = "limits" if len(found.names) == 1 else "limit"
    now, possible = found.now.seq_read_bytes_per_s, found.possible.seq_read_bytes_per_s
    return (
        f"{described} {verb} {array} to {shown(now, SEQ_READ)} of sequential reads ({now.bound}); the others "
        f"would allow {shown(possible, SEQ_READ)} (docs/findings.md, finding 1: a stripe runs at slowest member × N)"
    )


__all__ = [
    "ONE_FIGURE",
    "SLOW_RATIO",
    "Judged",
    "NoiseBand",
    "SlowMembers",
    "Stripe",
    "WeakestLinkVerdict",
    "array_stripe",
    "at_pace",
    "judge",
    "links_of",
    "member_figure_text",
    "member_link",
    "noise_band",
    "slow_members",
    "slow_members_warning",
    "slower_than_peers",
    "weakest_link_verdict",
]
