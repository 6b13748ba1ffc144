"""Block devices a user could put in an array, and the reasons one is in use."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from mdtui.model.link import Link
from mdtui.text import clean_line, clean_optional, clean_text


class Transport(StrEnum):
    NVME = "nvme"
    SATA = "sata"
    SAS = "sas"
    VIRTIO = "virtio"
    USB = "usb"
    LOOP = "loop"
    OTHER = "other"


class InUseKind(StrEnum):
    """Why a disk must not be offered as an array member. Each kind is named in the UI."""

    MOUNTED = "mounted"
    ROOT_FS = "root-filesystem"
    HOLDER = "holder"
    MD_MEMBER = "md-member"
    MD_SUPERBLOCK = "md-superblock"
    LVM_PV = "lvm-pv"
    SWAP = "swap"
    FS_SIGNATURE = "filesystem-signature"
    PARTITION_TABLE = "partition-table"
    OPEN_EXCLUSIVE = "open-exclusive"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class InUseReason:
    kind: InUseKind
    detail: str

    def __post_init__(self) -> None:
        # A detail quotes what the disk carries (a label, a mount point, a holder's name): never raw.
        object.__setattr__(self, "detail", clean_text(self.detail, one_line=True))

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.detail}"


@dataclass(frozen=True)
class Disk:
    """One whole block device as discovered. Fields the system would not tell are None."""

    name: str
    dev_path: str
    transport: Transport
    size_bytes: int | None = None
    by_id_path: str | None = None
    by_path: str | None = None  # /dev/disk/by-path/...: the controller and port it hangs off
    model: str | None = None
    serial: str | None = None
    wwn: str | None = None
    logical_sector_bytes: int | None = None
    physical_sector_bytes: int | None = None
    rotational: bool | None = None
    driver: str | None = None
    major_minor: str | None = None
    link: Link | None = None
    partitions: tuple[str, ...] = ()
    in_use: tuple[InUseReason, ...] = ()
    # A loop device's file as the kernel names it (with " (deleted)" when the file was removed); None otherwise.
    backing_file: str | None = None
    # What could not be read: a device with problems is shown as "unknown", never offered blindly.
    problems: tuple[str, ...] = field(default=())

    __json_extras__ = ("available",)

    def __post_init__(self) -> None:
        # Model, serial, WWN and the by-id name come from the device's own firmware through sysfs and udev.
        for name in ("model", "serial", "wwn", "by_id_path", "by_path", "driver"):
            value = getattr(self, name)
            cleaned = clean_optional(value)
            if cleaned is not value:
                object.__setattr__(self, name, cleaned)
        if self.backing_file is not None:
            # Any user may name a file: its path is shown, never interpreted.
            object.__setattr__(self, "backing_file", clean_line(self.backing_file) or None)
        if not all(problem.isprintable() for problem in self.problems):
            object.__setattr__(self, "problems", tuple(clean_text(p, one_line=True) for p in self.problems))

    @property
    def available(self) -> bool:
        """Safe to offer as a new array member: nothing uses it and everything needed was read."""
        return not self.in_use and not self.problems

    def refusals(self, label: str | None = None, allowed: frozenset[InUseKind] = frozenset()) -> list[str]:
        """Why a step may not write this disk, one line each: every in-use reason (but ``allowed`` kinds) and every
        check that could not be made. ``label`` names it in the lines (its name by default)."""
        name = label or self.name
        lines = [f"{name} is in use: {reason}" for reason in self.in_use if reason.kind not in allowed]
        return lines + [f"{name} could not be checked: {problem}" for problem in self.problems]

    @property
    def state_word(self) -> str:
        """'free', 'unknown', or the first in-use reason's kind with a count of the others ('md-member +1'): the
        state in one word, for the app's table and a CLI table fitted to a narrow terminal."""
        if self.in_use:
            more = f" +{len(self.in_use) - 1}" if len(self.in_use) > 1 else ""
            return f"{self.in_use[0].kind.value}{more}"
        if self.problems:
            return "unknown"
        return "free"

    @property
    def kind_label(self) -> str:
        if self.rotational is None:
            return "?"
        return "HDD" if self.rotational else "SSD"
