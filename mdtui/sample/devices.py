"""Block device rates from /proc/diskstats (or /sys/block/*/stat when a captured tree lacks it)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from operator import or_

from mdtui.model.names import kernel_name_key
from mdtui.model.snapshot import DeviceRates
from mdtui.probe.diskstats import (
    IN_FLIGHT,
    READS,
    WRITES,
    DiskCounters,
    DiskstatsColumns,
    parse_diskstats_columns,
    parse_diskstats_lines,
    read_block_stats,
)
from mdtui.probe.kept import KeptFile
from mdtui.probe.root import TABLE_LIMIT, SystemRoot
from mdtui.sample.rates import device_rates, device_rates_columns
from mdtui.sample.source import Tick

# Which devices a snapshot holds: a collection of kernel names, a predicate on the name, or None
# for every device that has done any I/O since it appeared (hides the idle ram*, loop*, fd0, sr0 rows).
DeviceFilter = Collection[str] | Callable[[str], bool] | None


def _ever_used(counters: DiskCounters) -> bool:
    return bool(counters.reads_completed or counters.writes_completed or counters.in_flight)


class DeviceSource:
    """Each shown device's rates against the previous tick, in kernel name order."""

    def __init__(self, root: SystemRoot, devices: DeviceFilter = None) -> None:
        self.root = root
        self._names: frozenset[str] | None = None
        self._predicate: Callable[[str], bool] | None = None
        if callable(devices):
            self._predicate = devices
        elif devices is not None:
            self._names = frozenset(devices)
        # A whole table: one that exists but cannot be read (a FIFO, a device, binary) stops sampling
        # with a RefusedFileError naming it, as it stops a scan.
        self._diskstats = KeptFile(str(root.path("/proc/diskstats")), limit=TABLE_LIMIT, table=True)
        # Last tick's diskstats: as columns when it was regular (the usual case), as text, and as
        # counters per device only when that tick (or a line-by-line one after it) needed them.
        self._table: DiskstatsColumns | None = None
        self._table_text: str | None = None
        self._disks: dict[str, DiskCounters] | None = {}
        self._lines: dict[str, DiskCounters] = {}
        # Which lines are shown, in name order, for the names list they were worked out for.
        self._order_names: list[str] | None = None
        self._order: list[int] = []
        self._named: list[int] | None = None
        # The names list of the last column tick when every one of its lines had done reads or writes.
        self._all_used: list[str] | None = None

    def read(self, tick: Tick) -> tuple[DeviceRates, ...]:
        interval = tick.interval
        text = self._diskstats.read()
        if text is None:
            # Captured trees may hold only sysfs; /sys/block/*/stat costs a file per device but is exact.
            self._table = self._table_text = self._all_used = None
            return self._rates_by_line(read_block_stats(self.root, self._names), interval)
        # The usual tick: the same devices on the same lines as last tick, converted and turned into
        # rates field by field for all of them at once. Anything else goes line by line.
        previous, previous_text = self._table, self._table_text
        table = parse_diskstats_columns(text, previous)
        self._table, self._table_text = table, text
        if table is not None and previous is not None and interval is not None:
            rates = device_rates_columns(table, previous, interval)
            if rates is not None:
                self._disks = None  # rebuilt from previous_text if a later tick goes line by line
                return tuple(map(rates.__getitem__, self._chosen_lines(table)))
        self._all_used = None
        if self._disks is None and previous_text is not None:
            self._disks = self._parse_diskstats(previous_text)
        return self._rates_by_line(self._parse_diskstats(text), interval)

    def _chosen_lines(self, table: DiskstatsColumns) -> list[int]:
        """The lines of the devices this sampler shows, in name order."""
        if table.names is not self._order_names:
            # Same devices as last tick (device_rates_columns checked): the order is the same too.
            if self._order_names is None or table.names != self._order_names:
                keys = list(map(kernel_name_key, table.names))
                self._order = sorted(range(len(keys)), key=keys.__getitem__)
                wanted = self._names
                self._named = [i for i in self._order if table.names[i] in wanted] if wanted is not None else None
            self._order_names = table.names
        if self._named is not None:
            return self._named
        names = table.names
        if self._predicate is not None:
            predicate = self._predicate
            return [i for i in self._order if predicate(names[i])]
        if self._all_used is names:
            # Every line had done reads or writes last tick, and on this path neither count went
            # back (device_rates_columns checked): every line has still done some and is shown.
            return self._order
        counters = table.counters
        reads, writes, in_flight = counters[READS], counters[WRITES], counters[IN_FLIGHT]
        if all(map(or_, reads, writes)):
            self._all_used = names
            return self._order
        self._all_used = None
        return [i for i in self._order if reads[i] or writes[i] or in_flight[i]]

    def _rates_by_line(self, current: dict[str, DiskCounters], interval: float | None) -> tuple[DeviceRates, ...]:
        previous = self._disks or {}
        self._disks = current
        if self._predicate is not None:
            chosen = [c for name, c in current.items() if self._predicate(name)]
        elif self._names is not None:
            chosen = list(current.values())
        else:
            chosen = [c for c in current.values() if _ever_used(c)]
        chosen.sort(key=lambda counters: kernel_name_key(counters.name))
        return tuple(device_rates(counters, previous.get(counters.name), interval) for counters in chosen)

    def _parse_diskstats(self, text: str) -> dict[str, DiskCounters]:
        """parse_diskstats, but a line identical to one seen last tick reuses that tick's counters."""
        previous_lines = self._lines
        names = self._names
        # Lines that changed since last tick are converted together (parse_diskstats_lines), in file order.
        changed = []
        for line in text.splitlines():
            if line in previous_lines:
                continue
            if names is not None:
                fields = line.split(None, 3)
                if len(fields) < 3 or fields[2] not in names:
                    continue
            changed.append(line)
        parsed = dict(zip(changed, parse_diskstats_lines(changed), strict=True))
        lines: dict[str, DiskCounters] = {}
        devices: dict[str, DiskCounters] = {}
        for line in text.splitlines():
            counters = previous_lines.get(line) or parsed.get(line)
            if counters is None:
                continue
            lines[line] = counters
            devices[counters.name] = counters
        self._lines = lines
        return devices

    def close(self) -> None:
        self._diskstats.close()


__all__ = ["DeviceFilter", "DeviceSource"]
