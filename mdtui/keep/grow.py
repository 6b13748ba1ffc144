"""Grow an array that holds data, on the live system: gather what plan/grow needs (each member's room from mdadm
--examine, what sits on the array, where a backup file would go), check it all again right before running,
run the steps (every command logged, the reshape journalled with its backup file before it starts), follow md's
pass, then grow what sits on the array and bring mdadm.conf and the initramfs up to date through persist's
path. After a crash: what an interrupted reshape needs, and the steps that resume it."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mdtui.ascii_numbers import parse_int
from mdtui.command import CommandResult, run_command
from mdtui.confirmation import require_confirmed
from mdtui.errors import CommandError, MdtuiError, SafetyError
from mdtui.format import plural
from mdtui.keep.persist import PersistPlan, detail_brief, plan_persist
from mdtui.model.array import MdArray
from mdtui.plan.describe import step_lines
from mdtui.plan.grow import (
    GrowFacts,
    GrowPlan,
    GrowRequest,
    MemberSpace,
    PlaceFacts,
    current_geometry,
    place_problems,
    plan_grow,
    shrink_problems,
)
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.request import member_path
from mdtui.plan.sync_time import RESHAPE, SyncLimits, SyncMember
from mdtui.probe.blocktree import BlockTree
from mdtui.probe.contents import read_contents
from mdtui.probe.disks import DiskProber
from mdtui.probe.mounts import read_mounts
from mdtui.probe.root import SystemRoot
from mdtui.run.mdadm import array_uuid, find_array, recheck_disk, resolve_member
from mdtui.run.state import ActionLog, ReshapeEntry, ReshapeJournal
from mdtui.safefile import StateDir, same_uuid

# Where mdtui puts a backup file unless told (--backup-file): its own state directory, checked like any place.
BACKUP_DIR = "grow"
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

_EXAMINE_OFFSET_RE = re.compile(r"^\s*Data Offset : ([0-9]{1,20}) sectors", re.M | re.A)
_EXAMINE_UNUSED_RE = re.compile(
    r"^\s*Unused Space : before=([0-9]{1,20}) sectors, after=([0-9]{1,20}) sectors", re.M | re.A
)


# --- facts ----------------------------------------------------------------------------------------------------


def parse_examine(text: str) -> tuple[int | None, int | None, int | None]:
    """(data offset, unused sectors before the data, after it) from `mdadm --examine`'s report of a 1.x member."""
    offset = _EXAMINE_OFFSET_RE.search(text)
    unused = _EXAMINE_UNUSED_RE.search(text)
    return (
        parse_int(offset.group(1)) if offset else None,
        parse_int(unused.group(1)) if unused else None,
        parse_int(unused.group(2)) if unused else None,
    )


def member_spaces(system: SystemRoot, array: MdArray) -> tuple[MemberSpace, ...]:
    """Each active member's room: data offset from sysfs, the unused space around it from `mdadm --examine`
    (live and root only; None otherwise), the member device's size."""
    spaces = []
    examine = system.is_live and os.geteuid() == 0
    for member in array.members:
        if member.faulty or member.spare:
            continue
        md = f"/sys/block/{array.name}/md/dev-{member.name}"
        offset = system.read_int(f"{md}/offset")
        sectors = system.read_int(f"/sys/class/block/{member.name}/size") or system.read_int(
            f"/sys/block/{member.name}/size"
        )
        before = after = None
        if examine:
            try:
                result = run_command(["mdadm", "--examine", f"/dev/{member.name}"], timeout_s=30)
            except MdtuiError:
                result = None
            if result is not None and result.ok:
                examined_offset, before, after = parse_examine(result.stdout)
                offset = offset if offset is not None else examined_offset
        spaces.append(MemberSpace(member.name, offset, before, after, sectors * 512 if sectors else None))
    return tuple(spaces)


def default_backup_path(name: str, uuid: str | None) -> str:
    """Where mdtui puts a backup file unless told: its state directory, named after the array and its UUID."""
    from mdtui.probe.owner import state_dir

    tag = re.sub(r"[^0-9a-f]", "", (uuid or "").lower())[:8] or "nouuid"
    return str(state_dir() / BACKUP_DIR / f"{name}-{tag}.backup")


def backup_place(system: SystemRoot, path: str, *, chosen: bool, tree: BlockTree | None = None) -> PlaceFacts:
    """What is true of ``path`` as a place for a backup file, right now. Its directory is resolved once (the
    argv gets the resolved path); mdtui's own backup directory is checked through its nearest existing parent,
    since mdtui makes it (0700) right before running."""
    absolute = os.path.abspath(path)
    directory = os.path.dirname(absolute)
    own = not chosen
    probe = directory
    while own and not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        return PlaceFacts(absolute, directory_exists=False, chosen_by_user=chosen)
    resolved_dir = os.path.realpath(probe)
    resolved = os.path.join(
        os.path.realpath(directory) if probe == directory else directory, os.path.basename(absolute)
    )
    info = os.stat(resolved_dir)
    exists = os.path.lexists(resolved)
    try:
        stats = os.statvfs(resolved_dir)
        free = stats.f_bavail * stats.f_frsize
    except OSError:
        free = None
    majmin = f"{os.major(info.st_dev)}:{os.minor(info.st_dev)}"
    mounts = [m for m in read_mounts(system) if m.major_minor == majmin]
    inside = [
        m for m in mounts if resolved_dir == m.mount_point or resolved_dir.startswith(m.mount_point.rstrip("/") + "/")
    ]
    mount = max(inside or mounts, key=lambda m: len(m.mount_point), default=None)
    tree = tree or BlockTree.read(system)
    node = tree.node_by_major_minor(majmin)
    nodes = frozenset(tree.nodes_under(node)) if node is not None else frozenset()
    options = _mount_options(system, mount.mount_point) if mount is not None else ()
    return PlaceFacts(
        path=resolved,
        directory_exists=True,
        exists=exists,
        fs_type=mount.fs_type if mount is not None else None,
        mount_point=mount.mount_point if mount is not None else None,
        read_only="ro" in options,
        device_nodes=nodes,
        directory_owner_uid=info.st_uid,
        directory_mode=info.st_mode,
        uid=os.geteuid(),
        free_bytes=free,
        chosen_by_user=chosen,
    )


def _mount_options(system: SystemRoot, mount_point: str) -> tuple[str, ...]:
    text = system.read_table("/proc/self/mountinfo") or ""
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[4] == mount_point:
            return tuple(fields[5].split(","))
    return ()


def reshape_position(system: SystemRoot, name: str) -> str | None:
    """md/reshape_position: "none", or where a pending or running reshape stands (array sectors)."""
    return system.read_text(f"/sys/block/{name}/md/reshape_position")


def _member_nodes(array: MdArray, req: GrowRequest, tree: BlockTree) -> frozenset[str]:
    """The members and the disks added, with every node under them (a partition's disk): where a backup file
    must not be."""
    nodes: set[str] = set()
    for name in [*(m.name for m in array.members), *(d.name for d in req.add)]:
        nodes |= tree.nodes_under(name)
    return frozenset(nodes)


def gather(
    system: SystemRoot,
    array: MdArray,
    req: GrowRequest,
    sync_members: Mapping[str, SyncMember],
    *,
    limits: SyncLimits,
    ceilings: MdCeilings | None = None,
) -> tuple[GrowFacts, str]:
    """Every fact the plan needs, and the default backup file path."""
    uuid = (array_uuid(array.dev_path) if system.is_live else None) or array.uuid
    tree = BlockTree.read(system)
    default = default_backup_path(array.name, uuid)
    where = req.backup_file or default
    chosen = req.backup_file is not None
    # A captured tree's backup place cannot be checked: the plan names it, the live run checks it.
    place = (
        backup_place(system, where, chosen=chosen, tree=tree)
        if system.is_live
        else PlaceFacts(where, chosen_by_user=chosen)
    )
    facts = GrowFacts(
        array=array,
        uuid=uuid,
        spaces=member_spaces(system, array),
        contents=read_contents(system, array.name),
        place=place,
        reshape_position=reshape_position(system, array.name),
        sync_members=sync_members,
        limits=limits,
        ceilings=ceilings,
        member_nodes=_member_nodes(array, req, tree),
    )
    return facts, default


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
        under = _member_nodes(array, GrowRequest(add=plan.new_disks), tree)
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


def reached(array: MdArray | None, plan: GrowPlan) -> bool:
    """Whether the array has the shape the plan asked for."""
    if array is None:
        return False
    now = current_geometry(array)
    return (
        now is not None
        and (now.level, now.members, now.chunk_bytes, now.component_bytes)
        == (
            plan.after.level,
            plan.after.members,
            plan.after.chunk_bytes,
            plan.after.component_bytes,
        )
        and (now.layout == plan.after.layout or plan.after.layout is None)
    )


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
    array = find_array(system, plan.array)
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


# --- an interrupted reshape -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReshapeState:
    """A reshape mdtui started (its journal) or md reports, as it stands now."""

    device: str  # the device the grow was planned on (/dev/md0)
    state: str  # running, pending, not assembled, finished
    needs: str  # what it needs, in words
    backup_file: str | None
    fraction: float | None = None
    entry: ReshapeEntry | None = None
    holder: str | None = None  # an inactive array holding the members (/dev/md127)

    @property
    def name(self) -> str:
        return Path(self.device).name


def reshape_line(state: ReshapeState) -> str:
    """One line for scan and the app: which array, how far, what it goes to, what it needs."""
    done = f" {state.fraction * 100:.1f}%" if state.fraction is not None and state.state == "running" else ""
    entry = state.entry
    target = ""
    if entry is not None:
        chunk = f", {entry.target_chunk_bytes // 1024} KiB chunk" if entry.target_chunk_bytes else ""
        target = f" to {entry.target_level}, {plural(entry.target_members, 'member')}{chunk}"
    backup = f"; backup file {state.backup_file}" if state.backup_file and state.state != "finished" else ""
    return f"reshape of {state.device}{target}: {state.state}{done}{backup}; needs {state.needs}"


def _members_of(system: SystemRoot, entry: ReshapeEntry) -> set[str]:
    return {name for path in entry.member_paths if (name := resolve_member(system, path)) is not None}


def reshape_states(
    system: SystemRoot, arrays: Sequence[MdArray], journal: ReshapeJournal | None = None
) -> list[ReshapeState]:
    """Every reshape running, pending or interrupted: journal entries matched to the arrays by UUID (an inactive
    array by its members), and any array md reports reshaping that mdtui did not start."""
    journal = journal or ReshapeJournal()
    states: list[ReshapeState] = []
    seen: set[str] = set()
    for entry in journal.entries():
        array = next((a for a in arrays if same_uuid(a.uuid, entry.uuid)), None)
        if array is None:
            members = _members_of(system, entry)
            array = next((a for a in arrays if members and members & {m.name for m in a.members}), None)
        states.append(_state(system, entry, array))
        if array is not None:
            seen.add(array.name)
    for array in arrays:
        if array.name in seen:
            continue
        position = reshape_position(system, array.name)
        if array.sync is not None and array.sync.action == RESHAPE:
            states.append(
                ReshapeState(array.dev_path, "running", "nothing: md is reshaping it", None, array.sync.fraction)
            )
        elif position not in (None, "none") and array.state not in ("inactive", "clear"):
            states.append(_pending(array, None, None))
    return states


def _backup_words(backup: str | None) -> str:
    return f" with its backup file {backup}" if backup else ""


def _state(system: SystemRoot, entry: ReshapeEntry, array: MdArray | None) -> ReshapeState:
    backup = entry.backup_file
    if array is None:
        return ReshapeState(
            entry.device,
            "not assembled",
            f"assemble it{_backup_words(backup)}: `mdtui grow {entry.device} --resume`",
            backup,
            entry=entry,
        )
    if array.state in ("inactive", "clear"):
        return ReshapeState(
            entry.device,
            "not assembled",
            f"{array.dev_path} holds its members inactive (mdadm --incremental does not start an interrupted "
            f"reshape{' that has a backup file' if backup else ''}): `mdtui grow {entry.device} --resume` stops it "
            f"and assembles{_backup_words(backup)}",
            backup,
            entry=entry,
            holder=array.dev_path,
        )
    if array.sync is not None and array.sync.action == RESHAPE:
        keep = f"; keep {backup} until it ends" if backup else ""
        return ReshapeState(
            entry.device, "running", f"nothing: md is reshaping it{keep}", backup, array.sync.fraction, entry
        )
    position = reshape_position(system, array.name)
    if position not in (None, "none"):
        return _pending(array, entry, backup)
    return ReshapeState(entry.device, "finished", "nothing: it has its new shape", backup, 1.0, entry)


def _pending(array: MdArray, entry: ReshapeEntry | None, backup: str | None) -> ReshapeState:
    if array.state == "auto-read-only":
        needs = f"its first write, or `mdtui grow {array.dev_path} --resume` (mdadm --readwrite)"
    else:
        needs = f"`mdtui grow {array.dev_path} --resume` (mdadm --grow --continue{_backup_words(backup)})"
    return ReshapeState(array.dev_path, "pending", needs, backup, entry=entry)


@dataclass(frozen=True)
class ResumeStep:
    argv: tuple[str, ...]
    description: str
    leaves_child: bool = False


@dataclass(frozen=True)
class ResumePlan:
    device: str
    state: ReshapeState
    steps: tuple[ResumeStep, ...]

    @property
    def confirmation(self) -> str:
        """What the user types (or --yes stands for) to resume the reshape: the array's name."""
        return self.device.removeprefix("/dev/")


def plan_resume(system: SystemRoot, device: str, journal: ReshapeJournal | None = None) -> ResumePlan:
    """The steps that resume an interrupted or pending reshape of ``device`` (its journal entry says where its
    members and backup file are)."""
    from mdtui.probe.arrays import read_arrays

    arrays = read_arrays(system)
    name = Path(device).name
    found = [
        s
        for s in reshape_states(system, arrays, journal)
        if s.name == name or (s.holder and Path(s.holder).name == name)
    ]
    if not found:
        raise MdtuiError(f"no reshape of {device} is pending: nothing to resume")
    state = found[0]
    steps: list[ResumeStep] = []
    backup = [f"--backup-file={state.backup_file}"] if state.backup_file else []
    if state.state == "running":
        raise MdtuiError(f"{device} is reshaping now: nothing to resume (`mdtui grow {device} --follow` follows it)")
    if state.state == "finished":
        raise MdtuiError(f"{device} has its new shape: nothing to resume")
    if state.backup_file and not os.path.exists(state.backup_file):
        raise MdtuiError(
            f"the backup file {state.backup_file} is gone: md cannot restore the critical section without it "
            "(mdadm --assemble --invalid-backup can start the array without it, losing that section)"
        )
    if state.state == "pending":
        array = next(a for a in arrays if a.dev_path == state.device)
        if array.state == "auto-read-only":
            steps.append(
                ResumeStep(("mdadm", "--readwrite", array.dev_path), f"let md write {array.name}: the reshape goes on")
            )
        else:
            steps.append(
                ResumeStep(
                    ("mdadm", "--grow", "--continue", array.dev_path, *backup),
                    "let mdadm take the reshape up again",
                    leaves_child=True,
                )
            )
        return ResumePlan(state.device, state, tuple(steps))
    entry = state.entry
    assert entry is not None
    missing = [path for path in entry.member_paths if resolve_member(system, path) is None]
    if missing:
        raise MdtuiError(f"{', '.join(missing)} ({entry.device}'s) not there: plug it in, then resume")
    holder = next((a for a in arrays if state.holder and a.dev_path == state.holder), None)
    if holder is not None:
        steps.append(
            ResumeStep(("mdadm", "--stop", holder.dev_path), f"stop the inactive {holder.name} that holds the members")
        )
    steps.append(
        ResumeStep(
            ("mdadm", "--assemble", entry.device, f"--uuid={entry.uuid}", *backup, *entry.member_paths),
            f"assemble {Path(entry.device).name}"
            + (", restoring the critical section from the backup file" if backup else ""),
            leaves_child=bool(backup),
        )
    )
    return ResumePlan(entry.device, state, tuple(steps))


def _has_target(array: MdArray, entry: ReshapeEntry) -> bool:
    now = current_geometry(array)
    return now is not None and (now.level.name, now.members, now.chunk_bytes, now.component_bytes) == (
        entry.target_level,
        entry.target_members,
        entry.target_chunk_bytes,
        entry.target_component_bytes,
    )


def finish_resumed(system: SystemRoot, plan: ResumePlan, journal: ReshapeJournal | None = None) -> bool:
    """After a resumed reshape ended: whether the array has the shape its journal entry asked for (mdadm's watcher
    may still change the level); the entry goes once it has."""
    entry = plan.state.entry
    deadline = time.monotonic() + SHAPE_WAIT_S
    while True:
        array = find_array(system, plan.device)
        done = (
            array is not None
            and array.sync is None
            and reshape_position(system, array.name) in (None, "none")
            and (entry is None or _has_target(array, entry))
        )
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if done and entry is not None:
        (journal or ReshapeJournal()).remove(entry.uuid)
    return done


def describe_resume(plan: ResumePlan) -> list[str]:
    lines = [f"resume the reshape of {plan.device} ({plan.state.state}): {plan.state.needs}"]
    lines += step_lines((step.argv, step.description) for step in plan.steps)
    return lines


def execute_resume(
    plan: ResumePlan, *, confirmed: str | None, system: SystemRoot | None = None, log: ActionLog | None = None
) -> tuple[CommandResult, ...]:
    """Run the resume steps. mdadm --assemble may exit with an error after it started the array (mdadm 4.2
    crashed so in the lab): then the array reshaping again is what counts."""
    require_confirmed(confirmed, plan.confirmation, f"resuming the reshape of {plan.device}")
    system = system or SystemRoot("/")
    log = log or ActionLog()
    results = []
    for step in plan.steps:
        result = run_command(list(step.argv), timeout_s=GROW_TIMEOUT_S, leaves_child=step.leaves_child)
        log.record(result, f"resume {plan.device}: {step.description}")
        results.append(result)
        if not result.ok:
            array = find_array(system, plan.device)
            started = array is not None and array.state not in ("inactive", "clear")
            if not started or step is not plan.steps[-1]:
                raise CommandError(list(step.argv), result.returncode, result.stderr)
    return tuple(results)


__all__ = [
    "BootCheck",
    "GrowOutcome",
    "ReshapeState",
    "ResumePlan",
    "boot_check",
    "execute_grow",
    "execute_resume",
    "follow_grow",
    "gather",
    "plan_grow_now",
    "plan_resume",
    "recheck",
    "reshape_line",
    "reshape_states",
    "run_followup",
]
