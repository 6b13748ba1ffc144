"""What the live dashboard shows, worked out from snapshots: the watched target, its members, who stands out."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from operator import attrgetter

from mdtui.model.array import MdArray
from mdtui.model.names import kernel_name_key
from mdtui.model.snapshot import DeviceRates, MdThreadCpu, Snapshot
from mdtui.plan.levels import level_from_name
from mdtui.probe.disks import candidate_name, is_candidate, is_file_backed
from mdtui.probe.root import SystemRoot
from mdtui.sample.frequency import CoreFrequencies, FrequencySeries, frequency_series
from mdtui.sample.window import DEFAULT_WINDOW_S, in_window

# The target that watches every whole disk at once: the only one on a host without md arrays.
ALL_DISKS = "disks"

# A member stands out when it is clearly busier or slower than the median of its peers. The margins
# keep jitter quiet: an idle array's members differ by a few % busy and a fraction of a millisecond.
BUSY_MIN_PERCENT = 50.0  # below this every member still has headroom; none is holding the others back
BUSY_MARGIN_PERCENT = 20.0  # points of utilisation above the peers' median
SLOW_FACTOR = 2.0  # mean time per request, as a multiple of the peers' median
SLOW_MIN_EXTRA_MS = 1.0
SLOW_MIN_IOPS = 5.0  # a handful of requests gives no stable mean time


@dataclass(frozen=True, slots=True)
class MemberLoad:
    """One member (or one disk, when watching all disks) and its rates at the latest tick."""

    name: str
    role: str  # the member's slot number, "spare", "faulty", or "disk" when watching all disks
    rates: DeviceRates | None  # None when /proc/diskstats has no line for it (removed, or not yet seen)
    standout: str | None = None  # why it stands out from its peers: "busy 98% vs 41% for its peers"


@dataclass(frozen=True, slots=True)
class Series:
    """A target's rates over the window, oldest first; seconds_ago is 0 at the latest tick."""

    seconds_ago: tuple[float, ...] = ()
    read_bytes_per_s: tuple[float | None, ...] = ()
    write_bytes_per_s: tuple[float | None, ...] = ()
    read_iops: tuple[float | None, ...] = ()
    write_iops: tuple[float | None, ...] = ()


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


def _sum(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def counted_in_total(name: str) -> bool:
    """Whether a disk's traffic adds to the all-disks total: not a loop device's, which the disk holding its
    file counts again (or no disk carries, for a file in RAM)."""
    return not is_file_backed(name)


def summed_rates(name: str, devices: Sequence[DeviceRates]) -> DeviceRates | None:
    """Devices' rates added up; utilisation and mean times do not add, so they stay unknown."""
    if not devices:
        return None
    return DeviceRates(
        name,
        read_bytes_per_s=_sum(d.read_bytes_per_s for d in devices),
        write_bytes_per_s=_sum(d.write_bytes_per_s for d in devices),
        read_iops=_sum(d.read_iops for d in devices),
        write_iops=_sum(d.write_iops for d in devices),
        average_queue=_sum(d.average_queue for d in devices),
        in_flight=sum(d.in_flight for d in devices),
        read_bytes=sum(d.read_bytes for d in devices),
        write_bytes=sum(d.write_bytes for d in devices),
    )


def _mean_request_ms(rates: DeviceRates) -> float | None:
    """Mean time per request in the direction that did most requests (reads on a read test)."""
    reads, writes = rates.read_iops or 0.0, rates.write_iops or 0.0
    if max(reads, writes) < SLOW_MIN_IOPS:
        return None
    return rates.read_await_ms if reads >= writes else rates.write_await_ms


def standouts(members: Sequence[MemberLoad]) -> dict[str, str]:
    """Member name → why it stands out: busier (utilisation) or slower (time per request) than its peers.

    A stripe runs at its slowest member's pace (finding 1 in docs/findings.md), so the member that is saturated
    while its peers idle, or takes twice as long per request, is the one to look at. Each member is
    set against the median of the *others*, so with two members each is compared with the other.
    """
    active = [m for m in members if m.rates is not None and m.role not in ("spare", "faulty")]
    found: dict[str, str] = {}
    if len(active) < 2:
        return found
    for member in active:
        assert member.rates is not None
        peers = [m.rates for m in active if m is not member and m.rates is not None]
        busy = member.rates.utilisation_percent
        peer_busy = [p.utilisation_percent for p in peers if p.utilisation_percent is not None]
        if busy is not None and peer_busy:
            median = statistics.median(peer_busy)
            if busy >= BUSY_MIN_PERCENT and busy >= median + BUSY_MARGIN_PERCENT:
                found[member.name] = f"busy {busy:.0f}% vs {median:.0f}% for its peers"
                continue
        took = _mean_request_ms(member.rates)
        peer_took = [t for t in map(_mean_request_ms, peers) if t is not None]
        if took is not None and peer_took:
            median = statistics.median(peer_took)
            if took >= median * SLOW_FACTOR and took >= median + SLOW_MIN_EXTRA_MS:
                found[member.name] = f"slow {took:.1f} ms per request vs {median:.1f} ms for its peers"
    return found


class MemberSort(StrEnum):
    """How the dashboard orders members (or disks): the busiest first by default, so the member holding the
    others back is on the first line of a 256-disk host, not the 200th."""

    BUSY = "busy"  # utilisation, then bytes moved
    READ = "read"  # read bytes per second
    WRITE = "write"  # written bytes per second
    SLOW = "slow"  # mean time per request
    NAME = "name"  # the kernel's order (nvme2n1 before nvme10n1)

    @property
    def words(self) -> str:
        return {
            "busy": "busiest first",
            "read": "most read first",
            "write": "most written first",
            "slow": "slowest per request first",
            "name": "by name",
        }[self.value]

    def next(self) -> MemberSort:
        order = list(MemberSort)
        return order[(order.index(self) + 1) % len(order)]


def _moved(rates: DeviceRates) -> float:
    return (rates.read_bytes_per_s or 0.0) + (rates.write_bytes_per_s or 0.0)


def sort_members(members: Sequence[MemberLoad], by: MemberSort, reverse: bool = False) -> tuple[MemberLoad, ...]:
    """Members in ``by``'s order, the most first (``reverse``: the least first); a member without figures
    (removed, not seen yet) comes last either way, and ties go by name in the kernel's order."""
    known = [m for m in members if m.rates is not None]
    unknown = sorted((m for m in members if m.rates is None), key=lambda m: kernel_name_key(m.name))

    def most(member: MemberLoad) -> tuple[float, ...]:
        rates = member.rates
        assert rates is not None
        if by is MemberSort.BUSY:
            return (rates.utilisation_percent or 0.0, _moved(rates))
        if by is MemberSort.READ:
            return (rates.read_bytes_per_s or 0.0,)
        if by is MemberSort.WRITE:
            return (rates.write_bytes_per_s or 0.0,)
        if by is MemberSort.SLOW:
            took = _mean_request_ms(rates)
            return (took if took is not None else -1.0,)
        return ()

    by_name = sorted(known, key=lambda m: kernel_name_key(m.name))
    if by is MemberSort.NAME:
        ordered = by_name[::-1] if reverse else by_name
    else:
        # Stable sorts: the name order stays among equals, whichever way the figure runs.
        ordered = sorted(by_name, key=most, reverse=not reverse)
    return (*ordered, *unknown)


@dataclass(frozen=True, slots=True)
class MemberPage:
    """What a member table of limited height shows: the standouts, always, then a window of the others."""

    pinned: tuple[MemberLoad, ...]  # members that stand out, in the sort's order, whatever the scroll
    rows: tuple[MemberLoad, ...]  # the others from ``offset`` on
    offset: int  # index of rows[0] among the others (clamped so the window is never past the end)
    others: int  # how many others there are
    total: int  # every member

    @property
    def hidden(self) -> int:
        return self.others - len(self.rows)


def member_page(
    members: Sequence[MemberLoad], by: MemberSort, reverse: bool, offset: int, room: int | None
) -> MemberPage:
    """The rows a table with room for ``room`` members shows (None: every one), scrolled ``offset`` rows into
    the members that do not stand out. Standouts are pinned on top: scrolling or sorting never hides the
    member that holds the array back."""
    ordered = sort_members(members, by, reverse)
    pinned = tuple(m for m in ordered if m.standout)
    others = tuple(m for m in ordered if not m.standout)
    space = len(others) if room is None else max(0, room - len(pinned))
    offset = max(0, min(offset, len(others) - space))
    return MemberPage(pinned, others[offset : offset + space], offset, len(others), len(ordered))


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


class DiskTotals:
    """Each snapshot's all-disks total and the watched target's figures, for a dashboard that redraws its
    window every tick.

    Summing every disk of every snapshot in a two-minute window each tick costs window x disks
    additions per tick (30,000 on a 256-disk host), and finding an array's device in each snapshot a
    scan of its devices; snapshots never change, so each one's figures are worked out once and kept
    while the snapshot is in the window. A screen owns one (not thread-safe).
    """

    def __init__(self) -> None:
        # id(snapshot) -> (the snapshot, which keeps the id from being reused; the disks summed; the total)
        self._totals: dict[int, tuple[Snapshot, frozenset[str], DeviceRates | None]] = {}
        # id(snapshot) -> (the snapshot; the target; its disks; its read/write bytes and IOPS)
        self._rows: dict[int, tuple[Snapshot, str, frozenset[str], SeriesRow]] = {}

    def total(self, snapshot: Snapshot, disks: frozenset[str]) -> DeviceRates | None:
        kept = self._totals.get(id(snapshot))
        if kept is not None and kept[0] is snapshot and (kept[1] is disks or kept[1] == disks):
            return kept[2]
        rates = summed_rates(ALL_DISKS, [d for d in snapshot.devices if d.name in disks and counted_in_total(d.name)])
        self._totals[id(snapshot)] = (snapshot, disks, rates)
        return rates

    def row(self, snapshot: Snapshot, target: str, disks: frozenset[str]) -> SeriesRow:
        """The target's read and write bytes and IOPS in this snapshot (Nones where it had no rates)."""
        kept = self._rows.get(id(snapshot))
        if (
            kept is not None
            and kept[0] is snapshot
            and kept[1] == target
            and (target != ALL_DISKS or kept[2] is disks or kept[2] == disks)
        ):
            return kept[3]
        row = _target_row(snapshot, target, disks, self)
        self._rows[id(snapshot)] = (snapshot, target, disks, row)
        return row

    def keep_only(self, snapshots: Sequence[Snapshot]) -> None:
        """Forget the figures of snapshots that left the window."""
        wanted = {id(snapshot) for snapshot in snapshots}
        for kept in (self._totals, self._rows):
            for key in [key for key in kept if key not in wanted]:
                del kept[key]


SeriesRow = tuple[float | None, float | None, float | None, float | None]
_NO_ROW: SeriesRow = (None, None, None, None)


def _series_row(rates: DeviceRates | None) -> SeriesRow:
    if rates is None:
        return _NO_ROW
    return rates.read_bytes_per_s, rates.write_bytes_per_s, rates.read_iops, rates.write_iops


@dataclass(frozen=True, slots=True)
class PastSnapshot(Snapshot):
    """A snapshot as the dashboard keeps it for its charts once a newer one came (see past()).

    Only what the charts read of a past tick: its time, its CPU state and each device's read and write
    bytes and IOPS per second, in the snapshot's order; devices (empty here), arrays and threads are
    left out. A 256-disk snapshot is ~400 objects the garbage collector walks at every full collection
    while the window keeps it (two minutes of them ~50,000); this is the CPU state's and five tuples:
    the devices' names (the same tuple from tick to tick while they stay the same devices) and one per
    figure, tuples of numbers, which Python stops tracking. A tuple per device would be as many objects
    again each tick, each counted towards the next young collection. The charts drawn from a window of
    these and a full latest snapshot are the same as from the full ones (tests hold them equal).
    """

    names: tuple[str, ...] = ()
    # read bytes/s, write bytes/s, read IOPS, write IOPS of each device, in names' order
    figures: tuple[tuple[float | None, ...], ...] = ((), (), (), ())

    def row(self, target: str, disks: frozenset[str]) -> SeriesRow:
        """The target's figures as a full snapshot gives them: ALL_DISKS sums the disks in the same order."""
        read_bytes, write_bytes, read_iops, write_iops = self.figures
        if target != ALL_DISKS:
            try:
                index = self.names.index(target)
            except ValueError:
                return _NO_ROW
            return read_bytes[index], write_bytes[index], read_iops[index], write_iops[index]
        chosen = [index for index, name in enumerate(self.names) if name in disks and counted_in_total(name)]
        if not chosen:
            return _NO_ROW
        return (
            _sum(read_bytes[index] for index in chosen),
            _sum(write_bytes[index] for index in chosen),
            _sum(read_iops[index] for index in chosen),
            _sum(write_iops[index] for index in chosen),
        )


_READ_BYTES, _WRITE_BYTES = attrgetter("read_bytes_per_s"), attrgetter("write_bytes_per_s")
_READ_IOPS, _WRITE_IOPS = attrgetter("read_iops"), attrgetter("write_iops")
_NAME = attrgetter("name")


def past(snapshot: Snapshot, before: PastSnapshot | None = None) -> PastSnapshot:
    """The snapshot as a window keeps it after the latest tick: what target_series and frequency_series read.

    build_view reads the latest snapshot's devices, arrays and threads: a window ends in a full one.
    before: the previous tick's PastSnapshot, whose names tuple is kept when the devices are the same.
    """
    if isinstance(snapshot, PastSnapshot):
        return snapshot
    devices = snapshot.devices
    names = tuple(map(_NAME, devices))
    if before is not None and before.names == names:
        names = before.names
    figures = (
        tuple(map(_READ_BYTES, devices)),
        tuple(map(_WRITE_BYTES, devices)),
        tuple(map(_READ_IOPS, devices)),
        tuple(map(_WRITE_IOPS, devices)),
    )
    return PastSnapshot(snapshot.timestamp, snapshot.interval, (), snapshot.cpu, names=names, figures=figures)


def _target_row(snapshot: Snapshot, target: str, disks: frozenset[str], totals: DiskTotals | None = None) -> SeriesRow:
    if isinstance(snapshot, PastSnapshot):
        return snapshot.row(target, disks)
    return _series_row(_target_rates(snapshot, target, disks, totals))


def _target_rates(
    snapshot: Snapshot, target: str, disks: frozenset[str], totals: DiskTotals | None = None
) -> DeviceRates | None:
    if target != ALL_DISKS:
        return snapshot.device(target)
    if totals is not None:
        return totals.total(snapshot, disks)
    return summed_rates(ALL_DISKS, [d for d in snapshot.devices if d.name in disks and counted_in_total(d.name)])


def target_series(
    snapshots: Sequence[Snapshot],
    target: str,
    disks: frozenset[str] = frozenset(),
    window_s: float = DEFAULT_WINDOW_S,
    totals: DiskTotals | None = None,
) -> Series:
    """The target's rates at each tick of the last window_s seconds (None where a tick had no rate).

    totals: the screen's DiskTotals, so each tick works out only the newest snapshot's figures.
    """
    chosen = in_window(snapshots, window_s)
    if not chosen:
        return Series()
    if totals is not None:
        totals.keep_only(chosen)
        rows = [totals.row(snapshot, target, disks) for snapshot in chosen]
    else:
        rows = [_target_row(snapshot, target, disks) for snapshot in chosen]
    latest = chosen[-1].timestamp
    reads, writes, read_iops, write_iops = zip(*rows, strict=True)
    return Series(tuple([s.timestamp - latest for s in chosen]), reads, writes, read_iops, write_iops)


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
        member_read = _sum(r.read_bytes_per_s for r in member_rates)
        member_write = _sum(r.write_bytes_per_s for r in member_rates)
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
    "ALL_DISKS",
    "DEFAULT_WINDOW_S",
    "CoreFrequencies",
    "DiskTotals",
    "FrequencySeries",
    "MemberLoad",
    "MemberPage",
    "MemberSort",
    "PastSnapshot",
    "Series",
    "TargetView",
    "WholeDisks",
    "build_view",
    "frequency_series",
    "member_page",
    "next_target",
    "past",
    "pick_target",
    "sort_members",
    "standouts",
    "summed_rates",
    "target_names",
    "traffic_factors",
]
