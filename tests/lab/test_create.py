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
# Planned usable capacity vs the created array's size (/sys/block/mdN/size × 512): the planner
# models mdadm 4.2's data offset, bitmap and bad-block space and md's rounding per level
# (mdtui/plan/metadata.py, levels.py), so the two must agree to the byte.
PLANNED_SIZE_TOLERANCE_BYTES = 0
# The planner's predicted raid0 read (slowest member alone × N) vs fio's measured read of the
# created array, with one member throttled: |predicted - measured| <= this × measured.
PREDICTED_READ_TOLERANCE = 0.15


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


def sysfs_block(guest: Guest, device: str, name: str) -> str:
    return guest.read_file(f"/sys/block/{device}/{name}").strip()


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
        # The plan's usable capacity is the array's size, to the byte.
        real_bytes = int(sysfs_block(guest, "md0", "size")) * 512
        print(
            f"\nsize {level} {layout or ''} on {len(devices)}: planned {plan['usable_bytes']} B, array {real_bytes} B"
        )
        assert abs(plan["usable_bytes"] - real_bytes) <= PLANNED_SIZE_TOLERANCE_BYTES, (
            f"planned {plan['usable_bytes']} B, array {real_bytes} B: off by {plan['usable_bytes'] - real_bytes} B"
        )
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


def test_predicted_read_with_a_throttled_member_is_within_tolerance_of_fio(guest: Guest) -> None:
    serials = ["NVME0", "NVME1", "NVME2", SLOW_NVME]
    code = f"""
import asyncio, json
from mdtui.model.job import JobSpec
from mdtui.plan import CreateRequest, plan_create
from mdtui.plan.forecast import MemberSource
from mdtui.plan.figures import MemberFigures
from mdtui.probe.inventory import scan
from mdtui.execute.mdadm import execute_create
from mdtui.execute.runners import run_fio

MIB = 1024 * 1024
def read_job(name, target, numjobs):
    return JobSpec(name=name, target=target, block_size_bytes=4 * MIB, iodepth=12, numjobs=numjobs, runtime_s=4)

disks = {{d.serial: d for d in scan("/").disks}}
members = tuple(disks[s] for s in {serials!r})
# Each member alone first: the plan's md model predicts from measured speeds, as the weakest-link run does.
speeds = {{}}
for disk in members:
    result = asyncio.run(run_fio(read_job("member", disk.dev_path, 2)))
    speeds[disk.dev_path] = int(result.total.read.bytes_per_s)
sources = [MemberSource(d.name, MemberFigures(seq_read_bytes_per_s=speeds[d.dev_path]), "measured") for d in members]
plan = plan_create(CreateRequest(device="/dev/md0", level="raid0", members=members, chunk_kib=512), sources)
execute_create(plan, confirmed=plan.confirmation)
array = asyncio.run(run_fio(read_job("array", "/dev/md0", 4)))
print(json.dumps({{"speeds": speeds, "predicted": plan.seq_read_bytes_per_s,
                  "slowest": plan.pace_setters, "measured": array.total.read.bytes_per_s}}))
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
    report = (
        f"raid0 with a 20 MB/s member: predicted {predicted / 1e6:.1f} MB/s, fio measured {measured / 1e6:.1f} MB/s "
        f"(predicted/measured {predicted / measured:.3f}, allowed 1 ± {PREDICTED_READ_TOLERANCE})"
    )
    print(report)
    assert abs(predicted - measured) <= PREDICTED_READ_TOLERANCE * measured, (report, figures)


MIB = 1024 * 1024
GIB = 1024 * MIB
# Geometries where a rough planner goes wrong, each on fresh loop devices (sparse files in the
# guest's tmpfs): (label, level, metadata, chunk KiB, layout, member sizes, spare sizes, bitmap).
GEOMETRIES: list[tuple[str, str, str, int | None, str | None, list[int], list[int], str]] = [
    ("raid1 rounds to 64 KiB; 1.2 headroom under 1 MiB", "raid1", "1.2", None, None,
     [300 * MIB + 7 * 512] * 2, [], "none"),
    ("raid1 internal bitmap on 1.2", "raid1", "1.2", None, None, [2 * GIB + 12345 * 512] * 2, [], "internal"),
    ("raid10 f2 with an odd chunk count", "raid10", "1.2", 64, "f2", [64 * MIB + 64 * 1024] * 2, [], "none"),
    ("raid10 n2 over 3 members, odd chunks", "raid10", "1.2", 64, "n2", [64 * MIB + 64 * 1024] * 3, [], "none"),
    ("raid10 o2 over 3 members, odd chunks", "raid10", "1.2", 64, "o2", [64 * MIB + 64 * 1024] * 3, [], "none"),
    ("4 MiB chunks keep 8 MiB of headroom", "raid5", "1.2", 4096, None, [GIB] * 3, [], "none"),
    ("raid0: the first member's data offset for all", "raid0", "1.2", 64, None, [64 * MIB, 2 * GIB], [], "none"),
    ("raid4 on odd members", "raid4", "1.2", 16, None, [200 * MIB + 3 * 512] * 3, [], "none"),
    ("raid5 of 1 TB members: data at 129 MiB", "raid5", "1.2", 512, None, [10**12] * 3, [], "none"),
    ("linear 1.0: no bitmap space", "linear", "1.0", None, None, [100 * MIB + 3 * 512, 50 * MIB + 1536], [], "none"),
    ("raid6 1.0 over 8 GiB: 64 KiB bitmap space", "raid6", "1.0", 128, None, [9 * GIB + 5 * 512] * 4, [], "none"),
    ("raid5 1.0: a spare with more bitmap space sets the size", "raid5", "1.0", 64, None, [8 * GIB] * 3,
     [8 * GIB + 8192], "none"),
    ("raid1 0.90", "raid1", "0.90", None, None, [100 * MIB + 100 * 512] * 2, [], "none"),
    # (mdadm 4.2 refuses raid0 with 0.90 metadata: "0.90 metadata does not support layouts for RAID0".)
    ("linear 0.90 mixed sizes", "linear", "0.90", None, None, [100 * MIB + 100 * 512, 80 * MIB + 512], [], "none"),
    ("raid5 0.90 on odd members", "raid5", "0.90", 32, None, [100 * MIB + 100 * 512] * 3, [], "none"),
]  # fmt: skip

GEOMETRY_CODE = r"""
import json, os, subprocess, sys
from mdtui.model import Disk, Transport
from mdtui.plan import CreateRequest, plan_create

def run(*argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)}: rc {done.returncode}: {done.stderr}")
    return done.stdout.strip()

subprocess.run(["modprobe", "loop"], check=True)
results = []
for label, level, metadata, chunk, layout, sizes, spare_sizes, bitmap in json.loads(sys.argv[1]):
    files, loops = [], []
    try:
        for i, size in enumerate(sizes + spare_sizes):
            path = f"/tmp/geometry{i}.img"
            with open(path, "wb") as image:
                image.truncate(size)
            files.append(path)
            loops.append(run("losetup", "--find", "--show", path))
        disks = [
            Disk(name=os.path.basename(dev), dev_path=dev, transport=Transport.LOOP, logical_sector_bytes=512,
                 size_bytes=int(open(f"/sys/block/{os.path.basename(dev)}/size").read()) * 512)
            for dev in loops
        ]
        redundant = level not in ("raid0", "linear")
        plan = plan_create(CreateRequest(
            device="/dev/md9", level=level, members=tuple(disks[:len(sizes)]), spares=tuple(disks[len(sizes):]),
            chunk_kib=chunk, layout=layout, metadata=metadata, bitmap=bitmap, assume_clean=redundant,
            allow_mixed_sizes=True))
        run(*plan.argv)
        run("udevadm", "settle")
        real = int(open("/sys/block/md9/size").read()) * 512
        examine = run("mdadm", "--examine", loops[0])
        offset = next((line.split(":", 1)[1].strip() for line in examine.splitlines() if "Data Offset" in line), None)
        results.append({"label": label, "planned": plan.usable_bytes, "real": real, "data_offset": offset})
    finally:
        subprocess.run(["udevadm", "settle"])
        subprocess.run(["mdadm", "--stop", "/dev/md9"], capture_output=True)
        for dev in loops:
            subprocess.run(["losetup", "-d", dev])
        for path in files:
            os.unlink(path)
print(json.dumps(results))
"""


def test_planned_size_is_the_array_size_on_awkward_geometries(guest: Guest) -> None:
    result = guest.run(
        [guest.python_exe, "-c", GEOMETRY_CODE, json.dumps(GEOMETRIES)], env=STATE_ENV, timeout=600, check=False
    )
    assert result.rc == 0, result.stderr[-3000:]
    rows = json.loads(result.stdout.strip().splitlines()[-1])
    assert [row["label"] for row in rows] == [g[0] for g in GEOMETRIES]
    for row in rows:
        print(f"size {row['label']}: planned {row['planned']} B, array {row['real']} B, "
              f"diff {row['planned'] - row['real']} B (data offset {row['data_offset']})")  # fmt: skip
    wrong = [row for row in rows if abs(row["planned"] - row["real"]) > PLANNED_SIZE_TOLERANCE_BYTES]
    assert wrong == [], wrong
