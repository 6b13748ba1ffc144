"""Copy the parts of /sys, /proc, /run/udev and /dev/disk that mdtui reads into a directory.

The copy is a system root that `mdtui --root DIR scan` reads exactly as it reads the live system:
attach it to a bug report, or keep it as a test fixture. sysfs links stay relative links.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from mdtui.errors import ProbeError
from mdtui.probe.root import ATTRIBUTE_LIMIT, TABLE_LIMIT, RefusedFileError, SystemRoot, read_file_bytes
from mdtui.safefile import parent_problem

_BLOCK_FILES = (
    "dev", "size", "ro", "removable", "serial", "wwid", "range", "capability", "stat",
    "queue/rotational", "queue/logical_block_size", "queue/physical_block_size",
    "dm/name", "dm/uuid", "loop/backing_file",
)
_DEVICE_FILES = ("model", "vendor", "serial", "wwid", "firmware_rev", "state", "vpd_pg80", "rev", "transport")
_PCI_FILES = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width", "vendor", "device")
_ATA_LINK_FILES = ("sata_spd", "hw_sata_spd_limit", "sata_spd_limit")
_SAS_PHY_FILES = (
    "negotiated_linkrate", "maximum_linkrate_hw", "minimum_linkrate_hw", "maximum_linkrate", "sas_address",
)
_PROC_FILES = ("mdstat", "swaps", "diskstats", "stat", "cpuinfo", "loadavg", "meminfo")


class CaptureError(ProbeError):
    """A capture cannot be written where asked; nothing was written."""


class _Copier:
    def __init__(self, source: SystemRoot, out: Path) -> None:
        self.source = source
        self.out = out
        self.copied = 0

    def _dest(self, system_path: str) -> Path:
        return self.out / system_path.lstrip("/")

    def file(self, system_path: str) -> None:
        """Copy one regular file, found through any links, to its real path inside the copy."""
        real = os.path.realpath(self.source.path(system_path))
        if not os.path.isfile(real):
            return
        limit = TABLE_LIMIT if system_path.startswith(("/proc/", "/run/udev/")) else ATTRIBUTE_LIMIT
        try:
            data = read_file_bytes(real, limit=limit)
        except RefusedFileError:
            return  # write-only or unreadable sysfs attributes, or a file past its cap
        if data is None:
            return
        dest = self._dest(self.source.to_system(Path(real)))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        self.copied += 1

    def link(self, system_path: str) -> None:
        """Recreate a symlink as the same relative link, below its parent's real path."""
        path = self.source.path(system_path)
        if not path.is_symlink():
            return
        parent_real = Path(os.path.realpath(path.parent))
        dest = self._dest(self.source.to_system(parent_real)) / path.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink() or dest.exists():
            return
        os.symlink(os.readlink(path), dest)
        target = Path(os.path.realpath(path))
        target_dest = self._dest(self.source.to_system(target))
        # Give the link somewhere to land so it resolves inside the copy (driver dirs, holders).
        if target.is_dir() and not target_dest.exists():
            target_dest.mkdir(parents=True, exist_ok=True)

    def tree(self, system_path: str, depth: int = 3) -> None:
        """Copy a small directory such as /sys/block/md0/md recursively, links as links."""
        base = self.source.path(system_path)
        for entry in self.source.listdir(base):
            child = f"{system_path}/{entry}"
            path = self.source.path(child)
            if path.is_symlink():
                self.link(child)
            elif path.is_dir() and depth > 0:
                self.tree(child, depth - 1)
            elif path.is_file():
                self.file(child)


# What a capture reads below its root; the copy must not land in any of them.
_READ_PLACES = ("/sys", "/proc", "/run/udev", "/dev")


def capture_problem(out_dir: Path, src: SystemRoot) -> str | None:
    """Why a capture of ``src`` may not be written to ``out_dir``, or None.

    The copy goes to a new directory (an existing one must be empty) that lies outside everything the
    capture reads: outside a captured root as a whole, outside /sys, /proc, /run/udev and /dev of the
    live one. Nothing that exists is ever deleted or overwritten.
    """
    out = Path(os.path.realpath(out_dir))
    root = Path(os.path.realpath(src.root))
    places = [root / place.lstrip("/") for place in _READ_PLACES] if src.is_live else [root]
    for place in places:
        if out == place or out.is_relative_to(place):
            return f"{out_dir} is inside {place}, which the capture reads; name a directory outside it"
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            return f"{out_dir} exists and is not a directory; name a new directory"
        try:
            if any(out.iterdir()):
                return f"{out_dir} exists and is not empty; name a new directory (nothing was changed)"
        except OSError as exc:
            return f"cannot read {out_dir}: {exc.strerror}"
    return parent_problem(out)


def capture(out_dir: str | os.PathLike[str], source: SystemRoot | None = None) -> int:
    """Write a capture of ``source`` (the live system by default) to ``out_dir``; return files copied.

    Raises CaptureError (nothing written) when :func:`capture_problem` names a problem or the source
    holds nothing mdtui reads. The copy is made in a temporary directory beside ``out_dir`` and renamed
    into place when whole, so a failure leaves nothing behind.
    """
    src = SystemRoot(os.path.realpath((source or SystemRoot("/")).root))
    out = Path(out_dir)
    problem = capture_problem(out, src)
    if problem:
        raise CaptureError(problem)
    if not src.path("/sys/block").is_dir() and not src.path("/proc/mdstat").is_file():
        raise CaptureError(f"{src.root} has no sys/block and no proc/mdstat: nothing mdtui reads is there")
    target = Path(os.path.realpath(out))
    try:
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part"))
    except OSError as exc:
        raise CaptureError(f"cannot write in {target.parent}: {exc.strerror}") from None
    try:
        copied = _copy_all(src, staging)
        if copied == 0:
            raise CaptureError(f"found nothing mdtui reads below {src.root}; no capture written")
        # rename() onto an existing directory succeeds only if it is empty, as capture_problem required.
        os.rename(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)  # made by this call, so ours to remove
        if isinstance(exc, OSError):
            raise CaptureError(f"cannot write the capture to {out_dir}: {exc.strerror or exc}") from None
        raise
    return copied


def _copy_all(src: SystemRoot, out: Path) -> int:
    copier = _Copier(src, out)
    for name in _PROC_FILES:
        copier.file(f"/proc/{name}")
    mountinfo = src.read_table("/proc/self/mountinfo")
    if mountinfo is not None:
        (out / "proc/self").mkdir(parents=True, exist_ok=True)
        (out / "proc/self/mountinfo").write_text(mountinfo.strip() + "\n")

    for name in src.listdir("/sys/block"):
        block = f"/sys/block/{name}"
        copier.link(block)
        for rel in _BLOCK_FILES:
            copier.file(f"{block}/{rel}")
        for group in ("holders", "slaves"):
            for entry in src.listdir(f"{block}/{group}"):
                copier.link(f"{block}/{group}/{entry}")
            (copier._dest(src.to_system(Path(os.path.realpath(src.path(block))))) / group).mkdir(
                parents=True, exist_ok=True
            )
        if src.path(f"{block}/md").is_dir():
            copier.tree(f"{block}/md", depth=2)
        for entry in src.listdir(block):
            if src.path(f"{block}/{entry}/partition").exists():
                for rel in ("partition", "dev", "size", "start", "stat"):
                    copier.file(f"{block}/{entry}/{rel}")
                for holder in src.listdir(f"{block}/{entry}/holders"):
                    copier.link(f"{block}/{entry}/holders/{holder}")
        _capture_device(copier, src, block)
        mm = src.read_text(f"{block}/dev")
        if mm:
            copier.file(f"/run/udev/data/b{mm}")
        for entry in src.listdir(block):
            part_mm = src.read_text(f"{block}/{entry}/dev")
            if part_mm and src.path(f"{block}/{entry}/partition").exists():
                copier.file(f"/run/udev/data/b{part_mm}")

    for entry in src.listdir("/dev/disk/by-id"):
        copier.link(f"/dev/disk/by-id/{entry}")
    for entry in src.listdir("/sys/class/ata_link"):
        for rel in _ATA_LINK_FILES:
            copier.file(f"/sys/class/ata_link/{entry}/{rel}")
    return copier.copied


def _capture_device(copier: _Copier, src: SystemRoot, block: str) -> None:
    """The device behind a block node: identity files, then every ancestor's link attributes."""
    device = f"{block}/device"
    copier.link(device)
    for rel in _DEVICE_FILES:
        copier.file(f"{device}/{rel}")
    copier.link(f"{device}/driver")
    real_device = src.resolve(device)
    if real_device is not None:
        # NVMe: the namespace's device is the controller (or a subsystem holding controllers).
        for entry in src.listdir(real_device):
            if re.match(r"^nvme\d+$", entry):
                sub = src.to_system(real_device / entry)
                copier.link(sub)
                for rel in _DEVICE_FILES:
                    copier.file(f"{sub}/{rel}")
                copier.link(f"{sub}/device")
                inner = src.resolve(f"{sub}/device")
                if inner is not None:
                    _capture_ancestors(copier, src, inner)
        copier.link(f"{src.to_system(real_device)}/device")
    real = src.resolve(block)
    if real is not None:
        _capture_ancestors(copier, src, real)


def _capture_ancestors(copier: _Copier, src: SystemRoot, real: Path) -> None:
    sys_root = src.path("/sys")
    current = real
    while current != sys_root and current != current.parent:
        system = src.to_system(current)
        for rel in _PCI_FILES:
            copier.file(f"{system}/{rel}")
        copier.link(f"{system}/driver")
        if re.match(r"^ata\d+$", current.name):
            for entry in src.listdir(current):
                if entry.startswith("link"):
                    for rel in _ATA_LINK_FILES:
                        copier.file(f"{system}/{entry}/ata_link/{entry}/{rel}")
        if current.name.startswith("port-"):
            for entry in src.listdir(current):
                if entry.startswith("phy-"):
                    copier.link(f"{system}/{entry}")
                    for rel in _SAS_PHY_FILES:
                        copier.file(f"{system}/{entry}/sas_phy/{entry}/{rel}")
        current = current.parent
