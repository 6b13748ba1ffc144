"""Plan an `mdadm --grow` of an array that holds data: the steps in order, capacity and fault tolerance before,
during and after, and how long md's pass takes (plan/sync_time). The shape md reaches (grow_shape), the backup
file (grow_backup) and what sits on the array (grow_contents) are decided beside it. Pure: every fact comes in
(grow_request; keep/grow gathers them), one GrowPlan or a PlanRejected naming every problem comes out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.format import iec_bytes, plural
from mdtui.model.array import MdArray
from mdtui.model.contents import Contents
from mdtui.model.disk import Disk
from mdtui.plan.grow_backup import NO_BACKUP, choose_backup
from mdtui.plan.grow_contents import FollowUp, followup, shrink_problems
from mdtui.plan.grow_request import GrowFacts, GrowRequest, MemberSpace
from mdtui.plan.grow_shape import KIB, SECTOR, Geometry, Shape, current_geometry, reachable_shape
from mdtui.plan.levels import (
    RAID0,
    RAID5,
    RAID6,
    RAID10,
)
from mdtui.plan.rejected import PlanRejected
from mdtui.plan.request import member_path
from mdtui.plan.sync_inputs import GeometryChange, SyncMember
from mdtui.plan.sync_time import RECOVER, RESHAPE, RESYNC, SyncTime, reshape_time, sync_time

# Words for the lab's result on power cuts (docs/usage.md "Growing and reshaping"); said in every plan whose
# reshape keeps or lowers the member count.
SAME_SIZE_POWER_CUT = (
    "in mdtui's lab (Debian 12: Linux 6.1, mdadm 4.2) a power cut in the middle of a reshape that adds no "
    "member (level, chunk or layout change, or a shrink) lost data, with and without a backup file; one that "
    "adds members resumed intact. Keep a current backup of the data, and power (a UPS), until it ends"
)


@dataclass(frozen=True)
class GrowStep:
    argv: tuple[str, ...]
    description: str
    kind: str  # "add", "array-size", "grow", "level"


@dataclass(frozen=True)
class GrowPlan:
    """A checked grow: the argv of every step in order and what the array is before, during and after."""

    array: str  # /dev/md0
    uuid: str | None
    before: Geometry
    after: Geometry
    steps: tuple[GrowStep, ...]
    pass_action: str | None  # the pass md runs: reshape, resync (new space), recover (new mirror); None: instant
    size_before_bytes: int | None
    size_during_bytes: int | None
    size_after_bytes: int | None
    tolerance_before: int
    tolerance_during: int
    tolerance_after: int
    backup_file: str | None
    backup_reason: str
    backup_bytes: int | None
    new_disks: tuple[Disk, ...]
    time: SyncTime | None
    contents: Contents
    followup: FollowUp | None
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def confirmation(self) -> str:
        """What the user types (or --yes stands for) to grow the array, or what sits on it: the array's name."""
        return self.array.removeprefix("/dev/")

    @property
    def argvs(self) -> tuple[tuple[str, ...], ...]:
        return tuple(step.argv for step in self.steps)

    @property
    def predicted_seconds(self) -> float | None:
        return self.time.predicted_seconds if self.time is not None else None

    @property
    def bound(self) -> str:
        if self.time is not None:
            return self.time.bound
        return "instant: md moves no data" if self.pass_action is None else "not predicted"

    @property
    def shrinks(self) -> bool:
        return (
            self.size_after_bytes is not None
            and self.size_before_bytes is not None
            and self.size_after_bytes < self.size_before_bytes
        )

    @property
    def grows(self) -> bool:
        return (
            self.size_after_bytes is not None
            and self.size_before_bytes is not None
            and self.size_after_bytes > self.size_before_bytes
        )


# --- the plan ----------------------------------------------------------------------------------------------


def _state_problems(array: MdArray, reshape_position: str | None) -> list[str]:
    dev = array.dev_path
    problems = []
    if array.state in ("inactive", "clear") or array.level is None:
        problems.append(f"{dev} is not running ({array.state}): assemble it first")
        return problems
    if array.metadata in (None, "none"):
        problems.append(f"{dev} has no superblock (made with --build): md keeps no reshape position for it")
    elif array.metadata.startswith("external"):
        problems.append(f"{dev} has external metadata ({array.metadata}): mdtui does not grow container members")
    if array.state in ("read-only",):
        problems.append(f"{dev} is read-only: `mdadm --readwrite {dev}` first")
    if array.degraded:
        problems.append(
            f"{dev} is degraded (missing {plural(array.degraded, 'member')}): repair it first "
            f"(`mdtui repair {dev} --add DISK`); a reshape of a degraded array runs without redundancy"
        )
    if array.sync is not None:
        sync = array.sync
        done = f" ({sync.fraction * 100:.1f}%)" if sync.fraction is not None else f" ({sync.state})"
        if sync.action == "reshape":
            problems.append(f"{dev} is already reshaping{done}: let it finish (`mdtui grow {dev} --follow`)")
        else:
            problems.append(f"a {sync.action} of {dev} is running{done}: let it finish first")
    elif reshape_position not in (None, "none"):
        problems.append(
            f"{dev} has a reshape pending at {reshape_position}: resume it first (`mdtui grow {dev} --resume`)"
        )
    return problems


def _size_after(before: Geometry, req: GrowRequest, spaces: Sequence[MemberSpace]) -> tuple[int | None, list[str]]:
    """The component size after a --size change (max: what every member's device leaves after its data offset)."""
    if req.size_bytes is not None:
        size = req.size_bytes
        if before.chunk_bytes:
            size -= size % before.chunk_bytes
        if size <= 0:
            return None, ["--size leaves no room for data"]
        return size, []
    room = []
    for space in spaces:
        if space.device_bytes is None or space.data_offset_sectors is None:
            return None, [
                f"{space.name}'s size or data offset could not be read: mdtui cannot say what --size max gives"
            ]
        room.append(space.device_bytes - space.data_offset_sectors * SECTOR)
    if not room:
        return None, ["the members' sizes could not be read: mdtui cannot say what --size max gives"]
    size = min(room)
    if before.chunk_bytes:
        size -= size % before.chunk_bytes
    if size <= before.component_bytes:
        return None, [
            f"every member's data area is already as large as its disk allows ({iec_bytes(before.component_bytes)}): "
            "replace members by larger disks first (`mdtui repair ARRAY --replace MEMBER --with DISK`, one at a time)"
        ]
    return size, []


def plan_grow(facts: GrowFacts, req: GrowRequest, *, default_backup: str | None = None) -> GrowPlan:
    """Plan ``req`` on the array in ``facts``; raise PlanRejected naming every problem (each with a way forward).

    ``facts.place`` describes where a backup file would go: ``req.backup_file`` when given, else
    ``default_backup``; it is checked only when md needs the file.
    """
    array = facts.array
    dev = array.dev_path
    problems = _state_problems(array, facts.reshape_position)
    before = current_geometry(array)
    if before is None:
        problems.append(f"{dev}'s level or member size could not be read")
    if problems or before is None:
        raise PlanRejected(f"grow {dev}", problems)
    if not req.changes_geometry and not req.filesystem_only:
        raise PlanRejected(
            f"grow {dev}",
            [
                "say what to change: --add DISK, --raid-devices N, --level L, --chunk KIB, --layout L, --size max, "
                "or --filesystem"
            ],
        )
    member_names = [m.name for m in array.members if not m.faulty]
    for disk in req.add:
        problems += _new_disk_problems(array, disk, before, facts.spaces)
    spares = sum(1 for m in array.members if m.spare and not m.faulty)
    shape = Shape(before, False, None) if req.filesystem_only else reachable_shape(before, req, spares)
    problems += [p.replace("{array}", array.name) for p in shape.problems]
    after = shape.after
    if (req.size_max or req.size_bytes is not None) and not problems:
        component, size_problems = _size_after(before, req, facts.spaces)
        problems += size_problems
        if component is not None:
            after = Geometry(before.level, before.members, before.chunk_bytes, before.layout, component)
    if problems:
        raise PlanRejected(f"grow {dev}", problems)

    size_before = array.size_bytes if array.size_bytes is not None else before.usable_bytes
    size_after = after.usable_bytes if after != before else size_before
    shrinking = size_after < size_before
    grows = size_after > size_before
    warnings: list[str] = []
    notes: list[str] = []
    # What sits on the array: a shrink must not cut it; a grow leaves it to grow after.
    if shrinking:
        problems += shrink_problems(facts.contents, dev, size_after)
    # The backup file: only a restripe of a parity level or raid0 (through raid4) may need one.
    backup = NO_BACKUP
    if shape.restripe:
        backup = choose_backup(
            facts, req, before, after, spares=spares, member_names=member_names, default_backup=default_backup
        )
        problems += backup.problems
        if after.data_disks <= before.data_disks and not (after.level is RAID10 or before.level is RAID10):
            warnings.append(SAME_SIZE_POWER_CUT)
    if problems:
        raise PlanRejected(f"grow {dev}", problems)

    steps = _steps(dev, before, after, req, shape, backup.path, size_after if shrinking else None)
    tolerance_before = before.fault_tolerance
    tolerance_after = after.fault_tolerance
    tolerance_during = min(tolerance_before, tolerance_after)
    if before.level is RAID0 and after.level is not RAID0:
        tolerance_during = 0  # md takes it over as a degraded raid4/5/6 or raid10 and rebuilds the rest
    if after.level is RAID0 and tolerance_before:
        warnings.append(f"{dev} has no redundancy from the first step on: one failed member loses all its data")
    size_during = size_before
    if shrinking:
        size_during = size_after  # --array-size runs first
    elif shape.pass_action == RESYNC:
        size_during = size_after  # md exposes the new space at once and resyncs it
    # What sits on the array grows after a grow, or now when asked (--filesystem) and smaller than the array.
    contents = facts.contents
    smaller = contents.size_bytes is None or contents.size_bytes < size_after
    follow = followup(contents, dev) if grows or (req.filesystem_only and smaller) else None
    if req.filesystem_only and not smaller:
        notes.append(f"the {contents.kind} on {dev} already fills it ({iec_bytes(contents.size_bytes)})")
    if req.filesystem_only and contents.kind is None:
        notes.append(f"nothing recognisable sits on {dev}: nothing to grow")
    if grows and facts.contents.kind is None and facts.contents.read:
        notes.append(f"nothing recognisable sits on {dev}: nothing to grow after it")
    if not facts.contents.read and grows:
        notes.append(
            f"what sits on {dev} was not read ({facts.contents.size_problem or 'unknown'}): grow it yourself after"
        )
    if after.level is RAID0 and before.level is RAID10:
        notes.append("the members md drops stay behind with stale superblocks: wipe them before reusing them")
    if after.members < before.members and after.level is before.level:
        notes.append(
            f"the {plural(before.members - after.members, 'member')} md frees (the highest roles) stay as spares: "
            f"`mdtui repair {dev} --remove MEMBER` takes them out"
        )
    time = _time(facts, before, after, shape, req, backup.path is not None)
    return GrowPlan(
        array=dev,
        uuid=facts.uuid,
        before=before,
        after=after,
        steps=steps,
        pass_action=shape.pass_action,
        size_before_bytes=size_before,
        size_during_bytes=size_during,
        size_after_bytes=size_after,
        tolerance_before=tolerance_before,
        tolerance_during=tolerance_during,
        tolerance_after=tolerance_after,
        backup_file=backup.path,
        backup_reason=backup.reason,
        backup_bytes=backup.size_bytes,
        new_disks=tuple(req.add),
        time=time,
        contents=facts.contents,
        followup=follow,
        warnings=tuple(warnings),
        notes=tuple(notes),
    )


def _new_disk_problems(array: MdArray, disk: Disk, before: Geometry, spaces: Sequence[MemberSpace]) -> list[str]:
    """A disk to add must be free by every in-use rule and hold a member's data area."""
    problems = []
    if any(m.name == disk.name for m in array.members):
        problems.append(f"{disk.name} is already a member of {array.name}")
        return problems
    problems += disk.refusals()
    offsets = [s.data_offset_sectors for s in spaces if s.data_offset_sectors is not None]
    needed = before.component_bytes + (max(offsets) * SECTOR if offsets else 0)
    if disk.size_bytes is not None and disk.size_bytes < needed:
        problems.append(
            f"{disk.name} holds {iec_bytes(disk.size_bytes)}, less than a member of {array.name} needs "
            f"({iec_bytes(needed)} with its data offset)"
        )
    return problems


def _steps(
    dev: str,
    before: Geometry,
    after: Geometry,
    req: GrowRequest,
    shape: Shape,
    backup: str | None,
    shrink_to: int | None,
) -> tuple[GrowStep, ...]:
    steps: list[GrowStep] = []
    if req.filesystem_only:
        return ()
    if req.size_max or req.size_bytes is not None:
        if shrink_to is not None:
            steps.append(_array_size_step(dev, shrink_to))
        size = "max" if req.size_max else f"{after.component_bytes // KIB}K"
        verb = (
            "use all of each member"
            if req.size_max
            else f"make each member's data area {iec_bytes(after.component_bytes)}"
        )
        steps.append(GrowStep(("mdadm", "--grow", dev, f"--size={size}"), verb, "grow"))
        return tuple(steps)
    raid0_source = before.level is RAID0
    # Added disks join as spares first, except on a raid0 (it cannot hold spares): mdadm adds those itself in
    # the --grow command.
    if req.add and not raid0_source:
        for disk in req.add:
            steps.append(
                GrowStep(
                    ("mdadm", "--manage", dev, "--add", member_path(disk)),
                    f"add {disk.name} as a spare (overwritten)",
                    "add",
                )
            )
    if shrink_to is not None:
        steps.append(_array_size_step(dev, shrink_to))
    argv = ["mdadm", "--grow", dev]
    if after.level is not before.level:
        argv.append(f"--level={after.level.mdadm_level}")
    if after.members != before.members:
        argv.append(f"--raid-devices={after.members}")
    if req.chunk_kib is not None and after.chunk_bytes != before.chunk_bytes:
        argv.append(f"--chunk={req.chunk_kib}")
    # mdadm takes no --layout for raid4 (its parity is always last); a level change names the layout it ends in.
    named = req.layout is not None or after.level is not before.level
    if after.layout and after.level in (RAID5, RAID6, RAID10) and named:
        argv.append(f"--layout={after.layout}")
    if backup is not None:
        argv.append(f"--backup-file={backup}")
    if raid0_source and req.add:
        argv += ["--add", *(member_path(d) for d in req.add)]
    what = "reshape to " + after.describe() if shape.restripe else "change to " + after.describe()
    if shape.pass_action == RECOVER:
        what += " (md then rebuilds onto the new members)"
    steps.append(GrowStep(tuple(argv), what, "grow"))
    return tuple(steps)


def _array_size_step(dev: str, size: int) -> GrowStep:
    return GrowStep(
        ("mdadm", "--grow", dev, f"--array-size={size // KIB}K"),
        f"make {dev} {iec_bytes(size)} first (reversible: nothing is moved yet; its end becomes unreachable)",
        "array-size",
    )


def _time(
    facts: GrowFacts, before: Geometry, after: Geometry, shape: Shape, req: GrowRequest, backup: bool
) -> SyncTime | None:
    """How long md's pass takes, from the sync-time model (plan/sync_time)."""
    action = shape.pass_action
    if action is None:
        return None
    array = facts.array
    active = [m for m in array.members if m.slot is not None and not m.faulty and not m.spare]
    sources = [facts.sync_members.get(m.name, SyncMember(m.name, None)) for m in active]
    new = [facts.sync_members.get(d.name, SyncMember(d.name, None)) for d in req.add]
    spares = [
        facts.sync_members.get(m.name, SyncMember(m.name, None)) for m in array.members if m.spare and not m.faulty
    ]
    if action == RESHAPE:
        targets = (sources + new + spares)[: after.members]
        if len(sources) != before.members or len(targets) != after.members:
            return None
        change = GeometryChange(
            old_level=before.level,
            old_members=before.members,
            new_level=after.level,
            new_members=after.members,
            component_bytes=before.component_bytes,
            new_component_bytes=after.component_bytes,
            old_layout=before.layout,
            new_layout=after.layout,
            old_chunk_bytes=before.chunk_bytes,
            new_chunk_bytes=after.chunk_bytes,
            backup_file=backup,
        )
        return reshape_time(change, sources, targets, limits=facts.limits, ceilings=facts.ceilings)
    if action == RECOVER:
        targets = (new + spares)[: max(after.members - before.members, 1)]
        if not targets or not sources:
            return None
        level = after.level if after.level.redundant else before.level
        return sync_time(
            RECOVER,
            level,
            sources,
            targets=targets,
            component_bytes=after.component_bytes,
            limits=facts.limits,
            layout=after.layout,
            ceilings=facts.ceilings,
        )
    # A larger --size: md resyncs the new part of each member only.
    grown = after.component_bytes - before.component_bytes
    if grown <= 0 or not sources:
        return None
    return sync_time(
        RESYNC,
        before.level,
        sources,
        component_bytes=grown,
        limits=facts.limits,
        layout=before.layout,
        ceilings=facts.ceilings,
    )
