"""plan_destroy: stop, zero superblocks and wipe signatures — only for mdtui's own unmounted arrays."""

from __future__ import annotations

import pytest

from mdtui.errors import PlanError
from mdtui.model import ArrayMember, Disk, MdArray, SyncStatus, Transport
from mdtui.plan.destroy import plan_destroy
from mdtui.plan.rejected import PlanRejected


def array(metadata: str = "1.2", sync: SyncStatus | None = None) -> MdArray:
    return MdArray(
        name="md0",
        state="clean",
        level="raid1",
        members=(ArrayMember("sdc", 1, ("in_sync",)), ArrayMember("sdb", 0, ("in_sync",))),
        metadata=metadata,
        sync=sync,
    )


def disk(name: str) -> Disk:
    return Disk(
        name=name,
        dev_path=f"/dev/{name}",
        transport=Transport.SATA,
        by_id_path=f"/dev/disk/by-id/ata-M_{name}",
    )


def test_steps_from_scanned_disks_use_by_id_paths():
    plan = plan_destroy(array(), [disk("sdb"), disk("sdc")], mounted=False, created_by_tool=True)
    assert plan.array == "/dev/md0"
    assert plan.argvs == (
        ("mdadm", "--stop", "/dev/md0"),
        ("mdadm", "--zero-superblock", "/dev/disk/by-id/ata-M_sdb"),
        ("wipefs", "--all", "/dev/disk/by-id/ata-M_sdb"),
        ("mdadm", "--zero-superblock", "/dev/disk/by-id/ata-M_sdc"),
        ("wipefs", "--all", "/dev/disk/by-id/ata-M_sdc"),
    )
    assert plan.steps[0].description == "stop /dev/md0"
    assert plan.warnings == ()


def test_steps_from_kernel_member_names():
    plan = plan_destroy(array(), None, mounted=False, created_by_tool=True)
    assert plan.member_paths == ("/dev/sdb", "/dev/sdc")
    assert plan.argvs[1] == ("mdadm", "--zero-superblock", "/dev/sdb")


def test_built_array_has_no_superblock_to_zero():
    plan = plan_destroy(array(metadata="none"), None, mounted=False, created_by_tool=True)
    assert plan.argvs == (
        ("mdadm", "--stop", "/dev/md0"),
        ("wipefs", "--all", "/dev/sdb"),
        ("wipefs", "--all", "/dev/sdc"),
    )


def test_refuses_mounted_array():
    with pytest.raises(PlanRejected) as info:
        plan_destroy(array(), None, mounted=True, created_by_tool=True)
    assert info.value.problems == ["/dev/md0 is mounted; unmount it first"]


def test_refuses_foreign_array():
    with pytest.raises(PlanError, match="was not created by mdtui and may hold data"):
        plan_destroy(array(), None, mounted=False, created_by_tool=False)


def test_refuses_both_reasons_at_once():
    with pytest.raises(PlanRejected) as info:
        plan_destroy(array(), None, mounted=True, created_by_tool=False)
    assert len(info.value.problems) == 2


def test_refuses_to_wipe_a_disk_that_is_not_a_member():
    with pytest.raises(PlanRejected) as info:
        plan_destroy(array(), [disk("sdb"), disk("sdd")], mounted=False, created_by_tool=True)
    assert "sdd is not a member of md0 (members: sdb, sdc); refusing to wipe it" in info.value.problems


def test_refuses_without_known_members():
    empty = MdArray(name="md5", state="inactive", level=None)
    with pytest.raises(PlanRejected, match="no members of /dev/md5 are known"):
        plan_destroy(empty, None, mounted=False, created_by_tool=True)


def test_warns_when_a_sync_is_running():
    plan = plan_destroy(array(sync=SyncStatus("resync")), None, mounted=False, created_by_tool=True)
    assert plan.warnings == ("/dev/md0 is running a resync; stopping it abandons that",)
