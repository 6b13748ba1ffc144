"""How long a pass over a real or planned array takes: its geometry, md's limits read from the system and its
members' stored figures (bench/member_figures) through the sync-time model (plan/sync_time)."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.bench.member_figures import sequential_figures
from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.inventory import Inventory
from mdtui.plan.create import CreatePlan
from mdtui.plan.levels import RaidLevel, running_level
from mdtui.plan.md_model import MdCeilings
from mdtui.plan.sync_time import (
    CHECK,
    RECOVER,
    REPAIR,
    RESHAPE,
    RESYNC,
    SyncLimits,
    SyncMember,
    SyncTime,
    create_sync_time,
    sync_time,
)
from mdtui.probe.root import SystemRoot
from mdtui.store.calibration import host_ceilings
from mdtui.store.records import RunRecord
from mdtui.tune.read import read_sync_limits


def array_level(array: MdArray) -> tuple[RaidLevel | None, str | None]:
    """The array's level object and its layout in the level's spelling (raid10 "near=2" → "n2")."""
    return running_level(array.level, array.layout)


def sync_member(runs: Sequence[RunRecord], inventory: Inventory | None, name: str) -> SyncMember:
    """A member (or disk) by kernel name, with its sequential figures from the store or its link."""
    disk = inventory.disk_of(name) if inventory is not None else None
    return SyncMember(name, sequential_figures(runs, name, disk))


def _in_sync(array: MdArray) -> list[ArrayMember]:
    """Members md reads from: active, not failed, in slot order (the array's own sort)."""
    return [m for m in array.members if m.slot is not None and not m.faulty and "in_sync" in m.states]


def _being_written(array: MdArray) -> list[ArrayMember]:
    """Members a running rebuild writes: a slot but not in sync yet, or a --replace's replacement."""
    return [
        m
        for m in array.members
        if not m.faulty and ("replacement" in m.states or (m.slot is not None and "in_sync" not in m.states))
    ]


def _context(root: SystemRoot, array: MdArray) -> tuple[RaidLevel, str | None, int, SyncLimits] | None:
    level, layout = array_level(array)
    if level is None or not level.redundant or not array.component_bytes:
        return None
    return level, layout, array.component_bytes, read_sync_limits(root, array.name)


def pass_time(
    root: SystemRoot,
    array: MdArray,
    inventory: Inventory | None,
    runs: Sequence[RunRecord],
    action: str,
    *,
    targets: Sequence[str] = (),
    dirty_fraction: float | None = None,
) -> SyncTime | None:
    """How long ``action`` (resync, recover, check, repair) takes on ``array`` now; ``targets`` the members or
    disks a rebuild writes. None when the array has no redundancy or its geometry cannot be read."""
    context = _context(root, array)
    if context is None or action == RESHAPE:
        return None
    level, layout, component, limits = context
    sources = [sync_member(runs, inventory, m.name) for m in _in_sync(array)]
    written = [sync_member(runs, inventory, name) for name in targets]
    if not sources or (action == RECOVER and not written):
        return None
    md = host_ceilings().for_level(level.name)
    return sync_time(
        action,
        level,
        sources,
        targets=written,
        component_bytes=component,
        limits=limits,
        layout=layout,
        array_bytes=array.size_bytes,
        dirty_fraction=dirty_fraction,
        ceilings=md,
    )


def running_pass_time(
    root: SystemRoot, array: MdArray, inventory: Inventory | None, runs: Sequence[RunRecord]
) -> SyncTime | None:
    """The whole of the pass running now, predicted as if it started now (resync, rebuild, check, repair)."""
    if array.sync is None or array.sync.action not in (RESYNC, RECOVER, CHECK, REPAIR):
        return None
    targets = [m.name for m in _being_written(array)] if array.sync.action == RECOVER else []
    return pass_time(root, array, inventory, runs, array.sync.action, targets=targets)


def rebuild_if_one_fails(
    root: SystemRoot, array: MdArray, inventory: Inventory | None, runs: Sequence[RunRecord]
) -> tuple[SyncTime, str] | None:
    """How long a rebuild takes if a member fails now and a disk like it replaces it: the longest over the
    members (which one fails is not known), and the member that gives it."""
    context = _context(root, array)
    if context is None:
        return None
    level, layout, component, limits = context
    active = _in_sync(array)
    if len(active) < 2:
        return None
    members = {m.name: sync_member(runs, inventory, m.name) for m in active}
    md = host_ceilings().for_level(level.name)
    worst: tuple[SyncTime, str] | None = None
    for failed in members.values():
        replacement = SyncMember(f"a disk like {failed.name}", failed.figures)
        answer = sync_time(
            RECOVER,
            level,
            [m for name, m in members.items() if name != failed.name],
            targets=[replacement],
            component_bytes=component,
            limits=limits,
            layout=layout,
            array_bytes=array.size_bytes,
            ceilings=md,
        )
        if worst is None or _longer(answer, worst[0]):
            worst = (answer, failed.name)
    return worst


def _longer(answer: SyncTime, than: SyncTime) -> bool:
    """An unknown time counts as longer: the answer must not hide a member without figures."""
    if answer.predicted_seconds is None:
        return than.predicted_seconds is not None
    return than.predicted_seconds is not None and answer.predicted_seconds > than.predicted_seconds


def scrub_time(
    root: SystemRoot, array: MdArray, inventory: Inventory | None, runs: Sequence[RunRecord], *, repair: bool = False
) -> SyncTime | None:
    """How long a check (or repair) pass over ``array`` takes."""
    return pass_time(root, array, inventory, runs, REPAIR if repair else CHECK)


def create_time(root: SystemRoot, plan: CreatePlan, runs: Sequence[RunRecord]) -> SyncTime | None:
    """How long the initial resync of a planned array takes (None when mdadm starts none, or the size is
    unknown). The system's limits apply: the array has none of its own yet."""
    if plan.usable_bytes is None or not plan.data_disks:
        return None
    component = int(plan.usable_bytes / plan.data_disks)
    members = [SyncMember(d.name, sequential_figures(runs, d.name, d)) for d in plan.request.members]
    return create_sync_time(
        plan.level,
        members,
        component_bytes=component,
        limits=read_sync_limits(root),
        layout=plan.layout,
        array_bytes=plan.usable_bytes,
        assume_clean=plan.request.assume_clean,
        build=plan.request.build,
        ceilings=host_ceilings().for_level(plan.level.name),
    )


def grow_inputs(
    root: SystemRoot, array: MdArray, inventory: Inventory | None, runs: Sequence[RunRecord], added: Sequence[str] = ()
) -> tuple[dict[str, SyncMember], SyncLimits, MdCeilings]:
    """What the sync-time model needs to time a grow of ``array`` (plan/grow): every member's and every added
    disk's figures by name, md's limits for the array, md's ceilings for its level."""
    names = [m.name for m in array.members if not m.faulty] + list(added)
    members = {name: sync_member(runs, inventory, name) for name in dict.fromkeys(names)}
    level, _layout = array_level(array)
    return members, read_sync_limits(root, array.name), host_ceilings().for_level(level.name if level else "")
