"""The watched target's throughput and IOPS over the window, tick by tick: each snapshot's row (a past snapshot
slimmed to what the charts read), the all-disks target's sums worked out once per snapshot."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter

from mdtui.model.snapshot import DeviceRates, Snapshot
from mdtui.probe.disks import is_file_backed
from mdtui.sample.window import DEFAULT_WINDOW_S, in_window

# The target that watches every whole disk at once: the only one on a host without md arrays.
ALL_DISKS = "disks"


@dataclass(frozen=True, slots=True)
class Series:
    """A target's rates over the window, oldest first; seconds_ago is 0 at the latest tick."""

    seconds_ago: tuple[float, ...] = ()
    read_bytes_per_s: tuple[float | None, ...] = ()
    write_bytes_per_s: tuple[float | None, ...] = ()
    read_iops: tuple[float | None, ...] = ()
    write_iops: tuple[float | None, ...] = ()


def sum_known(values: Iterable[float | None]) -> float | None:
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
        read_bytes_per_s=sum_known(d.read_bytes_per_s for d in devices),
        write_bytes_per_s=sum_known(d.write_bytes_per_s for d in devices),
        read_iops=sum_known(d.read_iops for d in devices),
        write_iops=sum_known(d.write_iops for d in devices),
        average_queue=sum_known(d.average_queue for d in devices),
        in_flight=sum(d.in_flight for d in devices),
        read_bytes=sum(d.read_bytes for d in devices),
        write_bytes=sum(d.write_bytes for d in devices),
    )


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
            sum_known(read_bytes[index] for index in chosen),
            sum_known(write_bytes[index] for index in chosen),
            sum_known(read_iops[index] for index in chosen),
            sum_known(write_iops[index] for index in chosen),
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
