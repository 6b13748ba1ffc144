"""Which members slower than their peers are the cause, and which are only spread.

A member read slower than its peers is not by that alone what limits its array: healthy members scatter from
run to run (the lab's unthrottled NVMe read 4,293, 3,020 and 1,321 MB/s alone in one weakest-link run, while
the throttled one read 20.6 and the array 83.3 = 20.6 × 4). Every rule that compares members judges them here:

- a member is *named* only when the array's own figure is its figure × N (within ±15%), the others could carry
  the array well above that, and its gap to its peers is more than run-to-run scatter (or its link explains it);
- a member that explains the array but whose gap is within the scatter (its own stored repeat runs, else a
  stated band) is *unsure*: a repeat run tells;
- a member slower than its peers that does not explain the array is *spread*: a note, never the cause.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from mdtui.advise.rules.inputs import mb_text
from mdtui.format import times

# A member reading under this share of the median of the others is slower than its peers. The field's case
# (finding 1) was 832 against ~1650 MB/s, 0.50; members of one model differ by up to ~25% in the lab.
SLOW_ALONE_RATIO = 0.6
# The array "runs at a member's pace" when it read within ±15% of that member's figure × N.
PACE_TOLERANCE = 0.15
# Healthy members' scatter from run to run when no repeat runs of them are stored: under emulation the lab's
# healthy NVMe scatter 3× and more (4,293 against 1,321 MB/s in one run, 3.25×), and on hosts a drive beside a
# busy neighbour or a warm one throttling does the same. A gap to the peers within it is not a verdict without
# a repeat.
STATED_NOISE_BAND = 3.5


@dataclass(frozen=True)
class NoiseBand:
    """How far apart runs of the same member can be here: measured from stored repeats, or the stated band."""

    ratio: float  # largest / smallest figure of one member across runs
    text: str  # the ratio and where it comes from, for the finding
    measured: bool = True

    @property
    def reach(self) -> float:
        """The widest gap still within the scatter: two or three stored runs understate it, so a measured band
        is widened by the pace tolerance (figures ±15% apart are one figure)."""
        return self.ratio * (1 + PACE_TOLERANCE) if self.measured else self.ratio


STATED_BAND = NoiseBand(
    STATED_NOISE_BAND, f"{STATED_NOISE_BAND:g}×, stated: what healthy members scatter (no repeat runs stored)", False
)


def noise_band(figures: Sequence[tuple[float, int]]) -> NoiseBand:
    """One member's run-to-run scatter from its stored figures (bytes/s, run id): largest over smallest when
    it has two or more; otherwise the stated band."""
    values = [value for value, _ in figures if value > 0]
    if len(values) < 2:
        return STATED_BAND
    ratio = max(values) / min(values)
    runs = ", ".join(f"#{run_id}" for _, run_id in sorted(figures, key=lambda f: f[1]))
    return NoiseBand(
        ratio, f"{ratio:.2f}× over its repeat runs ({runs}: {mb_text(min(values))} to {mb_text(max(values))})"
    )


@dataclass(frozen=True)
class Judged:
    """Members of one comparison sorted by what their figures support."""

    figures: Mapping[str, float]  # every member compared, name → bytes/s
    named: tuple[str, ...]  # the cause: the array runs at their pace
    unsure: tuple[str, ...]  # would explain the array, but the gap is within the run-to-run scatter
    spread: tuple[str, ...]  # slower than their peers, not the cause
    peers: float  # median of the members not slower than their peers
    bands: Mapping[str, NoiseBand]  # each member's own run-to-run scatter
    n: int  # stripe width the figures are multiplied by
    array: float | None  # what the array read, when it was measured

    def ratio(self, name: str) -> float:
        return self.figures[name] / self.peers

    def within_noise(self, name: str) -> bool:
        return _within(self.peers, self.figures[name], self.bands[name])

    def scatter_text(self, names: Sequence[str]) -> str:
        """The run-to-run scatter of these members: the stated band once, or each member's own repeats."""
        bands = [(name, self.bands[name]) for name in names]
        if all(not band.measured for _, band in bands):
            return STATED_BAND.text
        return "; ".join(f"{name}: {band.text}" for name, band in bands)

    @property
    def others_floor(self) -> float | None:
        """The slowest member not named × N: what the array could read with the named ones fixed."""
        others = [value for name, value in self.figures.items() if name not in self.named]
        return min(others) * self.n if others else None


def _within(peers: float, figure: float, band: NoiseBand) -> bool:
    """Whether a member's gap to its peers is no wider than the run-to-run scatter."""
    return figure > 0 and peers / figure <= band.reach


def at_pace(array: float, figure: float, n: int) -> bool:
    """Whether the array read its member's figure × N, within ±15%."""
    return figure > 0 and abs(array / (figure * n) - 1) <= PACE_TOLERANCE


def judge(
    figures: Mapping[str, float],
    n: int,
    *,
    array: float | None,
    repeats: Mapping[str, Sequence[tuple[float, int]]] | None = None,
    link_explains: Collection[str] = (),
) -> Judged | None:
    """Sort the members slower than their peers (under 0.6 × the median of the others) into named, unsure and
    spread; None when no member is slower than its peers. ``array`` None (no array figure, as for the same job
    run on each member): a member beyond the run-to-run scatter is named, one within it is unsure."""
    if len(figures) < 2:
        return None
    slow = [
        name
        for name, value in figures.items()
        if value < SLOW_ALONE_RATIO * statistics.median(v for other, v in figures.items() if other != name)
    ]
    peers = [value for name, value in figures.items() if name not in slow]
    if not slow or not peers or statistics.median(peers) <= 0:
        return None
    median = statistics.median(peers)
    bands = {name: noise_band((repeats or {}).get(name, ())) for name in figures}
    named, unsure, spread = [], [], []
    for name in sorted(slow, key=lambda s: figures[s]):
        explains = array is None or at_pace(array, figures[name], n)
        if not explains:
            spread.append(name)
        elif _within(median, figures[name], bands[name]) and name not in link_explains:
            unsure.append(name)
        else:
            named.append(name)
    judged = Judged(figures, tuple(named), tuple(unsure), tuple(spread), median, bands, n, array)
    floor = judged.others_floor
    if named and array is not None and floor is not None and floor < (1 + PACE_TOLERANCE) * array:
        # The others would hold the array near the same figure: the named ones are not what limits it alone.
        judged = Judged(figures, (), (*named, *unsure), tuple(spread), median, bands, n, array)
    return judged


def own_figures(judged: Judged, names: Sequence[str], verb: str) -> str:
    """Each member with its own figure: "nvme4n1 reads 21 MB/s", "nvme2n1 reads 240 MB/s and nvme3n1 245 MB/s"."""
    parts = [f"{names[0]} {verb}s {mb_text(judged.figures[names[0]])}"]
    parts += [f"{name} {mb_text(judged.figures[name])}" for name in names[1:]]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def ratios_text(judged: Judged, names: Sequence[str], against: str | None = None) -> str:
    """ "0.0056× its peers (3,656 MB/s)", "0.11× and 0.12× their peers (2,125 MB/s)"; ``against`` replaces
    "its/their peers"."""
    shown = [times(judged.ratio(name)) for name in names]
    joined = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    whom = against or f"{'its' if len(names) == 1 else 'their'} peers"
    return f"{joined} {whom} ({mb_text(judged.peers)})"


def spread_clause(judged: Judged, name: str, array_name: str | None, what: str) -> str:
    """One member that is spread or unsure, in its own words with its own figure."""
    value = judged.figures[name]
    text = f"{name} {what} {mb_text(value)} ({times(judged.ratio(name))} its peers' {mb_text(judged.peers)}"
    if judged.array is not None and array_name is not None:
        pace = value * judged.n
        relation = "about" if name in judged.unsure else "not"
        text += f"; × {judged.n} = {mb_text(pace)}, {relation} {array_name}'s {mb_text(judged.array)}"
    return text + ")"


def spread_title(judged: Judged, array_name: str | None, what: str) -> str:
    """The one line for the members slower than their peers that the figures do not blame. ``what`` says how
    they were measured, after the member's name: "read alone", "read with the same job"."""
    names = [*judged.unsure, *judged.spread]
    title = "Spread: " + "; ".join(spread_clause(judged, name, array_name, what) for name in names)
    noisy = [name for name in names if judged.within_noise(name)]
    if noisy:
        return title + f": within the run-to-run scatter ({judged.scatter_text(noisy)}); repeat the run before judging"
    return title + ": slower than their peers, but not what limits the array now"
