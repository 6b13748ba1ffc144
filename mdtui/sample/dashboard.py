"""What the live dashboard shows, worked out from snapshots: the targets one can watch (an array, or every whole
disk), and the view of one at the latest tick, from its members (sample/members) and its series (sample/series)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mdtui.model.array import MdArray
from mdtui.model.snapshot import DeviceRates, MdThreadCpu, Snapshot
from mdtui.plan.levels import level_from_name
from mdtui.probe.disks import candidate_name, is_candidate
from mdtui.probe.root import SystemRoot
from mdtui.sample.frequency import CoreFrequencies, FrequencySeries, frequency_series
from mdtui.sample.members import MemberLoad, standouts
from mdtui.sample.series import (
    ALL_DISKS,
    DiskTotals,
    Series,
    counted_in_total,
    sum_known,
    summed_rates,
    target_series,
)
from mdtui.sample.window import DEFAULT_WINDOW_S


@dataclass(frozen=True, slots=True)
class TargetView:
    """Everything the dashboard shows about the watched array (or all disks) at one tick."""

    name: str  # "md0", or ALL_DISKS
    array: MdArray | None
    total: DeviceRates | None  # the md device's own rates, or the sum over every disk
    members: tuple[MemberLoad, ...]
    member_read_bytes_per_s: float | None  # the members' reads added up, to set against total
    member_write_bytes_per_s: float | None
    expected_read_factor: float | None  # members ÷ array traffic a clean array of this level implies
    expected_write_factor: float | None  # (full-stripe writes); None while syncing or degraded
    threads: tuple[MdThreadCpu, ...]  # md kernel threads of this array (all of them for ALL_DISKS)
    series: Series


def target_names(snapshot: Snapshot) -> tuple[str, ...]:
    """What can be watched: every active md array, then all disks."""
    return (*(array.name for array in snapshot.arrays if array.level is not None), ALL_DISKS)


def pick_target(snapshot: Snapshot, wanted: str | None) -> str:
    """wanted when the snapshot has it; else the first array, so `mdtui watch` alone shows something."""
    names = target_names(snapshot)
    if wanted is not None and wanted.removeprefix("/dev/") in names:
        return wanted.removeprefix("/dev/")
    return names[0]


def next_target(snapshot: Snapshot, current: str) -> str:
    names = target_names(snapshot)
    return names[(names.index(current) + 1) % len(names)] if current in names else names[0]


class WholeDisks:
    """Names of the disks the inventory lists (probe.disks.is_candidate, from /sys/block), re-listed only when
    a new name appears: what watching all disks shows, one row each.

    Partitions and md/dm devices carry their disks' traffic again, and so are not rows; unattached loop
    devices, RAM disks and drives without a medium are not disks. Without /sys/block (a tree with only /proc)
    every name a disk can have counts. A loop device is a row but not in the total (counted_in_total).
    """

    def __init__(self, root: SystemRoot) -> None:
        self.root = root
        self._seen: frozenset[str] = frozenset()
        self._whole: frozenset[str] = frozenset()
        self._listed = False
        self._last: frozenset[str] = frozenset()
        self._last_devices: frozenset[str] | None = None

    def names(self, devices: Iterable[str]) -> frozenset[str]:
        current = frozenset(devices)
        if current == self._last_devices:  # the same devices as last tick (most ticks): the same answer
            return self._last
        self._last_devices = current
        if not self._listed or not current <= self._seen:
            self._whole = frozenset(name for name in self.root.listdir("/sys/block") if is_candidate(self.root, name))
            self._listed = True
            self._seen = self._seen | current
        whole = self._whole
        names = frozenset(name for name in current if name in whole or (not whole and candidate_name(name)))
        # The same set as last time is handed back as the same object: kept totals check it by identity first.
        if names == self._last:
            return self._last
        self._last = names
        return names


def _member_role(states: tuple[str, ...], slot: int | None) -> str:
    if "faulty" in states:
        return "faulty"
    if slot is None or "spare" in states:
        return "spare"
    return str(slot)


def traffic_factors(array: MdArray) -> tuple[float | None, float | None]:
    """(read, write) member traffic as a multiple of the array's, for a clean array of this level.

    Reads touch each block once at any level. Full-stripe writes add the copies (raid1, raid10) or
    parity (raid4/5/6); small writes cost more (read-modify-write), so the write figure is a floor.
    A resync, recovery or reshape adds member traffic the array never sees: no expectation then.
    """
    if array.level is None or array.sync is not None or array.degraded or not array.raid_disks:
        return None, None
    members = array.raid_disks
    if array.level == "raid10":
        copies = 1
        for number in re.findall(r"=(\d+)", array.layout or ""):
            copies *= int(number)
        return 1.0, float(copies)
    try:
        level = level_from_name(array.level)
    except ValueError:
        return None, None
    return 1.0, float(members / level.data_disks(members))


def build_view(
    snapshots: Sequence[Snapshot],
    target: str,
    disks: frozenset[str] = frozenset(),
    window_s: float = DEFAULT_WINDOW_S,
    totals: DiskTotals | None = None,
) -> TargetView:
    """The dashboard's view of target at the latest snapshot; disks: WholeDisks names, for ALL_DISKS.

    totals: the screen's DiskTotals, so the all-disks series sums only the newest snapshot each tick.
    """
    if not snapshots:
        raise ValueError("build_view needs at least one snapshot")
    latest = snapshots[-1]
    array = latest.array(target) if target != ALL_DISKS else None
    if array is not None:
        members = tuple(
            MemberLoad(m.name, _member_role(m.states, m.slot), latest.device(m.name))
            for m in sorted(array.members, key=lambda m: (m.slot is None, m.slot or 0, m.name))
        )
        threads = tuple(t for t in latest.md_threads if t.array == array.name)
        total = latest.device(array.name)
        expected_read, expected_write = traffic_factors(array)
        flagged = standouts(members)
        members = tuple(
            MemberLoad(m.name, m.role, m.rates, flagged.get(m.name)) if m.name in flagged else m for m in members
        )
    else:
        found = [d for d in latest.devices if d.name in disks]
        members = tuple(MemberLoad(d.name, "disk", d) for d in found)
        threads = latest.md_threads
        total = (
            totals.total(latest, disks)
            if totals is not None
            else summed_rates(ALL_DISKS, [d for d in found if counted_in_total(d.name)])
        )
        expected_read = expected_write = None
    if array is None:  # every disk is a member and the total is their sum: no second pass over hundreds of disks
        member_read = total.read_bytes_per_s if total is not None else None
        member_write = total.write_bytes_per_s if total is not None else None
    else:
        member_rates = [m.rates for m in members if m.rates is not None and m.role != "spare"]
        member_read = sum_known(r.read_bytes_per_s for r in member_rates)
        member_write = sum_known(r.write_bytes_per_s for r in member_rates)
    return TargetView(
        name=target if array is not None else ALL_DISKS,
        array=array,
        total=total,
        members=members,
        member_read_bytes_per_s=member_read,
        member_write_bytes_per_s=member_write,
        expected_read_factor=expected_read,
        expected_write_factor=expected_write,
        threads=threads,
        series=target_series(snapshots, target if array is not None else ALL_DISKS, disks, window_s, totals),
    )


__all__ = [
    "DEFAULT_WINDOW_S",
    "CoreFrequencies",
    "FrequencySeries",
    "TargetView",
    "WholeDisks",
    "build_view",
    "frequency_series",
    "next_target",
    "pick_target",
    "target_names",
    "traffic_factors",
]
