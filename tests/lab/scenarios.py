"""Guest states shared by lab tests and by the fixture-tree capture (tests/fixtures/trees/)."""

from __future__ import annotations

import json
from typing import Any

from .harness import Guest, Machine, nvme

# What the inventory scenario builds, by drive serial (see tests/lab/machines.py STANDARD):
#   NVME0-3         md0: raid6, 64 KiB chunk, resyncing (resync slowed so it is caught mid-way)
#   SAS0            md1: raid1 with one member missing (degraded)
#   VIRTIO0, SAS1   md2: raid10 far-2
#   SATA_HDD0       ext4 mounted at /mnt/data
#   SATA_SSD0       LVM physical volume (vg mdtuivg with one LV, so dm-0 holds it)
#   NVMESLOW0       free (throttled to 20 MB/s in QEMU)
#   loop0           free, over a file in /tmp
INVENTORY_SCRIPT = r"""
set -e
dev() { lsblk -dnpo NAME,SERIAL | awk -v s="$1" '$2 == s { print $1 }'; }
echo 2000 > /proc/sys/dev/raid/speed_limit_max
mdadm --create /dev/md0 --run --level=6 --raid-devices=4 --chunk=64 --bitmap=none \
  $(dev NVME0) $(dev NVME1) $(dev NVME2) $(dev NVME3) 2>&1
mdadm --create /dev/md1 --run --level=1 --raid-devices=2 --bitmap=none $(dev SAS0) missing 2>&1
mdadm --create /dev/md2 --run --level=10 --layout=f2 --raid-devices=2 --chunk=512 --bitmap=none --assume-clean \
  $(dev VIRTIO0) $(dev SAS1) 2>&1
mkfs.ext4 -q -F -L data $(dev SATA_HDD0)
mkdir -p /mnt/data && mount $(dev SATA_HDD0) /mnt/data
pvcreate -q $(dev SATA_SSD0)
vgcreate -q mdtuivg $(dev SATA_SSD0)
lvcreate -q -y -L 64M -n scratch mdtuivg
modprobe loop
truncate -s 256M /tmp/loop0.img && losetup --find --show /tmp/loop0.img
udevadm settle
"""

TEARDOWN_SCRIPT = r"""
umount /mnt/data 2>/dev/null || true
vgchange -q -an mdtuivg 2>/dev/null || true
vgremove -q -f mdtuivg 2>/dev/null || true
losetup -j /tmp/loop0.img -O NAME -n | xargs -r -n1 losetup -d 2>/dev/null || true
echo 200000 > /proc/sys/dev/raid/speed_limit_max
"""


def build_inventory_scenario(guest: Guest) -> None:
    guest.sh(INVENTORY_SCRIPT, timeout=180)


def teardown_inventory_scenario(guest: Guest) -> None:
    guest.sh(TEARDOWN_SCRIPT, timeout=120, check=False)
    guest.reset_md()
    # pvremove after the VG is gone; wipefs in reset_md clears the ext4 and PV labels.


def mdtui_json(guest: Guest, *args: str) -> Any:
    result = guest.run([guest.python_exe, "-m", "mdtui", *args], timeout=120)
    return json.loads(result.stdout)


# The advisor's spread scenario: a RAID0 of five NVMe where one member is throttled hard and one merely slower
# (a lighter throttle, 4× the hard one but far below the unthrottled three). The array runs at the throttled
# member's pace; the slower one would allow 4× that, so it is spread, not the cause.
SPREAD_THROTTLED_BPS = 20_000_000
SPREAD_SLOWER_BPS = 80_000_000
SPREAD = Machine(
    name="spread",
    cpus=2,
    memory_mb=1024,
    disks=(
        *(nvme(f"FAST{i}", "512M", link_speed="8", link_width=4) for i in range(3)),
        nvme("SLOWER0", "512M", link_speed="8", link_width=4, bps_total=SPREAD_SLOWER_BPS),
        nvme("THROTTLED0", "512M", link_speed="8", link_width=4, bps_total=SPREAD_THROTTLED_BPS),
    ),
)
SPREAD_THROTTLED, SPREAD_SLOWER = "THROTTLED0", "SLOWER0"
SPREAD_MEMBERS = tuple(d.serial for d in SPREAD.disks)


def build_spread_array(guest: Guest) -> None:
    """md0: RAID0 over the five, 512 KiB chunks, so every 4 MiB read touches each member."""
    devices = [guest.device(serial) for serial in SPREAD_MEMBERS]
    guest.run(["mdadm", "--create", "/dev/md0", "--run", "--level=0", f"--raid-devices={len(devices)}",
               "--chunk=512", *devices], timeout=120)  # fmt: skip
    guest.run(["udevadm", "settle"], timeout=60)
