"""How long md takes to resync, rebuild, check/repair and reshape an array: a pure model, no I/O.

md does every one of these passes in one loop (md_do_sync in drivers/md/md.c) that walks a progress counter
from 0 to an end, and /proc/mdstat and ``md/sync_speed`` report that counter. The model predicts the
counter's rate and so the time, the way md spends it:

- **What each member moves.** Per byte of progress, each member reads and writes what the level makes it:
  a raid1 resync reads one mirror and writes the others (a check reads them all); a raid4/5/6 resync,
  check or repair reads every member; a rebuild (md's "recover") reads the survivors and writes the new
  member; a raid10 resync or check reads every copy and counts in array bytes, not member bytes; a reshape
  reads the old data once and writes every stripe of the new layout (beyond the old data md writes zeroed
  stripes, so the whole new span is written). A member that both reads and writes does one after the
  other: its time per byte is read/its read figure + written/its write figure. The slowest member sets the
  pace. Member figures are the member-matrix's sequential 1 MiB read and write (plan/figures.MemberFigures,
  stored per disk by bench/member_figures.py, or a link's bandwidth when nothing was measured).
- **md's limits.** md sleeps whenever the rate is above ``speed_max`` (the array's ``md/sync_speed_max``,
  or ``/proc/sys/dev/raid/speed_limit_max`` while it says "system"), so that caps the idle rate. Above
  ``speed_min`` md also yields to any other I/O on the members: under competing I/O only the minimum is
  kept. md checks the minimum first, so a minimum above the maximum is the cap (what a boost relies on).
  Both are KiB/s (1024 bytes) of progress.
- **md's CPU.** A parity level computes parity for every stripe it syncs; where the kernel's xor/raid6
  speed is known (md's calibrated ceilings) it caps the data rate.
- **A write-intent bitmap.** A re-added member, or a resync after an unclean stop, syncs only the
  regions the bitmap marks dirty; md skips the clean ones without I/O.

Each answer is a ``SyncTime``: ``predicted_seconds`` idle and under load, the bound that sets each, and the
basis of the figures. ``sync_time`` covers resync, recover, check and repair; ``reshape_time`` a geometry
change (more or fewer members, another level, chunk or layout); ``create_sync_action`` names the pass
``mdadm --create`` starts. What the model is told (limits, members, a geometry change) is plan/sync_inputs;
its answers in words, and what holds a pass running now, plan/sync_words.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from mdtui.errors import PlanError
from mdtui.format import about
from mdtui.plan.figures import FIELD, MemberFigures
from mdtui.plan.levels import LINEAR, RAID1, RAID10, RaidLevel
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.sync_inputs import GeometryChange, SyncLimits, SyncMember

# md's sync_action words for the passes this model times.
RESYNC = "resync"
RECOVER = "recover"
CHECK = "check"
REPAIR = "repair"
RESHAPE = "reshape"
SYNC_ACTIONS = (RESYNC, RECOVER, CHECK, REPAIR, RESHAPE)
# What each pass is called in words.
ACTION_WORDS = {
    RESYNC: "resync",
    RECOVER: "rebuild",
    CHECK: "check",
    REPAIR: "repair",
    RESHAPE: "reshape",
}


@dataclass(frozen=True)
class SyncTime:
    """One pass predicted: how long, what bounds it, idle and under competing I/O.

    ``rate_bytes_per_s`` and ``span_bytes`` are in md's own progress units (what ``md/sync_speed`` and
    ``md/sync_completed`` count), so a running pass compares with them directly. ``work_bytes`` is the part of
    the span md really syncs (less than the span when a bitmap lets it skip clean regions).
    """

    action: str
    predicted_seconds: float | None
    bound: str
    basis: str
    rate_bytes_per_s: float | None
    span_bytes: int
    work_bytes: int
    under_load_seconds: float | None
    under_load_bound: str
    notes: tuple[str, ...] = field(default=())
    # What the members (and md's parity routine) allow with md's speed limits out of the way: the rate a boost
    # of sync_speed_min/max can reach.
    free_rate_bytes_per_s: float | None = None
    free_bound: str = ""  # what sets that pace, with its basis: "members: sdb (reads 180 MB/s) (measured)"

    @property
    def words(self) -> str:
        return ACTION_WORDS.get(self.action, self.action)

    def as_json(self) -> dict[str, object]:
        """The document the CLI's --json prints for a predicted pass (seconds and bytes; KiB nowhere)."""
        return {
            "action": self.action,
            "predicted_seconds": _tidy(self.predicted_seconds),
            "bound": self.bound,
            "basis": self.basis,
            "rate_bytes_per_s": _tidy(self.rate_bytes_per_s),
            "span_bytes": self.span_bytes,
            "work_bytes": self.work_bytes,
            "under_load": {"predicted_seconds": _tidy(self.under_load_seconds), "bound": self.under_load_bound},
            "notes": list(self.notes),
        }


def _tidy(value: float | None) -> float | None:
    """Three significant figures: a model's seconds claim no more."""
    if value is None or value <= 0 or not math.isfinite(value):
        return value
    return float(f"{value:.3g}")


# --- what each member moves ---------------------------------------------------------------------------


@dataclass
class _Traffic:
    """Bytes one member reads and writes per byte of md's progress."""

    member: SyncMember
    read: Fraction = Fraction(0)
    written: Fraction = Fraction(0)


def _add(
    traffic: dict[str, _Traffic],
    members: Iterable[SyncMember],
    *,
    read: Fraction = Fraction(0),
    written: Fraction = Fraction(0),
) -> None:
    for member in members:
        entry = traffic.setdefault(member.name, _Traffic(member))
        entry.read += read
        entry.written += written


def _member_rate(traffic: dict[str, _Traffic]) -> tuple[float | None, str, list[str], list[MemberFigures]]:
    """Progress bytes per second the members allow, the bound naming the slowest, what is missing, the figures."""
    slowest: tuple[float, str] | None = None
    missing: list[str] = []
    figures: list[MemberFigures] = []
    for entry in traffic.values():
        seconds = 0.0
        parts = []
        known = entry.member.figures
        for amount, value, verb in (
            (entry.read, known.seq_read_bytes_per_s if known else None, "reads"),
            (entry.written, known.seq_write_bytes_per_s if known else None, "writes"),
        ):
            if not amount:
                continue
            if value is None or value <= 0:
                missing.append(f"{entry.member.name} has no sequential {'read' if verb == 'reads' else 'write'} figure")
                continue
            seconds += float(amount) / value
            parts.append(f"{verb} {value / 1e6:,.3g} MB/s")
        if known is not None:
            figures.append(known)
        if seconds and not missing and (slowest is None or 1 / seconds < slowest[0]):
            slowest = (1 / seconds, f"{entry.member.name} ({' and '.join(parts)})")
    if missing or slowest is None:
        return None, "", missing, figures
    return slowest[0], f"members: {slowest[1]}", missing, figures


def _basis(figures: Sequence[MemberFigures]) -> str:
    kinds = list(dict.fromkeys(f.basis for f in figures))
    return ", ".join(kinds) if kinds else FIELD


# --- the answer ------------------------------------------------------------------------------------------


def _answer(
    action: str,
    traffic: dict[str, _Traffic],
    span_bytes: int,
    limits: SyncLimits,
    *,
    work_fraction: float = 1.0,
    cpu_cap: tuple[float, str] | None = None,
    notes: Sequence[str] = (),
) -> SyncTime:
    work = int(span_bytes * work_fraction)
    member_rate, member_bound, missing, figures = _member_rate(traffic)
    cap, cap_name = limits.cap()
    floor, floor_name = limits.floor()
    all_notes = list(notes)
    speed_limit = (cap, cap_name, limits.basis)
    # What bounds the pass besides md's speed limits: the members, and md's parity routine where known.
    others: list[tuple[float, str, str]] = [] if cpu_cap is None else [(cpu_cap[0], cpu_cap[1], "md ceilings")]
    if missing:
        limit_rate = min(c[0] for c in [speed_limit, *others])
        all_notes.append(
            f"md's limits alone allow it no sooner than {_seconds_words(work / limit_rate if limit_rate else None)}"
        )
        return SyncTime(
            action,
            None,
            "unknown: " + "; ".join(dict.fromkeys(missing)),
            _basis(figures),
            None,
            span_bytes,
            work,
            None,
            "unknown: a member's figure is missing",
            tuple(all_notes),
        )
    assert member_rate is not None
    others.insert(0, (member_rate, member_bound, _basis(figures)))
    free_rate, free_name, free_basis = min(others, key=lambda c: c[0])
    rate, bound, basis = min([*others, speed_limit], key=lambda c: c[0])
    if rate <= 0:
        return SyncTime(action, None, f"{bound}: md does not sync at all", basis, 0.0, span_bytes, work, None, bound)
    seconds = work / rate
    # Under competing I/O md gives the pass only its minimum (or what the members allow, if less).
    if floor <= 0:
        loaded_seconds, loaded_bound = None, f"{floor_name}: md may stall it while other I/O runs"
    elif floor < rate:
        loaded_seconds, loaded_bound = work / floor, f"{floor_name}: md yields to other I/O above it"
    else:
        loaded_seconds, loaded_bound = seconds, bound
    return SyncTime(
        action,
        seconds,
        bound,
        basis,
        rate,
        span_bytes,
        work,
        loaded_seconds,
        loaded_bound,
        tuple(all_notes),
        free_rate,
        f"{free_name} ({free_basis})",
    )


def _seconds_words(seconds: float | None) -> str:
    return "an unknown time" if seconds is None else about(seconds)


# --- the passes ---------------------------------------------------------------------------------------


def sync_span_bytes(
    action: str,
    level: RaidLevel,
    members: int,
    component_bytes: int,
    layout: str | None = None,
    array_bytes: int | None = None,
) -> int:
    """How far md's progress counter runs for ``action``: a member's data area, except a raid10 resync, check or
    repair (and reshape), which md counts over the whole array."""
    if level is RAID10 and action != RECOVER:
        if array_bytes is not None:
            return array_bytes
        return int(component_bytes * level.data_disks(members, layout))
    return component_bytes


def sync_time(
    action: str,
    level: RaidLevel,
    members: Sequence[SyncMember],
    *,
    component_bytes: int,
    limits: SyncLimits,
    targets: Sequence[SyncMember] = (),
    layout: str | None = None,
    array_bytes: int | None = None,
    dirty_fraction: float | None = None,
    ceilings: MdCeilings | None = None,
) -> SyncTime:
    """How long a resync, rebuild ("recover"), check or repair of an array takes.

    ``members``: the in-sync members md reads from, in slot order (for a raid1 resync the first is the one md
    reads); ``targets``: the members being written (the new member of a rebuild, a --replace's replacement).
    ``component_bytes``: each member's data area in use (md's component_size). ``dirty_fraction``: the share of
    the bitmap's chunks marked dirty, for a re-add or a resync after an unclean stop; None syncs everything.
    """
    if action not in (RESYNC, RECOVER, CHECK, REPAIR):
        raise PlanError(f"{action!r} is not a resync, recover, check or repair (a reshape is reshape_time)")
    if not level.redundant:
        raise PlanError(f"{level.name} has no redundancy: md has nothing to resync, rebuild or check")
    if not members:
        raise PlanError(f"a {ACTION_WORDS[action]} needs at least one in-sync member to read from")
    if action == RECOVER and not targets:
        raise PlanError("a rebuild needs the member it writes to (targets)")
    if dirty_fraction is not None and not 0 <= dirty_fraction <= 1:
        raise PlanError(f"the bitmap's dirty share must be within 0..1, not {dirty_fraction}")
    slots = len(members) + len(targets)
    span = sync_span_bytes(action, level, slots, component_bytes, layout, array_bytes)
    traffic: dict[str, _Traffic] = {}
    notes: list[str] = []
    one = Fraction(1)
    if level is RAID10 and action != RECOVER:
        # Counted in array bytes: each array byte has `copies` copies spread over all members.
        copies = level.copies(slots, layout)
        _add(traffic, members, read=Fraction(copies, slots))
    elif level is RAID1 and action == RESYNC:
        # md reads one mirror and writes what it read to all the others (raid1.c sync_request).
        _add(traffic, members[:1], read=one)
        _add(traffic, members[1:], written=one)
    elif action == RECOVER:
        # The new member's blocks are read from the survivors: every survivor of a parity level (md reads the
        # whole stripe), one copy of a mirror. Which copy md picks depends on the layout, so each survivor is
        # charged with it: the slowest survivor bounds the time (for a raid10 an upper bound when it is not the
        # new member's partner).
        _add(traffic, members, read=one)
    else:
        _add(traffic, members, read=one)
    _add(traffic, targets, written=one)
    if action in (RESYNC, REPAIR) and level.parity:
        notes.append("parity is rewritten only where it differs: members that held other data add writes")
    if action == REPAIR and not level.parity:
        notes.append("a repair rewrites only the blocks whose copies differ")
    work_fraction = 1.0 if dirty_fraction is None else dirty_fraction
    if dirty_fraction is not None:
        notes.append(f"the write-intent bitmap marks {dirty_fraction:.0%} dirty: only that part is synced")
    return _answer(
        action,
        traffic,
        span,
        limits,
        work_fraction=work_fraction,
        cpu_cap=_cpu_cap(level, slots, layout, ceilings),
        notes=notes,
    )


def _cpu_cap(
    level: RaidLevel, members: int, layout: str | None, ceilings: MdCeilings | None
) -> tuple[float, str] | None:
    """Progress bytes per second md's parity routine allows (it computes over every data block of a stripe)."""
    if ceilings is None or ceilings.parity_bytes_per_s is None or not level.parity:
        return None
    data = float(level.data_disks(members, layout))
    return ceilings.parity_bytes_per_s / data, "parity CPU (the kernel's xor/raid6 speed)"


def reshape_time(
    change: GeometryChange,
    sources: Sequence[SyncMember],
    targets: Sequence[SyncMember],
    *,
    limits: SyncLimits,
    ceilings: MdCeilings | None = None,
) -> SyncTime:
    """How long md takes to reshape an array from one geometry to another (``mdadm --grow``).

    ``sources``: the members of the old geometry (each holds its share of the data md reads); ``targets``: the
    members of the new geometry (each written over the new span). A member in both lists does both, one after
    the other. md reads the old data once, data blocks only, and writes every block of every new stripe,
    parity included; on parity levels and raid0 (reshaped through raid4) it also writes the zeroed stripes
    past the old data, so each target is written over its whole new span. raid10 writes only the copies of
    the data it moves. Progress is counted per member (the new span), or over the array for raid10.

    Not a reshape, and not timed here: adding a raid1 mirror is a rebuild of the new member (``sync_time``
    with RECOVER); a raid5 → raid6 change with ``--layout=preserve`` only rebuilds Q onto the new member
    (RECOVER as well); takeovers that move no data (raid1 of 2 → raid5, raid0 → degraded raid4) take no time.

    md also stops at every checkpoint to write the reshape position into the superblock (at least every 10 s
    and whenever the next stripes would overwrite data not yet safe), and mdadm copies each critical section
    to the backup file first: the answer is the members' and md's limits, the lower bound on a reshape's time.
    """
    if change.old_level in (LINEAR,) or change.new_level in (LINEAR,):
        raise PlanError("md does not reshape a linear array: it grows by adding a member, with no data moved")
    if change.old_level is RAID1 and change.new_level is RAID1:
        raise PlanError("adding raid1 mirrors is a rebuild of each new member: time it with sync_time(RECOVER)")
    if not sources or not targets:
        raise PlanError("a reshape needs the members it reads (sources) and the members it writes (targets)")
    if len(sources) != change.old_members or len(targets) != change.new_members:
        raise PlanError(
            f"the reshape names {len(sources)} source and {len(targets)} target members for a change from "
            f"{change.old_members} to {change.new_members}"
        )
    old_data = change.old_level.data_disks(change.old_members, change.old_layout)
    new_data = change.new_level.data_disks(change.new_members, change.new_layout)
    if old_data <= 0 or new_data <= 0:
        raise PlanError("a reshape needs data members before and after")
    new_component = change.new_component_bytes or change.component_bytes
    data_bytes = Fraction(change.component_bytes) * old_data  # what the array holds now
    raid10 = change.new_level is RAID10
    span = int(data_bytes) if raid10 else new_component
    notes: list[str] = []
    traffic: dict[str, _Traffic] = {}
    # Each source reads its share of the data, spread over the old members.
    _add(traffic, sources, read=data_bytes / change.old_members / span)
    if raid10:
        copies = change.new_level.copies(change.new_members, change.new_layout)
        _add(traffic, targets, written=data_bytes * copies / change.new_members / span)
    else:
        _add(traffic, targets, written=Fraction(new_component, span))
    if change.backup_file:
        notes.append(
            "mdadm backs up every section to the backup file before md rewrites it: the file's disk carries the "
            "array's data once more"
        )
    notes.append("md pauses at each checkpoint to record the reshape position: expect it to take longer")
    return _answer(
        RESHAPE,
        traffic,
        span,
        limits,
        cpu_cap=_cpu_cap(change.new_level, change.new_members, change.new_layout, ceilings),
        notes=notes,
    )


def create_sync_action(
    level: RaidLevel, *, assume_clean: bool = False, build: bool = False, force: bool = False
) -> str | None:
    """The pass ``mdadm --create`` starts: None for none (no redundancy, --assume-clean, --build).

    mdadm creates raid4/5 degraded with the last member as a spare and rebuilds it (mdadm(8), --force:
    "building the spare into a degraded array is in general faster than resyncing the parity"); other
    redundant levels resync.
    """
    if not level.redundant or assume_clean or build:
        return None
    if level.parity_disks == 1 and not force:
        return RECOVER
    return RESYNC


def create_sync_time(
    level: RaidLevel,
    members: Sequence[SyncMember],
    *,
    component_bytes: int,
    limits: SyncLimits,
    layout: str | None = None,
    array_bytes: int | None = None,
    assume_clean: bool = False,
    build: bool = False,
    ceilings: MdCeilings | None = None,
) -> SyncTime | None:
    """The initial sync of a new array (None when mdadm starts none): the pass create_sync_action names,
    over ``members`` in the order mdadm gets them."""
    action = create_sync_action(level, assume_clean=assume_clean, build=build)
    if action is None:
        return None
    if action == RECOVER:
        return sync_time(
            RECOVER,
            level,
            members[:-1],
            targets=members[-1:],
            component_bytes=component_bytes,
            limits=limits,
            layout=layout,
            array_bytes=array_bytes,
            ceilings=ceilings,
        )
    return sync_time(
        RESYNC,
        level,
        members,
        component_bytes=component_bytes,
        limits=limits,
        layout=layout,
        array_bytes=array_bytes,
        ceilings=ceilings,
    )
