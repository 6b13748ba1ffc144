"""Tests for reading md arrays from mdstat plus sysfs, on captured and hand-built trees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mdtui.model.array import MdArray
from mdtui.probe.arrays import layout_name, md_available, read_arrays
from mdtui.probe.root import SystemRoot

# Captured trees from the Prometheus procfs test data (github.com/prometheus/procfs,
# testdata/fixtures.ttar, commit 3c943fd, Apache License 2.0) in tests/fixtures/procfs; see its README.
# Its /proc/mdstat and its /sys/block/md* come from different machines, so the same name can
# describe two different arrays; the merge must then trust sysfs.


@pytest.fixture(scope="module")
def fixture_arrays(procfs_testdata: Path) -> dict[str, MdArray]:
    assert (procfs_testdata / "proc" / "mdstat").is_file(), f"fixture missing under {procfs_testdata}"
    return {array.name: array for array in read_arrays(SystemRoot(procfs_testdata))}


def write(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


MDSTAT_RAID10 = """\
Personalities : [raid10]
md5 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]
      2093056 blocks super 1.2 512K chunks 2 near-copies [4/4] [UUUU]

unused devices: <none>
"""


def raid10_tree(tmp_path: Path, layout: str) -> SystemRoot:
    files = {
        "proc/mdstat": MDSTAT_RAID10,
        "sys/block/md5/md/level": "raid10\n",
        "sys/block/md5/md/layout": f"{layout}\n",
        "sys/block/md5/md/array_state": "clean\n",
    }
    write(tmp_path, files)
    return SystemRoot(tmp_path)


def test_no_md_driver(tmp_path: Path) -> None:
    (tmp_path / "sys" / "block").mkdir(parents=True)
    root = SystemRoot(tmp_path)
    assert not md_available(root)
    assert read_arrays(root) == []


def test_fixture_is_available_and_sorted(fixture_arrays: dict[str, MdArray], procfs_testdata: Path) -> None:
    assert md_available(SystemRoot(procfs_testdata))
    names = list(fixture_arrays)
    assert names[:4] == ["md0", "md00", "md1", "md3"]
    assert names[-3:] == ["md127", "md201", "md219"]


def test_sysfs_overrides_mdstat(fixture_arrays: dict[str, MdArray]) -> None:
    md0 = fixture_arrays["md0"]
    assert md0.state == "clean"
    assert md0.level == "raid0"
    assert md0.raid_disks == 2
    assert md0.chunk_bytes == 524288
    assert md0.metadata == "1.2"
    assert md0.uuid == "155f29ff-1716-4107-b362-52307ef86cac"
    # rdN entries give the roles when dev-*/slot is missing.
    assert [(m.name, m.slot, m.states) for m in md0.members] == [
        ("sdg", 0, ("in_sync",)),
        ("sdh", 1, ("in_sync",)),
    ]


def test_sysfs_members_with_spare_and_faulty(fixture_arrays: dict[str, MdArray]) -> None:
    md5 = fixture_arrays["md5"]  # only in sysfs
    assert md5.level == "raid5"
    assert md5.degraded == 1
    assert md5.uuid == "7615b98d-f2ba-4d99-bee8-6202d8e130b9"
    members = {m.name: m for m in md5.members}
    assert members["sdaa"].spare
    assert members["sdaa"].slot is None
    assert members["sdp"].faulty
    assert members["sdp"].slot == 2
    assert members["sdn"].slot == 0


def test_sysfs_sync_progress(fixture_arrays: dict[str, MdArray]) -> None:
    md6 = fixture_arrays["md6"]
    assert md6.level == "raid6"
    assert md6.raid_disks == 4
    assert md6.degraded == 1
    assert md6.sync is not None
    assert md6.sync.action == "recover"
    assert md6.sync.state == "running"
    # sysfs sync_completed is already in 512-byte sectors.
    assert md6.sync.done_sectors == 1569888
    assert md6.sync.total_sectors == 2093056


def test_sysfs_reshape_and_idle(fixture_arrays: dict[str, MdArray]) -> None:
    md8 = fixture_arrays["md8"]
    assert md8.raid_disks == 11  # "11 (10)": the new count while a reshape runs
    assert md8.sync is not None
    assert md8.sync.action == "reshape"
    assert md8.sync.done_sectors is None  # sync_completed "none"
    assert fixture_arrays["md10"].sync is None
    assert fixture_arrays["md10"].level == "raid10"
    assert fixture_arrays["md1"].sync is None


def test_inactive_container(fixture_arrays: dict[str, MdArray]) -> None:
    md7 = fixture_arrays["md7"]
    assert md7.state == "inactive"
    assert md7.level == "container"
    assert md7.size_bytes is None
    assert md7.sync is None
    assert md7.degraded == 0
    # mdstat called md7 a raid6; that geometry does not belong to a container.
    assert md7.layout is None


def test_mdstat_only_arrays_keep_mdstat_values(fixture_arrays: dict[str, MdArray]) -> None:
    md3 = fixture_arrays["md3"]
    assert md3.level == "raid6"
    assert md3.layout == "left-symmetric"
    assert md3.uuid is None
    md11 = fixture_arrays["md11"]
    assert md11.state == "auto-read-only"
    assert md11.sync is not None
    assert md11.sync.state == "pending"
    assert fixture_arrays["md219"].metadata == "external:imsm"


@pytest.mark.parametrize(
    ("number", "name"),
    [
        (0x102, "near=2"),  # mdadm's default n2: near 2, far 1
        (0x201, "far=2"),
        (0x10201, "offset=2"),
        (0x103, "near=3"),
        (0x202, "near=2, far=2"),
        (0x101, "near=1"),
    ],
)
def test_raid10_layout_numbers(number: int, name: str) -> None:
    assert layout_name("raid10", number) == name


def test_raid10_layout_from_sysfs(tmp_path: Path) -> None:
    (md5,) = read_arrays(raid10_tree(tmp_path, str(0x201)))
    assert md5.layout == "far=2"
    assert md5.chunk_bytes == 512 * 1024  # sysfs has no chunk_size here, so mdstat's stays


def test_offset_layout_from_sysfs(tmp_path: Path) -> None:
    (md5,) = read_arrays(raid10_tree(tmp_path, str(0x10201)))
    assert md5.layout == "offset=2"


def test_parity_and_raid0_layouts() -> None:
    assert layout_name("raid5", 2) == "left-symmetric"
    assert layout_name("raid6", 18) == "left-symmetric-6"
    assert layout_name("raid0", 2) == "alternate"
    assert layout_name("raid0", 0) is None
    assert layout_name("raid1", 0) is None
    assert layout_name(None, 2) is None


def test_malformed_sysfs_keeps_mdstat_values(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/mdstat": MDSTAT_RAID10,
            "sys/block/md5/md/level": "\n",
            "sys/block/md5/md/raid_disks": "lots\n",
            "sys/block/md5/md/chunk_size": "\n",
            "sys/block/md5/md/layout": "??\n",
            "sys/block/md5/md/degraded": "x\n",
            "sys/block/md5/md/sync_action": "\n",
            "sys/block/md5/md/sync_completed": "half\n",
            "sys/block/md5/md/dev-sda/slot": "first\n",
        },
    )
    (tmp_path / "sys/block/md5/md/array_state").mkdir()  # a directory where a file belongs
    (md5,) = read_arrays(SystemRoot(tmp_path))
    assert md5.state == "active"
    assert md5.level == "raid10"
    assert md5.raid_disks == 4
    assert md5.chunk_bytes == 512 * 1024
    assert md5.layout == "near=2"
    # sysfs lists only dev-sda, so it is the member list; its unreadable slot falls back to mdstat.
    assert [(m.name, m.slot, m.states) for m in md5.members] == [("sda", 0, ("in_sync",))]


def test_sync_merge_from_sysfs(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/mdstat": (
                "md1 : active raid1 sdb[1] sda[0]\n"
                "      1046528 blocks super 1.2 [2/2] [UU]\n"
                "      [=>...................]  resync =  8.5% (88960/1046528) finish=0.8min speed=20000K/sec\n"
            ),
            "sys/block/md1/size": "2093056\n",
            "sys/block/md1/md/level": "raid1\n",
            "sys/block/md1/md/array_state": "active\n",
            "sys/block/md1/md/sync_action": "repair\n",
            "sys/block/md1/md/sync_completed": "200000 / 2093056\n",
            "sys/block/md1/md/sync_speed": "10000\n",
            "sys/block/md1/md/bitmap/location": "+8\n",
            "sys/block/md1/md/dev-sda/slot": "0\n",
            "sys/block/md1/md/dev-sda/state": "in_sync\n",
            "sys/block/md1/md/dev-sdb/slot": "1\n",
            "sys/block/md1/md/dev-sdb/state": "in_sync,write_mostly\n",
            "sys/block/md1/md/dev-sdc/slot": "none\n",
            "sys/block/md1/md/dev-sdc/state": "spare\n",
        },
    )
    (md1,) = read_arrays(SystemRoot(tmp_path))
    assert md1.size_bytes == 2093056 * 512
    assert md1.bitmap == "internal"
    assert md1.sync is not None
    assert md1.sync.action == "repair"
    assert md1.sync.done_sectors == 200000
    assert md1.sync.total_sectors == 2093056
    assert md1.sync.speed_bytes_per_s == 10000 * 1024
    assert md1.sync.eta_seconds == pytest.approx((2093056 - 200000) * 512 / (10000 * 1024))
    assert [(m.name, m.slot) for m in md1.members] == [("sda", 0), ("sdb", 1), ("sdc", None)]
    assert md1.members[1].states == ("in_sync", "write_mostly")


def test_idle_sysfs_clears_finished_sync_but_keeps_pending(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/mdstat": (
                "md1 : active raid1 sdb[1] sda[0]\n"
                "      1046528 blocks super 1.2 [2/2] [UU]\n"
                "      [=>...................]  resync =  8.5% (88960/1046528) finish=0.8min speed=20000K/sec\n"
                "md2 : active (auto-read-only) raid1 sdd[1] sdc[0]\n"
                "      1046528 blocks super 1.2 [2/2] [UU]\n"
                "      \tresync=PENDING\n"
            ),
            "sys/block/md1/md/sync_action": "idle\n",
            "sys/block/md2/md/sync_action": "idle\n",
            "sys/block/md2/md/array_state": "read-auto\n",
        },
    )
    md1, md2 = read_arrays(SystemRoot(tmp_path))
    assert md1.sync is None
    assert md2.state == "auto-read-only"
    assert md2.sync is not None
    assert md2.sync.state == "pending"


def test_delayed_sync_completed(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/mdstat": "md1 : active raid1 sdb[1] sda[0]\n      1046528 blocks super 1.2 [2/2] [UU]\n",
            "sys/block/md1/md/sync_action": "resync\n",
            "sys/block/md1/md/sync_completed": "delayed\n",
            "sys/block/md1/md/sync_speed": "none\n",
        },
    )
    (md1,) = read_arrays(SystemRoot(tmp_path))
    assert md1.sync is not None
    assert (md1.sync.action, md1.sync.state, md1.sync.speed_bytes_per_s) == ("resync", "delayed", None)


def test_rd_symlinks_give_roles(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/mdstat": "md0 : active raid1 sdb[0] sda[1]\n      1046528 blocks super 1.2 [2/2] [UU]\n",
            "sys/block/md0/md/dev-sda/state": "in_sync\n",
            "sys/block/md0/md/dev-sdb/state": "in_sync\n",
            "sys/block/md0/md/bitmap/location": "none\n",
        },
    )
    md = tmp_path / "sys/block/md0/md"
    # A live kernel makes rdN symlinks to the dev-* directories.
    os.symlink("dev-sda", md / "rd0")
    os.symlink("dev-sdb", md / "rd1")
    (md0,) = read_arrays(SystemRoot(tmp_path))
    assert [(m.name, m.slot) for m in md0.members] == [("sda", 0), ("sdb", 1)]
    assert md0.bitmap == "none"


def test_sysfs_only_clear_devices_are_skipped(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/mdstat": "Personalities : \nunused devices: <none>\n",
            "sys/block/md9/md/array_state": "clear\n",
            "sys/block/sda/size": "100\n",
        },
    )
    assert read_arrays(SystemRoot(tmp_path)) == []
