"""Each core's frequency over the window, for the dashboard's frequency chart."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.model.snapshot import Snapshot
from mdtui.sample.window import DEFAULT_WINDOW_S, in_window

# More per-core lines than this make a chart unreadable: show the spread (min, mean, max) instead.
MAX_CORE_LINES = 8


@dataclass(frozen=True, slots=True)
class FrequencySeries:
    """Per-core (or min/mean/max across cores) frequency in MHz over the window, oldest first."""

    seconds_ago: tuple[float, ...] = ()
    lines: tuple[tuple[str, tuple[float | None, ...]], ...] = ()  # (label, MHz per tick)


_CoreEntry = tuple[Snapshot, dict[int, float], tuple[float, float, float] | None, frozenset[int]]


class CoreFrequencies:
    """Each snapshot's per-core MHz (and its min, mean and max), worked out once per snapshot.

    The frequency chart redraws its whole window every tick; with this, a tick works out only the
    snapshots it has not seen, not window x cores again. A screen owns one (not thread-safe).
    """

    def __init__(self) -> None:
        # id(snapshot) -> (the snapshot, which keeps the id from being reused; MHz per core; (min, mean, max);
        # the cores with a frequency, one shared set while they stay the same)
        self._kept: dict[int, _CoreEntry] = {}
        self._cpus: frozenset[int] = frozenset()

    def of(self, snapshot: Snapshot) -> tuple[dict[int, float], tuple[float, float, float] | None]:
        entry = self._entry(snapshot)
        return entry[1], entry[2]

    def entries(self, snapshots: Sequence[Snapshot]) -> list[_CoreEntry]:
        """Each snapshot's (snapshot, MHz per core, spread, cores)."""
        return [self._entry(snapshot) for snapshot in snapshots]

    def _entry(self, snapshot: Snapshot) -> _CoreEntry:
        kept = self._kept.get(id(snapshot))
        if kept is not None and kept[0] is snapshot:
            return kept
        mhz = {core.cpu: core.freq_mhz for core in snapshot.cpu.cores if core.freq_mhz is not None}
        values = list(mhz.values())
        spread = (min(values), statistics.fmean(values), max(values)) if values else None
        cpus = frozenset(mhz)
        if cpus == self._cpus:
            cpus = self._cpus
        else:
            self._cpus = cpus
        kept = self._kept[id(snapshot)] = (snapshot, mhz, spread, cpus)
        return kept

    def keep_only(self, snapshots: Sequence[Snapshot]) -> None:
        """Forget the snapshots that left the window."""
        wanted = {id(snapshot) for snapshot in snapshots}
        for key in [key for key in self._kept if key not in wanted]:
            del self._kept[key]


def frequency_series(
    snapshots: Sequence[Snapshot],
    window_s: float = DEFAULT_WINDOW_S,
    max_lines: int = MAX_CORE_LINES,
    cores: CoreFrequencies | None = None,
) -> FrequencySeries:
    """Each core's MHz over the window; past max_lines cores, the min, mean and max across them.

    cores: the screen's CoreFrequencies, so each tick works out only the newest snapshot's.
    """
    chosen = [s for s in in_window(snapshots, window_s) if s.cpu.cpufreq_available]
    if not chosen:
        return FrequencySeries()
    if cores is None:
        cores = CoreFrequencies()
    else:
        cores.keep_only(chosen)
    latest = chosen[-1].timestamp
    ages = tuple([s.timestamp - latest for s in chosen])
    entries = cores.entries(chosen)
    # Snapshots with the same cores share one set, whose hash Python keeps: a window of them is one set.
    names = sorted(frozenset().union(*{entry[3] for entry in entries}))
    if len(names) <= max_lines:
        lines = tuple((f"cpu{cpu}", tuple([entry[1].get(cpu) for entry in entries])) for cpu in names)
        return FrequencySeries(ages, lines)
    lows, means, highs = zip(*[entry[2] or _NO_SPREAD for entry in entries], strict=True)
    return FrequencySeries(ages, (("max", highs), ("mean", means), ("min", lows)))


_NO_SPREAD = (None, None, None)


__all__ = ["MAX_CORE_LINES", "CoreFrequencies", "FrequencySeries", "frequency_series"]
