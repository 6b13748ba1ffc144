"""A create request as asked, its limits, and the plain-text figures its messages use."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mdtui.model.disk import Disk
from mdtui.plan.levels import RaidLevel

# mdadm(8): "The default when creating an array is 512KB." mdtui always passes the chunk explicitly,
# because `--build` would otherwise default to 64 KiB and the plan's numbers would silently differ.
DEFAULT_CHUNK_KIB = 512
MIN_CHUNK_KIB = 4
# The bitmaps a form offers (a bitmap file is typed as its path; kernel 6.18's lockless one is offered where
# the kernel has it: mdtui.plan.write_safety decides what md accepts).
BITMAP_CHOICES: tuple[str, ...] = ("none", "internal")
# More waste than this (share of the members' raw capacity) is refused unless allowed explicitly:
# half the bought capacity gone is almost always a wrong pick, not a deliberate test.
MAX_WASTE_FRACTION = 0.5
# mdadm itself warns when sizes differ by more than 1%.
WARN_WASTE_FRACTION = 0.01
SMALL_PARITY_CHUNK_KIB = 64
WIDE_RAID5_MEMBERS = 8

MD_DEVICE = re.compile(r"^/dev/(md\d+|md/[A-Za-z0-9_.-]+)$")
# A 1.x superblock stores at most 32 bytes of name.
SUPERBLOCK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")

@dataclass(frozen=True)
class CreateRequest:
    """What the user asked for. ``metadata`` None means mdadm's default 1.2 (and must stay None for
    --build, which writes no superblock)."""

    device: str  # "/dev/md0" or "/dev/md/bench"
    level: str | RaidLevel  # "raid5", "5", "linear", or a level object
    members: tuple[Disk, ...]
    spares: tuple[Disk, ...] = ()
    name: str | None = None  # mdadm --name, stored in a 1.x superblock
    chunk_kib: int | None = None  # None: DEFAULT_CHUNK_KIB for levels with a chunk
    layout: str | None = None  # None: the level's default
    metadata: str | None = None  # "1.2", "1.0", "0.90"
    # "none", "internal", "lockless" or an absolute file path; benchmarks want none (finding 4 used none)
    bitmap: str = "none"
    bitmap_chunk_kib: int | None = None
    policy: str = "resync"  # consistency policy: resync, ppl (raid5) or journal (with ``journal``)
    journal: Disk | None = None  # the write journal device (raid4/5/6)
    kernel: str | None = None  # the running kernel's release: what md accepts (the lockless bitmap: 6.18)
    assume_clean: bool = False
    build: bool = False  # superblock-less `mdadm --build`, for raid0/linear test arrays
    allow_mixed_sizes: bool = False  # accept members so different that over half the space is unused
    active_arrays: frozenset[str] = frozenset()  # kernel names of running arrays ("md0"): not to be reused


def member_path(disk: Disk) -> str:
    """The path put in argv: the by-id link names a stable identity, the kernel name may move."""
    return disk.by_id_path or disk.dev_path




__all__ = [
    "BITMAP_CHOICES",
    "DEFAULT_CHUNK_KIB",
    "MIN_CHUNK_KIB",
    "CreateRequest",
    "member_path",
]
