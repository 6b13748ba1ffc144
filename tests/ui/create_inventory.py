"""A crafted inventory with free NVMe disks for the create tests (the captured tree has none free)."""

from __future__ import annotations

from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.model.inventory import Inventory
from mdtui.model.link import Link, LinkKind

TB = 1_000_204_886_016


def nvme(index: int, *, gen_rate: float = 16.0) -> Disk:
    serial = f"S6EXNF0T{index:06d}"
    return Disk(
        name=f"nvme{index}n1",
        dev_path=f"/dev/nvme{index}n1",
        transport=Transport.NVME,
        size_bytes=TB,
        by_id_path=f"/dev/disk/by-id/nvme-Example_990_1TB_{serial}",
        model="Example 990 1TB",
        serial=serial,
        wwn=f"eui.00253852{index:08x}",
        logical_sector_bytes=512,
        physical_sector_bytes=512,
        rotational=False,
        driver="nvme",
        link=Link(LinkKind.PCIE, current_rate=gen_rate, max_rate=16.0, current_width=4, max_width=4),
    )


FREE_NVME = (nvme(0), nvme(1), nvme(2), nvme(3, gen_rate=8.0), nvme(4))
BUSY_SATA = Disk(
    name="sda",
    dev_path="/dev/sda",
    transport=Transport.SATA,
    size_bytes=4_000_787_030_016,
    by_id_path="/dev/disk/by-id/ata-Example_HDD_4TB_WD-0000001",
    model="Example HDD 4TB",
    serial="WD-0000001",
    logical_sector_bytes=512,
    rotational=True,
    link=Link(LinkKind.SATA, current_rate=6.0, max_rate=6.0),
    in_use=(
        InUseReason(InUseKind.MD_MEMBER, "active member of md0"),
        InUseReason(InUseKind.PARTITION_TABLE, "gpt"),
    ),
)
UNKNOWN_SATA = Disk(
    name="sdb",
    dev_path="/dev/sdb",
    transport=Transport.SATA,
    size_bytes=4_000_787_030_016,
    model="Example HDD 4TB",
    serial="WD-0000002",
    rotational=True,
    problems=("signatures not checked (no udev database)",),
)
EXISTING = MdArray(
    name="md0",
    state="clean",
    level="raid1",
    members=(ArrayMember("sda", 0, ("in_sync",)),),
    raid_disks=2,
    size_bytes=4_000_000_000_000,
    metadata="1.2",
    degraded=1,
)
FREE_INVENTORY = Inventory(
    disks=(*FREE_NVME, BUSY_SATA, UNKNOWN_SATA),
    arrays=(EXISTING,),
    privileged=True,
    udev=True,
)
