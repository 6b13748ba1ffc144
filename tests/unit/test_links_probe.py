"""Link probes against real-format sysfs: tests/fixtures/procfs (Prometheus procfs testdata, Apache-2.0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdtui.model.link import LinkKind
from mdtui.probe.links import parse_rate, parse_width, pcie_link, sas_link, sata_link
from mdtui.probe.root import SystemRoot

NVME_FUNCTION = "sys/devices/pci0000:00/0000:00:02.1/0000:01:00.0"
SAS_HBA = "sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0/host11"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("8.0 GT/s PCIe", 8.0),
        ("2.5 GT/s", 2.5),
        ("16.0 GT/s PCIe", 16.0),
        ("6.0 Gbps", 6.0),
        ("12.0 Gbit", 12.0),
        ("22.5 Gbit", 22.5),
        ("Unknown", None),
        ("Unknown speed", None),
        ("<unknown>", None),
        ("Phy disabled", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_rate(text: str | None, value: float | None) -> None:
    assert parse_rate(text) == value


def test_parse_width() -> None:
    assert parse_width("4") == 4
    assert parse_width("x8") == 8
    assert parse_width("garbage") is None
    assert parse_width("0") is None


def test_nvme_pcie_link_and_upstream_port(procfs_testdata: Path) -> None:
    root = SystemRoot(procfs_testdata)
    link = pcie_link(root, procfs_testdata / NVME_FUNCTION / "nvme" / "nvme0")
    assert link is not None
    assert link.kind is LinkKind.PCIE
    assert (link.current_rate, link.current_width, link.max_rate, link.max_width) == (8.0, 4, 8.0, 4)
    assert (link.port_max_rate, link.port_max_width) == (8.0, 8)
    assert not link.downgraded and not link.slot_limited
    assert link.source == "/" + NVME_FUNCTION


def test_sas_end_device_behind_expander_trained_at_6_of_12_gbit(procfs_testdata: Path) -> None:
    root = SystemRoot(procfs_testdata)
    end_device = (
        procfs_testdata / SAS_HBA / "port-11:0/expander-11:0/port-11:0:0/end_device-11:0:0" / "target11:0:0"
    )
    link = sas_link(root, end_device)
    assert link is not None
    assert link.kind is LinkKind.SAS
    # The expander phy phy-11:0:2 negotiated 6.0 Gbit; its hardware maximum is 12.0 Gbit.
    assert (link.current_rate, link.max_rate, link.current_width) == (6.0, 12.0, 1)
    assert link.bandwidth_bytes_per_s == 600_000_000
    assert link.downgraded
    assert "6 Gbit" in (link.finding() or "")


def test_sas_wide_port_counts_its_phys(procfs_testdata: Path) -> None:
    # port-11:0 is the HBA's wide port to the expander: phys 8 to 11, all at 12 Gbit.
    root = SystemRoot(procfs_testdata)
    link = sas_link(root, procfs_testdata / SAS_HBA / "port-11:0" / "end_device-x")
    assert link is not None
    assert (link.current_rate, link.current_width) == (12.0, 4)
    assert link.bandwidth_bytes_per_s == 4 * 1_200_000_000
    assert not link.downgraded


def test_no_link_outside_a_known_bus(tmp_path: Path) -> None:
    root = SystemRoot(tmp_path)
    (tmp_path / "sys/devices/virtual/block/loop0").mkdir(parents=True)
    path = tmp_path / "sys/devices/virtual/block/loop0"
    assert pcie_link(root, path) is None
    assert sata_link(root, path) is None
    assert sas_link(root, path) is None


def test_sata_link_from_ata_port(tmp_path: Path) -> None:
    port = tmp_path / "sys/devices/pci0000:00/0000:00:1f.2/ata3"
    link_dir = port / "link3/ata_link/link3"
    link_dir.mkdir(parents=True)
    (link_dir / "sata_spd").write_text("3.0 Gbps\n")
    (link_dir / "hw_sata_spd_limit").write_text("6.0 Gbps\n")
    disk = port / "host2/target2:0:0/2:0:0:0/block/sdc"
    disk.mkdir(parents=True)
    link = sata_link(SystemRoot(tmp_path), disk)
    assert link is not None
    assert (link.current_rate, link.max_rate) == (3.0, 6.0)
    assert link.downgraded
