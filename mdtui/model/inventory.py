"""What one scan of the system found: disks, arrays, and what could not be seen."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.model.array import MdArray
from mdtui.model.disk import Disk


@dataclass(frozen=True)
class Inventory:
    disks: tuple[Disk, ...]
    arrays: tuple[MdArray, ...]
    # True when running as root: signatures, exclusive opens and mdadm --examine could be checked.
    privileged: bool
    udev: bool  # True when the udev database was read (by-id paths, signatures)
    md_available: bool = True  # False when the kernel has no md driver loaded (no /proc/mdstat)
    # Sentences about what this scan could not do (no md driver, not root, no udev, ...).
    notes: tuple[str, ...] = ()

    def disk(self, name: str) -> Disk | None:
        return next((d for d in self.disks if d.name == name), None)

    def disk_of(self, member: str) -> Disk | None:
        """The whole disk behind an array member ("sdb1" → sdb, "nvme0n1" → nvme0n1); None when not seen."""
        return self.disk(member) or next((d for d in self.disks if member in d.partitions), None)

    def array(self, name: str) -> MdArray | None:
        return next((a for a in self.arrays if a.name == name), None)
