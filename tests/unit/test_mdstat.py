"""Tests for the /proc/mdstat parser against captured and hand-written kernel output."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.model.array import MdArray
from mdtui.probe.mdstat import algorithm_name, parse_mdstat, parse_personalities, raid10_layout_name

# Captured trees from the Prometheus procfs test data (github.com/prometheus/procfs,
# testdata/fixtures.ttar, commit 3c943fd, Apache License 2.0) in tests/fixtures/procfs; see its README.


@pytest.fixture(scope="module")
def fixture_arrays(procfs_testdata: Path) -> dict[str, MdArray]:
    mdstat = procfs_testdata / "proc" / "mdstat"
    assert mdstat.is_file(), f"fixture missing: {mdstat}"
    return {array.name: array for array in parse_mdstat(mdstat.read_text())}


def test_fixture_lists_every_array_in_file_order(procfs_testdata: Path) -> None:
    arrays = parse_mdstat((procfs_testdata / "proc" / "mdstat").read_text())
    assert [a.name for a in arrays] == [
        "md3", "md127", "md0", "md4", "md6", "md8", "md201", "md7", "md9",
        "md10", "md11", "md12", "md126", "md219", "md00", "md120", "md101", "md42",
    ]  # fmt: skip


def test_raid6_geometry(fixture_arrays: dict[str, MdArray]) -> None:
    md3 = fixture_arrays["md3"]
    assert md3.state == "active"
    assert md3.level == "raid6"
    assert md3.raid_disks == 8
    assert md3.chunk_bytes == 64 * 1024
    assert md3.layout == "left-symmetric"
    assert md3.metadata == "1.2"
    assert md3.size_bytes == 5853468288 * 1024
    assert md3.degraded == 0
    assert md3.bitmap == "none"
    assert md3.sync is None
    spares = [m for m in md3.members if m.spare]
    assert sorted(m.name for m in spares) == ["sdd1", "sdd2"]
    assert all(m.slot is None for m in spares)
    active = [m for m in md3.members if not m.spare]
    assert len(active) == 8
    assert all("in_sync" in m.states for m in active)
    assert {m.name: m.slot for m in active}["sda1"] == 8


def test_recovery_progress(fixture_arrays: dict[str, MdArray]) -> None:
    md6 = fixture_arrays["md6"]
    assert md6.degraded == 1
    assert md6.raid_disks == 2
    assert md6.sync is not None
    assert md6.sync.action == "recover"
    assert md6.sync.state == "running"
    # mdstat counts 1 KiB blocks; the model counts 512-byte sectors.
    assert md6.sync.done_sectors == 16775552 * 2
    assert md6.sync.total_sectors == 195310144 * 2
    assert md6.sync.fraction == pytest.approx(0.0859, abs=1e-3)
    assert md6.sync.speed_bytes_per_s == 259783 * 1024
    assert md6.sync.eta_seconds == pytest.approx(17.0 * 60)
    members = {m.name: m for m in md6.members}
    assert members["sdb2"].faulty
    assert members["sdc"].spare
    assert members["sda2"].slot == 0
    assert members["sda2"].states == ("in_sync",)


def test_resync_and_check(fixture_arrays: dict[str, MdArray]) -> None:
    assert fixture_arrays["md8"].sync is not None
    assert fixture_arrays["md8"].sync.action == "resync"
    md201 = fixture_arrays["md201"].sync
    assert md201 is not None
    assert md201.action == "check"
    assert md201.speed_bytes_per_s == 114176 * 1024
    assert md201.eta_seconds == pytest.approx(12.0)


def test_inactive_array(fixture_arrays: dict[str, MdArray]) -> None:
    md4 = fixture_arrays["md4"]
    assert md4.state == "inactive"
    assert md4.size_bytes is None  # an inactive array's block count sums its components
    assert md4.sync is None
    assert {m.name: m.states for m in md4.members} == {"sda3": ("faulty",), "sdb3": ("spare",)}


def test_degraded_raid6_with_internal_bitmap(fixture_arrays: dict[str, MdArray]) -> None:
    md7 = fixture_arrays["md7"]
    assert md7.level == "raid6"
    assert md7.raid_disks == 4
    assert md7.degraded == 1
    assert md7.bitmap == "internal"
    assert md7.chunk_bytes == 512 * 1024
    assert [m.name for m in md7.members if m.faulty] == ["sdc1"]
    # Three U for three active members, so those three are known to be in sync.
    assert sorted(m.name for m in md7.members if "in_sync" in m.states) == ["sdb1", "sdd1", "sde1"]


def test_reshape(fixture_arrays: dict[str, MdArray]) -> None:
    md42 = fixture_arrays["md42"]
    assert md42.level == "raid5"
    assert md42.layout == "left-symmetric"
    assert md42.bitmap == "internal"
    assert md42.sync is not None
    assert md42.sync.action == "reshape"
    assert md42.sync.done_sectors == 1096879076 * 2
    assert md42.sync.total_sectors == 1953381440 * 2
    assert md42.sync.speed_bytes_per_s == 7640 * 1024
    assert md42.sync.eta_seconds == pytest.approx(1868.1 * 60)


def test_delayed_and_pending(fixture_arrays: dict[str, MdArray]) -> None:
    md9 = fixture_arrays["md9"]
    assert md9.sync is not None
    assert (md9.sync.action, md9.sync.state) == ("resync", "delayed")
    assert md9.sync.fraction is None
    md11 = fixture_arrays["md11"]
    assert md11.state == "auto-read-only"
    assert md11.sync is not None
    assert (md11.sync.action, md11.sync.state) == ("resync", "pending")


def test_raid0_linear_and_read_only(fixture_arrays: dict[str, MdArray]) -> None:
    md10 = fixture_arrays["md10"]
    assert md10.level == "raid0"
    assert md10.chunk_bytes == 64 * 1024
    assert md10.raid_disks == 2
    assert md10.metadata == "0.90"  # the kernel omits "super" only for 0.90 metadata
    md120 = fixture_arrays["md120"]
    assert md120.level == "linear"
    assert md120.chunk_bytes is None  # "0k rounding"
    assert md120.raid_disks == 2
    md101 = fixture_arrays["md101"]
    assert md101.state == "read-only"
    assert md101.level == "raid0"
    assert fixture_arrays["md00"].members[0].name == "xvdb"


def test_external_metadata(fixture_arrays: dict[str, MdArray]) -> None:
    assert fixture_arrays["md126"].metadata == "external:/md127/0"
    assert fixture_arrays["md126"].chunk_bytes == 128 * 1024
    md219 = fixture_arrays["md219"]
    assert md219.state == "inactive"
    assert md219.level is None
    assert md219.metadata == "external:imsm"
    assert len(md219.members) == 3
    assert all(m.spare and m.slot is None for m in md219.members)


def test_md127_and_0_90(fixture_arrays: dict[str, MdArray]) -> None:
    md127 = fixture_arrays["md127"]
    assert md127.level == "raid1"
    assert md127.metadata == "0.90"
    assert md127.size_bytes == 312319552 * 1024
    assert [m.slot for m in md127.members] == [0, 1]


RAID10_FAR = """\
Personalities : [raid10]
md5 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]
      2093056 blocks super 1.2 512K chunks 2 far-copies [4/4] [UUUU]

unused devices: <none>
"""

RAID10_NEAR = """\
Personalities : [raid10]
md5 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]
      2093056 blocks super 1.2 512K chunks 2 near-copies [4/4] [UUUU]
      bitmap: 1/1 pages [4KB], 65536KB chunk

unused devices: <none>
"""


def test_raid10_far_and_near() -> None:
    (far,) = parse_mdstat(RAID10_FAR)
    assert far.level == "raid10"
    assert far.layout == "far=2"
    assert far.chunk_bytes == 512 * 1024
    assert far.raid_disks == 4
    assert far.size_bytes == 2093056 * 1024
    (near,) = parse_mdstat(RAID10_NEAR)
    assert near.layout == "near=2"
    assert near.bitmap == "internal"


def test_raid10_offset_and_combined() -> None:
    text = "md2 : active raid10 sdb[1] sda[0]\n      1047552 blocks super 1.2 512K chunks 2 offset-copies [2/2] [UU]\n"
    assert parse_mdstat(text)[0].layout == "offset=2"
    text = (
        "md2 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]\n"
        "      1047552 blocks super 1.2 512K chunks 2 near-copies 2 far-copies [4/4] [UUUU]\n"
    )
    assert parse_mdstat(text)[0].layout == "near=2, far=2"


def test_degraded_raid1() -> None:
    text = (
        "Personalities : [raid1]\n"
        "md0 : active raid1 sdb1[1]\n"
        "      1046528 blocks super 1.2 [2/1] [_U]\n"
        "\n"
        "unused devices: <none>\n"
    )
    (md0,) = parse_mdstat(text)
    assert md0.degraded == 1
    assert md0.raid_disks == 2
    assert md0.members[0].name == "sdb1"
    assert md0.members[0].slot == 1
    assert md0.members[0].states == ("in_sync",)


def test_resyncing_raid6() -> None:
    text = (
        "Personalities : [raid6] [raid5] [raid4]\n"
        "md1 : active raid6 sde[3] sdd[2] sdc[1] sdb[0]\n"
        "      2093056 blocks super 1.2 level 6, 512k chunk, algorithm 18 [4/4] [UUUU]\n"
        "      [==>..................]  resync = 12.3% (128752/1046528) finish=1.2min speed=20480K/sec\n"
        "      \n"
        "unused devices: <none>\n"
    )
    (md1,) = parse_mdstat(text)
    assert md1.layout == "left-symmetric-6"
    assert md1.sync is not None
    assert md1.sync.action == "resync"
    assert md1.sync.done_sectors == 128752 * 2
    assert md1.sync.total_sectors == 1046528 * 2
    assert md1.sync.speed_bytes_per_s == 20480 * 1024
    assert md1.sync.eta_seconds == pytest.approx(72.0)


def test_member_flags_and_file_bitmap() -> None:
    text = (
        "md_d0 : active raid1 sdc1[2](R) sdb1[1](W) sda1[0]\n"
        "      1046528 blocks super 1.2 [2/2] [UU]\n"
        "      bitmap: 0/1 pages [0KB], 65536KB chunk, file: /var/md_d0.bitmap\n"
    )
    (array,) = parse_mdstat(text)
    assert array.name == "md_d0"
    assert array.bitmap == "/var/md_d0.bitmap"
    members = {m.name: m for m in array.members}
    assert members["sdc1"].states == ("replacement",)
    assert members["sdb1"].states == ("in_sync", "write_mostly")
    assert members["sda1"].states == ("in_sync",)


def test_non_persistent_and_recovery_with_members_unknown() -> None:
    text = (
        "md3 : active raid1 sdc[2] sdb[1] sda[0]\n"
        "      1046528 blocks super non-persistent [3/2] [UU_]\n"
        "      [>....................]  recovery =  0.4% (4352/1046528) finish=3.9min speed=4352K/sec\n"
    )
    (array,) = parse_mdstat(text)
    assert array.metadata == "none"
    assert array.degraded == 1
    # Three active members for two U: mdstat cannot say which one is rebuilding.
    assert all("in_sync" not in m.states for m in array.members)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n\n",
        "Personalities : \nunused devices: <none>\n",
        "garbage \x00\xff with no structure\n:::\n[[[]]]",
        "md0 : ",
        "md0 : active",
        "md0 : active raid1 sda1[",
        "md0 : active raid1 sda1[0] sdb1[x](Q)\n      12 blocks super",
        "md0 : active raid5 sda[0]\n      123 blocks level 5, 64k chunk, algorithm\n",
        "md0 : active raid1 sda[0]\n      [=>...]  recovery = 8.5% (1/\n",
        "md0 : active raid1 sda[0]\n      [=>...]  recovery = % speed=K/sec finish=min\n",
        "md0 : active raid1 sda[0]\n      99999999999999999999999999 blocks [9999999/3] [UUU]\n",
        "      1046528 blocks super 1.2 [2/2] [UU]\n",
        "md0 : active raid1 sda[0]\n      bitmap:\n",
    ],
)
def test_malformed_input_never_raises(text: str) -> None:
    arrays = parse_mdstat(text)
    assert isinstance(arrays, list)
    assert all(isinstance(a, MdArray) for a in arrays)


def test_truncated_block_keeps_what_was_read() -> None:
    text = "md9 : active raid5 sdc[2] sdb[1] sda[0]\n      2093056 blocks super 1.2 level 5, 64k ch"
    (array,) = parse_mdstat(text)
    assert array.level == "raid5"
    assert array.metadata == "1.2"
    assert array.size_bytes == 2093056 * 1024
    assert array.chunk_bytes is None
    assert len(array.members) == 3


def test_layout_names() -> None:
    assert algorithm_name(0) == "left-asymmetric"
    assert algorithm_name(5) == "parity-last"
    assert algorithm_name(16) == "left-asymmetric-6"
    assert algorithm_name(20) == "parity-first-6"
    assert algorithm_name(99) == "99"
    assert raid10_layout_name(2, 1, False) == "near=2"
    assert raid10_layout_name(1, 3, True) == "offset=3"


def test_degraded_is_the_kernels_count_not_the_slot_map_during_a_takeover() -> None:
    """A raid0 taken over to raid4 and reshaping (after a real mdstat in pymdstat's samples): the kernel
    prints [4/3] (one member missing: the parity it is being given) while the map shows two slots not in sync."""
    text = (
        "Personalities : [raid6] [raid5] [raid4] [raid0]\n"
        "md9 : active raid4 loop7[3] loop6[1] loop5[0]\n"
        "      10475520 blocks super 1.2 level 4, 32k chunk, algorithm 5 [4/3] [UU__]\n"
        "      [>....................]  reshape =  2.1% (115168/5237760) finish=3.7min speed=23033K/sec\n"
        "\nunused devices: <none>\n"
    )
    (array,) = parse_mdstat(text)
    assert array.degraded == 1
    assert array.sync is not None and array.sync.action == "reshape"


def test_personalities(procfs_testdata: Path) -> None:
    text = (procfs_testdata / "proc" / "mdstat").read_text()
    assert parse_personalities(text) == (
        "linear", "multipath", "raid0", "raid1", "raid6", "raid5", "raid4", "raid10",
    )  # fmt: skip
    assert parse_personalities("") == ()


def _personalities_by_words(line: str) -> tuple[str, ...]:
    """What the kernel's line means, read word by word: each "[name]" word is a personality."""
    return tuple(word[1:-1] for word in line.split() if re.fullmatch(r"\[[^\[\]]+\]", word))


def test_personalities_are_linear_on_a_long_run_of_brackets() -> None:
    # A damaged or hostile mdstat: the old pattern rescanned the line from every "[" (16 KiB took
    # 7.5 s, so a 16 MiB line hung); 1 MiB must parse in well under a second.
    line = "Personalities : " + "[" * (1 << 20) + " [raid1]"
    started = time.perf_counter()
    assert parse_personalities(line) == ("raid1",)
    assert time.perf_counter() - started < 0.5


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.lists(st.sampled_from(["[", "]", "raid1", " ", "[raid6]", "x" * 3000, "[" * 3000]), max_size=40))
def test_personalities_hold_to_a_word_reading_and_stay_fast(parts: list[str]) -> None:
    line = "Personalities : " + "".join(parts)
    started = time.perf_counter()
    found = parse_personalities(line)
    assert time.perf_counter() - started < 0.2
    # Every "[name]" word is found; a name never holds a bracket or a space.
    assert set(_personalities_by_words(line)) <= set(found)
    assert all(name and not set(name) & set("[] ") for name in found)


def test_an_array_whose_members_are_all_gone_is_degraded_by_all_of_them() -> None:
    # md prints no member and no blocks line for an array that lost every disk (a raid5 whose enclosure went
    # away): its geometry and [raid_disks/working] follow the "super" word on the header line.
    text = (
        "Personalities : [raid6] [raid5] [raid4]\n"
        "md126 : active raid5 super 1.2 level 5, 64k chunk, algorithm 2 [4/0] [____]\n"
        "      \n"
        "md127 : active raid1 super 1.2 [2/0] [__]\n"
        "      \n"
        "unused devices: <none>\n"
    )
    md126, md127 = parse_mdstat(text)
    assert (md126.level, md126.raid_disks, md126.degraded, md126.members) == ("raid5", 4, 4, ())
    assert (md126.chunk_bytes, md126.layout, md126.metadata) == (64 * 1024, "left-symmetric", "1.2")
    assert (md127.level, md127.raid_disks, md127.degraded) == ("raid1", 2, 2)
