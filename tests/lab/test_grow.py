"""`mdtui grow` on a real kernel (issue 43), with data written first and its checksum taken: a raid5 of 3 grown
to 4 by --add, turned raid6 with one more disk and a backup file, its chunk changed, shrunk (refused while the
filesystem is larger, accepted after resize2fs), a raid1's --size max after its members were replaced by larger
disks; after each the geometry is what was asked (mdadm --detail), the checksum holds and fsck is clean. Then a
power cut in the middle of a grow: QEMU killed, a new guest over the same disk images, the array assembles,
`mdtui grow --resume` finishes the reshape, the checksum holds.

One guest of its own for the module (the power cut replaces it), booted once; tiny members (40 MiB) and md's
own sync_speed_max on the array set each pass's time, so the prediction (bound by that limit) can be compared
with the measurement; the power cut throttles the members in QEMU instead, so the cut lands mid-reshape.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import CommandResult, Guest, Machine, boot, nvme, record_timing, virtio

GROW = Machine(
    name="grow",
    cpus=2,
    memory_mb=1024,
    disks=(
        *(nvme(f"G{i}", "40M") for i in range(5)),  # md0: raid5 over G0-G2, G3 added, G4 for raid6
        nvme("S0", "24M"),  # md1: a raid1 of two small disks ...
        nvme("S1", "24M"),
        nvme("GBIG0", "48M"),  # ... replaced by two larger ones, then --size max
        nvme("GBIG1", "48M"),
        virtio("KEEP0", "64M"),  # ext4 off every array: the backup file and mdtui's state (they survive the cut)
    ),
)
KEEP = "/mnt/keep"
STATE_ENV = {"MDTUI_STATE_DIR": f"{KEEP}/state"}
MNT = "/mnt/g"
DATA_BYTES = 20_000_000  # fits the array after the shrink with ext4's own overhead (resize2fs's minimum)
SYNC_SPEED_MAX_KIB = 4000  # md0's own limit: ~10 s per 39 MiB member, far under what the guest can move
# Measured / predicted for the reshapes md's speed limit bounds (no backup file): md sleeps whenever the rate is
# above the limit, so it is not faster (0.7 allows for mdtui seeing the pass start and end by 1 s polls); it pauses
# at each checkpoint to write the reshape position, and a loaded host slows the guest, so it may take longer.
# Measured: 0.93-1.04 (grow by --add), 0.94-1.52 (chunk change; 1.52 at load 10-13).
LIMIT_BOUND_RATIO = (0.7, 2.0)
CUT_BPS = 3_000_000  # QEMU throttle on md0's members for the power cut: the reshape takes well over 10 s
CUT_AT_FRACTION = 0.15  # kill QEMU once md reports at least this much of the reshape done
TIMES: dict[str, dict[str, Any]] = {}


class Lab:
    """The module's guest, replaced by the power cut."""

    guest: Guest


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    holder = Lab()
    holder.guest = boot(GROW)
    try:
        setup(holder.guest)
        yield holder
    finally:
        if TIMES:
            print("predicted vs measured:", json.dumps(TIMES, indent=1))
        holder.guest.close()


def sh(guest: Guest, script: str, timeout: float = 120) -> str:
    return guest.sh(script, timeout=timeout).stdout


def mdtui(guest: Guest, *args: str, check: bool = True, timeout: float = 300) -> CommandResult:
    return guest.run(
        [guest.python_exe, "-m", "mdtui", *args], env=STATE_ENV, check=check, timeout=timeout, cwd=str(guest.checkout)
    )


def by_id(guest: Guest, serial: str) -> str:
    return f"/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_{serial}"


def setup(guest: Guest) -> None:
    """md0: raid5 of three with ext4 and DATA_BYTES of random data; KEEP0: ext4 for the backup file and state."""
    devices = " ".join(guest.device(f"G{i}") for i in range(3))
    sh(
        guest,
        f"mkfs.ext4 -q {guest.device('KEEP0')} && mkdir -p {KEEP} {MNT} && mount {guest.device('KEEP0')} {KEEP} && "
        f"mdadm --create /dev/md0 --run --level=5 --raid-devices=3 --chunk=64 --bitmap=none --assume-clean "
        f"{devices} && udevadm settle && mkfs.ext4 -q /dev/md0 && mount /dev/md0 {MNT} && "
        f"head -c {DATA_BYTES} /dev/urandom > {MNT}/data && sync && sha256sum {MNT}/data > {KEEP}/sum && "
        f"echo {SYNC_SPEED_MAX_KIB} > /sys/block/md0/md/sync_speed_max && udevadm settle",
    )


def checksum_holds(guest: Guest, mnt: str = MNT, sums: str = f"{KEEP}/sum") -> None:
    result = guest.sh(f"cd / && sha256sum -c {sums}", check=False)
    assert result.ok, f"the checksum of the data changed: {result.stdout} {result.stderr}"


def fsck_clean(guest: Guest, device: str = "/dev/md0", mnt: str = MNT) -> None:
    result = guest.sh(f"umount {mnt} && e2fsck -fn {device}; rc=$?; mount {device} {mnt}; exit $rc", check=False)
    assert result.rc == 0, f"e2fsck -fn {device} found problems (rc {result.rc}): {result.stdout[-1500:]}"


def detail(guest: Guest, device: str = "/dev/md0") -> dict[str, str]:
    text = sh(guest, f"mdadm --detail {device}")
    return {k.strip(): v.strip() for k, _, v in (line.partition(" : ") for line in text.splitlines()) if v}


def grow(guest: Guest, name: str, *args: str) -> dict[str, Any]:
    """`mdtui grow ARGS --yes --json` (its document holds the plan it ran and what came of it), timed."""
    started = time.monotonic()
    ran = json.loads(mdtui(guest, "grow", *args, "--yes", "--json").stdout)
    record_timing(f"mdtui grow {name}", time.monotonic() - started)
    plan, outcome = ran["plan"], ran.get("outcome", {})
    TIMES[name] = {
        "predicted_s": plan["predicted_seconds"],
        "bound": plan["bound"],
        "measured_s": outcome.get("measured_seconds"),
        "backup_file": plan["backup_file"],
    }
    if not outcome.get("reached"):
        md = "/sys/block/md0/md"
        seen = guest.sh(
            f"dmesg | tail -25; for f in sync_max sync_completed reshape_position suspend_lo suspend_hi "
            f"stripe_cache_size; do echo $f $(cat {md}/$f); done; ps ax | grep '[m]dadm'",
            check=False,
        ).stdout
        pytest.fail(f"{name}: the array did not reach the planned shape: {outcome}\n{seen}")
    return {"plan": plan, "ran": ran}


def ratio(name: str) -> float:
    entry = TIMES[name]
    return float(entry["measured_s"]) / float(entry["predicted_s"])


def test_raid5_grows_by_add(lab: Lab) -> None:
    guest = lab.guest
    done = grow(guest, "raid5 3→4 (--add)", "md0", "--add", by_id(guest, "G3"))
    plan = done["plan"]
    assert plan["argv"][0][:4] == ["mdadm", "--manage", "/dev/md0", "--add"]
    assert plan["argv"][1] == ["mdadm", "--grow", "/dev/md0", "--raid-devices=4"]
    assert plan["backup_file"] is None  # it gains a member: md moves the data offset
    info = detail(guest)
    assert (info["Raid Level"], info["Raid Devices"]) == ("raid5", "4")
    size = int(sh(guest, "cat /sys/block/md0/size")) * 512
    assert size == plan["size_after_bytes"], f"planned {plan['size_after_bytes']}, md has {size}"
    assert done["ran"]["follow_up"]["ran"], "resize2fs was not run"
    fs_bytes = int(sh(guest, f"df -B1 --output=size {MNT} | tail -1"))
    assert fs_bytes > plan["size_before_bytes"] * 0.95, "the filesystem did not grow with the array"
    lo, hi = LIMIT_BOUND_RATIO
    assert lo <= ratio("raid5 3→4 (--add)") <= hi, TIMES
    checksum_holds(guest)
    fsck_clean(guest)


def test_raid5_becomes_raid6_with_a_backup_file(lab: Lab) -> None:
    guest = lab.guest
    add = by_id(guest, "G4")
    # The attack a backup file must not fall for, on real md: a place on the array itself (a tmpfs, a shared
    # directory and a planted link are refused in tests/unit/test_grow_keep.py and test_grow_plan.py).
    refused = mdtui(
        guest, "grow", "md0", "--add", add, "--level", "6", "--backup-file", f"{MNT}/b", "--dry-run", check=False
    )
    assert refused.rc == 2 and "md0 itself" in refused.stderr, refused.stderr
    backup = f"{KEEP}/md0.backup"
    done = grow(
        guest, "raid5 → raid6 (+1 disk, backup file)", "md0", "--add", add, "--level", "6", "--backup-file", backup
    )
    assert f"--backup-file={backup}" in done["plan"]["argv"][-1]
    info = detail(guest)
    assert (info["Raid Level"], info["Raid Devices"], info["Layout"]) == ("raid6", "5", "left-symmetric")
    assert guest.sh(f"test -e {backup}", check=False).rc != 0, "mdadm left the backup file behind"
    checksum_holds(guest)
    fsck_clean(guest)


def test_chunk_change(lab: Lab) -> None:
    guest = lab.guest
    grow(guest, "chunk 64 → 128 KiB", "md0", "--chunk", "128")
    assert detail(guest)["Chunk Size"] == "128K"
    lo, hi = LIMIT_BOUND_RATIO
    assert lo <= ratio("chunk 64 → 128 KiB") <= hi, TIMES
    checksum_holds(guest)
    fsck_clean(guest)


def test_shrink_refused_while_the_filesystem_is_larger(lab: Lab) -> None:
    guest = lab.guest
    refused = mdtui(guest, "grow", "md0", "--raid-devices", "4", "--dry-run", check=False)
    assert refused.rc == 2 and "resize2fs /dev/md0" in refused.stderr and "larger than the array" in refused.stderr, (
        refused.stderr
    )
    assert refused.stdout == "", "a refused plan printed a plan"
    new_kib = int(sh(guest, "cat /sys/block/md0/md/component_size")) * 2
    sh(guest, f"umount {MNT} && e2fsck -f -p /dev/md0 && resize2fs /dev/md0 {new_kib}K && mount /dev/md0 {MNT}")
    done = grow(guest, "raid6 5→4 (shrink, backup file)", "md0", "--raid-devices", "4")
    argv = done["plan"]["argv"]
    assert argv[0] == ["mdadm", "--grow", "/dev/md0", f"--array-size={new_kib}K"], argv
    assert any(a.startswith("--backup-file=") for a in argv[1]), argv
    info = detail(guest)
    assert (info["Raid Level"], info["Raid Devices"], info["Spare Devices"]) == ("raid6", "4", "1")
    assert int(sh(guest, "cat /sys/block/md0/size")) * 512 == done["plan"]["size_after_bytes"]
    checksum_holds(guest)
    fsck_clean(guest)


def test_size_max_after_members_replaced_by_larger_disks(lab: Lab) -> None:
    guest = lab.guest
    small = " ".join(guest.device(s) for s in ("S0", "S1"))
    sh(
        guest,
        f"mdadm --create /dev/md1 --run --level=1 --raid-devices=2 --bitmap=none --assume-clean {small} && "
        "udevadm settle && mkfs.ext4 -q /dev/md1 && mkdir -p /mnt/m1 && mount /dev/md1 /mnt/m1 && "
        "head -c 8000000 /dev/urandom > /mnt/m1/data && sync && sha256sum /mnt/m1/data > /mnt/keep/sum1 && "
        "echo 200000 > /sys/block/md1/md/sync_speed_max",
    )
    # Each small member replaced by a larger disk (mdadm --replace keeps the mirror whole throughout).
    for old, new in (("S0", "GBIG0"), ("S1", "GBIG1")):
        sh(
            guest,
            f"mdadm /dev/md1 --add {guest.device(new)} && mdadm /dev/md1 --replace {guest.device(old)} "
            f"--with {guest.device(new)} && sleep 1 && mdadm --wait /dev/md1; mdadm /dev/md1 --remove "
            f"{guest.device(old)}; udevadm settle",
        )
    done = grow(guest, "raid1 --size max", "md1", "--size", "max")
    assert done["plan"]["argv"] == [["mdadm", "--grow", "/dev/md1", "--size=max"]]
    size = int(sh(guest, "cat /sys/block/md1/size")) * 512
    assert size == done["plan"]["size_after_bytes"] > done["plan"]["size_before_bytes"]
    checksum_holds(guest, "/mnt/m1", "/mnt/keep/sum1")
    fsck_clean(guest, "/dev/md1", "/mnt/m1")


def test_power_cut_mid_reshape_then_resume(lab: Lab) -> None:
    guest = lab.guest
    sh(guest, "umount /mnt/m1; mdadm --stop /dev/md1; true")
    # md0 now has the member the shrink freed as a spare: grow onto it again, with the members throttled so the
    # reshape lasts long enough to cut it in the middle.
    for serial in (f"G{i}" for i in range(5)):
        guest.qmp("block_set_io_throttle", id=f"disk-{serial}", bps=CUT_BPS, bps_rd=0, bps_wr=0, iops=0, iops_rd=0,
                  iops_wr=0)  # fmt: skip
    sh(guest, "echo 200000 > /sys/block/md0/md/sync_speed_max")
    mdtui(guest, "grow", "md0", "--raid-devices", "5", "--yes", "--no-follow")
    deadline = time.monotonic() + 60
    fraction = 0.0
    while fraction < CUT_AT_FRACTION and time.monotonic() < deadline:
        done, _, total = sh(guest, "cat /sys/block/md0/md/sync_completed").strip().partition(" / ")
        fraction = int(done) / int(total) if total.strip().isdigit() and done.isdigit() else fraction
        time.sleep(0.5)
    assert CUT_AT_FRACTION <= fraction < 0.9, f"the reshape was at {fraction:.0%} when the power was to be cut"
    lab.guest = guest = guest.power_cut()
    sh(guest, f"mkdir -p {KEEP} {MNT} && mount {guest.device('KEEP0')} {KEEP} && udevadm settle")
    scan = mdtui(guest, "scan").stdout
    assert "reshape" in scan and "--resume" in scan, scan
    resumed = mdtui(guest, "grow", "md0", "--resume", "--yes", timeout=600)
    assert "the reshape finished" in resumed.stdout, resumed.stdout + resumed.stderr
    info = detail(guest)
    assert (info["Raid Level"], info["Raid Devices"]) == ("raid6", "5"), info
    sh(guest, f"mount /dev/md0 {MNT}")
    checksum_holds(guest)
    fsck_clean(guest)
    assert "reshape of" not in mdtui(guest, "scan").stdout, "scan still reports a reshape"
