"""What sits on a block device (an md array): the kind of filesystem or volume udev found, its own size read from
its superblock (ext2/3/4, xfs, an LVM physical volume), where it is mounted and what holds it.

The size comes from the filesystem itself, never from the device: a shrink must not cut a filesystem that is
larger than the new array, and only its superblock knows how large it is. The superblock bytes are untrusted:
each parser checks the magic and keeps every number in range, and says why when it cannot answer.
"""

from __future__ import annotations

import errno
import os
import stat
import struct

from mdtui.model.contents import Contents
from mdtui.probe.mounts import read_mounts
from mdtui.probe.root import SystemRoot
from mdtui.probe.udev import UdevReader
from mdtui.text import clean_text

# Where each superblock sits and how much of the device is read: the LVM label is in one of the first four
# sectors, ext's superblock at 1 KiB, xfs's at 0.
HEAD_BYTES = 4096
EXT_SUPERBLOCK_OFFSET = 1024
EXT_MAGIC = 0xEF53
EXT_INCOMPAT_64BIT = 0x80
EXT_MAX_LOG_BLOCK = 6  # 1 KiB << 6 = 64 KiB, the largest ext block
XFS_MAGIC = b"XFSB"
XFS_BLOCK_SIZES = range(9, 17)  # 512 B .. 64 KiB, as powers of two
LVM_LABEL = b"LABELONE"
LVM_TYPE = b"LVM2 001"
LVM_UUID_BYTES = 32
# A filesystem larger than 2^63 bytes is damage.
MAX_SIZE = (1 << 63) - 1
SIZED_KINDS = ("ext2", "ext3", "ext4", "xfs", "LVM2_member")


def ext_size(head: bytes) -> int | None:
    """An ext2/3/4 filesystem's size in bytes from the first 4 KiB of its device (superblock at 1 KiB)."""
    sb = head[EXT_SUPERBLOCK_OFFSET : EXT_SUPERBLOCK_OFFSET + 1024]
    if len(sb) < 1024 or struct.unpack_from("<H", sb, 0x38)[0] != EXT_MAGIC:
        return None
    (blocks_lo,) = struct.unpack_from("<I", sb, 0x04)
    (log_block,) = struct.unpack_from("<I", sb, 0x18)
    (incompat,) = struct.unpack_from("<I", sb, 0x60)
    if log_block > EXT_MAX_LOG_BLOCK:
        return None
    blocks = blocks_lo
    if incompat & EXT_INCOMPAT_64BIT:
        blocks |= struct.unpack_from("<I", sb, 0x150)[0] << 32
    size = blocks * (1024 << log_block)
    return size if 0 < size <= MAX_SIZE else None


def xfs_size(head: bytes) -> int | None:
    """An xfs filesystem's data section in bytes (sb_dblocks × sb_blocksize, big-endian, at offset 0)."""
    if len(head) < 16 or head[:4] != XFS_MAGIC:
        return None
    (block_size,) = struct.unpack_from(">I", head, 4)
    (blocks,) = struct.unpack_from(">Q", head, 8)
    if block_size not in {1 << shift for shift in XFS_BLOCK_SIZES}:
        return None
    size = blocks * block_size
    return size if 0 < size <= MAX_SIZE else None


def lvm_pv_size(head: bytes) -> int | None:
    """The device size an LVM2 physical volume records (pv_header.device_size_xl), from its label in one of the
    first four sectors."""
    for sector in range(4):
        label = head[sector * 512 : sector * 512 + 512]
        if len(label) < 32 or label[:8] != LVM_LABEL or label[24:32] != LVM_TYPE:
            continue
        (offset,) = struct.unpack_from("<I", label, 20)  # the pv_header, from the label's start
        start = sector * 512 + offset + LVM_UUID_BYTES
        if offset < 32 or start + 8 > len(head):
            return None
        (size,) = struct.unpack_from("<Q", head, start)
        return size if 0 < size <= MAX_SIZE else None
    return None


_PARSERS = {"ext2": ext_size, "ext3": ext_size, "ext4": ext_size, "xfs": xfs_size, "LVM2_member": lvm_pv_size}


def kind_of(head: bytes) -> str | None:
    """The kind a superblock's magic names, for when udev said nothing (ext2/3/4 are told apart by udev only)."""
    if xfs_size(head) is not None:
        return "xfs"
    if lvm_pv_size(head) is not None:
        return "LVM2_member"
    if ext_size(head) is not None:
        return "ext4"
    return None


def read_head(device: str) -> tuple[bytes | None, str | None]:
    """The first HEAD_BYTES of a block device, or why they could not be read. Only a block device is opened."""
    try:
        fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            return None, "not read: opening the array needs root"
        return None, f"not read: {exc.strerror}"
    try:
        if not stat.S_ISBLK(os.fstat(fd).st_mode):
            return None, f"not read: {device} is not a block device"
        return os.pread(fd, HEAD_BYTES, 0), None
    except OSError as exc:
        return None, f"not read: {exc.strerror}"
    finally:
        os.close(fd)


def read_contents(root: SystemRoot, name: str) -> Contents:
    """What sits on /dev/NAME: udev's kind and label, the size from the superblock (live system, root), the
    mount point, the holders."""
    device = f"/dev/{name}"
    majmin = root.read_text(f"/sys/block/{name}/dev")
    udev = UdevReader(root)
    info = udev.lookup(majmin, name) if udev.available else None
    kind = info.get("ID_FS_TYPE") if info is not None else None
    table = info.get("ID_PART_TABLE_TYPE") if info is not None else None
    label = info.get("ID_FS_LABEL") if info is not None else None
    holders = tuple(root.listdir(f"/sys/block/{name}/holders"))
    partitions = tuple(e for e in root.listdir(f"/sys/block/{name}") if e.startswith(name) and e != name)
    mount_point = next(
        (
            m.mount_point
            for m in read_mounts(root)
            if m.source in (device, f"/dev/md/{name}") or (majmin and m.major_minor == majmin)
        ),
        None,
    )
    size: int | None = None
    problem: str | None = None
    head_read = False
    if table or partitions:
        kind = f"partition table ({table or 'partitions ' + ', '.join(partitions)})"
        problem = "a partitioned array: its partitions' filesystems are not read"
    elif not root.is_live:
        problem = "not read: a captured tree holds no device contents"
    else:
        head, problem = read_head(device)
        if head is not None:
            head_read = True
            kind = kind or kind_of(head)
            parser = _PARSERS.get(kind or "")
            size = parser(head) if parser is not None else None
            if kind is not None and size is None:
                problem = "its size was not found in its superblock" if parser else f"mdtui does not read {kind}'s size"
    return Contents(
        kind=clean_text(kind, one_line=True) if kind else None,
        label=clean_text(label, one_line=True) if label else None,
        size_bytes=size,
        size_problem=problem if size is None else None,
        mount_point=mount_point,
        holders=holders,
        read=kind is not None or head_read,
    )
