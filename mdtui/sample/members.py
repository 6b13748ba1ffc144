"""A watched target's members: each one's load at the latest tick, who stands out from its peers (busier, or slower
per request), the order the member table sorts in, and the rows a pane of limited height shows."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from mdtui.model.names import kernel_name_key
from mdtui.model.snapshot import DeviceRates

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
