"""Disk discovery against system roots captured in the lab (tests/fixtures/trees/README.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mdtui.errors import ProbeError
from mdtui.model.disk import InUseKind, Transport
from mdtui.model.link import LinkKind
from mdtui.probe.disks import DiskProber, transport_of
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"
LAB = TREES / "lab-standard"
REAL = TREES / "real-links"


def kinds(disk) -> set[InUseKind]:
    return {reason.kind for reason in disk.in_use}


@pytest.fixture(scope="module")
def lab():
    return scan(LAB, privileged=True)


@pytest.fixture(scope="module")
def real():
    return scan(REAL, privileged=True)


def test_every_candidate_disk_is_found_with_its_transport(lab) -> None:
    found = {d.name: d.transport for d in lab.disks}
    assert found == {
        "loop0": Transport.LOOP,
        "nvme0n1": Transport.NVME, "nvme1n1": Transport.NVME, "nvme2n1": Transport.NVME,
        "nvme3n1": Transport.NVME, "nvme4n1": Transport.NVME,
        "sda": Transport.SATA, "sdb": Transport.SATA,
        "sdc": Transport.SAS, "sdd": Transport.SAS,
        "vda": Transport.VIRTIO,
    }  # fmt: skip
    assert lab.udev and lab.md_available


def test_identity_fields_come_from_sysfs_and_udev(lab) -> None:
    nvme = lab.disk("nvme0n1")
    assert nvme is not None
    assert (nvme.model, nvme.serial, nvme.driver) == ("QEMU NVMe Ctrl", "NVME0", "nvme")
    assert nvme.by_id_path == "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_NVME0"
    assert nvme.size_bytes == 1024**3
    assert (nvme.logical_sector_bytes, nvme.rotational) == (512, False)
    sata = lab.disk("sda")
    assert sata is not None
    assert (sata.serial, sata.rotational, sata.driver) == ("SATA_HDD0", True, "ahci")
    assert sata.by_id_path == "/dev/disk/by-id/ata-QEMU_HARDDISK_SATA_HDD0"
    sas = lab.disk("sdc")
    assert sas is not None
    # The unit serial (VPD page 0x80), not the WWN-based designator udev calls ID_SERIAL_SHORT.
    assert (sas.serial, sas.driver) == ("SAS0", "mptsas")
    assert sas.wwn == "0x5000c50000000000"
    assert lab.disk("vda").serial == "VIRTIO0"


def test_qemu_links_as_the_lab_kernel_reports_them(lab) -> None:
    nvme = lab.disk("nvme0n1").link
    assert nvme.kind is LinkKind.PCIE
    assert (nvme.current_rate, nvme.current_width, nvme.max_rate, nvme.max_width) == (2.5, 1, 2.5, 1)
    assert (nvme.port_max_rate, nvme.port_max_width) == (8.0, 4)
    assert not nvme.downgraded  # the device itself can do no more than it trained at
    assert lab.disk("sda").link.current_rate == 1.5
    assert lab.disk("sdc").link.current_rate == 3.0
    assert lab.disk("vda").link is None and lab.disk("loop0").link is None


def test_healthy_gen3_x4_and_a_drive_in_a_gen1_slot(real) -> None:
    healthy = real.disk("nvme0n1").link
    assert (healthy.current_rate, healthy.current_width) == (8.0, 4)
    assert not healthy.downgraded
    assert healthy.bandwidth_bytes_per_s == 3_938_461_540
    slow = real.disk("nvme1n1").link
    assert slow.downgraded and slow.slot_limited
    assert slow.bandwidth_bytes_per_s == 1_000_000_000
    assert "2.5 GT/s x4" in slow.finding() and "8 GT/s x4" in slow.finding()


def test_sata_ssd_at_6_and_hdd_at_3_gbps_and_sas_at_12(real) -> None:
    ssd, hdd = real.disk("sdb"), real.disk("sda")
    assert (ssd.link.current_rate, ssd.rotational, ssd.link.downgraded) == (6.0, False, False)
    assert (hdd.link.current_rate, hdd.link.max_rate, hdd.rotational) == (3.0, 6.0, True)
    assert hdd.link.downgraded
    assert real.disk("sdc").link.current_rate == 12.0
    assert real.disk("sdc").link.bandwidth_bytes_per_s == 1_200_000_000


def test_in_use_reasons(lab) -> None:
    assert kinds(lab.disk("sda")) == {InUseKind.MOUNTED, InUseKind.FS_SIGNATURE}
    assert "mounted at /mnt/data (ext4)" in str(lab.disk("sda").in_use[0])
    assert kinds(lab.disk("sdb")) == {InUseKind.HOLDER, InUseKind.LVM_PV}
    assert "dm-0 (mdtuivg-scratch)" in lab.disk("sdb").in_use[0].detail
    for name in ("nvme0n1", "nvme3n1", "sdc", "sdd", "vda"):
        assert kinds(lab.disk(name)) == {InUseKind.MD_MEMBER}, name
    assert lab.disk("nvme0n1").in_use[0].detail == "active member of md0"
    for name in ("nvme4n1", "loop0"):
        disk = lab.disk(name)
        assert disk.in_use == () and disk.problems == () and disk.available, name


def test_arrays_in_the_captured_states(lab) -> None:
    md0, md1, md2 = lab.array("md0"), lab.array("md1"), lab.array("md2")
    assert (md0.level, md0.chunk_bytes, md0.layout, md0.raid_disks) == ("raid6", 65536, "left-symmetric", 4)
    assert md0.sync is not None and md0.sync.action == "resync"
    assert sorted(m.name for m in md0.members) == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"]
    assert (md1.level, md1.degraded, md1.raid_disks) == ("raid1", 1, 2)
    assert (md2.level, md2.layout, md2.chunk_bytes) == ("raid10", "far=2", 512 * 1024)


def test_a_stale_md_superblock_and_a_swap_signature_from_udev(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(LAB, tree, symlinks=True)
    majmin = (tree / "sys/block/nvme4n1").resolve().joinpath("dev").read_text().strip()
    record = tree / f"run/udev/data/b{majmin}"  # nvme4n1, free in the capture
    assert record.exists()
    record.write_text(record.read_text() + "E:ID_FS_TYPE=linux_raid_member\nE:ID_FS_LABEL=old:0\n")
    disk = DiskProber(SystemRoot(tree), privileged=True).probe("nvme4n1")
    assert kinds(disk) == {InUseKind.MD_SUPERBLOCK}
    assert "array old:0" in disk.in_use[0].detail
    record.write_text(record.read_text().replace("linux_raid_member", "swap"))
    disk = DiskProber(SystemRoot(tree), privileged=True).probe("nvme4n1")
    assert kinds(disk) == {InUseKind.SWAP}


def test_root_filesystem_and_active_swap_are_traced_through_dm(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(LAB, tree, symlinks=True)
    mountinfo = tree / "proc/self/mountinfo"
    dm_majmin = (tree / "sys/block/dm-0").resolve().joinpath("dev").read_text().strip()
    mountinfo.write_text(
        mountinfo.read_text() + f"99 1 {dm_majmin} / / rw,relatime - ext4 /dev/mapper/mdtuivg-scratch rw\n"
    )
    (tree / "proc/swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n/dev/nvme4n1 partition 1048572 0 -2\n")
    prober = DiskProber(SystemRoot(tree), privileged=True)
    assert InUseKind.ROOT_FS in kinds(prober.probe("sdb"))
    assert "via dm-0 (mdtuivg-scratch)" in str(prober.probe("sdb").in_use)
    assert kinds(prober.probe("nvme4n1")) == {InUseKind.SWAP}


@pytest.mark.parametrize(
    "damage",
    ["size", "dev", "queue/rotational", "link", "udev", "garbage"],
)
def test_malformed_or_missing_files_mark_the_disk_unknown_not_crash(tmp_path: Path, damage: str) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(REAL, tree, symlinks=True)
    block = (tree / "sys/block/nvme0n1").resolve()
    function = block.parents[2]
    if damage == "size":
        (block / "size").write_text("not a number\n")
    elif damage == "dev":
        (block / "dev").unlink()
    elif damage == "queue/rotational":
        (block / "queue/rotational").write_text("maybe\n")
    elif damage == "link":
        for name in ("current_link_speed", "max_link_speed", "current_link_width", "max_link_width"):
            (function / name).unlink()
    elif damage == "udev":
        shutil.rmtree(tree / "run/udev")
    else:
        (block / "size").write_bytes(b"\xff\xfe\x00garbage")
        (function / "current_link_speed").write_text("fast\n")
    inventory = scan(tree, privileged=True)
    disk = inventory.disk("nvme0n1")
    assert disk is not None
    assert not disk.available
    assert disk.problems, "a damaged disk must say what could not be read"
    if damage == "queue/rotational":
        assert disk.rotational is None and disk.kind_label == "?"
    # The rest of the inventory is still read.
    assert len(inventory.disks) == 11


def test_transport_classification() -> None:
    assert transport_of("sdx", "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0") is (
        Transport.USB
    )
    assert transport_of("sdy", "/sys/devices/platform/host0/target0:0:0/0:0:0:0/block/sdy") is Transport.OTHER
    assert transport_of("loop3", "/sys/devices/virtual/block/loop3") is Transport.LOOP


def test_a_path_that_is_not_a_system_root_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="does not exist"):
        scan(tmp_path / "missing")
    with pytest.raises(ProbeError, match="no sys/block"):
        scan(tmp_path)


def _with_udev_model(tmp_path: Path, name: str, sysfs_model: str | None, model: str, model_enc: str) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(LAB, tree, symlinks=True)
    device = (tree / f"sys/block/{name}").resolve()
    if sysfs_model is None:
        (device / "device/model").unlink()
    else:
        (device / "device/model").write_text(sysfs_model + "\n")
    record = tree / f"run/udev/data/b{(device / 'dev').read_text().strip()}"
    replaced = ("E:ID_MODEL=", "E:ID_MODEL_ENC=")
    lines = [line for line in record.read_text().splitlines() if not line.startswith(replaced)]
    record.write_text("\n".join([*lines, f"E:ID_MODEL={model}", f"E:ID_MODEL_ENC={model_enc}"]) + "\n")
    return tree


def test_a_sata_model_cut_by_sysfs_is_read_whole_from_udev(tmp_path: Path) -> None:
    # A Kingston SSDNow V300 240 GB on a real host: sysfs's SCSI inquiry product holds 16 characters,
    # lsblk (udev) shows the whole model.
    enc = "KINGSTON\\x20SH103S3240G" + "\\x20" * 20
    tree = _with_udev_model(tmp_path, "sda", "KINGSTON SH103S3", "KINGSTON_SH103S3240G", enc)
    disk = DiskProber(SystemRoot(tree), privileged=True).probe("sda")
    assert disk.model == "KINGSTON SH103S3240G"


def test_a_real_underscore_in_a_udev_model_is_kept(tmp_path: Path) -> None:
    # A WD_BLACK drive seen only through udev: ID_MODEL turns the space into "_" as well, ID_MODEL_ENC
    # tells the real underscore from the space.
    tree = _with_udev_model(tmp_path, "sda", None, "WD_BLACK_SN770_1TB", "WD_BLACK\\x20SN770\\x201TB\\x20\\x20")
    disk = DiskProber(SystemRoot(tree), privileged=True).probe("sda")
    assert disk.model == "WD_BLACK SN770 1TB"


def test_a_sysfs_model_udev_does_not_extend_is_kept(tmp_path: Path) -> None:
    # A SAS drive: udev's model is the same inquiry product (the vendor is added from sysfs).
    tree = _with_udev_model(tmp_path, "sda", "QEMU HARDDISK", "OTHER_NAME", "OTHER\\x20NAME")
    assert DiskProber(SystemRoot(tree), privileged=True).probe("sda").model == "QEMU HARDDISK"
