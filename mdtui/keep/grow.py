"""Grow an array that holds data, on the live system: plan it from what keep/grow_facts reads, check it all again
right before running, run the steps (every command logged, the reshape journalled with its backup file before it
starts), follow md's pass, then grow what sits on the array and bring mdadm.conf and the initramfs up to date
through persist's path. After a crash, keep/grow_resume takes it up again."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError, SafetyError
from mdtui.execute.mdadm import array_uuid, find_array, recheck_disk
from mdtui.execute.state import ReshapeEntry, ReshapeJournal
from mdtui.format import plural
from mdtui.keep.grow_facts import backup_place, default_backup_path, gather, member_nodes
from mdtui.keep.persist import PersistPlan, detail_brief, plan_persist
from mdtui.model.array import MdArray
from mdtui.plan.grow import GrowPlan, plan_grow
from mdtui.plan.grow_backup import place_problems
from mdtui.plan.grow_contents import shrink_problems
from mdtui.plan.grow_request import GrowRequest
from mdtui.plan.grow_shape import current_geometry
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.request import member_path
from mdtui.plan.sync_inputs import SyncLimits, SyncMember
from mdtui.plan.sync_time import RESHAPE
from mdtui.probe.blocktree import BlockTree
from mdtui.probe.contents import read_contents
from mdtui.probe.disks import DiskProber
from mdtui.probe.root import SystemRoot
from mdtui.state_dir import StateDir, same_uuid

# How long md may take to show the pass after the command that starts it.
PASS_START_WAIT_S = 10.0
# After md's reshape ends, mdadm's watcher still changes the level (raid5 → raid6 through raid6's "-6" layout,
# raid4 → raid0): how long to wait for the array to have the shape asked.
SHAPE_WAIT_S = 120.0
# mdadm --grow returns once the reshape runs; it writes and syncs the backup file's first section first.
GROW_TIMEOUT_S = 600.0
# A pass whose position has not moved for this long is stalled: following stops and says so (md keeps it; in
# the lab a chunk change once stopped at 7.7% for good on Linux 6.1). Minutes, so a pass md throttles to its
# minimum under heavy I/O still moves within it.
STALL_S = 180.0
# resize2fs of a large filesystem, e2fsck -f before it: minutes on real disks.
FOLLOWUP_TIMEOUT_S = 6 * 3600.0


def plan_grow_now(
    system: SystemRoot,
    device: str,
    req: GrowRequest,
    sync_members: Mapping[str, SyncMember],
    *,
    limits: SyncLimits,
    ceilings: MdCeilings | None = None,
) -> GrowPlan:
    """Plan ``req`` on ``device`` as the system is now (PlanRejected names every problem)."""
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    facts, default = gather(system, array, req, sync_members, limits=limits, ceilings=ceilings)
    return plan_grow(facts, req, default_backup=default)


# --- right before running ------------------------------------------------------------------------------------


def recheck(plan: GrowPlan, system: SystemRoot) -> None:
    """Right before running: the same array (UUID), still in the planned shape and state, every new disk the
    same disk and free by every in-use rule, the backup file's place still fit, a shrink still above what sits
    on the array."""
    problems: list[str] = []
    array = find_array(system, plan.array)
    if array is None:
        raise SafetyError(f"{plan.array} is gone; nothing was run")
    if plan.uuid is not None and not same_uuid(array_uuid(plan.array) or array.uuid, plan.uuid):
        problems.append(f"{plan.array} is a different array now (UUID changed); plan again")
    now = current_geometry(array)
    if now != plan.before:
        problems.append(
            f"{plan.array} changed shape since the plan ({now.describe() if now else 'unknown'}); plan again"
        )
    if array.degraded:
        problems.append(f"{plan.array} is degraded now (missing {plural(array.degraded, 'member')}); repair it first")
    if array.sync is not None:
        problems.append(f"a {array.sync.action} of {plan.array} started since the plan; let it finish")
    prober = DiskProber(system)
    candidates = set(prober.candidates())
    for disk in plan.new_disks:
        problems += recheck_disk(system, prober, candidates, disk)[1]
    if plan.backup_file is not None and plan.backup_bytes is not None:
        own = plan.backup_file == default_backup_path(array.name, plan.uuid)
        tree = BlockTree.read(system)
        place = backup_place(system, plan.backup_file, chosen=not own, tree=tree)
        under = member_nodes(array, GrowRequest(add=plan.new_disks), tree)
        problems += place_problems(place, array, sorted(under), plan.backup_bytes)
    if plan.shrinks and plan.size_after_bytes is not None:
        problems += shrink_problems(read_contents(system, array.name), plan.array, plan.size_after_bytes)
    if problems:
        raise SafetyError(f"refusing to grow {plan.array}:\n  - " + "\n  - ".join(problems))


# --- running -------------------------------------------------------------------------------------------------


def execute_grow(
    plan: GrowPlan,
    *,
    confirmed: str | None,
    system: SystemRoot | None = None,
    log: ActionLog | None = None,
    journal: ReshapeJournal | None = None,
) -> tuple[CommandResult, ...]:
    """Run a confirmed plan: checked again, the reshape journalled (with its backup file) before it starts, each
    step logged. mdadm --grow returns once md runs the pass; follow it with follow_grow."""
    require_confirmed(confirmed, plan.confirmation, f"the grow of {plan.array}")
    system = system or SystemRoot("/")
    log = log or ActionLog()
    journal = journal or ReshapeJournal()
    recheck(plan, system)
    if plan.backup_file is not None and plan.backup_file == default_backup_path(Path(plan.array).name, plan.uuid):
        StateDir(Path(plan.backup_file).parent).make()  # mdtui's own directory, 0700
    if plan.pass_action is not None and plan.uuid is not None:
        journal.add(_entry(plan, system))
    results: list[CommandResult] = []
    shrunk_first = False
    try:
        for step in plan.steps:
            grow = step.kind == "grow"
            result = log.run(
                step.argv,
                f"grow {plan.array}: {step.description}",
                timeout_s=GROW_TIMEOUT_S if grow else 120,
                leaves_child=grow,
            )
            results.append(result)
            shrunk_first = shrunk_first or step.kind == "array-size"
    except MdtuiError as exc:
        array = find_array(system, plan.array)
        if plan.uuid is not None and (array is None or array.sync is None or array.sync.action != RESHAPE):
            journal.remove(plan.uuid)  # nothing is reshaping: there is nothing to resume
        if shrunk_first:
            raise MdtuiError(
                f"{exc}\n{plan.array} was made {plan.size_after_bytes:,} bytes first and stays so; nothing else "
                f"changed. `mdadm --grow {plan.array} --array-size=max` gives it its whole size back"
            ) from None
        raise
    return tuple(results)


def _entry(plan: GrowPlan, system: SystemRoot) -> ReshapeEntry:
    """The journal entry: the target shape, the backup file, every member by its stable path (a kernel name
    may be another disk's after a reboot)."""
    assert plan.uuid is not None
    after = plan.after
    array = find_array(system, plan.array)
    prober = DiskProber(system)
    paths = [member_path(prober.probe(m.name)) for m in (array.members if array is not None else ()) if not m.faulty]
    return ReshapeEntry(
        device=plan.array,
        uuid=plan.uuid,
        target_level=after.level.name,
        target_members=after.members,
        target_chunk_bytes=after.chunk_bytes,
        target_layout=after.layout,
        target_component_bytes=after.component_bytes,
        backup_file=plan.backup_file,
        member_paths=tuple(dict.fromkeys([*paths, *(member_path(d) for d in plan.new_disks)])),
        started_at=time.time(),
        predicted_seconds=plan.predicted_seconds,
        bound=plan.bound,
    )


@dataclass(frozen=True)
class GrowOutcome:
    array: MdArray | None  # as it is at the end
    pass_seconds: float | None  # from the first sight of md's pass to its end (None: no pass seen)
    reached: bool  # the array has the planned shape
    actions: tuple[str, ...]  # the passes seen
    stalled: str | None = None  # why following stopped before the pass ended: md's position did not move


def has_shape(
    array: MdArray | None, level: str, members: int, chunk_bytes: int | None, component_bytes: int, layout: str | None
) -> bool:
    """Whether the array has this shape (a layout None: any), as a grow and a resumed reshape wait for it."""
    now = current_geometry(array) if array is not None else None
    return (
        now is not None
        and (now.level.name, now.members, now.chunk_bytes, now.component_bytes)
        == (level, members, chunk_bytes, component_bytes)
        and (layout is None or now.layout == layout)
    )


def reached(array: MdArray | None, plan: GrowPlan) -> bool:
    """Whether the array has the shape the plan asked for."""
    after = plan.after
    return has_shape(array, after.level.name, after.members, after.chunk_bytes, after.component_bytes, after.layout)


def follow_grow(
    plan: GrowPlan,
    *,
    system: SystemRoot | None = None,
    on_update: Callable[[MdArray], None] | None = None,
    poll_s: float = 1.0,
    journal: ReshapeJournal | None = None,
    stall_s: float = STALL_S,
) -> GrowOutcome:
    """Follow md's pass to its end and wait for the planned shape; the journal entry goes once it is reached.
    A pass whose position stays put for ``stall_s`` is reported as stalled, and left to md."""
    system = system or SystemRoot("/")
    journal = journal or ReshapeJournal()
    actions: list[str] = []
    first_seen: float | None = None
    position: tuple[int | None, float] = (None, time.monotonic())
    deadline = time.monotonic() + PASS_START_WAIT_S
    while plan.pass_action is not None and time.monotonic() < deadline:
        array = find_array(system, plan.array)
        if array is None or array.sync is not None or reached(array, plan):
            break
        time.sleep(0.2)
    while True:
        array = find_array(system, plan.array)
        if array is not None and on_update is not None:
            on_update(array)
        if array is None or array.sync is None:
            break
        now = time.monotonic()
        if first_seen is None:
            first_seen = now
        if array.sync.action not in actions:
            actions.append(array.sync.action)
        if array.sync.done_sectors != position[0]:
            position = (array.sync.done_sectors, now)
        elif now - position[1] >= stall_s:
            where = f" at {array.sync.fraction * 100:.1f}%" if array.sync.fraction is not None else ""
            why = (
                f"md's {array.sync.action} of {plan.array} has not moved for {now - position[1]:.0f} s{where}: "
                f"md keeps it; the kernel log (dmesg) and /sys/block/{Path(plan.array).name}/md/sync_max say why"
            )
            return GrowOutcome(array, None, False, tuple(actions), why)
        time.sleep(poll_s)
    ended = time.monotonic()
    deadline = ended + SHAPE_WAIT_S
    while array is not None and not reached(array, plan) and time.monotonic() < deadline:
        time.sleep(0.5)
        array = find_array(system, plan.array)
        if array is not None and array.sync is not None:
            deadline = time.monotonic() + SHAPE_WAIT_S  # another pass (md rebuilds Q after a takeover)
    done = reached(array, plan)
    if done and plan.uuid is not None:
        journal.remove(plan.uuid)
    return GrowOutcome(array, ended - first_seen if first_seen is not None else None, done, tuple(actions))


def run_followup(plan: GrowPlan, *, confirmed: str | None, log: ActionLog | None = None) -> tuple[CommandResult, ...]:
    """Grow what sits on the array (resize2fs, xfs_growfs, pvresize), each command logged; stops at a failure."""
    require_confirmed(confirmed, plan.confirmation, f"growing what sits on {plan.array}")
    if plan.followup is None or not plan.followup.argvs:
        return ()
    log = log or ActionLog()
    return tuple(
        log.run(argv, f"grow {plan.array}: {plan.followup.description}", timeout_s=FOLLOWUP_TIMEOUT_S)
        for argv in plan.followup.argvs
    )


# --- the next boot -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BootCheck:
    """mdadm.conf and the initramfs after a grow: the persist plan that brings a stale line up to date, and the
    words for what is stale."""

    persist: PersistPlan | None  # a stale ARRAY line to replace (persist's guarded path), or None
    lines: tuple[str, ...]


def boot_check(system: SystemRoot, device: str, *, conf_path: str | None = None) -> BootCheck:
    """Whether mdadm.conf's ARRAY line for the grown array (and the initramfs's copy) still says what the
    array now is."""
    from mdtui.keep.boot import read_boot_state

    try:
        brief = detail_brief(device)
        plan = plan_persist(device, root=system, conf_path=conf_path, brief=brief)
    except MdtuiError as exc:
        return BootCheck(None, (f"mdadm.conf not checked: {exc}",))
    if plan.edit.replaced is not None:
        return BootCheck(
            plan,
            (
                f"{plan.edit.path} describes {device} as it was: {plan.edit.replaced.strip()}",
                f"  now: {brief}",
                f"  the initramfs ({' '.join(plan.initramfs_argv)}) has the old line too",
            ),
        )
    if plan.edit.added is not None:
        return BootCheck(
            None, (f"{device} is not in {plan.edit.path}: `mdtui persist {device}` makes it come back after a reboot",)
        )
    array = find_array(system, device)
    state = read_boot_state(system, arrays=[array] if array is not None else [], conf_path=conf_path)
    boot = state.array(Path(device).name)
    line = boot.initramfs_line if boot is not None else None
    if line is not None and " ".join(line.text.split()) != brief:
        return BootCheck(
            plan,
            (f"the initramfs's copy of mdadm.conf describes {device} as it was: {line.text.strip()}",),
        )
    return BootCheck(None, (f"{plan.edit.path}'s ARRAY line for {device} still says what it is: nothing is stale",))


__all__ = [
    "BootCheck",
    "GrowOutcome",
    "boot_check",
    "execute_grow",
    "follow_grow",
    "plan_grow_now",
    "recheck",
    "run_followup",
]
