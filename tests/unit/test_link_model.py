"""Link bandwidth maths and the downgraded-link finding."""

from __future__ import annotations

import pytest

from mdtui.model.link import Link, LinkKind, pcie_lane_bytes_per_s, serial_link_bytes_per_s


@pytest.mark.parametrize(
    ("gts", "mb_s"),
    [(2.5, 250), (5.0, 500), (8.0, 985), (16.0, 1969), (32.0, 3938)],
)
def test_pcie_lane_bandwidth_uses_the_right_encoding(gts: float, mb_s: int) -> None:
    assert round(pcie_lane_bytes_per_s(gts) / 1e6) == mb_s


@pytest.mark.parametrize(
    ("kind", "gbit", "mb_s"),
    [
        (LinkKind.SATA, 1.5, 150),
        (LinkKind.SATA, 3.0, 300),
        (LinkKind.SATA, 6.0, 600),
        (LinkKind.SAS, 3.0, 300),
        (LinkKind.SAS, 6.0, 600),
        (LinkKind.SAS, 12.0, 1200),
        (LinkKind.SAS, 22.5, 2400),
    ],
)
def test_serial_link_bandwidth(kind: LinkKind, gbit: float, mb_s: int) -> None:
    assert round(serial_link_bytes_per_s(kind, gbit) / 1e6) == mb_s


def test_gen3_x4_is_healthy_and_moves_about_3_9_gb_s() -> None:
    link = Link(LinkKind.PCIE, 8.0, 8.0, 4, 4, port_max_rate=8.0, port_max_width=4)
    assert not link.downgraded
    assert link.finding() is None
    assert link.bandwidth_bytes_per_s == 4 * 984_615_385
    assert link.describe() == "Gen3 8 GT/s x4"


def test_drive_in_a_gen1_slot_is_downgraded_and_slot_limited() -> None:
    # Finding 1 (docs/findings.md): a Gen3 x4 drive in a PCIe 1.0 slot trained at 2.5 GT/s x4.
    link = Link(LinkKind.PCIE, 2.5, 8.0, 4, 4, port_max_rate=2.5, port_max_width=4)
    assert link.downgraded and link.speed_downgraded and not link.width_downgraded
    assert link.slot_limited
    assert link.bandwidth_bytes_per_s == 1_000_000_000
    finding = link.finding()
    assert finding is not None
    assert "Gen1 2.5 GT/s x4" in finding and "Gen3 8 GT/s x4" in finding
    assert "1,000 MB/s usable of 3,938 MB/s" in finding
    assert "slot only runs Gen1 2.5 GT/s x4" in finding
    assert link.describe() == "Gen1 2.5 GT/s x4 (max Gen3 8 GT/s x4)"


def test_width_downgrade_alone_is_a_finding() -> None:
    link = Link(LinkKind.PCIE, 8.0, 8.0, 2, 4)
    assert link.downgraded and link.width_downgraded and not link.speed_downgraded


def test_sata_below_port_maximum_names_both_rates() -> None:
    link = Link(LinkKind.SATA, 3.0, 6.0)
    assert link.downgraded
    finding = link.finding()
    assert finding is not None and "3 Gbps" in finding and "port supports 6 Gbps" in finding


def test_unknown_rates_are_not_called_downgraded() -> None:
    link = Link(LinkKind.SAS, None, 12.0)
    assert not link.downgraded
    assert link.bandwidth_bytes_per_s is None
    assert link.describe() == "unknown"
