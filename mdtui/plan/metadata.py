"""The space md metadata takes from each member, computed as mdadm 4.2 lays out a new array.

The figures are mdadm 4.2's own arithmetic (super1.c ``validate_geometry1``, ``choose_bm_space`` and
``write_init_super1``; super0.c ``validate_geometry0``), so a planned size is the created array's
size to the byte; the lab checks that for every level (tests/lab/test_create.py).
"""

from __future__ import annotations

from collections.abc import Sequence

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB
SECTOR = 512

METADATA_VERSIONS: tuple[str, ...] = ("1.2", "1.0", "0.90")
DEFAULT_METADATA = "1.2"
# mdadm(8): 0.90 "limits arrays to 28 component devices and limits component devices of levels 1
# and greater to 2 terabytes".
V090_MAX_DEVICES = 28
V090_MAX_MEMBER_BYTES = 2 * TIB

# mdadm 4.2 super1.c, in 512-byte sectors.
_MAX_HEADROOM_SECTORS = 128 * 1024 * 2  # reshape headroom before the data: at most 128 MiB
_V12_BASE_SECTORS = 12 * 2  # 1.2: 4 KiB before the superblock, the superblock, the bad-block log
_V10_BASE_SECTORS = 8 * 2 + 8  # 1.0: the superblock 8-12 KiB from the end, and the bad-block log
_ONE_MEG_SECTORS = 2 * 1024  # a 1.2 data offset is a whole number of MiB
_V090_RESERVED_SECTORS = 64 * 2  # 0.90: the last 64-128 KiB (MD_NEW_SIZE_SECTORS)


def bitmap_space_sectors(size_sectors: int) -> int:
    """What mdadm keeps free for a possible internal bitmap on a member (choose_bm_space)."""
    if size_sectors < 64 * 2:
        return 0
    if size_sectors - 64 * 2 >= 200 * 1024 * 1024 * 2:
        return 128 * 2
    if size_sectors - 4 * 2 > 8 * 1024 * 1024 * 2:
        return 64 * 2
    return 4 * 2


def v12_data_offset_bytes(size_bytes: int, chunk_kib: int | None = None) -> int:
    """Where 1.2 metadata starts the data on a member of this size (mdadm 4.2 validate_geometry1).

    The headroom for a reshape starts at 128 MiB and halves while it exceeds 1/1024 of the member,
    but (for a level with a chunk) never below two chunks; superblock, bad-block log and bitmap
    space come on top and the sum is rounded up to a whole MiB: a 1 TB member starts its data at
    129 MiB, a 1 GiB one at 2 MiB, a 64 MiB one at 1 MiB, a 1 GiB one with 4 MiB chunks at 9 MiB.
    """
    size_sectors = size_bytes // SECTOR
    headroom = _MAX_HEADROOM_SECTORS
    while (headroom << 10) > size_sectors and (not chunk_kib or headroom // 2 >= chunk_kib * 2 * 2):
        headroom >>= 1
    offset = _V12_BASE_SECTORS + bitmap_space_sectors(size_sectors) + headroom
    offset = -(-offset // _ONE_MEG_SECTORS) * _ONE_MEG_SECTORS
    return offset * SECTOR


def member_data_bytes(
    sizes: Sequence[int],
    metadata: str | None,
    chunk_kib: int | None = None,
    *,
    component: bool = True,
) -> list[int]:
    """Bytes of each member (in mdadm's argv order) that can hold array data, before chunk rounding.

    ``metadata`` None is ``mdadm --build``: no superblock, the whole member. ``component`` is True
    for levels mdadm gives one component size (raid1/4/5/6/10: the smallest of these figures), False
    for raid0 and linear, where md uses each member's data area as written in its superblock (with
    1.0 that area keeps no bitmap space). With 1.2 every member gets the first one's data offset:
    mdadm chooses it on the first device and uses it for the whole array.
    """
    if metadata is None:
        return list(sizes)
    if metadata == "0.90":
        return [max(_v090_sectors(size // SECTOR), 0) * SECTOR for size in sizes]
    if metadata == "1.0":
        return [max(_v10_sectors(size // SECTOR, component), 0) * SECTOR for size in sizes]
    if not sizes:
        return []
    offset = v12_data_offset_bytes(sizes[0], chunk_kib)
    return [max(size // SECTOR * SECTOR - offset, 0) for size in sizes]


def _v090_sectors(size_sectors: int) -> int:
    return (size_sectors & ~(_V090_RESERVED_SECTORS - 1)) - _V090_RESERVED_SECTORS


def _v10_sectors(size_sectors: int, component: bool) -> int:
    if component:
        # validate_geometry1: round down to 4 KiB, then superblock, bad-block log and bitmap space.
        return (size_sectors & ~(4 * 2 - 1)) - _V10_BASE_SECTORS - bitmap_space_sectors(size_sectors)
    # write_init_super1 for raid0/linear (no component size, so no bitmap space): the data ends at
    # the bad-block log just below the superblock.
    superblock = (size_sectors - 8 * 2) & ~(4 * 2 - 1)
    return superblock - 8


def data_bytes(size_bytes: int, metadata: str | None, chunk_kib: int | None = None, *, component: bool = True) -> int:
    """Bytes of one member left for array data (the member alone, or first, in mdadm's argv)."""
    return member_data_bytes([size_bytes], metadata, chunk_kib, component=component)[0]
