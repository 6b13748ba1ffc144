"""What sits on an array that grows or shrinks: the follow-up step that grows it to fill the array, and why a shrink
would cut it."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.format import iec_bytes
from mdtui.model.contents import Contents
from mdtui.plan.grow_shape import KIB

# What mdtui can read the size of and grow after the array grows (probe/contents names the kinds).
EXT_KINDS = frozenset({"ext2", "ext3", "ext4"})


LVM_KIND = "LVM2_member"


@dataclass(frozen=True)
class FollowUp:
    """What grows the filesystem or volume after the array grew: its own confirmed step (argvs run in order),
    or words when mdtui cannot run it (``argvs`` empty)."""

    kind: str
    argvs: tuple[tuple[str, ...], ...]
    description: str


def followup(contents: Contents, device: str) -> FollowUp | None:
    """The step that grows what sits on the array to fill it once the array is larger."""
    kind = contents.kind
    if kind is None:
        return None
    mounted = contents.mount_point
    if kind in EXT_KINDS:
        if mounted:
            return FollowUp(kind, (("resize2fs", device),), f"grow the {kind} filesystem (mounted at {mounted}) online")
        return FollowUp(
            kind,
            (("e2fsck", "-f", "-p", device), ("resize2fs", device)),
            f"check the unmounted {kind} filesystem (resize2fs asks for it), then grow it",
        )
    if kind == "xfs":
        if mounted:
            return FollowUp(kind, (("xfs_growfs", mounted),), f"grow the xfs filesystem mounted at {mounted}")
        return FollowUp(
            kind, (), f"xfs grows only while mounted: mount {device}, then run xfs_growfs on its mount point"
        )
    if kind == LVM_KIND:
        return FollowUp(kind, (("pvresize", device),), "grow the LVM physical volume (its volume group gains extents)")
    if kind == "btrfs":
        if mounted:
            return FollowUp(
                kind,
                (("btrfs", "filesystem", "resize", "max", mounted),),
                f"grow the btrfs filesystem mounted at {mounted} (its device 1; name another devid if {device} is not)",
            )
        return FollowUp(kind, (), f"btrfs grows only while mounted: mount {device}, then `btrfs filesystem resize max`")
    if kind.startswith("partition table"):
        return FollowUp(
            kind, (), f"{device} holds a {kind}: grow the last partition (parted resizepart), then its filesystem"
        )
    return FollowUp(kind, (), f"{device} holds {kind}: mdtui does not grow it")


def shrink_problems(contents: Contents, device: str, new_bytes: int) -> list[str]:
    """Why a shrink to ``new_bytes`` would cut what sits on the array (its size read from its own superblock)."""
    if not contents.read:
        return [
            f"what sits on {device} could not be read ({contents.size_problem or 'unknown'}): "
            "mdtui will not shrink blind"
        ]
    if contents.kind is None:
        return []
    if contents.holders:
        return [f"{device} is held by {', '.join(contents.holders)}: shrink what is on it first and release it"]
    if contents.size_bytes is None:
        why = contents.size_problem or "its size could not be read"
        return [f"{device} holds {contents.kind} and {why}: mdtui will not shrink under it"]
    if contents.size_bytes <= new_bytes:
        return []
    size = f"{contents.size_bytes:,} bytes ({iec_bytes(contents.size_bytes)})"
    new = f"{new_bytes:,} bytes ({iec_bytes(new_bytes)})"
    if contents.kind in EXT_KINDS:
        how = (
            f"shrink it first: umount {contents.mount_point or device}; e2fsck -f {device}; "
            f"resize2fs {device} {new_bytes // KIB}K"
        )
    elif contents.kind == "xfs":
        how = "xfs cannot shrink: copy the data off, shrink the array, make a new filesystem"
    elif contents.kind == LVM_KIND:
        how = f"move extents off its end (pvmove), then `pvresize --setphysicalvolumesize {new_bytes // KIB}K {device}`"
    else:
        how = f"shrink the {contents.kind} first with its own tool"
    return [f"the {contents.kind} on {device} is {size}, larger than the array after the shrink, {new}: {how}"]
