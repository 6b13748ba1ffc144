"""Whether a reshape needs mdadm's backup file for its critical section, how large the file is, and whether the place
chosen for it is fit (off the array, surviving a reboot, written by its owner only, with room)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.format import iec_bytes
from mdtui.model.array import MdArray
from mdtui.plan.grow_request import GrowFacts, GrowRequest, MemberSpace, PlaceFacts
from mdtui.plan.grow_shape import RAID1_TO_RAID5_CHUNK_BYTES, SECTOR, Geometry
from mdtui.plan.levels import (
    RAID10,
)

# The backup window mdadm grows to for a reshape that keeps the member count: doubled while it stays under
# 1/32 of a member and under 16 MiB (Grow.c reshape_array), in sectors.
BACKUP_WINDOW_LIMIT_SECTORS = 16 * 1024 * 2


# mdadm writes this many sectors of header before the backed-up data (reshape_open_backup_file: blocks + 8).
BACKUP_HEADER_SECTORS = 8


# Filesystems whose contents do not survive a reboot (or may not: an overlay's upper layer is often a tmpfs,
# as on live systems), or that cannot be written: a backup file there is lost exactly when it is needed.
VOLATILE_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "devtmpfs", "overlay", "squashfs", "proc", "sysfs", "iso9660"})


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


def offset_room(before: Geometry, after: Geometry, spaces: Sequence[MemberSpace]) -> tuple[bool | None, int]:
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


@dataclass(frozen=True)
class BackupChoice:
    """Whether a grow uses a backup file: where (None: none), how large, why, and what stops it there."""

    path: str | None
    size_bytes: int | None
    reason: str
    problems: tuple[str, ...] = ()


NO_BACKUP = BackupChoice(None, None, "no backup file: md moves no data")


def choose_backup(
    facts: GrowFacts,
    req: GrowRequest,
    before: Geometry,
    after: Geometry,
    *,
    spares: int,
    member_names: Sequence[str],
    default_backup: str | None,
) -> BackupChoice:
    """For a reshape that restripes: whether md moves the data offset or mdadm keeps each critical section in a
    file (``req.backup_file`` when given, else ``default_backup``), and whether the place is fit."""
    problems: list[str] = []
    backup_path: str | None = None
    backup_bytes: int | None = None
    room, minimum = offset_room(before, after, facts.spaces)
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
            problems += place_problems(facts.place, facts.array, sorted(under), backup_bytes)
            backup_path = facts.place.path
    return BackupChoice(backup_path, backup_bytes, reason, tuple(problems))
