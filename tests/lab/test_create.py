"""`mdtui create` and `mdtui destroy` on a real kernel: what the plan says is what md builds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import CommandResult, Guest, GuestPool
from .machines import SLOW_NVME, STANDARD

# The md layout numbers sysfs reports for what mdadm calls left-symmetric and n2/f2/o2.
SYSFS_LAYOUT = {"left-symmetric": "2", "n2": "258", "f2": "513", "o2": "66049"}
# The plan speaks mdadm --layout's words; the inventory speaks mdadm --detail's.
DETAIL_LAYOUT = {"n2": "near=2", "f2": "far=2", "o2": "offset=2"}
STATE_ENV = {"MDTUI_STATE_DIR": "/tmp/mdtui-state"}


@pytest.fixture(scope="module")
def guest(lab_pool: GuestPool) -> Iterator[Guest]:
    guest = lab_pool.get(STANDARD)
    guest.reset_md()
    yield guest
    guest.sh("umount /mnt/t 2>/dev/null; true", check=False)
    guest.reset_md()


def mdtui(guest: Guest, *args: str, check: bool = True, timeout: float = 180) -> CommandResult:
    return guest.run([guest.python_exe, "-m", "mdtui", *args], env=STATE_ENV, check=check, timeout=timeout)


def sysfs(guest: Guest, name: str) -> str:
    return guest.read_file(f"/sys/block/md0/md/{name}").strip()


def destroy_and_check_clean(guest: Guest, members: list[str]) -> None:
    try:
        report = json.loads(mdtui(guest, "destroy", "/dev/md0", "--yes", "--json").stdout)
    except Exception:
        guest.reset_md()  # leave the shared guest clean for the next case, then report the failure
        raise
    assert report["ran"][0]["argv"][:2] == ["mdadm", "--stop"]
    assert "md0" not in guest.read_file("/proc/mdstat")
    for dev in members:
        examine = guest.run(["mdadm", "--examine", dev], check=False)
        assert examine.rc != 0 and "No md superblock" in examine.stderr, f"{dev} still has a superblock"
        signatures = guest.run(["wipefs", "--no-act", "--noheadings", dev]).stdout.strip()
        assert signatures == "", f"{dev} still carries signatures: {signatures}"


CASES = [
    # (level args, serials, expected level, chunk KiB or None, layout or None)
    (["--level", "0", "--chunk", "64"], ["NVME0", "NVME1"], "raid0", 64, None),
    (["--level", "1", "--bitmap", "internal"], ["NVME0", "NVME1"], "raid1", None, None),
    (["--level", "5", "--chunk", "128"], ["NVME0", "NVME1", "NVME2"], "raid5", 128, "left-symmetric"),
    (["--level", "6", "--chunk", "64"], ["NVME0", "NVME1", "NVME2", "NVME3"], "raid6", 64, "left-symmetric"),
    (["--level", "10", "--layout", "n2"], ["NVME0", "NVME1", "NVME2", "NVME3"], "raid10", 512, "n2"),
    (["--level", "10", "--layout", "f2", "--chunk", "256"], ["NVME0", "NVME1"], "raid10", 256, "f2"),
    (["--level", "linear"], ["NVME0", "SAS0"], "linear", None, None),
    (["--level", "0", "--build", "--chunk", "32"], ["NVME2", "NVME3"], "raid0", 32, None),
]


@pytest.mark.parametrize(("level_args", "serials", "level", "chunk_kib", "layout"), CASES)
def test_create_builds_exactly_what_the_plan_said(
    guest: Guest, level_args: list[str], serials: list[str], level: str, chunk_kib: int | None, layout: str | None
) -> None:
    devices = [guest.device(s) for s in serials]
    assume_clean = [] if level in ("raid0", "linear") else ["--assume-clean"]
    result = mdtui(guest, "create", *level_args, "--device", "/dev/md0", *assume_clean, "--yes", "--json", *devices)
    report: dict[str, Any] = json.loads(result.stdout)
    plan = report["plan"]
    assert plan["level"] == level and plan["layout"] == layout
    assert plan["chunk_bytes"] == (chunk_kib * 1024 if chunk_kib else None)
    # The argv names the stable by-id paths, not the kernel names.
    assert all(path.startswith("/dev/disk/by-id/") for path in plan["member_paths"])
    try:
        assert sysfs(guest, "level") == level
        if chunk_kib:
            assert sysfs(guest, "chunk_size") == str(chunk_kib * 1024)
        if layout:
            assert sysfs(guest, "layout") == SYSFS_LAYOUT[layout]
        members = sorted(entry[4:] for entry in guest.run(["ls", "/sys/block/md0/md"]).stdout.split()
                         if entry.startswith("dev-"))  # fmt: skip
        assert members == sorted(d.rsplit("/", 1)[1] for d in devices)
        detail = guest.run(["mdadm", "--detail", "--export", "/dev/md0"]).stdout
        fields = dict(line.split("=", 1) for line in detail.splitlines() if "=" in line)
        assert fields["MD_LEVEL"] == level
        assert fields["MD_DEVICES"] == str(len(devices))
        if "--build" in level_args:
            assert fields.get("MD_METADATA") in (None, "")
            assert report["created"]["uuid"] is None
        else:
            assert fields["MD_METADATA"] == "1.2"
            assert report["created"]["uuid"] == fields["MD_UUID"]
        bitmap = guest.run(["cat", "/sys/block/md0/md/bitmap/location"], check=False).stdout.strip()
        if level in ("raid1", "raid5", "raid6", "raid10"):
            assert bitmap == ("+8" if "internal" in level_args else "none")
        # What mdtui scan reads back matches the plan too.
        scanned = json.loads(mdtui(guest, "scan", "--json").stdout)
        md0 = next(a for a in scanned["arrays"] if a["name"] == "md0")
        assert md0["level"] == level and md0["layout"] == DETAIL_LAYOUT.get(layout or "", layout)
    finally:
        destroy_and_check_clean(guest, devices)


def test_a_member_with_a_mounted_filesystem_is_refused(guest: Guest) -> None:
    hdd = guest.device("SATA_HDD0")
    guest.sh(f"mkfs.ext4 -q -F {hdd} && mkdir -p /mnt/t && mount {hdd} /mnt/t && echo keep > /mnt/t/file")
    try:
        result = mdtui(guest, "create", "--level", "1", "--yes", guest.device("NVME0"), hdd, check=False)
        assert result.rc == 2
        assert "is in use (mounted: mounted at /mnt/t (ext4)" in result.stderr
        assert "Traceback" not in result.stderr
        assert "md0" not in guest.read_file("/proc/mdstat")
        assert guest.read_file("/mnt/t/file").strip() == "keep"
    finally:
        guest.sh(f"umount /mnt/t; wipefs -aq {hdd}", check=False)


def test_destroy_refuses_an_array_mdtui_did_not_create(guest: Guest) -> None:
    a, b = guest.device("NVME0"), guest.device("NVME1")
    guest.run(["mdadm", "--create", "/dev/md0", "--run", "--level=1", "--raid-devices=2", "--assume-clean", a, b])
    try:
        result = mdtui(guest, "destroy", "/dev/md0", "--yes", check=False)
        assert result.rc == 2
        assert "was not created by mdtui" in result.stderr
        assert "md0 : active raid1" in guest.read_file("/proc/mdstat")
    finally:
        guest.reset_md()


def test_predicted_read_with_a_throttled_member_is_within_15_percent_of_fio(guest: Guest) -> None:
    serials = ["NVME0", "NVME1", "NVME2", SLOW_NVME]
    code = f"""
import asyncio, json
from mdtui.model.job import JobSpec
from mdtui.plan import CreateRequest, plan_create
from mdtui.probe.inventory import scan
from mdtui.run.mdadm import execute_create
from mdtui.run.process import run_fio

MIB = 1024 * 1024
def read_job(name, target, numjobs):
    return JobSpec(name=name, target=target, block_size_bytes=4 * MIB, iodepth=12, numjobs=numjobs, runtime_s=4)

disks = {{d.serial: d for d in scan("/").disks}}
members = tuple(disks[s] for s in {serials!r})
# Each member alone first: the plan predicts from measured speeds, as the weakest-link run does.
speeds = {{}}
for disk in members:
    result = asyncio.run(run_fio(read_job("member", disk.dev_path, 2)))
    speeds[disk.dev_path] = int(result.total.read.bytes_per_s)
plan = plan_create(CreateRequest(device="/dev/md0", level="raid0", members=members, chunk_kib=512), speeds)
execute_create(plan, confirmed=True)
array = asyncio.run(run_fio(read_job("array", "/dev/md0", 4)))
print(json.dumps({{"speeds": speeds, "predicted": plan.seq_read_bytes_per_s,
                  "slowest": plan.prediction.slowest_members, "measured": array.total.read.bytes_per_s}}))
"""
    try:
        result = guest.python(code, env=STATE_ENV, timeout=240)
        figures = json.loads(result.stdout.strip().splitlines()[-1])
    finally:
        guest.reset_md()
    slow_dev = guest.device(SLOW_NVME)
    assert figures["slowest"] == [slow_dev.rsplit("/", 1)[1]]
    assert figures["speeds"][slow_dev] < 0.5 * min(v for k, v in figures["speeds"].items() if k != slow_dev)
    predicted, measured = figures["predicted"], figures["measured"]
    print(f"raid0 with a 20 MB/s member: predicted {predicted / 1e6:.1f} MB/s, fio measured {measured / 1e6:.1f} MB/s")
    assert abs(predicted - measured) <= 0.15 * measured, figures
