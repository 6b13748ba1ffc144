"""`mdtui scan --json` on a real kernel: transports, link rates, in-use rules and md arrays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .harness import GuestPool
from .machines import STANDARD
from .scenarios import build_inventory_scenario, mdtui_json, teardown_inventory_scenario


@pytest.fixture(scope="module")
def scanned(lab_pool: GuestPool) -> Iterator[dict[str, Any]]:
    # One scenario and one scan serve every test here: building it costs the most.
    guest = lab_pool.get(STANDARD)
    build_inventory_scenario(guest)
    try:
        yield mdtui_json(guest, "scan", "--json")
    finally:
        teardown_inventory_scenario(guest)


def by_serial(inventory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["serial"]: d for d in inventory["disks"] if d["serial"]}


def reasons(disk: dict[str, Any]) -> set[str]:
    return {r["kind"] for r in disk["in_use"]}


def test_scan_finds_transports_serials_and_by_id(scanned: dict[str, Any]) -> None:
    disks = by_serial(scanned)
    expected = {
        "NVME0": "nvme", "NVME3": "nvme", "NVMESLOW0": "nvme",
        "SATA_HDD0": "sata", "SATA_SSD0": "sata",
        "SAS0": "sas", "SAS1": "sas",
        "VIRTIO0": "virtio",
    }  # fmt: skip
    for serial, transport in expected.items():
        assert serial in disks, f"{serial} not found; scan saw {sorted(disks)}"
        assert disks[serial]["transport"] == transport
    assert scanned["udev"] is True
    assert disks["NVME0"]["by_id_path"] == "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_NVME0"
    assert disks["SATA_HDD0"]["by_id_path"].startswith("/dev/disk/by-id/ata-QEMU_HARDDISK_")
    assert disks["VIRTIO0"]["by_id_path"] == "/dev/disk/by-id/virtio-VIRTIO0"
    assert disks["SATA_HDD0"]["rotational"] is True
    assert disks["SATA_SSD0"]["rotational"] is False
    loops = [d for d in scanned["disks"] if d["transport"] == "loop"]
    assert len(loops) == 1 and loops[0]["size_bytes"] == 256 * 1024 * 1024


def test_scan_reads_real_link_rates(scanned: dict[str, Any]) -> None:
    disks = by_serial(scanned)
    nvme = disks["NVME0"]["link"]
    # QEMU's NVMe endpoint reports 2.5 GT/s x1; its root port was given x-speed=8, x-width=4.
    assert (nvme["kind"], nvme["current_rate"], nvme["current_width"]) == ("pcie", 2.5, 1)
    assert (nvme["port_max_rate"], nvme["port_max_width"]) == (8.0, 4)
    assert nvme["bandwidth_bytes_per_s"] == 250_000_000
    sata = disks["SATA_HDD0"]["link"]
    assert (sata["kind"], sata["current_rate"]) == ("sata", 1.5)
    assert sata["bandwidth_bytes_per_s"] == 150_000_000
    sas = disks["SAS0"]["link"]
    assert (sas["kind"], sas["current_rate"]) == ("sas", 3.0)
    assert disks["VIRTIO0"]["link"] is None


def test_scan_names_every_in_use_reason(scanned: dict[str, Any]) -> None:
    disks = by_serial(scanned)
    assert "mounted" in reasons(disks["SATA_HDD0"])
    assert any("/mnt/data" in r["detail"] for r in disks["SATA_HDD0"]["in_use"])
    assert {"lvm-pv", "holder"} <= reasons(disks["SATA_SSD0"])
    for serial in ("NVME0", "NVME1", "NVME2", "NVME3", "SAS0", "SAS1", "VIRTIO0"):
        assert "md-member" in reasons(disks[serial]), serial
    assert disks["NVMESLOW0"]["in_use"] == [] and disks["NVMESLOW0"]["available"] is True
    loop = next(d for d in scanned["disks"] if d["transport"] == "loop")
    assert loop["available"] is True


def test_scan_lists_arrays_created_there(scanned: dict[str, Any]) -> None:
    arrays = {a["name"]: a for a in scanned["arrays"]}
    assert set(arrays) >= {"md0", "md1", "md2"}
    md0 = arrays["md0"]
    assert (md0["level"], md0["chunk_bytes"], md0["layout"], md0["raid_disks"]) == (
        "raid6", 65536, "left-symmetric", 4
    )
    assert md0["sync"] is not None and md0["sync"]["action"] == "resync"
    assert arrays["md1"]["level"] == "raid1" and arrays["md1"]["degraded"] == 1
    assert (arrays["md2"]["level"], arrays["md2"]["layout"]) == ("raid10", "far=2")
    assert len(md0["members"]) == 4
