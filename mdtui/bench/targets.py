"""Where a benchmark runs: a user's text resolved to an array, a disk, a partition or a file."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from mdtui.errors import PlanError
from mdtui.execute.argv import fio_filename
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot

SECTOR_BYTES = 512


class TargetKind(StrEnum):
    ARRAY = "array"
    DISK = "disk"
    BLOCK = "block device"  # a partition, dm or other device that is neither a whole disk nor an array
    FILE = "file"


@dataclass(frozen=True)
class BenchTarget:
    path: str  # what fio or dd opens
    kind: TargetKind
    name: str  # kernel name for devices, the file name for files
    size_bytes: int | None = None
    array: MdArray | None = None
    disk: Disk | None = None
    exists: bool = True

    @property
    def device(self) -> str | None:
        """The kernel name the sampler reads rates of; None for a file."""
        return None if self.kind is TargetKind.FILE else self.name

    def describe(self) -> str:
        if self.array is not None:
            members = sum(1 for m in self.array.members if not m.spare and not m.faulty)
            return f"{self.path} ({self.array.level}, {members} members)"
        if self.disk is not None:
            ident = " ".join(part for part in (self.disk.model, self.disk.serial) if part)
            return f"{self.path} ({ident})" if ident else self.path
        if self.kind is TargetKind.FILE and not self.exists:
            return f"{self.path} (new file)"
        return f"{self.path} ({self.kind.value})"


def _dev_name(root: SystemRoot, text: str) -> str | None:
    """The kernel name behind a /dev path; by-id and /dev/md/NAME links are followed, in a captured tree too."""
    if not text.startswith("/dev/"):
        return None
    path = root.path(text)
    resolved = root.resolve(text)
    if resolved is not None and not resolved.is_dir():
        return resolved.name
    if path.is_symlink():
        # A captured tree keeps /dev/disk/by-id links whose targets (../../sdb) it does not hold.
        return os.path.basename(os.readlink(path))
    if "/by-" in text or text.startswith("/dev/md/"):
        return None
    return text.rsplit("/", 1)[-1]


def _block_target(inventory: Inventory, root: SystemRoot, name: str, path: str | None = None) -> BenchTarget | None:
    array = inventory.array(name)
    if array is not None:
        if array.level is None or array.state == "inactive":
            raise PlanError(f"{array.dev_path} is inactive; assemble it before benchmarking it")
        return BenchTarget(array.dev_path, TargetKind.ARRAY, array.name, array.size_bytes, array=array)
    disk = inventory.disk(name)
    if disk is not None:
        return BenchTarget(disk.dev_path, TargetKind.DISK, disk.name, disk.size_bytes, disk=disk)
    # /sys/class/block lists partitions too; captured trees may hold only /sys/block.
    sectors = root.read_int(f"/sys/class/block/{name}/size")
    if sectors is None:
        sectors = root.read_int(f"/sys/block/{name}/size")
    if sectors is not None:
        return BenchTarget(path or f"/dev/{name}", TargetKind.BLOCK, name, sectors * SECTOR_BYTES)
    return None


def _known(inventory: Inventory) -> str:
    arrays = ", ".join(a.name for a in inventory.arrays) or "none"
    disks = ", ".join(d.name for d in inventory.disks) or "none"
    return f"arrays: {arrays}; disks: {disks}"


def canonical_path(text: str) -> str:
    """An absolute path spelled one way: ``//dev/sda``, ``/./dev/sda`` and ``/dev/../dev/sda`` are ``/dev/sda``.

    Every rule that looks at a path's text (is it under /dev/? which device?) sees this spelling, never the
    user's; links are left for the lookups that follow them.
    """
    if not text.startswith("/"):
        return text
    return "/" + os.path.normpath(text).lstrip("/")


def resolve_target(text: str, inventory: Inventory, root: SystemRoot) -> BenchTarget:
    """An md array, a whole disk, another block device, or a file (which fio creates when it writes)."""
    text = canonical_path(text.strip())
    if not text:
        raise PlanError("no target given: name an md array (md0), a disk (sdb, /dev/disk/by-id/...) or a file")
    name = text if "/" not in text else _dev_name(root, text)
    if name is not None:
        found = _block_target(inventory, root, name, text if text.startswith("/dev/") else None)
        if found is not None:
            return found
        if text.startswith("/dev/") or not Path(text).exists():
            raise PlanError(f"no md array, disk or block device {text!r} ({_known(inventory)})")
    path = Path(text).absolute()
    try:
        info = path.stat()
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise PlanError(f"{text}: no such file, and its directory {path.parent} does not exist") from None
        fio_filename(str(path))
        return BenchTarget(str(path), TargetKind.FILE, path.name, None, exists=False)
    except OSError as exc:
        raise PlanError(f"cannot look at {text}: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise PlanError(f"{text} is a directory; give a file (fio reads or writes it), a disk or an md array")
    if stat.S_ISBLK(info.st_mode):
        found = _block_target(inventory, root, Path(os.path.realpath(path)).name, str(path))
        if found is not None:
            return found
    if not stat.S_ISREG(info.st_mode):
        raise PlanError(f"{text} is neither a regular file nor a block device mdtui knows")
    fio_filename(str(path))
    return BenchTarget(str(path), TargetKind.FILE, path.name, info.st_size)
