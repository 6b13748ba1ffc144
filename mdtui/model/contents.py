"""What sits on a block device: the kind of filesystem or volume, its own size, where it is mounted."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Contents:
    """What sits on an array (probe/contents reads it): the kind of filesystem or volume, its own size as its
    superblock says, where it is mounted, what holds the array."""

    kind: str | None = None  # "ext4", "xfs", "LVM2_member", "btrfs", "swap", "partition table (gpt)"; None: nothing
    label: str | None = None
    size_bytes: int | None = None
    size_problem: str | None = None  # why size_bytes is None
    mount_point: str | None = None
    holders: tuple[str, ...] = ()  # dm devices (LVM volumes) on top of the array
    read: bool = True  # False: what sits on it could not be read at all (captured tree, not root)
