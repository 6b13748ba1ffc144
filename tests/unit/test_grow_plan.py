"""plan/grow: what md can change from each shape (or the route that works), capacity before/during/after, fault
tolerance during, the backup file (when md needs one, where it may go), what sits on the array (a shrink
refused while the filesystem is larger, the step that grows it after) and the time from the sync-time model."""

from __future__ import annotations

import dataclasses

import pytest

from mdtui.model.array import ArrayMember, MdArray, SyncStatus
from mdtui.model.contents import Contents
from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.plan.figures import MemberFigures
from mdtui.plan.grow import SAME_SIZE_POWER_CUT, plan_grow
from mdtui.plan.grow_backup import backup_blocks, backup_file_bytes, place_problems
from mdtui.plan.grow_contents import followup
from mdtui.plan.grow_describe import describe_grow, grow_plan_dict
from mdtui.plan.grow_request import GrowFacts, GrowRequest, MemberSpace, PlaceFacts
from mdtui.plan.grow_shape import current_geometry
from mdtui.plan.rejected import PlanRejected
from mdtui.plan.sync_inputs import SyncLimits, SyncMember

MIB = 1 << 20
KIB = 1024
COMPONENT = 39936 * KIB  # what mdadm gave a 40 MiB NVMe in the lab (data offset 1 MiB)
DEVICE = 40 * MIB
GOOD_PLACE = PlaceFacts(
    "/var/lib/backups/md0.backup", fs_type="ext4", mount_point="/", device_nodes=frozenset({"sda1", "sda"}),
    directory_owner_uid=0, directory_mode=0o40700, uid=0, free_bytes=10 * MIB,
)  # fmt: skip


def array(level: str = "raid5", n: int = 3, chunk: int | None = 64 * KIB, layout: str | None = "left-symmetric",
          **changes: object) -> MdArray:  # fmt: skip
    members = tuple(ArrayMember(f"nvme{i}n1", i, ("in_sync",)) for i in range(n))
    made = MdArray("md0", "clean", level, members, raid_disks=n, component_bytes=COMPONENT, chunk_bytes=chunk,
                   layout=layout, metadata="1.2", uuid="5791eed8-44c6-e233-3dce-824824f45de7")  # fmt: skip
    return dataclasses.replace(made, **changes)  # type: ignore[arg-type]


def disk(name: str, size: int = DEVICE, in_use: tuple[InUseReason, ...] = ()) -> Disk:
    return Disk(name=name, dev_path=f"/dev/{name}", transport=Transport.NVME, size_bytes=size, serial=name.upper(),
                by_id_path=f"/dev/disk/by-id/nvme-QEMU_{name.upper()}", in_use=in_use)  # fmt: skip


def spaces(
    n: int = 3, before: int | None = 1968, after: int | None = 0, device: int = DEVICE
) -> tuple[MemberSpace, ...]:
    return tuple(MemberSpace(f"nvme{i}n1", 2048, before, after, device) for i in range(n))


def facts(md: MdArray | None = None, **changes: object) -> GrowFacts:
    md = md or array()
    made = GrowFacts(md, uuid=md.uuid, spaces=spaces(md.raid_disks or 3), place=GOOD_PLACE, reshape_position="none")
    return dataclasses.replace(made, **changes)  # type: ignore[arg-type]


def plan(req: GrowRequest, **changes: object):  # type: ignore[no-untyped-def]
    md = changes.pop("md", None)
    return plan_grow(facts(md, **changes), req, default_backup="/root/.local/state/mdtui/grow/md0-5791eed8.backup")  # type: ignore[arg-type]


def refused(req: GrowRequest, **changes: object) -> list[str]:
    with pytest.raises(PlanRejected) as caught:
        plan(req, **changes)
    return caught.value.problems


def test_raid5_grows_by_add_two_steps_no_backup_file() -> None:
    grown = plan(GrowRequest(add=(disk("nvme3n1"),)))
    assert grown.argvs == (
        ("mdadm", "--manage", "/dev/md0", "--add", "/dev/disk/by-id/nvme-QEMU_NVME3N1"),
        ("mdadm", "--grow", "/dev/md0", "--raid-devices=4"),
    )
    assert (grown.size_before_bytes, grown.size_during_bytes, grown.size_after_bytes) == (
        2 * COMPONENT, 2 * COMPONENT, 3 * COMPONENT,
    )  # fmt: skip
    assert (grown.tolerance_before, grown.tolerance_during, grown.tolerance_after) == (1, 1, 1)
    assert grown.backup_file is None and "gains members" in grown.backup_reason
    assert grown.pass_action == "reshape"
    assert SAME_SIZE_POWER_CUT not in grown.warnings  # a grow resumed intact after a power cut in the lab


def test_every_problem_is_named_at_once() -> None:
    problems = refused(GrowRequest(level="6"), md=array(degraded=1))
    assert any("degraded" in p for p in problems)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"degraded": 1}, "degraded"),
        ({"sync": SyncStatus("resync", done_sectors=1, total_sectors=4)}, "resync of /dev/md0 is running"),
        ({"sync": SyncStatus("check")}, "check of /dev/md0 is running"),
        ({"sync": SyncStatus("reshape", done_sectors=1, total_sectors=4)}, "already reshaping"),
        ({"state": "inactive", "level": None}, "not running"),
        ({"metadata": "none"}, "no superblock"),
        ({"metadata": "external:imsm"}, "external metadata"),
        ({"state": "read-only"}, "read-only"),
    ],
)
def test_refused_while_degraded_syncing_reshaping_or_not_running(changes: dict[str, object], words: str) -> None:
    problems = refused(GrowRequest(add=(disk("nvme3n1"),)), md=array(**changes))
    assert any(words in p for p in problems), problems


def test_a_pending_reshape_is_resumed_first() -> None:
    problems = refused(GrowRequest(add=(disk("nvme3n1"),)), reshape_position="44032")
    assert any("--resume" in p for p in problems), problems


def test_raid5_to_raid6_needs_one_more_disk() -> None:
    problems = refused(GrowRequest(level="6"))
    assert any("needs 1 more member" in p and "--add" in p for p in problems), problems
    to6 = plan(GrowRequest(add=(disk("nvme3n1"),), level="6"))
    assert to6.argvs[-1] == ("mdadm", "--grow", "/dev/md0", "--level=6", "--raid-devices=4", "--layout=left-symmetric")
    assert to6.size_after_bytes == to6.size_before_bytes
    assert (to6.tolerance_during, to6.tolerance_after) == (1, 2)
    assert SAME_SIZE_POWER_CUT in to6.warnings


def test_raid5_to_raid6_keeping_the_layout_only_rebuilds_q() -> None:
    to6 = plan(GrowRequest(add=(disk("nvme3n1"),), level="6", layout="left-symmetric-6"))
    assert to6.pass_action == "recover" and to6.backup_file is None


@pytest.mark.parametrize(
    ("md", "req", "route"),
    [
        (array("raid1", 2, None, None), GrowRequest(level="6"), "raid1 of 2 → raid5 (--level 5), then raid5 → raid6"),
        (array("raid6", 4), GrowRequest(level="0"), "raid6 → raid5 (--level 5), then raid5 → raid0"),
        (array("raid10", 4, layout="n2"), GrowRequest(level="5"), "raid10 → raid0 (--level 0), then raid0 → raid5"),
        (array("raid1", 3, None, None), GrowRequest(level="5"), "drop mirrors first"),
        (array("raid10", 2, layout="f2"), GrowRequest(add=(disk("x"),)), "far layout"),
        (array("raid0", 3, layout=None), GrowRequest(raid_devices=2), "cannot take members out of a raid0"),
        (array("raid1", 3, None, None), GrowRequest(raid_devices=2), "--fail MEMBER"),
    ],
)
def test_a_change_md_cannot_make_names_the_route(md: MdArray, req: GrowRequest, route: str) -> None:
    problems = refused(req, md=md, spaces=spaces(md.raid_disks or 0))
    assert any(route in p for p in problems), problems


def test_a_chunk_that_does_not_divide_the_member_names_the_size_route() -> None:
    md = array(component_bytes=COMPONENT + 64 * KIB)  # 39,000 KiB: not a multiple of 128 KiB
    problems = refused(GrowRequest(chunk_kib=128), md=md)
    assert any("does not divide" in p and "--size" in p for p in problems), problems
    assert any("power of two" in p for p in refused(GrowRequest(chunk_kib=96)))


def test_the_backup_file_follows_mdadms_rule() -> None:
    # Same size, room to move the data offset (before 1968 sectors >= 128 KiB): md needs no file.
    roomy = plan(GrowRequest(chunk_kib=128))
    assert roomy.backup_file is None and "room to move its data offset" in roomy.backup_reason
    # No room at all: mdadm keeps the critical section in a file, in mdtui's state directory unless told.
    tight = plan(GrowRequest(chunk_kib=128), spaces=spaces(before=0, after=0))
    assert tight.backup_file == GOOD_PLACE.path
    assert f"--backup-file={GOOD_PLACE.path}" in tight.argvs[-1]
    assert tight.backup_bytes == backup_file_bytes(tight.before, tight.after)
    # The room not known (a captured tree, not root): a file, since mdadm may need it.
    unknown = plan(GrowRequest(chunk_kib=128), spaces=spaces(before=None, after=None))
    assert unknown.backup_file is not None and "not known" in unknown.backup_reason
    # A shrink always gets one (mdadm(8): required for shrinks).
    md = array("raid5", 4)
    shrink = plan(GrowRequest(raid_devices=3), md=md, spaces=spaces(4), contents=Contents())
    assert shrink.backup_file is not None


def test_backup_blocks_is_mdadms_lcm_of_old_and_new_stripes() -> None:
    before = current_geometry(array())
    after = current_geometry(array("raid5", 4))
    assert before is not None and after is not None
    # Grow.c compute_backup_blocks: lcm(128 × 2, 128 × 3) sectors.
    assert backup_blocks(before, after) == 768
    # The lab's mdadm moved the data offset by 768 / 2 = 384 sectors for this grow (2048 → 1664).


def test_where_a_backup_file_must_not_go() -> None:
    md = array()
    members = ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"]
    cases = [
        (dataclasses.replace(GOOD_PLACE, fs_type="tmpfs", mount_point="/dev/shm"), "does not survive a reboot"),
        (dataclasses.replace(GOOD_PLACE, fs_type="overlay"), "may not survive a reboot"),
        (dataclasses.replace(GOOD_PLACE, device_nodes=frozenset({"md0", "nvme0n1"})), "on md0 itself"),
        (dataclasses.replace(GOOD_PLACE, device_nodes=frozenset({"nvme3n1p1", "nvme3n1"})), "a member of md0"),
        (dataclasses.replace(GOOD_PLACE, exists=True), "already exists"),
        (dataclasses.replace(GOOD_PLACE, directory_mode=0o41777), "other users can write its directory"),
        (dataclasses.replace(GOOD_PLACE, directory_owner_uid=1000), "belongs to uid 1000"),
        (dataclasses.replace(GOOD_PLACE, free_bytes=4096), "free"),
        (dataclasses.replace(GOOD_PLACE, read_only=True), "read-only"),
        (dataclasses.replace(GOOD_PLACE, directory_exists=False), "does not exist"),
    ]
    assert place_problems(GOOD_PLACE, md, members, 2 * MIB) == []
    for place, words in cases:
        found = place_problems(place, md, members, 2 * MIB)
        assert any(words in p for p in found), (place, found)


def test_an_unfit_backup_place_refuses_the_plan() -> None:
    on_tmpfs = dataclasses.replace(GOOD_PLACE, fs_type="tmpfs", mount_point="/dev/shm")
    problems = refused(GrowRequest(chunk_kib=128, backup_file="/dev/shm/x"), place=on_tmpfs)
    assert any("tmpfs" in p for p in problems)


def test_a_shrink_is_refused_while_the_filesystem_is_larger() -> None:
    md = array("raid5", 4)
    big = Contents(kind="ext4", size_bytes=3 * COMPONENT, mount_point="/srv")
    problems = refused(GrowRequest(raid_devices=3), md=md, spaces=spaces(4), contents=big)
    assert any("larger than the array after the shrink" in p and "resize2fs /dev/md0 79872K" in p for p in problems)
    fits = Contents(kind="ext4", size_bytes=2 * COMPONENT, mount_point="/srv")
    shrink = plan(GrowRequest(raid_devices=3), md=md, spaces=spaces(4), contents=fits)
    assert shrink.argvs[0] == ("mdadm", "--grow", "/dev/md0", "--array-size=79872K")
    assert shrink.argvs[1][:4] == ("mdadm", "--grow", "/dev/md0", "--raid-devices=3")
    assert shrink.size_during_bytes == shrink.size_after_bytes == 2 * COMPONENT
    assert any("--remove MEMBER" in n for n in shrink.notes)


@pytest.mark.parametrize(
    ("contents", "words"),
    [
        (Contents(kind="xfs", size_bytes=3 * COMPONENT), "xfs cannot shrink"),
        (Contents(kind="LVM2_member", size_bytes=3 * COMPONENT), "pvmove"),
        (Contents(kind="btrfs", size_problem="mdtui does not read btrfs's size"), "will not shrink under it"),
        (Contents(read=False, size_problem="not read: opening the array needs root"), "will not shrink blind"),
        (Contents(kind="ext4", size_bytes=MIB, holders=("dm-0",)), "held by dm-0"),
    ],
)
def test_a_shrink_under_what_cannot_be_checked_is_refused(contents: Contents, words: str) -> None:
    problems = refused(GrowRequest(raid_devices=3), md=array("raid5", 4), spaces=spaces(4), contents=contents)
    assert any(words in p for p in problems), problems


def test_size_max_uses_what_every_member_device_leaves() -> None:
    larger = spaces(2, device=48 * MIB)
    md = array("raid1", 2, None, None)
    grown = plan(GrowRequest(size_max=True), md=md, spaces=larger)
    assert grown.argvs == (("mdadm", "--grow", "/dev/md0", "--size=max"),)
    assert grown.size_after_bytes == 48 * MIB - 2048 * 512  # device minus data offset, as md computes it
    assert grown.size_during_bytes == grown.size_after_bytes and grown.pass_action == "resync"
    problems = refused(GrowRequest(size_max=True), md=md, spaces=spaces(2))
    assert any("replace members by larger disks" in p for p in problems)


def test_size_and_shape_run_apart() -> None:
    problems = refused(GrowRequest(size_max=True, add=(disk("nvme3n1"),)))
    assert any("runs alone" in p for p in problems)


def test_a_new_disk_must_be_free_and_large_enough() -> None:
    busy = disk("sdb", in_use=(InUseReason(InUseKind.MOUNTED, "mounted at /home (ext4)"),))
    problems = refused(GrowRequest(add=(busy,)))
    assert any("sdb is in use: mounted" in p for p in problems)
    problems = refused(GrowRequest(add=(disk("nvme3n1", size=20 * MIB),)))
    assert any("less than a member of md0 needs" in p for p in problems)
    problems = refused(GrowRequest(add=(disk("nvme0n1"),)))
    assert any("already a member" in p for p in problems)


def test_what_grows_the_filesystem_after() -> None:
    assert followup(Contents(kind="ext4", mount_point="/srv"), "/dev/md0").argvs == (("resize2fs", "/dev/md0"),)  # type: ignore[union-attr]
    unmounted = followup(Contents(kind="ext4"), "/dev/md0")
    assert unmounted is not None and unmounted.argvs == (("e2fsck", "-f", "-p", "/dev/md0"), ("resize2fs", "/dev/md0"))
    xfs = followup(Contents(kind="xfs"), "/dev/md0")
    assert xfs is not None and xfs.argvs == () and "mount" in xfs.description
    assert followup(Contents(kind="xfs", mount_point="/data"), "/dev/md0").argvs == (("xfs_growfs", "/data"),)  # type: ignore[union-attr]
    assert followup(Contents(kind="LVM2_member"), "/dev/md0").argvs == (("pvresize", "/dev/md0"),)  # type: ignore[union-attr]
    assert followup(Contents(), "/dev/md0") is None
    grown = plan(
        GrowRequest(add=(disk("nvme3n1"),)), contents=Contents(kind="ext4", size_bytes=MIB, mount_point="/srv")
    )
    assert grown.followup is not None and any("resize2fs /dev/md0" in line for line in describe_grow(grown))


def test_the_time_comes_from_the_sync_time_model() -> None:
    figures = MemberFigures(seq_read_bytes_per_s=1e9, seq_write_bytes_per_s=1e9, basis="measured")
    members = {f"nvme{i}n1": SyncMember(f"nvme{i}n1", figures) for i in range(4)}
    limits = SyncLimits(array_max_kib_s=4000, array="md0")
    grown = plan(GrowRequest(add=(disk("nvme3n1"),)), sync_members=members, limits=limits)
    # md's limit bounds it: the member's data area at 4,000 KiB/s (the lab measured 9 s for this: 0.94×).
    assert grown.predicted_seconds == pytest.approx(COMPONENT / (4000 * KIB))
    assert grown.bound == "md0's sync_speed_max (4,000 KiB/s)"
    document = grow_plan_dict(grown)
    assert document["predicted_seconds"] == pytest.approx(9.98)
    # Worded as every pass is (repair, scrub, create: sync_words.prediction_words), under other I/O too.
    assert "  time: reshape: about 10 s idle (bound: md0's sync_speed_max (4,000 KiB/s)); about 40 s while other I/O " \
        "runs (speed_limit_min (1,000 KiB/s): md yields to other I/O above it)" in describe_grow(grown)
    # Without figures the time is unknown, never zero.
    unknown = plan(GrowRequest(add=(disk("nvme3n1"),)))
    assert unknown.predicted_seconds is None and grow_plan_dict(unknown)["predicted_seconds"] is None
    assert unknown.bound.startswith("unknown")


def test_an_instant_change_says_so() -> None:
    to5 = plan(GrowRequest(level="5"), md=array("raid1", 2, None, None), spaces=spaces(2))
    assert to5.steps[-1].argv == ("mdadm", "--grow", "/dev/md0", "--level=5", "--layout=left-symmetric")
    assert to5.pass_action is None and to5.bound == "instant: md moves no data"
    assert grow_plan_dict(to5)["predicted_seconds"] == 0


def test_the_json_plan_has_the_documented_keys() -> None:
    document = grow_plan_dict(plan(GrowRequest(add=(disk("nvme3n1"),))))
    for key in ("argv", "backup_file", "size_before_bytes", "size_after_bytes", "predicted_seconds", "bound"):
        assert key in document
    assert document["argv"] == [list(a) for a in plan(GrowRequest(add=(disk("nvme3n1"),))).argvs]


@pytest.mark.parametrize(
    ("md", "req", "argv"),
    [
        (array("raid0", 2, layout=None), GrowRequest(add=(disk("a"),)),
         ("mdadm", "--grow", "/dev/md0", "--raid-devices=3", "--add", "/dev/disk/by-id/nvme-QEMU_A")),
        (array("raid0", 2, layout=None), GrowRequest(level="10", add=(disk("a"), disk("b"))),
         ("mdadm", "--grow", "/dev/md0", "--level=10", "--raid-devices=4", "--layout=n2", "--add",
          "/dev/disk/by-id/nvme-QEMU_A", "/dev/disk/by-id/nvme-QEMU_B")),
        (array("raid10", 4, layout="n2"), GrowRequest(level="0"), ("mdadm", "--grow", "/dev/md0", "--level=0",
                                                                    "--raid-devices=2")),
        (array("raid6", 4), GrowRequest(level="5"), ("mdadm", "--grow", "/dev/md0", "--level=5", "--raid-devices=3",
                                                     "--layout=left-symmetric")),
        (array("raid5", 3), GrowRequest(level="4"), ("mdadm", "--grow", "/dev/md0", "--level=4")),
    ],
)  # fmt: skip
def test_level_changes_md_makes(md: MdArray, req: GrowRequest, argv: tuple[str, ...]) -> None:
    planned = plan(req, md=md, spaces=spaces(md.raid_disks or 0))
    assert planned.argvs[-1] == argv


def test_filesystem_only_grows_what_is_smaller_than_the_array() -> None:
    small = Contents(kind="ext4", size_bytes=COMPONENT, mount_point="/srv")
    only = plan(GrowRequest(filesystem_only=True), contents=small)
    assert only.steps == () and only.followup is not None
    assert only.followup.argvs == (("resize2fs", "/dev/md0"),)
    whole = Contents(kind="ext4", size_bytes=2 * COMPONENT, mount_point="/srv")
    done = plan(GrowRequest(filesystem_only=True), contents=whole)
    assert done.followup is None and any("already fills it" in n for n in done.notes)
