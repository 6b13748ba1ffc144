"""Estimates of the space md metadata takes from each member, so predicted sizes match mdadm's."""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB

METADATA_VERSIONS: tuple[str, ...] = ("1.2", "1.0", "0.90")
DEFAULT_METADATA = "1.2"
# mdadm(8): 0.90 "limits arrays to 28 component devices and limits component devices of levels 1
# and greater to 2 terabytes".
V090_MAX_DEVICES = 28
V090_MAX_MEMBER_BYTES = 2 * TIB


def _bitmap_space_bytes(size_bytes: int) -> int:
    # What mdadm reserves beside a 1.0 superblock for a possible internal bitmap (choose_bm_space).
    if size_bytes >= 200 * GIB:
        return 128 * KIB
    if size_bytes > 8 * GIB:
        return 64 * KIB
    return 4 * KIB


def _v12_data_offset_bytes(size_bytes: int) -> int:
    # mdadm leaves up to 128 MiB of headroom before the data (room for a reshape to move data),
    # halving it on small devices, plus about 1 MiB for superblock, bitmap and bad-block log.
    headroom = 128 * MIB
    while headroom > MIB and headroom * 1024 > size_bytes:
        headroom //= 2
    return headroom + MIB


def reserved_bytes(size_bytes: int, metadata: str | None) -> int:
    """Bytes of one member that will not hold array data, for a metadata version (None: --build).

    An estimate, within a few MiB of what mdadm 4.x chooses: 0.90 keeps its superblock in the last
    64–128 KiB, 1.0 keeps it (and bitmap space) at the end, and 1.2 starts data after a headroom of
    up to 128 MiB (a 1 TB member ends up with data at 129 MiB, as `mdadm --examine` shows).
    """
    if metadata is None:
        return 0
    if metadata == "0.90":
        usable = (size_bytes - size_bytes % (64 * KIB)) - 64 * KIB
        return size_bytes - max(usable, 0)
    if metadata == "1.0":
        superblock_offset = size_bytes - 8 * KIB
        superblock_offset -= superblock_offset % (4 * KIB)
        usable = superblock_offset - _bitmap_space_bytes(size_bytes)
        return size_bytes - max(usable, 0)
    return min(size_bytes, _v12_data_offset_bytes(size_bytes))


def data_bytes(size_bytes: int, metadata: str | None) -> int:
    """Bytes of one member left for array data."""
    return size_bytes - reserved_bytes(size_bytes, metadata)
