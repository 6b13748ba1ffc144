"""What a grow is planned from: the change the user asked for and the facts about the array and this host gathered at
one moment (keep/grow gathers them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mdtui.model.array import MdArray
from mdtui.model.contents import Contents
from mdtui.model.disk import Disk
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.sync_inputs import SyncLimits, SyncMember


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
