"""Repair plans (fail, remove, add, replace, re-add) checked like create plans, and the scrub schedule read from
the distribution's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdtui.errors import MdtuiError
from mdtui.keep.repair import describe_repair, plan_repair
from mdtui.keep.scrub import describe_schedule, plan_scrub, read_schedule
from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.plan.rejected import PlanRejected
from mdtui.probe.root import SystemRoot

GIB = 1 << 30


def raid5(*, degraded: int = 0, states: dict[str, tuple[str, ...]] | None = None, level: str = "raid5") -> MdArray:
    states = states or {}
    names = ["nvme0n1", "nvme1n1", "nvme2n1"]
    members = tuple(ArrayMember(n, i, states.get(n, ("in_sync",))) for i, n in enumerate(names))
    return MdArray(name="md0", state="clean", level=level, members=members, raid_disks=3, metadata="1.2",
                   degraded=degraded)


def disk(name: str = "nvme3n1", *, size: int = GIB, in_use: tuple[InUseReason, ...] = ()) -> Disk:
    return Disk(name=name, dev_path=f"/dev/{name}", transport=Transport.NVME, size_bytes=size, serial=f"S-{name}",
                by_id_path=f"/dev/disk/by-id/nvme-QEMU_{name}", in_use=in_use)


def test_replace_adds_the_spare_then_copies_onto_it():
    plan = plan_repair(raid5(), "replace", member="nvme1n1", disk=disk(), component_bytes=GIB // 2)
    assert plan.argvs == (
        ("mdadm", "--manage", "/dev/md0", "--add", "/dev/disk/by-id/nvme-QEMU_nvme3n1"),
        ("mdadm", "--manage", "/dev/md0", "--replace", "/dev/nvme1n1", "--with", "/dev/disk/by-id/nvme-QEMU_nvme3n1"),
    )
    assert plan.follows_recovery
    text = "\n".join(describe_repair(plan))
    assert "overwritten" in text and "--replace /dev/nvme1n1" in text


def test_add_refuses_a_disk_in_use_or_too_small_naming_each_reason():
    busy = disk(in_use=(InUseReason(InUseKind.MOUNTED, "/srv"), InUseReason(InUseKind.LVM_PV, "vg0")))
    with pytest.raises(PlanRejected) as caught:
        plan_repair(raid5(degraded=1), "add", disk=busy)
    assert any("mounted" in p for p in caught.value.problems) and any("lvm-pv" in p for p in caught.value.problems)
    with pytest.raises(PlanRejected, match="less than"):
        plan_repair(raid5(degraded=1), "add", disk=disk(size=GIB // 4), component_bytes=GIB // 2)
    plan = plan_repair(raid5(degraded=1), "add", disk=disk(), component_bytes=GIB // 2)
    assert plan.argvs == (("mdadm", "--manage", "/dev/md0", "--add", "/dev/disk/by-id/nvme-QEMU_nvme3n1"),)


def test_fail_refuses_what_would_lose_data():
    plan = plan_repair(raid5(), "fail", member="/dev/nvme2n1")
    assert plan.argvs == (("mdadm", "--manage", "/dev/md0", "--fail", "/dev/nvme2n1"),)
    assert plan.warnings
    with pytest.raises(PlanRejected, match="more than it can lose"):
        plan_repair(raid5(degraded=1), "fail", member="nvme2n1")
    with pytest.raises(PlanRejected, match="without redundancy"):
        plan_repair(raid5(level="raid0"), "fail", member="nvme2n1")
    with pytest.raises(PlanRejected, match="not a member"):
        plan_repair(raid5(), "fail", member="sdz")


def test_remove_only_failed_or_spare_and_the_detached_keyword():
    with pytest.raises(PlanRejected, match="mark it failed first"):
        plan_repair(raid5(), "remove", member="nvme1n1")
    failed = raid5(degraded=1, states={"nvme1n1": ("faulty",)})
    assert plan_repair(failed, "remove", member="nvme1n1").argvs == (
        ("mdadm", "--manage", "/dev/md0", "--remove", "/dev/nvme1n1"),
    )
    assert plan_repair(failed, "remove", member="detached").argvs == (
        ("mdadm", "--manage", "/dev/md0", "--remove", "detached"),
    )


def test_re_add_needs_the_old_superblock_and_allows_only_that():
    stale = InUseReason(InUseKind.MD_SUPERBLOCK, "member of md0 (not assembled)")
    plan = plan_repair(raid5(degraded=1), "re-add", disk=disk(in_use=(stale,)))
    assert plan.argvs == (("mdadm", "--manage", "/dev/md0", "--re-add", "/dev/disk/by-id/nvme-QEMU_nvme3n1"),)
    with pytest.raises(PlanRejected, match="no md superblock"):
        plan_repair(raid5(degraded=1), "re-add", disk=disk())


def test_scrub_refuses_busy_degraded_and_unredundant(tmp_path: Path):
    (tmp_path / "sys/block/md0/md").mkdir(parents=True)
    sync = tmp_path / "sys/block/md0/md/sync_action"
    sync.write_text("idle\n")
    root = SystemRoot(tmp_path)
    plan = plan_scrub(raid5(), "check", root=root)
    assert plan.shown == "echo check > /sys/block/md0/md/sync_action"
    sync.write_text("resync\n")
    with pytest.raises(MdtuiError, match="busy"):
        plan_scrub(raid5(), root=root)
    sync.write_text("idle\n")
    with pytest.raises(MdtuiError, match="degraded"):
        plan_scrub(raid5(degraded=1), root=root)
    with pytest.raises(MdtuiError, match="only redundant"):
        plan_scrub(raid5(level="raid0"), root=root)


def test_schedule_from_debian_cron_and_mdcheck_timers(tmp_path: Path):
    (tmp_path / "etc/cron.d").mkdir(parents=True)
    # Debian 12's /etc/cron.d/mdadm job line, as shipped.
    (tmp_path / "etc/cron.d/mdadm").write_text(
        "# comment\n57 0 * * 0 root if [ -x /usr/share/mdadm/checkarray ] && [ $(date +\\%d) -le 7 ]; "
        "then /usr/share/mdadm/checkarray --cron --all --idle --quiet; fi\n"
    )
    (tmp_path / "lib/systemd/system").mkdir(parents=True)
    (tmp_path / "lib/systemd/system/mdcheck_start.timer").write_text(
        "[Timer]\nOnCalendar=Sun *-*-1..7 1:00:00\n"
    )
    wants = tmp_path / "etc/systemd/system/timers.target.wants"
    wants.mkdir(parents=True)
    (wants / "mdcheck_start.timer").symlink_to("/lib/systemd/system/mdcheck_start.timer")
    lines = describe_schedule(read_schedule(SystemRoot(tmp_path)))
    assert lines[0].startswith("cron '57 0 * * 0': /usr/share/mdadm/checkarray --cron --all --idle --quiet"), lines
    assert "first week" in lines[0]
    assert lines[1].startswith("mdcheck_start.timer: OnCalendar=Sun *-*-1..7 1:00:00 (enabled)"), lines
    assert describe_schedule(read_schedule(SystemRoot(tmp_path / "etc"))) == [
        "no scheduled scrub found (no checkarray cron job, no mdcheck timers)"
    ]


# --- health findings ---------------------------------------------------------------------------------------------


def health_input(**kwargs):
    from mdtui.advise.rules.inputs import AdviceInput
    from mdtui.keep.health import ArrayHealth, Health

    array = ArrayHealth(
        name="md0", degraded=kwargs.pop("degraded", 0), failed=kwargs.pop("failed", ()), spares=(),
        mismatch_sectors=kwargs.pop("mismatch", 0), last_check=kwargs.pop("last_check", None), sync_action="idle",
        member_disks=("nvme0n1", "nvme1n1", "nvme2n1"),
    )
    return AdviceInput(health=Health((array,), kwargs.pop("smart", {})), **kwargs)


def test_degraded_array_is_critical_and_says_what_to_run():
    from mdtui.advise.rules.keep import rule_health

    findings = rule_health(health_input(degraded=1, failed=("nvme1n1",)))
    assert [(f.id, f.severity.value, f.topic.value) for f in findings] == [("degraded:md0", "critical", "keeping")]
    assert "mdtui repair md0 --remove nvme1n1" in findings[0].what_to_do
    assert "--add DISK" in findings[0].what_to_do
    assert rule_health(health_input()) == []


def test_mismatch_only_after_a_check():
    from mdtui.advise.rules.keep import rule_health

    assert [f.id for f in rule_health(health_input(mismatch=128, last_check="check"))] == ["mismatch:md0"]
    assert rule_health(health_input(mismatch=128, last_check="resync")) == []


def test_smart_errors_on_the_measured_slow_member_name_it_as_such():
    from mdtui.advise.findings import sort_findings
    from mdtui.advise.rules.inputs import MemberAlone, WeakestLinkFigures
    from mdtui.advise.rules.keep import rule_health
    from mdtui.probe.smart import SmartHealth

    smart = {"nvme1n1": SmartHealth("/dev/nvme1n1", protocol="NVMe", passed=True, media_errors=12),
             "nvme0n1": SmartHealth("/dev/nvme0n1", protocol="NVMe", passed=True, media_errors=0)}
    figures = WeakestLinkFigures(
        run_id=9, array="/dev/md0", level="raid5", members=3, together_bytes_per_s=3e8, array_bytes_per_s=6e7,
        numjobs=16,
        alone=(MemberAlone("nvme0n1", 1e8, 5), MemberAlone("nvme1n1", 2e7, 6), MemberAlone("nvme2n1", 1e8, 7)),
    )
    findings = rule_health(health_input(smart=smart, weakest_link=(figures,)))
    assert [f.id for f in findings] == ["smart:nvme1n1"]
    assert "measured slow member of md0" in findings[0].title and "12 media error" in findings[0].title
    assert findings[0].explains == ("measured-slow-member:md0",)
    assert findings[0].topic.value == "performance", "the cause of a slow member is a performance finding"
    assert ("read alone (run 6)", 20.0) in [(e.label, e.value) for e in findings[0].evidence], findings[0].evidence
    assert findings[0].severity.value == "critical"
    assert sort_findings(findings) == tuple(findings)


def test_a_member_udev_removed_is_named_from_the_kernel_log():
    from mdtui.advise.rules.inputs import AdviceInput
    from mdtui.advise.rules.keep import rule_health
    from mdtui.keep.health import failures_in_kernel_log, read_health

    # The lines the lab guest's kernel printed when test_keep.py hot-unplugged a raid5 member.
    log = (
        "[  238.348807] md/raid:md0: Disk failure on nvme1n1, disabling device.\n"
        "[  238.362418] md/raid:md0: Operation continuing on 2 devices.\n"
        "[  301.000000] md/raid1:md1: Disk failure on sdb2, disabling device.\n"
    )
    assert failures_in_kernel_log(log) == {"md0": ("nvme1n1",), "md1": ("sdb2",)}
    gone = MdArray(name="md0", state="clean", level="raid5", raid_disks=3, metadata="1.2", degraded=1,
                   members=(ArrayMember("nvme0n1", 0, ("in_sync",)), ArrayMember("nvme2n1", 2, ("in_sync",))))
    health = read_health(SystemRoot("/nonexistent-root"), [gone], smart=False, kernel_log=log)
    assert health.arrays[0].lost == ("nvme1n1",)
    [finding] = rule_health(AdviceInput(health=health))
    assert finding.title == "md0 is degraded: nvme1n1 failed and is gone", finding.title
    assert "mdtui repair md0 --add DISK" in finding.what_to_do


def test_right_before_the_write_a_disk_that_cannot_be_checked_is_refused_as_at_planning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """recheck once looked only at the disk's in-use reasons: a disk whose state could no longer be read (here its
    size) passed, though planning refuses it. Both ask Disk.refusals now. (A captured tree's by-id links point at
    the host's /dev: the by-id path is taken to still name the disk, as it would on the live system.)"""
    import shutil

    from mdtui.errors import SafetyError
    from mdtui.keep.repair import recheck
    from mdtui.probe.inventory import scan

    tree = tmp_path / "tree"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links", tree, symlinks=True)
    root = SystemRoot(str(tree))
    inventory = scan(root)
    md1, free = inventory.array("md1"), inventory.disk("nvme4n1")
    assert md1 is not None and md1.degraded and free is not None and free.available
    plan = plan_repair(md1, "add", disk=free)
    monkeypatch.setattr("mdtui.keep.repair.resolve_member", lambda system, path: "nvme4n1")
    recheck(plan, root)  # still free: nothing to say
    next((tree / "sys" / "devices").rglob("nvme4n1/size")).unlink()
    with pytest.raises(SafetyError, match=r"nvme4n1\) could not be checked: size unreadable"):
        recheck(plan, root)


def test_the_plan_names_the_drive_pulled_and_both_front_ends_identify_it_through_it():
    """Which member's drive is found at the machine is the plan's (fail, remove, replace), not each front end's."""
    from mdtui.keep.repair import with_identity
    from mdtui.probe.inventory import scan

    tree = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
    root = SystemRoot(str(tree))
    inventory = scan(root)
    md0 = inventory.array("md0")
    assert md0 is not None
    failed = plan_repair(md0, "fail", member="nvme3n1")
    assert failed.pulled == "nvme3n1"
    named = with_identity(failed, root, inventory)
    assert named.identity is not None and named.identity.disk == "nvme3n1"
    assert named.confirmation == named.identity.token != failed.confirmation
    added = plan_repair(raid5(degraded=1), "add", disk=disk(), component_bytes=GIB // 2)
    assert added.pulled is None and with_identity(added, root, inventory) is added
