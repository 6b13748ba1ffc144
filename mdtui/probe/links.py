"""Read a disk's link from sysfs: PCIe speed/width for NVMe, sata_spd for SATA, SAS phy linkrates."""

from __future__ import annotations

import re
from pathlib import Path

from mdtui.ascii_numbers import parse_float, parse_int
from mdtui.model.link import MAX_LINK_RATE, MAX_LINK_WIDTH, Link, LinkKind
from mdtui.probe.root import SystemRoot

_RATE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(GT/s|Gbps|Gbit|Gb/s)?", re.IGNORECASE | re.ASCII)
_ATA_PORT = re.compile(r"^ata(\d+)$")
PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def parse_rate(text: str | None) -> float | None:
    """'8.0 GT/s PCIe' → 8.0, '6.0 Gbps' → 6.0, '12.0 Gbit' → 12.0; 'Unknown', '<unknown>' → None.

    A rate that is not a plain ASCII number up to MAX_LINK_RATE (no link is faster) is unknown too.
    """
    if not text:
        return None
    match = _RATE.match(text)
    if not match:
        return None
    value = parse_float(match.group(1), hi=MAX_LINK_RATE)
    return value if value else None


def parse_width(text: str | None) -> int | None:
    """'x4' or '4' → 4; anything else, 0 or more than MAX_LINK_WIDTH lanes → None."""
    if not text:
        return None
    width = parse_int(text.strip().lstrip("x"), hi=MAX_LINK_WIDTH)
    return width if width else None


def _ancestors(path: Path, stop: Path) -> list[Path]:
    out = []
    current = path
    while current != stop and current != current.parent:
        out.append(current)
        current = current.parent
    return out


def pcie_link(root: SystemRoot, device_path: Path) -> Link | None:
    """The PCIe link of the nearest PCI function above ``device_path``, with its upstream port."""
    sys_root = root.path("/sys")
    for candidate in _ancestors(device_path, sys_root):
        # The nearest PCI function is the device's own; never fall back to its upstream port's link.
        if PCI_ADDRESS.match(candidate.name):
            if not (candidate / "current_link_speed").exists():
                return None
            port = candidate.parent
            has_port = (port / "max_link_speed").exists()
            return Link(
                kind=LinkKind.PCIE,
                current_rate=parse_rate(root.read_text(candidate / "current_link_speed")),
                max_rate=parse_rate(root.read_text(candidate / "max_link_speed")),
                current_width=parse_width(root.read_text(candidate / "current_link_width")),
                max_width=parse_width(root.read_text(candidate / "max_link_width")),
                port_max_rate=parse_rate(root.read_text(port / "max_link_speed")) if has_port else None,
                port_max_width=parse_width(root.read_text(port / "max_link_width")) if has_port else None,
                source=root.to_system(candidate),
            )
    return None


def sata_link(root: SystemRoot, device_path: Path) -> Link | None:
    """SATA link speed from the ata_link of the port the disk hangs off."""
    for candidate in _ancestors(device_path, root.path("/sys")):
        match = _ATA_PORT.match(candidate.name)
        if not match:
            continue
        link_dirs = []
        for link_name in root.listdir(candidate):
            if link_name.startswith("link"):
                link_dirs.append(candidate / link_name / "ata_link" / link_name)
        link_dirs.append(root.path(f"/sys/class/ata_link/link{match.group(1)}"))
        for link_dir in link_dirs:
            current_text = root.read_text(link_dir / "sata_spd")
            if current_text is None:
                continue
            return Link(
                kind=LinkKind.SATA,
                current_rate=parse_rate(current_text),
                max_rate=parse_rate(root.read_text(link_dir / "hw_sata_spd_limit")),
                source=root.to_system(link_dir),
            )
        return None
    return None


def sas_link(root: SystemRoot, device_path: Path) -> Link | None:
    """SAS negotiated rate of the phys in the port that leads to the disk's end device."""
    port_dir = None
    for candidate in _ancestors(device_path, root.path("/sys")):
        if candidate.name.startswith("end_device-"):
            port_dir = candidate.parent
            break
    if port_dir is None or not port_dir.name.startswith("port-"):
        return None
    rates: list[float] = []
    max_rates: list[float] = []
    sources = []
    for entry in root.listdir(port_dir):
        if not entry.startswith("phy-"):
            continue
        # The port lists its phys as links; the phys themselves sit beside the port (in the HBA's
        # host or the expander directory), which also works when a copied tree lost the links.
        phy_dirs = [
            port_dir / entry / "sas_phy" / entry,
            port_dir.parent / entry / "sas_phy" / entry,
            root.path(f"/sys/class/sas_phy/{entry}"),
        ]
        for phy_dir in phy_dirs:
            rate_text = root.read_text(phy_dir / "negotiated_linkrate")
            if rate_text is None:
                continue
            rate = parse_rate(rate_text)
            if rate is not None:
                rates.append(rate)
            max_rate = parse_rate(root.read_text(phy_dir / "maximum_linkrate_hw"))
            if max_rate is not None:
                max_rates.append(max_rate)
            sources.append(root.to_system(phy_dir))
            break
    if not sources:
        return None
    # A wide port trains each phy alone; the slowest phy sets what every phy of the port can move.
    return Link(
        kind=LinkKind.SAS,
        current_rate=min(rates) if rates else None,
        max_rate=min(max_rates) if max_rates else None,
        current_width=len(rates) or None,
        max_width=len(sources),
        source=", ".join(sources),
    )
