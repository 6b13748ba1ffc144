"""What plan/grow needs, read from the system as it is now: each member's room around its data (sysfs, mdadm
--examine), where a backup file would go and what is true of that place, what sits on the array, a pending reshape's
position."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from mdtui.ascii_numbers import parse_int
from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.execute.mdadm import array_uuid
from mdtui.model.array import MdArray, normalize_uuid
from mdtui.plan.grow_request import GrowFacts, GrowRequest, MemberSpace, PlaceFacts
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.sync_inputs import SyncLimits, SyncMember
from mdtui.probe.blocktree import BlockTree
from mdtui.probe.contents import read_contents
from mdtui.probe.mounts import read_mounts
from mdtui.probe.root import SystemRoot

# Where mdtui puts a backup file unless told (--backup-file): its own state directory, checked like any place.
BACKUP_DIR = "grow"


_EXAMINE_OFFSET_RE = re.compile(r"^\s*Data Offset : ([0-9]{1,20}) sectors", re.M | re.A)


_EXAMINE_UNUSED_RE = re.compile(
    r"^\s*Unused Space : before=([0-9]{1,20}) sectors, after=([0-9]{1,20}) sectors", re.M | re.A
)


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

    tag = (normalize_uuid(uuid) or "nouuid")[:8]
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
    return PlaceFacts(
        path=resolved,
        directory_exists=True,
        exists=exists,
        fs_type=mount.fs_type if mount is not None else None,
        mount_point=mount.mount_point if mount is not None else None,
        read_only=mount is not None and "ro" in mount.options,
        device_nodes=nodes,
        directory_owner_uid=info.st_uid,
        directory_mode=info.st_mode,
        uid=os.geteuid(),
        free_bytes=free,
        chosen_by_user=chosen,
    )


def reshape_position(system: SystemRoot, name: str) -> str | None:
    """md/reshape_position: "none", or where a pending or running reshape stands (array sectors)."""
    return system.read_text(f"/sys/block/{name}/md/reshape_position")


def member_nodes(array: MdArray, req: GrowRequest, tree: BlockTree) -> frozenset[str]:
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
        member_nodes=member_nodes(array, req, tree),
    )
    return facts, default
