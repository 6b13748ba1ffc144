"""RAID level objects: minimum members, data disks, capacity, fault tolerance and small-write cost."""

from __future__ import annotations

from fractions import Fraction

import pytest

from mdtui.plan import metadata
from mdtui.plan.levels import (
    LEVELS,
    LINEAR,
    RAID0,
    RAID1,
    RAID4,
    RAID5,
    RAID5_LAYOUTS,
    RAID6,
    RAID6_LAYOUTS,
    RAID10,
    level_from_name,
)

GIB = 1024**3


@pytest.mark.parametrize(
    ("level", "minimum"),
    [(LINEAR, 2), (RAID0, 2), (RAID1, 2), (RAID4, 3), (RAID5, 3), (RAID6, 4), (RAID10, 2)],
)
def test_min_members(level, minimum):
    assert level.min_members == minimum


@pytest.mark.parametrize(
    ("level", "members", "layout", "data_disks"),
    [
        (LINEAR, 3, None, 3),
        (RAID0, 4, None, 4),
        (RAID1, 3, None, 1),
        (RAID4, 4, None, 3),
        (RAID5, 4, None, 3),
        (RAID6, 6, None, 4),
        (RAID10, 4, None, 2),
        (RAID10, 4, "f2", 2),
        (RAID10, 6, "n3", 2),
        (RAID10, 3, "n2", Fraction(3, 2)),
    ],
)
def test_data_disks(level, members, layout, data_disks):
    assert level.data_disks(members, layout) == data_disks


@pytest.mark.parametrize(
    ("level", "members", "layout", "tolerance"),
    [
        (LINEAR, 2, None, 0),
        (RAID0, 4, None, 0),
        (RAID1, 2, None, 1),
        (RAID1, 3, None, 2),
        (RAID4, 4, None, 1),
        (RAID5, 5, None, 1),
        (RAID6, 5, None, 2),
        (RAID10, 4, "n2", 1),
        (RAID10, 6, "o3", 2),
    ],
)
def test_fault_tolerance(level, members, layout, tolerance):
    assert level.fault_tolerance(members, layout) == tolerance


def test_fault_tolerance_sentences():
    assert "no member may fail" in RAID0.fault_tolerance_text(4)
    assert "any 2 of 3 members" in RAID1.fault_tolerance_text(3)
    assert "any 2 of 6" in RAID6.fault_tolerance_text(6)
    text = RAID10.fault_tolerance_text(4, "n2")
    assert "1 member guaranteed" in text
    assert "per mirror set" in text


def test_usable_bytes_smallest_member_times_data_disks():
    sizes = [100 * GIB, 100 * GIB, 120 * GIB, 100 * GIB]
    assert RAID5.usable_bytes(sizes, chunk_bytes=512 * 1024) == 300 * GIB
    assert RAID6.usable_bytes(sizes, chunk_bytes=512 * 1024) == 200 * GIB
    assert RAID10.usable_bytes(sizes, "n2", 512 * 1024) == 200 * GIB
    assert RAID1.usable_bytes(sizes) == 100 * GIB


def test_usable_bytes_rounds_each_member_down_to_a_chunk():
    chunk = 64 * 1024
    odd = 10 * GIB + 1000
    assert RAID5.usable_bytes([odd, odd, odd], chunk_bytes=chunk) == 2 * 10 * GIB


def test_raid0_and_linear_use_every_member_fully():
    sizes = [100 * GIB, 200 * GIB]
    assert RAID0.usable_bytes(sizes, chunk_bytes=64 * 1024) == 300 * GIB
    assert LINEAR.usable_bytes(sizes) == 300 * GIB
    assert not RAID0.uses_smallest_member()
    assert RAID5.uses_smallest_member()


def test_raid10_odd_members():
    assert RAID10.usable_bytes([10 * GIB] * 3, "n2", 512 * 1024) == 15 * GIB


def test_layouts():
    assert RAID4.layouts(4) == ("parity-last",)
    assert RAID5.layouts(4) == RAID5_LAYOUTS
    assert "left-symmetric" in RAID5_LAYOUTS
    assert "parity-first-6" in RAID6.layouts(4)
    assert "left-symmetric-6" not in RAID5.layouts(4)
    assert set(RAID6_LAYOUTS) >= {"ddf-zero-restart", "ddf-N-restart", "ddf-N-continue"}
    assert RAID10.layouts(2) == ("n2", "f2", "o2")
    assert RAID10.layouts(3) == ("n2", "f2", "o2", "n3", "f3", "o3")
    assert RAID0.layouts(4) == ()
    assert RAID1.layouts(2) == ()


def test_defaults_and_aliases():
    assert RAID5.effective_layout(None) == "left-symmetric"
    assert RAID6.effective_layout(None) == "left-symmetric"
    assert RAID10.effective_layout(None) == "n2"
    assert RAID4.effective_layout(None) == "parity-last"
    assert RAID0.effective_layout(None) is None
    assert RAID5.normalise_layout("rs") == "right-symmetric"


def test_redundant_and_parity():
    assert [lv.name for lv in LEVELS if lv.redundant] == ["raid1", "raid4", "raid5", "raid6", "raid10"]
    assert [lv.name for lv in LEVELS if lv.parity] == ["raid4", "raid5", "raid6"]


def test_raid10_copies_rejects_unknown_layout():
    with pytest.raises(ValueError, match="n2, f2, o2"):
        RAID10.copies(4, "n4")


@pytest.mark.parametrize(
    ("text", "level"),
    [("raid5", RAID5), ("5", RAID5), ("RAID6", RAID6), ("linear", LINEAR), ("10", RAID10), (" raid0 ", RAID0)],
)
def test_level_from_name(text, level):
    assert level_from_name(text) is level


def test_level_from_name_unknown():
    with pytest.raises(ValueError, match="unknown RAID level 'raid7'"):
        level_from_name("raid7")


def reserved_bytes(size_bytes: int, metadata_version: str | None, chunk_kib: int | None = None) -> int:
    """Bytes of one member that hold no array data."""
    return size_bytes - metadata.data_bytes(size_bytes, metadata_version, chunk_kib)


def test_metadata_reserved_bytes_are_mdadm_4_2s():
    kib, mib = 1024, 1024 * 1024
    # 1.2: data offset = 12 KiB + bitmap space + headroom (128 MiB, halved while over 1/1024 of the
    # member but never under two chunks), rounded up to a MiB.
    assert reserved_bytes(10**12, "1.2") == 129 * mib  # mdadm --examine: 264192 sectors
    assert reserved_bytes(GIB, "1.2") == 2 * mib  # headroom shrinks on small members
    assert reserved_bytes(64 * mib, "1.2") == 1 * mib  # headroom under 1 MiB: offset 1 MiB
    assert reserved_bytes(64 * mib, "1.2", chunk_kib=512) == 2 * mib  # two chunks of headroom
    assert reserved_bytes(GIB, "1.2", chunk_kib=4096) == 9 * mib  # 8 MiB headroom for 4 MiB chunks
    assert reserved_bytes(10**12, None) == 0
    size = 10**12
    assert metadata.data_bytes(size, "0.90") == size - size % (64 * 1024) - 64 * 1024
    # 1.0: superblock 8-12 KiB from the end, a 4 KiB bad-block log, then bitmap space (4, 64, 128 KiB).
    assert reserved_bytes(size, "1.0") == 12 * kib + 128 * kib
    assert reserved_bytes(8 * GIB, "1.0") == 12 * kib + 4 * kib
    assert reserved_bytes(8 * GIB + 8 * kib, "1.0") == 12 * kib + 64 * kib
    # raid0/linear on 1.0 keep no bitmap space.
    assert metadata.data_bytes(8 * GIB + 8 * kib, "1.0", component=False) == 8 * GIB + 8 * kib - 12 * kib
    assert metadata.data_bytes(8 * GIB + 2 * kib, "1.0", component=False) == 8 * GIB - 12 * kib


def test_metadata_12_uses_the_first_members_data_offset_for_all():
    mib = 1024 * 1024
    small, large = 64 * mib, 2 * GIB
    # Alone, the large member would start its data at 3 MiB; after a 64 MiB first member, at 1 MiB.
    assert reserved_bytes(large, "1.2") == 3 * mib
    assert metadata.member_data_bytes([small, large], "1.2") == [small - mib, large - mib]
    assert metadata.member_data_bytes([large, small], "1.2") == [large - 3 * mib, small - 3 * mib]


def test_bitmap_space_is_choose_bm_space():
    assert metadata.bitmap_space_sectors(127) == 0
    assert metadata.bitmap_space_sectors(8 * 1024 * 1024 * 2) == 8  # exactly 8 GiB: 4 KiB
    assert metadata.bitmap_space_sectors(8 * 1024 * 1024 * 2 + 9) == 128  # over 8 GiB: 64 KiB
    assert metadata.bitmap_space_sectors(200 * 1024 * 1024 * 2 + 128) == 256  # 200 GiB on: 128 KiB


def test_raid1_rounds_down_to_64_kib():
    assert RAID1.usable_bytes([GIB + 65535, GIB + 70000]) == GIB


@pytest.mark.parametrize(
    ("layout", "members", "chunks", "expected_chunks"),
    [
        ("n2", 2, 1009, 1009),
        ("n2", 3, 1009, 1513),  # 1009 × 3 / 2, rounded down to a chunk
        ("f2", 2, 1009, 1008),  # far copies keep whole chunks per copy: an odd count loses one
        ("o2", 3, 1009, 1512),  # 504 × 3
        ("n3", 3, 1000, 1000),
        ("f3", 4, 1000, 1332),  # 333 × 4
    ],
)
def test_raid10_size_is_mds_chunk_arithmetic(layout, members, chunks, expected_chunks):
    chunk = 64 * 1024
    assert RAID10.usable_bytes([chunks * chunk + 1000] * members, layout, chunk) == expected_chunks * chunk


def test_an_existing_arrays_layout_reads_in_either_spelling():
    # sysfs and mdadm --detail say "far=2"; --layout says "f2": one reading for the model, compare and advise.
    assert RAID10.normalise_layout("far=2") == "f2" and RAID10.normalise_layout("near=3") == "n3"
    assert RAID10.copies(4, "offset=2") == 2 and RAID10.normalise_layout("ls") == "left-symmetric"


def test_parity_disks_is_the_levels_one_answer() -> None:
    """The model, the sync-time model, the small-write words and grow's shapes all ask the level."""
    assert {level.name: level.parity_disks for level in LEVELS} == {
        "linear": 0, "raid0": 0, "raid1": 0, "raid4": 1, "raid5": 1, "raid6": 2, "raid10": 0,
    }  # fmt: skip
    assert all(level.parity == (level.parity_disks > 0) for level in LEVELS)
