"""Plan an `mdadm --grow` of an array that holds data: what md can change from this shape (or the route that
works), the new geometry and capacity before, during and after, fault tolerance during the change, whether
md needs a backup file for the critical section and whether the place chosen for it is fit, what sits on the
array and the step that grows it after, and how long the pass takes (plan/sync_time). Pure: every fact comes
in (keep/grow gathers them), one GrowPlan or a PlanRejected naming every problem comes out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from mdtui.format import iec_bytes, plural
from mdtui.model.array import MdArray
from mdtui.model.contents import Contents
from mdtui.model.disk import Disk
from mdtui.plan.describe import step_lines
from mdtui.plan.levels import (
    RAID0,
    RAID1,
    RAID4,
    RAID5,
    RAID6,
    RAID10,
    RaidLevel,
    level_from_name,
    running_level,
)
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.rejected import PlanRejected
from mdtui.plan.request import member_path
from mdtui.plan.sync_time import (
    RECOVER,
    RESHAPE,
    RESYNC,
    GeometryChange,
    SyncLimits,
    SyncMember,
    SyncTime,
    about,
    reshape_time,
    sync_time,
)

SECTOR = 512
KIB = 1024
# mdadm's default chunk when a raid1 of two becomes a raid5 (Grow.c analyse_change: chunk_size = 65536).
RAID1_TO_RAID5_CHUNK_BYTES = 64 * KIB
# The backup window mdadm grows to for a reshape that keeps the member count: doubled while it stays under
# 1/32 of a member and under 16 MiB (Grow.c reshape_array), in sectors.
BACKUP_WINDOW_LIMIT_SECTORS = 16 * 1024 * 2
# mdadm writes this many sectors of header before the backed-up data (reshape_open_backup_file: blocks + 8).
BACKUP_HEADER_SECTORS = 8
# Filesystems whose contents do not survive a reboot (or may not: an overlay's upper layer is often a tmpfs,
# as on live systems), or that cannot be written: a backup file there is lost exactly when it is needed.
VOLATILE_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "devtmpfs", "overlay", "squashfs", "proc", "sysfs", "iso9660"})
# What mdtui can read the size of and grow after the array grows (probe/contents names the kinds).
EXT_KINDS = frozenset({"ext2", "ext3", "ext4"})
LVM_KIND = "LVM2_member"

# Words for the lab's result on power cuts (docs/usage.md "Growing and reshaping"); said in every plan whose
# reshape keeps or lowers the member count.
SAME_SIZE_POWER_CUT = (
    "in mdtui's lab (Debian 12: Linux 6.1, mdadm 4.2) a power cut in the middle of a reshape that adds no "
    "member (level, chunk or layout change, or a shrink) lost data, with and without a backup file; one that "
    "adds members resumed intact. Keep a current backup of the data, and power (a UPS), until it ends"
)


@dataclass(frozen=True)
class Geometry:
    """An array's shape: level, members (raid_disks), chunk, layout (the level's spelling), each member's data
    area (md's component_size)."""

    level: RaidLevel
    members: int
    chunk_bytes: int | None
    layout: str | None
    component_bytes: int

    @property
    def data_disks(self) -> Fraction:
        return self.level.data_disks(self.members, self.layout)

    @property
    def usable_bytes(self) -> int:
        """md's capacity for this shape: the component over the data members (raid10's own arithmetic)."""
        if self.level is RAID1:
            return self.component_bytes
        if self.level is RAID10:
            return self.level.usable_bytes([self.component_bytes] * self.members, self.layout, self.chunk_bytes)
        component = self.component_bytes
        if self.chunk_bytes:
            component -= component % self.chunk_bytes
        return int(component * self.data_disks)

    @property
    def fault_tolerance(self) -> int:
        return self.level.fault_tolerance(self.members, self.layout)

    def describe(self) -> str:
        parts = [self.level.name, plural(self.members, "member")]
        if self.level.uses_chunk and self.chunk_bytes:
            parts.append(f"{self.chunk_bytes // KIB} KiB chunk")
        if self.layout and self.level is not RAID1:
            parts.append(self.layout)
        return ", ".join(parts)


@dataclass(frozen=True)
class MemberSpace:
    """A member's room around its data as mdadm reports it (``mdadm --examine``: "Data Offset", "Unused Space :
    before=N sectors, after=M sectors"); None where it could not be read."""

    name: str
    data_offset_sectors: int | None = None
    before_sectors: int | None = None
    after_sectors: int | None = None
    device_bytes: int | None = None  # the whole member device


@dataclass(frozen=True)
class PlaceFacts:
    """Where a backup file would go, as found on the system right now (keep/grow.backup_place reads it)."""

    path: str  # the file's absolute path, every link in its directory resolved once
    directory_exists: bool = True
    exists: bool = False  # something (a file, a link) is already at path
    fs_type: str | None = None
    mount_point: str | None = None
    read_only: bool = False
    device_nodes: frozenset[str] = frozenset()  # block nodes under its filesystem, down to whole disks
    directory_owner_uid: int | None = None
    directory_mode: int | None = None
    uid: int = 0  # who runs mdtui
    free_bytes: int | None = None
    chosen_by_user: bool = False


@dataclass(frozen=True)
class GrowRequest:
    """What the user asked to change; None/empty leaves that part as it is."""

    add: tuple[Disk, ...] = ()
    raid_devices: int | None = None
    level: str | None = None
    chunk_kib: int | None = None
    layout: str | None = None
    size_max: bool = False
    size_bytes: int | None = None  # a new component size (each member's data area); smaller is a shrink
    backup_file: str | None = None
    filesystem_only: bool = False  # only grow what sits on the array to fill it

    @property
    def changes_geometry(self) -> bool:
        return bool(
            self.add
            or self.raid_devices is not None
            or self.level is not None
            or self.chunk_kib is not None
            or self.layout is not None
            or self.size_max
            or self.size_bytes is not None
        )


@dataclass(frozen=True)
class GrowFacts:
    """Everything about the array and this host the plan needs, gathered at one moment."""

    array: MdArray
    uuid: str | None = None
    spaces: tuple[MemberSpace, ...] = ()  # every active member, or empty when unknown
    contents: Contents = field(default_factory=Contents)
    place: PlaceFacts | None = None  # where the backup file would go (the default, or --backup-file)
    reshape_position: str | None = None  # md/reshape_position: "none" when no reshape is pending
    sync_members: Mapping[str, SyncMember] = field(default_factory=dict)  # figures by member or disk name
    limits: SyncLimits = field(default_factory=SyncLimits)
    ceilings: MdCeilings | None = None
    member_nodes: frozenset[str] = frozenset()  # members and new disks with the whole disks under them


@dataclass(frozen=True)
class GrowStep:
    argv: tuple[str, ...]
    description: str
    kind: str  # "add", "array-size", "grow", "level"


@dataclass(frozen=True)
class FollowUp:
    """What grows the filesystem or volume after the array grew: its own confirmed step (argvs run in order),
    or words when mdtui cannot run it (``argvs`` empty)."""

    kind: str
    argvs: tuple[tuple[str, ...], ...]
    description: str


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


# --- the shape md can reach ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    after: Geometry
    restripe: bool  # md rewrites every stripe (a reshape)
    pass_action: str | None
    problems: tuple[str, ...] = ()


def _route(frm: str, to: str) -> str | None:
    """The route that works when md cannot go from one level to another in one step."""
    routes = {
        ("raid1", "raid6"): "raid1 of 2 → raid5 (--level 5), then raid5 → raid6 with one more disk",
        ("raid1", "raid0"): "raid1 of 2 → raid5 (--level 5), then raid5 → raid0 (--level 0)",
        ("raid1", "raid10"): "raid1 of 2 → raid5 (--level 5) → raid0 → raid10, or a new raid10 and a copy",
        ("raid1", "raid4"): "raid1 of 2 → raid5 (--level 5), then raid5 → raid4",
        ("raid6", "raid0"): "raid6 → raid5 (--level 5), then raid5 → raid0 (--level 0)",
        ("raid6", "raid1"): "raid6 → raid5 with one member fewer, ... down to a raid5 of 2, then --level 1",
        ("raid6", "raid10"): "raid6 → raid5 → raid0 (--level 0), then raid0 → raid10 with as many disks again",
        ("raid10", "raid5"): "raid10 → raid0 (--level 0), then raid0 → raid5 with one more disk",
        ("raid10", "raid6"): "raid10 → raid0 (--level 0), then raid0 → raid6 with two more disks",
        ("raid10", "raid4"): "raid10 → raid0 (--level 0), then raid0 → raid4 with one more disk",
        ("raid10", "raid1"): "a new raid1 and a copy: md has no raid10 → raid1 step",
        ("raid0", "raid1"): "raid0 → raid5 with one more disk, ... down to a raid5 of 2, then --level 1",
        ("raid5", "raid10"): "raid5 → raid0 (--level 0), then raid0 → raid10 with as many disks again",
        ("raid4", "raid10"): "raid4 → raid0 (--level 0), then raid0 → raid10 with as many disks again",
    }
    return routes.get((frm, to))


def _raid6_layout_of(raid5_layout: str | None) -> str:
    return f"{raid5_layout or 'left-symmetric'}-6"


def _target(before: Geometry, req: GrowRequest, spares: int) -> _Shape:
    """The geometry md reaches for ``req`` from ``before``, or the problems (each naming a route that works)."""
    frm = before.level
    problems: list[str] = []
    try:
        to = level_from_name(req.level) if req.level is not None else frm
    except ValueError as exc:
        return _Shape(before, False, None, (str(exc),))
    added = len(req.add)
    n = before.members
    chunk = before.chunk_bytes
    layout = before.layout
    new_chunk = req.chunk_kib * KIB if req.chunk_kib is not None else chunk
    new_layout = to.normalise_layout(req.layout) if req.layout is not None else None
    size_change = req.size_max or req.size_bytes is not None

    if to.name == "linear" or frm.name == "linear":
        return _Shape(
            before,
            False,
            None,
            (
                "md grows a linear array only by `mdadm --grow /dev/mdN --add DISK`, "
                "which mdtui does not plan: nothing else about it can change",
            ),
        )
    if size_change and (
        req.level is not None
        or added
        or req.raid_devices is not None
        or req.chunk_kib is not None
        or req.layout is not None
    ):
        return _Shape(
            before,
            False,
            None,
            (
                "--size changes each member's data area and runs alone: grow the size "
                "first, then change the shape (or the other way round)",
            ),
        )
    if req.chunk_kib is not None and not to.uses_chunk:
        problems.append(f"{to.name} has no chunk: --chunk does not apply")
    if new_chunk and req.chunk_kib is not None:
        if new_chunk < 4 * KIB or new_chunk & (new_chunk - 1):
            problems.append(f"--chunk {req.chunk_kib}: md takes a power of two of at least 4 KiB")
        elif before.component_bytes % new_chunk:
            fits = before.component_bytes - before.component_bytes % new_chunk
            problems.append(
                f"a {req.chunk_kib} KiB chunk does not divide each member's data area ({before.component_bytes // KIB} "
                f"KiB): shrink what sits on the array, then `mdtui grow {{array}} --size {fits // KIB}K`, then "
                "change the chunk"
            )
    if new_layout is not None and to.layouts(n) and new_layout not in to.layouts(n):
        problems.append(f"{new_layout!r} is not a {to.name} layout ({', '.join(to.layouts(n))})")

    def members_for(default: int) -> int:
        return req.raid_devices if req.raid_devices is not None else default

    after_members = n
    after_layout = layout
    after_chunk = new_chunk if to.uses_chunk else None
    restripe = False
    action: str | None = None

    if frm is RAID1:
        if to is RAID1:
            after_members = members_for(n + added)
            if new_layout is not None or req.chunk_kib is not None:
                problems.append("a raid1 has no chunk or layout to change")
            if after_members < n:
                problems.append(
                    f"a raid1 drops a mirror only once it is out of the array: `mdtui repair {{array}} --fail MEMBER`, "
                    f"then `--remove MEMBER`, then `mdtui grow {{array}} --raid-devices {after_members}`"
                )
            action = RECOVER if after_members > n else None
        elif to is RAID5:
            if n != 2:
                problems.append(
                    f"md turns only a raid1 of 2 into a raid5 (this one has {n}): drop mirrors first (`mdtui "
                    "repair {array} --fail MEMBER`, `--remove MEMBER`, `mdtui grow {array} --raid-devices 2`)"
                )
            if before.component_bytes % RAID1_TO_RAID5_CHUNK_BYTES:
                problems.append("md needs the raid1's size to be a multiple of 64 KiB to make it a raid5")
            after_chunk = new_chunk if req.chunk_kib is not None else RAID1_TO_RAID5_CHUNK_BYTES
            after_members = members_for(2 + added)
            after_layout = new_layout or RAID5.default_layout
            restripe = after_members > 2 or after_chunk != RAID1_TO_RAID5_CHUNK_BYTES
            action = RESHAPE if restripe else None
        else:
            problems.append(_no_step(frm, to))
    elif frm is RAID10:
        near = (layout or "n2")[:1]
        copies = RAID10.copies(n, layout)
        if near == "f":
            problems.append(
                'md cannot reshape a raid10 with a far layout (mdadm: "Cannot reshape RAID10 in far-mode"): '
                "make a new array and copy the data"
            )
        elif to is RAID0:
            if near != "n" or n % copies:
                problems.append(
                    f"md turns only a near raid10 whose {n} members are a multiple of its copies into a raid0"
                )
            if req.chunk_kib is not None and new_chunk != chunk:
                problems.append("md cannot change the chunk while turning a raid10 into a raid0")
            after_members = members_for(n // copies)
            if after_members != n // copies:
                problems.append(
                    f"a raid10 of {n} with {copies} copies becomes a raid0 of {n // copies}, no other count"
                )
            after_layout = None
        elif to is RAID10:
            after_members = members_for(n + added)
            after_layout = new_layout or layout
            if after_layout and after_layout[:1] == "f":
                problems.append("md cannot reshape a raid10 into a far layout")
            elif after_layout and RAID10.copies(after_members, after_layout) != copies:
                problems.append("md cannot change the number of copies of a raid10")
            restripe = after_members != n or after_layout != layout or after_chunk != chunk
            action = RESHAPE if restripe else None
        else:
            problems.append(_no_step(frm, to))
    elif frm is RAID0:
        if to is RAID0:
            after_members = members_for(n + added)
            if after_members < n:
                problems.append("md cannot take members out of a raid0: make a smaller array and copy the data")
            restripe = after_members != n or after_chunk != chunk
            action = RESHAPE if restripe else None
        elif to is RAID10:
            after_members = members_for(2 * n + (added - n if added > n else 0))
            after_layout = new_layout or "n2"
            copies = RAID10.copies(after_members, after_layout)
            if after_layout[:1] != "n" or after_members != n * copies:
                problems.append(f"md turns a raid0 of {n} into a near raid10 of {n} × copies members (n2: {2 * n})")
            if req.chunk_kib is not None and new_chunk != chunk:
                problems.append("md cannot change the chunk while turning a raid0 into a raid10")
            action = RECOVER
        elif to in (RAID4, RAID5, RAID6):
            parity = 2 if to is RAID6 else 1
            after_members = members_for(n + parity)
            after_layout = new_layout or (to.default_layout if to is not RAID4 else "parity-last")
            restripe = after_members != n + parity or after_chunk != chunk or after_layout != "parity-last"
            action = RESHAPE if restripe else RECOVER
        else:
            problems.append(_no_step(frm, to))
    elif frm in (RAID4, RAID5, RAID6):
        if to is frm:
            after_members = members_for(n + added)
            after_layout = new_layout or layout
        elif to is RAID6 and frm in (RAID4, RAID5):
            after_members = members_for(n + 1)
            raid5_layout = "parity-last" if frm is RAID4 else layout
            after_layout = new_layout or (RAID6.default_layout if raid5_layout != "parity-last" else "parity-last")
            if after_layout == _raid6_layout_of(raid5_layout) and after_members == n + 1:
                # --layout left-symmetric-6: Q goes onto the new member, nothing else moves (a rebuild of Q).
                action = RECOVER
        elif to in (RAID4, RAID5) and frm is RAID6:
            after_members = members_for(n - 1)
            after_layout = "parity-last" if to is RAID4 else (new_layout or (layout or "").removesuffix("-6") or None)
        elif to in (RAID4, RAID5):
            after_members = members_for(n)
            after_layout = "parity-last" if to is RAID4 else (new_layout or layout)
        elif to is RAID0:
            if frm is RAID6:
                problems.append(_no_step(frm, to))
            after_members = members_for(n - 1)
            after_layout = None
            if after_members != n - 1:
                problems.append(f"md turns a {frm.name} of {n} into a raid0 of {n - 1}, no other count")
        elif to is RAID1:
            if frm is RAID6 or n != 2:
                problems.append(
                    f"md turns only a raid5 of 2 into a raid1 (route: {_route(frm.name, 'raid1') or 'none'})"
                )
            after_members, after_layout, after_chunk = 2, None, None
        else:
            problems.append(_no_step(frm, to))
        if after_members < to.min_members and to is not RAID1:
            problems.append(f"a {to.name} needs at least {to.min_members} members, not {after_members}")
        if action is None and to is not RAID1:
            old_data = before.data_disks
            new_data = to.data_disks(after_members, after_layout) if to is not RAID0 else Fraction(after_members)
            restripe = new_data != old_data or not _same_layout(frm, layout, to, after_layout) or after_chunk != chunk
            action = RESHAPE if restripe else None
    else:
        problems.append(f"mdtui does not grow {frm.name} arrays")

    if req.raid_devices is not None and req.raid_devices < 1:
        problems.append("--raid-devices must be at least 1")
    grown = after_members - n
    if grown > 0 and grown > added + spares:
        need = grown - spares
        problems.append(
            f"{to.name} of {after_members} needs {plural(grown, 'more member')}: name "
            f"{plural(need, 'disk')} with --add"
            + (f" ({plural(spares, 'spare')} already in the array)" if spares else "")
        )
    if grown <= 0 and added and not (frm is RAID0 and to is RAID10):
        problems.append(
            f"--add {', '.join(d.name for d in req.add)}: the new shape ({to.name} of {after_members}) has no room "
            "for them; say how many members it gets (--raid-devices)"
        )
    after_component = before.component_bytes
    if size_change:
        action = RESYNC if before.level.redundant else None
    if problems:
        return _Shape(before, False, None, tuple(problems))
    after = Geometry(
        to,
        after_members,
        after_chunk if to.uses_chunk else None,
        after_layout if to is not RAID1 and to is not RAID0 else None,
        after_component,
    )
    return _Shape(after, restripe, action)


def _same_layout(frm: RaidLevel, layout: str | None, to: RaidLevel, new_layout: str | None) -> bool:
    """Whether the data stays where it is between two parity layouts: md's raid6 "-6" layouts keep a raid5's
    arrangement with Q on the last member, so raid5 L is raid6 L-6 (and raid4 is parity-last, raid0 too)."""

    def as_raid6(level: RaidLevel, name: str | None) -> str | None:
        if level in (RAID4, RAID0):
            name = "parity-last"
        if level is RAID6:
            return name
        return None if name is None else f"{name}-6"

    if frm is to and frm is not RAID4:
        return layout == new_layout
    return as_raid6(frm, layout) == as_raid6(to, new_layout)


def _no_step(frm: RaidLevel, to: RaidLevel) -> str:
    route = _route(frm.name, to.name)
    text = f"md cannot turn a {frm.name} into a {to.name} in one step"
    return f"{text}; the route that works: {route}" if route else text


# --- the backup file -------------------------------------------------------------------------------------


def backup_blocks(before: Geometry, after: Geometry) -> int:
    """The sectors mdadm backs up at a time: a whole number of old and of new stripes (Grow.c
    compute_backup_blocks: the LCM of chunk × data members before and after)."""
    old_chunk = (before.chunk_bytes or RAID1_TO_RAID5_CHUNK_BYTES) // SECTOR
    new_chunk = (after.chunk_bytes or old_chunk * SECTOR) // SECTOR
    old = old_chunk * max(int(before.data_disks), 1)
    new = new_chunk * max(int(after.data_disks), 1)
    return old * new // math.gcd(old, new)


def backup_file_bytes(before: Geometry, after: Geometry) -> int:
    """How large mdadm makes the backup file (reshape_open_backup_file writes blocks + 8 sectors)."""
    blocks = backup_blocks(before, after)
    if before.data_disks == after.data_disks:
        component_sectors = before.component_bytes // SECTOR
        while blocks * 32 < component_sectors and blocks < BACKUP_WINDOW_LIMIT_SECTORS:
            blocks *= 2
    return (blocks + BACKUP_HEADER_SECTORS) * SECTOR


def _offset_room(before: Geometry, after: Geometry, spaces: Sequence[MemberSpace]) -> tuple[bool | None, int]:
    """Whether md can move every member's data offset instead of using a backup file (Grow.c set_new_data_offset),
    and by how many sectors at least. None: the members' room is not known."""
    if before.level is RAID10:
        minimum = max(before.chunk_bytes or 0, after.chunk_bytes or 0) // SECTOR
    else:
        minimum = backup_blocks(before, after) // max(int(before.data_disks), 1)
    if not spaces or any(s.before_sectors is None or s.after_sectors is None for s in spaces):
        return None, minimum
    before_room = min(s.before_sectors or 0 for s in spaces)
    after_room = min(s.after_sectors or 0 for s in spaces)
    if before_room == 0 and after_room == 0:
        return False, minimum  # the metadata has no room at all (0.90, or 1.x made without any)
    if after.data_disks > before.data_disks:
        return before_room >= minimum, minimum
    return before_room >= minimum or after_room >= minimum, minimum


def place_problems(place: PlaceFacts, array: MdArray, member_names: Sequence[str], needed_bytes: int) -> list[str]:
    """Why a backup file cannot go at ``place``: it must survive a reboot, sit off the array and its members, be
    new, in a directory only its owner writes, with room for it."""
    problems = []
    where = place.path
    if not place.directory_exists:
        problems.append(f"{where}: its directory does not exist")
        return problems
    if place.exists:
        problems.append(f"{where} already exists: mdadm will not overwrite it; name a new file")
    if place.fs_type in VOLATILE_FILESYSTEMS:
        what = (
            "may not survive a reboot (its upper layer is often a tmpfs)"
            if place.fs_type == "overlay"
            else ("does not survive a reboot")
        )
        problems.append(f"{where} is on {place.fs_type} ({place.mount_point or '?'}), which {what}")
    if place.read_only:
        problems.append(f"{where} is on a read-only filesystem ({place.mount_point or '?'})")
    on_members = sorted(set(member_names) & set(place.device_nodes))
    if array.name in place.device_nodes:
        problems.append(f"{where} is on {array.name} itself: md needs it exactly when {array.name} cannot be read")
    elif on_members:
        what = "a member" if len(on_members) == 1 else "members"
        problems.append(f"{where} is on {', '.join(on_members)}, {what} of {array.name}")
    if place.directory_owner_uid is not None and place.directory_owner_uid != place.uid:
        problems.append(
            f"{where}: its directory belongs to uid {place.directory_owner_uid}, not to the user running mdtui"
        )
    if place.directory_mode is not None and place.directory_mode & 0o022:
        problems.append(
            f"{where}: other users can write its directory (mode {place.directory_mode & 0o7777:o}) and could put a "
            "file or link there first"
        )
    if place.free_bytes is not None and place.free_bytes < needed_bytes:
        problems.append(
            f"{where} needs {iec_bytes(needed_bytes)} free; its filesystem has {iec_bytes(place.free_bytes)}"
        )
    return problems


# --- what sits on the array ------------------------------------------------------------------------------


def followup(contents: Contents, device: str) -> FollowUp | None:
    """The step that grows what sits on the array to fill it once the array is larger."""
    kind = contents.kind
    if kind is None:
        return None
    mounted = contents.mount_point
    if kind in EXT_KINDS:
        if mounted:
            return FollowUp(kind, (("resize2fs", device),), f"grow the {kind} filesystem (mounted at {mounted}) online")
        return FollowUp(
            kind,
            (("e2fsck", "-f", "-p", device), ("resize2fs", device)),
            f"check the unmounted {kind} filesystem (resize2fs asks for it), then grow it",
        )
    if kind == "xfs":
        if mounted:
            return FollowUp(kind, (("xfs_growfs", mounted),), f"grow the xfs filesystem mounted at {mounted}")
        return FollowUp(
            kind, (), f"xfs grows only while mounted: mount {device}, then run xfs_growfs on its mount point"
        )
    if kind == LVM_KIND:
        return FollowUp(kind, (("pvresize", device),), "grow the LVM physical volume (its volume group gains extents)")
    if kind == "btrfs":
        if mounted:
            return FollowUp(
                kind,
                (("btrfs", "filesystem", "resize", "max", mounted),),
                f"grow the btrfs filesystem mounted at {mounted} (its device 1; name another devid if {device} is not)",
            )
        return FollowUp(kind, (), f"btrfs grows only while mounted: mount {device}, then `btrfs filesystem resize max`")
    if kind.startswith("partition table"):
        return FollowUp(
            kind, (), f"{device} holds a {kind}: grow the last partition (parted resizepart), then its filesystem"
        )
    return FollowUp(kind, (), f"{device} holds {kind}: mdtui does not grow it")


def shrink_problems(contents: Contents, device: str, new_bytes: int) -> list[str]:
    """Why a shrink to ``new_bytes`` would cut what sits on the array (its size read from its own superblock)."""
    if not contents.read:
        return [
            f"what sits on {device} could not be read ({contents.size_problem or 'unknown'}): "
            "mdtui will not shrink blind"
        ]
    if contents.kind is None:
        return []
    if contents.holders:
        return [f"{device} is held by {', '.join(contents.holders)}: shrink what is on it first and release it"]
    if contents.size_bytes is None:
        why = contents.size_problem or "its size could not be read"
        return [f"{device} holds {contents.kind} and {why}: mdtui will not shrink under it"]
    if contents.size_bytes <= new_bytes:
        return []
    size = f"{contents.size_bytes:,} bytes ({iec_bytes(contents.size_bytes)})"
    new = f"{new_bytes:,} bytes ({iec_bytes(new_bytes)})"
    if contents.kind in EXT_KINDS:
        how = (
            f"shrink it first: umount {contents.mount_point or device}; e2fsck -f {device}; "
            f"resize2fs {device} {new_bytes // KIB}K"
        )
    elif contents.kind == "xfs":
        how = "xfs cannot shrink: copy the data off, shrink the array, make a new filesystem"
    elif contents.kind == LVM_KIND:
        how = f"move extents off its end (pvmove), then `pvresize --setphysicalvolumesize {new_bytes // KIB}K {device}`"
    else:
        how = f"shrink the {contents.kind} first with its own tool"
    return [f"the {contents.kind} on {device} is {size}, larger than the array after the shrink, {new}: {how}"]


# --- the plan ----------------------------------------------------------------------------------------------


def current_geometry(array: MdArray) -> Geometry | None:
    level, layout = running_level(array.level, array.layout)
    if level is None or not array.component_bytes:
        return None
    members = array.raid_disks or len([m for m in array.members if not m.spare and not m.faulty])
    return Geometry(level, members, array.chunk_bytes if level.uses_chunk else None, layout, array.component_bytes)


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
    shape = _Shape(before, False, None) if req.filesystem_only else _target(before, req, spares)
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
    backup_path: str | None = None
    backup_bytes: int | None = None
    reason = "no backup file: md moves no data" if not shape.restripe else ""
    if shape.restripe:
        room, minimum = _offset_room(before, after, facts.spaces)
        adds = after.data_disks > before.data_disks and (len(req.add) > 0 or spares > 0)
        if after.level is RAID10 or before.level is RAID10:
            if room is False:
                problems.append(
                    f"md reshapes a raid10 only by moving each member's data offset by {minimum // 2} KiB, "
                    "and a member has no room for that"
                )
            reason = "no backup file: md reshapes a raid10 by moving each member's data offset"
        elif req.backup_file is not None:
            backup_path = req.backup_file
            reason = "a backup file, as asked (--backup-file): mdadm keeps each critical section there"
        elif adds:
            reason = (
                "no backup file: the array gains members, so md moves the data offset "
                f"({minimum // 2} KiB) or mdadm keeps the critical section on a new member"
            )
        elif after.data_disks < before.data_disks:
            # mdadm(8): a backup file "is required to be specified for shrinks"; in the lab, mdadm 4.2's
            # offset move for a shrink failed ("Cannot set new_offset") after a chunk change set the direction.
            backup_path = default_backup
            reason = "a backup file: the array loses data members, and mdadm keeps each critical section in a file"
        elif room:
            reason = f"no backup file: every member has room to move its data offset by {minimum // 2} KiB"
        else:
            backup_path = default_backup
            why = (
                "the members' room is not known"
                if room is None
                else f"a member has no room to move its data offset by {minimum // 2} KiB"
            )
            reason = f"a backup file: {why}, so mdadm keeps each critical section in a file"
        if backup_path is not None:
            backup_bytes = backup_file_bytes(before, after)
            if facts.place is None:
                problems.append("md needs a backup file and there is no place for it: name one with --backup-file PATH")
            else:
                under = {*member_names, *(d.name for d in req.add), *facts.member_nodes}
                problems += place_problems(facts.place, array, sorted(under), backup_bytes)
                backup_path = facts.place.path
        if after.data_disks <= before.data_disks and not (after.level is RAID10 or before.level is RAID10):
            warnings.append(SAME_SIZE_POWER_CUT)
    if problems:
        raise PlanRejected(f"grow {dev}", problems)

    steps = _steps(dev, before, after, req, shape, backup_path, size_after if shrinking else None)
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
    time = _time(facts, before, after, shape, req, backup_path is not None)
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
        backup_file=backup_path,
        backup_reason=reason,
        backup_bytes=backup_bytes,
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
    for reason in disk.in_use:
        problems.append(f"{disk.name} is in use: {reason}")
    for problem in disk.problems:
        problems.append(f"{disk.name} could not be checked: {problem}")
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
    shape: _Shape,
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
    facts: GrowFacts, before: Geometry, after: Geometry, shape: _Shape, req: GrowRequest, backup: bool
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


# --- words ---------------------------------------------------------------------------------------------------


def describe_grow(plan: GrowPlan) -> list[str]:
    """The plan as the CLI prints it and the app shows it."""
    lines = [f"grow {plan.array}: {plan.before.describe()} → {plan.after.describe()}"]
    lines += step_lines((step.argv, step.description) for step in plan.steps)
    if not plan.steps:
        lines.append("  the array stays as it is")
    lines.append(
        f"  capacity: {iec_bytes(plan.size_before_bytes)} now, {iec_bytes(plan.size_during_bytes)} during, "
        f"{iec_bytes(plan.size_after_bytes)} after"
    )
    lines.append(
        f"  members that may fail: {plan.tolerance_before} now, {plan.tolerance_during} during, "
        f"{plan.tolerance_after} after"
    )
    if plan.pass_action is not None:
        word = {RESHAPE: "reshape", RESYNC: "resync of the new space", RECOVER: "rebuild onto the new members"}[
            plan.pass_action
        ]
        if plan.predicted_seconds is not None:
            lines.append(f"  time: the {word} takes {about(plan.predicted_seconds)}, bound by {plan.bound}")
        else:
            lines.append(f"  time: the {word} takes an unknown time ({plan.bound})")
        if (
            plan.time is not None
            and plan.time.under_load_seconds is not None
            and plan.time.under_load_seconds != plan.time.predicted_seconds
        ):
            lines.append(
                f"        under other I/O {about(plan.time.under_load_seconds)} ({plan.time.under_load_bound})"
            )
    else:
        lines.append("  time: instant (md moves no data)")
    lines.append(f"  {plan.backup_reason}")
    if plan.backup_file is not None:
        lines.append(
            f"  backup file: {plan.backup_file} ({iec_bytes(plan.backup_bytes)}); keep it until the reshape ends: "
            "an interrupted reshape needs it to assemble"
        )
    for disk in plan.new_disks:
        ident = " / ".join(p for p in (disk.model, disk.serial) if p) or "-"
        lines.append(f"  writes {disk.name} ({ident}): everything on it is overwritten")
    contents = plan.contents
    if contents.kind is not None:
        size = f", {iec_bytes(contents.size_bytes)}" if contents.size_bytes is not None else ""
        mounted = f", mounted at {contents.mount_point}" if contents.mount_point else ""
        lines.append(f"  on it: {contents.kind}{size}{mounted}")
    if plan.followup is not None:
        if plan.followup.argvs:
            commands = "; ".join(" ".join(argv) for argv in plan.followup.argvs)
            lines.append(f"  after: {plan.followup.description}: {commands} (its own confirmation)")
        else:
            lines.append(f"  after: {plan.followup.description}")
    for warning in plan.warnings:
        lines.append(f"  ⚠ {warning}")
    for note in plan.notes:
        lines.append(f"  {note}")
    return lines


def grow_plan_dict(plan: GrowPlan) -> dict[str, object]:
    """The plan as `mdtui grow --json` prints it under "plan"."""
    return {
        "argv": [list(argv) for argv in plan.argvs],
        "backup_file": plan.backup_file,
        "size_before_bytes": plan.size_before_bytes,
        "size_during_bytes": plan.size_during_bytes,
        "size_after_bytes": plan.size_after_bytes,
        "predicted_seconds": plan.time.as_json()["predicted_seconds"]
        if plan.time is not None
        else (0 if plan.pass_action is None else None),
        "bound": plan.bound,
        "pass": plan.pass_action,
        "before": _geometry_dict(plan.before),
        "after": _geometry_dict(plan.after),
        "fault_tolerance": {
            "before": plan.tolerance_before,
            "during": plan.tolerance_during,
            "after": plan.tolerance_after,
        },
        "backup_reason": plan.backup_reason,
        "backup_bytes": plan.backup_bytes,
        "steps": [{"argv": list(s.argv), "description": s.description} for s in plan.steps],
        "time": plan.time.as_json() if plan.time is not None else None,
        "contents": {
            "kind": plan.contents.kind,
            "size_bytes": plan.contents.size_bytes,
            "mount_point": plan.contents.mount_point,
        },
        "follow_up": (
            {"argv": [list(a) for a in plan.followup.argvs], "description": plan.followup.description}
            if plan.followup is not None
            else None
        ),
        "warnings": list(plan.warnings),
        "notes": list(plan.notes),
    }


def _geometry_dict(geometry: Geometry) -> dict[str, object]:
    return {
        "level": geometry.level.name,
        "raid_devices": geometry.members,
        "chunk_bytes": geometry.chunk_bytes,
        "layout": geometry.layout,
        "component_bytes": geometry.component_bytes,
        "size_bytes": geometry.usable_bytes,
    }
