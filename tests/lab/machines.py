"""Ready-made lab machines. Extend by copying: ``STANDARD.with_disks(sata("SATA2"))`` or a new Machine."""

from __future__ import annotations

from .harness import Machine, nvme, sas, sata, virtio

SLOW_BPS = 20_000_000  # 20 MB/s: the throttled NVMe, the "weakest link" of the standard machine

STANDARD = Machine(
    name="standard",
    cpus=2,
    memory_mb=2048,
    disks=(
        # Four fast NVMe behind PCIe 3.0 x4 root ports: the raid members.
        *(nvme(f"NVME{i}", "1G", link_speed="8", link_width=4) for i in range(4)),
        sata("SATA_HDD0", "1G", rotation_rate=7200),  # a spinning SATA disk
        sata("SATA_SSD0", "1G", rotation_rate=1),  # a SATA SSD (non-rotational)
        sas("SAS0", "1G"),
        sas("SAS1", "1G", rotation_rate=1),
        virtio("VIRTIO0", "1G"),
        # One more NVMe, throttled in QEMU's block layer to 20 MB/s: a slow member to find.
        nvme("NVMESLOW0", "1G", link_speed="8", link_width=4, bps_total=SLOW_BPS),
    ),
)
"""The standard lab machine shared by tests (see tests/lab/README.md for what each drive is for)."""

STANDARD_NVME = tuple(d.serial for d in STANDARD.disks if d.transport == "nvme" and not d.bps_total)
SLOW_NVME = "NVMESLOW0"

TINY = Machine(name="tiny", cpus=1, memory_mb=1024, disks=(nvme("TINY0", "64M"), nvme("TINY1", "64M")))
"""A small machine for tests that kill or break their guest (hot-unplug, hangs)."""

DISK_BOUND_BPS = 40_000_000  # 40 MB/s each: far under what TCG's CPU can move, so the disks set the pace
DISK_BOUND = Machine(
    name="disk-bound",
    cpus=2,
    memory_mb=1024,
    disks=tuple(nvme(f"PACED{i}", "256M", bps_total=DISK_BOUND_BPS) for i in range(4)),
)
"""Four NVMe throttled alike: members behave like real disks (the disk, not the emulator's CPU, is the limit),
so an array's read against its members together means what it means on hardware (advisor scenarios)."""
DISK_BOUND_NVME = tuple(d.serial for d in DISK_BOUND.disks)
