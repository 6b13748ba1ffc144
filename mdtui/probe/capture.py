"""Copy the parts of /sys, /proc, /run/udev and /dev/disk that mdtui reads into a directory.

The copy is a system root that `mdtui --root DIR scan` reads exactly as it reads the live system:
attach it to a bug report, or keep it as a test fixture. sysfs links stay relative links. A captured tree
can be captured again (a tree that came with a bug report): it is read confined to itself, and only links
that stay inside the copy are recreated, so a tree can neither make mdtui read a file of this machine
nor write one outside the copy.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from mdtui.errors import MdtuiError, ProbeError
from mdtui.output_file import parent_problem
from mdtui.probe.root import ATTRIBUTE_LIMIT, TABLE_LIMIT, RefusedFileError, SystemRoot
from mdtui.rootsafe import READ_DIR, locate, trusted_uids
from mdtui.rootwrite import write_in

_BLOCK_FILES = (
    "dev",
    "size",
    "ro",
    "removable",
    "serial",
    "wwid",
    "range",
    "capability",
    "stat",
    "queue/rotational",
    "queue/logical_block_size",
    "queue/physical_block_size",
    "dm/name",
    "dm/uuid",
    "loop/backing_file",
)
_DEVICE_FILES = ("model", "vendor", "serial", "wwid", "firmware_rev", "state", "vpd_pg80", "rev", "transport")
_PCI_FILES = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width", "vendor", "device")
_ATA_LINK_FILES = ("sata_spd", "hw_sata_spd_limit", "sata_spd_limit")
_SAS_PHY_FILES = (
    "negotiated_linkrate",
    "maximum_linkrate_hw",
    "minimum_linkrate_hw",
    "maximum_linkrate",
    "sas_address",
)
_PROC_FILES = ("mdstat", "swaps", "diskstats", "stat", "cpuinfo", "loadavg", "meminfo")


class CaptureError(ProbeError):
    """A capture cannot be written where asked; nothing was written."""


class _Copier:
    """Copies into a new directory (``out``, an open descriptor): files at their real path, links as links.

    Everything is read through the source's confined reads (a captured tree is read beneath itself only)
    and written beneath ``out`` through its descriptor: no link is followed out of either.
    """

    def __init__(self, source: SystemRoot, out: int, refused: Callable[[str], None]) -> None:
        self.source = source
        self.out = out
        self.refused = refused
        self.copied = 0

    def _system(self, real: Path) -> str:
        return self.source.to_system(real)

    def write(self, system_path: str, data: bytes) -> None:
        """A file at ``system_path`` in the copy: made beneath the copy's descriptor, never through a link."""
        with locate(system_path.lstrip("/"), top=self.out, top_name="the capture", beneath=True, follow_last=False,
                    make_mode=0o755) as where:  # fmt: skip
            write_in(where.directory, where.name, data, replace=True, shown=Path(system_path))

    def mkdir(self, system_path: str) -> None:
        inside = system_path.lstrip("/")
        with locate(inside, top=self.out, top_name="the capture", beneath=True, make_mode=0o755) as where:
            if where.name and where.info is None:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(where.name, 0o755, dir_fd=where.directory)

    def file(self, system_path: str) -> None:
        """Copy one regular file, found through any links inside the source, to its real path in the copy."""
        real = self.source.resolve(system_path)
        if real is None:
            return
        limit = TABLE_LIMIT if system_path.startswith(("/proc/", "/run/udev/")) else ATTRIBUTE_LIMIT
        try:
            data = self.source.read_raw(real, limit=limit)
        except RefusedFileError:
            return  # write-only or unreadable sysfs attributes, a file past its cap, a directory
        if data is None:
            return
        self.write(self._system(real), data)
        self.copied += 1

    def link(self, system_path: str) -> None:
        """Recreate a symlink as the same relative link, below its parent's real path, when it stays inside
        the copy: a link that is absolute or climbs above the root is refused (and said), not recreated."""
        parent, _, name = system_path.rpartition("/")
        text = self.source.read_link(system_path)
        if text is None:
            return
        parent_real = self.source.resolve(parent or "/")
        if parent_real is None:
            return
        where = self._system(parent_real).rstrip("/")
        target = _link_inside(where, text)
        if target is None:
            self.refused(f"{system_path} -> {text} leads out of {self.source.root}; not copied")
            return
        dest = f"{where}/{name}"
        with locate(dest.lstrip("/"), top=self.out, top_name="the capture", beneath=True, follow_last=False,
                    make_mode=0o755) as spot:  # fmt: skip
            if spot.info is not None or not spot.name:
                return
            os.symlink(text, spot.name, dir_fd=spot.directory)
        landing = self.source.resolve(system_path)
        # Give the link somewhere to land so it resolves inside the copy (driver dirs, holders).
        if landing is not None and (info := self.source.lstat(landing)) is not None and stat.S_ISDIR(info.st_mode):
            self.mkdir(self._system(landing))

    def tree(self, system_path: str, depth: int = 3) -> None:
        """Copy a small directory such as /sys/block/md0/md recursively, links as links."""
        for entry in self.source.listdir(system_path):
            child = f"{system_path}/{entry}"
            info = self.source.lstat(child)
            if info is None:
                continue
            if stat.S_ISLNK(info.st_mode):
                self.link(child)
            elif stat.S_ISDIR(info.st_mode) and depth > 0:
                self.tree(child, depth - 1)
            elif stat.S_ISREG(info.st_mode):
                self.file(child)


def _link_inside(directory: str, text: str) -> str | None:
    """Where a relative link in ``directory`` (a system path) leads, when it stays inside the root and
    reads the way sysfs's and udev's own links do ("../../devices/..."): ".." only at its start, never
    above the root. None otherwise (an absolute link, a climb past the root, a ".." after a name)."""
    if not text or text.startswith("/"):
        return None
    parts = text.split("/")
    ups = 0
    while ups < len(parts) and parts[ups] == "..":
        ups += 1
    rest = [part for part in parts[ups:] if part not in ("", ".")]
    if any(part == ".." for part in rest):
        return None
    base = [part for part in directory.split("/") if part]
    if ups > len(base):
        return None
    return "/" + "/".join([*base[: len(base) - ups], *rest])


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


def capture(
    out_dir: str | os.PathLike[str],
    source: SystemRoot | None = None,
    refused: Callable[[str], None] | None = None,
) -> int:
    """Write a capture of ``source`` (the live system by default) to ``out_dir``; return files copied.

    Raises CaptureError (nothing written) when :func:`capture_problem` names a problem, when ``out_dir``
    is a link (the copy is never written through one) or the source holds nothing mdtui reads. The copy
    is made in a new private directory beside ``out_dir``, through descriptors only, and renamed into
    place when whole, so a failure leaves nothing behind. ``refused`` hears of each link of the source
    that leads out of it, which is not copied.
    """
    src = SystemRoot(os.path.realpath((source or SystemRoot("/")).root))
    out = Path(out_dir)
    problem = capture_problem(out, src)
    if problem:
        raise CaptureError(problem)
    if src.lstat("/sys/block") is None and src.lstat("/proc/mdstat") is None:
        raise CaptureError(f"{src.root} has no sys/block and no proc/mdstat: nothing mdtui reads is there")
    try:
        where = locate(out, owners=trusted_uids(), follow_last=False)
    except MdtuiError as exc:
        raise CaptureError(f"cannot write the capture to {out_dir}: {exc}") from None
    with where:
        if not where.name:
            raise CaptureError(f"{out_dir} names no new directory; name one")
        if where.info is not None and stat.S_ISLNK(where.info.st_mode):
            raise CaptureError(
                f"{out_dir} is a symbolic link; mdtui never writes a capture through one (name a new directory)"
            )
        if where.info is not None and not stat.S_ISDIR(where.info.st_mode):
            raise CaptureError(f"{out_dir} exists and is not a directory; name a new directory")
        staging = f".{where.name[:200]}.{secrets.token_hex(8)}.part"
        try:
            os.mkdir(staging, 0o700, dir_fd=where.directory)
            staged = os.open(staging, READ_DIR, dir_fd=where.directory)
        except OSError as exc:
            raise CaptureError(f"cannot write in {where.path.parent}: {exc.strerror or exc}") from None
        try:
            copied = _copy_all(src, staged, refused or (lambda _why: None))
            if copied == 0:
                raise CaptureError(f"found nothing mdtui reads below {src.root}; no capture written")
            # rename() onto an existing directory succeeds only if it is empty, as capture_problem required;
            # onto a link it fails (ENOTDIR): nothing is ever written through one.
            os.rename(staging, where.name, src_dir_fd=where.directory, dst_dir_fd=where.directory)
        except BaseException as exc:
            shutil.rmtree(staging, ignore_errors=True, dir_fd=where.directory)  # made by this call: ours to remove
            if isinstance(exc, (OSError, MdtuiError)) and not isinstance(exc, CaptureError):
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise CaptureError(f"cannot write the capture to {out_dir}: {why}") from None
            raise
        finally:
            os.close(staged)
    return copied


def _copy_all(src: SystemRoot, out: int, refused: Callable[[str], None]) -> int:
    copier = _Copier(src, out, refused)
    for name in _PROC_FILES:
        copier.file(f"/proc/{name}")
    mountinfo = src.read_table("/proc/self/mountinfo")
    if mountinfo is not None:
        copier.write("/proc/self/mountinfo", (mountinfo.strip() + "\n").encode())

    for name in src.listdir("/sys/block"):
        block = f"/sys/block/{name}"
        copier.link(block)
        for rel in _BLOCK_FILES:
            copier.file(f"{block}/{rel}")
        real_block = src.resolve(block)
        for group in ("holders", "slaves"):
            for entry in src.listdir(f"{block}/{group}"):
                copier.link(f"{block}/{group}/{entry}")
            if real_block is not None:
                copier.mkdir(f"{src.to_system(real_block)}/{group}")
        if (info := src.lstat(f"{block}/md")) is not None and stat.S_ISDIR(info.st_mode):
            copier.tree(f"{block}/md", depth=2)
        for entry in src.listdir(block):
            if src.lstat(f"{block}/{entry}/partition") is not None:
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
            if part_mm and src.lstat(f"{block}/{entry}/partition") is not None:
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
    sys_root = src.resolve("/sys")
    current = real
    while current != sys_root and current != current.parent and (sys_root is None or sys_root in current.parents):
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
