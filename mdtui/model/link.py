"""Interface links (PCIe, SATA, SAS): negotiated vs maximum rate and the bandwidth each implies."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from mdtui.format import rate_mb_s

# Sanity bounds for figures read from sysfs: PCIe 7 runs 128 GT/s a lane, SAS-5 45 Gbit, and a PCIe
# link has at most 32 lanes. A larger figure is a damaged file, so it reads as unknown.
MAX_LINK_RATE = 1000.0
MAX_LINK_WIDTH = 1024


class LinkKind(StrEnum):
    PCIE = "pcie"
    SATA = "sata"
    SAS = "sas"


def pcie_lane_bytes_per_s(transfer_rate_gts: float) -> int:
    """Usable bytes/s of one PCIe lane at a given transfer rate.

    PCIe 1.x/2.x (2.5 and 5 GT/s) encode 8b/10b; 3.0 and later (8, 16, 32 GT/s) encode 128b/130b.
    """
    if transfer_rate_gts <= 5.0:
        return round(transfer_rate_gts * 1e9 * 8 / 10 / 8)
    return round(transfer_rate_gts * 1e9 * 128 / 130 / 8)


def pcie_generation(transfer_rate_gts: float) -> int | None:
    return {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}.get(transfer_rate_gts)


def serial_link_bytes_per_s(kind: LinkKind, rate_gbit: float) -> int:
    """Usable bytes/s of a SATA or SAS link.

    SATA (1.5/3/6 Gbps) and SAS up to 12 Gbit encode 8b/10b; SAS-4 (22.5 Gbit) encodes 128b/150b.
    """
    if kind is LinkKind.SAS and rate_gbit > 12.0:
        return round(rate_gbit * 1e9 * 128 / 150 / 8)
    return round(rate_gbit * 1e9 * 8 / 10 / 8)


@dataclass(frozen=True)
class Link:
    """One device link as negotiated (current) and as the device could run it (max).

    ``rate`` is GT/s per lane for PCIe and Gbit/s for SATA and SAS. ``width`` is the lane count for
    PCIe and the number of phys in the port for SAS (1 for a narrow port); SATA is always 1.
    The ``port_*`` fields describe the upstream PCIe port (the slot), where the kernel exposes it.
    """

    kind: LinkKind
    current_rate: float | None
    max_rate: float | None
    current_width: int | None = 1
    max_width: int | None = 1
    port_max_rate: float | None = None
    port_max_width: int | None = None
    source: str = ""

    __json_extras__ = ("bandwidth_bytes_per_s", "max_bandwidth_bytes_per_s", "downgraded", "slot_limited")

    def _bandwidth(self, rate: float | None, width: int | None) -> int | None:
        if rate is None or width is None:
            return None
        if not (math.isfinite(rate) and 0 < rate <= MAX_LINK_RATE and 0 < width <= MAX_LINK_WIDTH):
            return None  # not a figure any link has (a Link built by hand or from damaged JSON)
        if self.kind is LinkKind.PCIE:
            return pcie_lane_bytes_per_s(rate) * width
        return serial_link_bytes_per_s(self.kind, rate) * width

    @property
    def bandwidth_bytes_per_s(self) -> int | None:
        """Usable bandwidth of the link as it trained."""
        return self._bandwidth(self.current_rate, self.current_width)

    @property
    def max_bandwidth_bytes_per_s(self) -> int | None:
        """Usable bandwidth had the link trained at the device's maximum."""
        return self._bandwidth(self.max_rate, self.max_width)

    @property
    def speed_downgraded(self) -> bool:
        return self.current_rate is not None and self.max_rate is not None and self.current_rate < self.max_rate

    @property
    def width_downgraded(self) -> bool:
        return self.current_width is not None and self.max_width is not None and self.current_width < self.max_width

    @property
    def downgraded(self) -> bool:
        """The link trained below its maximum speed or width."""
        return self.speed_downgraded or self.width_downgraded

    @property
    def slot_limited(self) -> bool:
        """The upstream port cannot run the device's maximum (a slower or narrower slot)."""
        if self.kind is not LinkKind.PCIE:
            return False
        slower = self.port_max_rate is not None and self.max_rate is not None and self.port_max_rate < self.max_rate
        narrower = (
            self.port_max_width is not None and self.max_width is not None and self.port_max_width < self.max_width
        )
        return slower or narrower

    def describe_current(self) -> str:
        return _describe(self.kind, self.current_rate, self.current_width)

    def describe_max(self) -> str:
        return _describe(self.kind, self.max_rate, self.max_width)

    def label(self) -> str:
        """The link as it trained, short, for a table cell: 'Gen3 x4', '6 Gbps', '12 Gbit'."""
        if self.current_rate is None:
            return "-"
        if self.kind is LinkKind.PCIE:
            gen = pcie_generation(self.current_rate)
            rate = f"Gen{gen}" if gen else f"{self.current_rate:g} GT/s"
            width = f" x{self.current_width}" if self.current_width else ""
            return f"{rate}{width}"
        return self.describe_current()

    def describe(self) -> str:
        """One line for tables: current rate, and the maximum when the link is downgraded."""
        text = self.describe_current()
        if self.downgraded:
            text += f" (max {self.describe_max()})"
        return text

    def finding(self) -> str | None:
        """A sentence naming a downgraded link with both values, or None when it is healthy."""
        if not self.downgraded:
            return None
        current_bw = self.bandwidth_bytes_per_s
        max_bw = self.max_bandwidth_bytes_per_s
        capable = "device" if self.kind is LinkKind.PCIE else "port"
        text = f"link trained at {self.describe_current()} but the {capable} supports {self.describe_max()}"
        if current_bw and max_bw:
            text += f": {rate_mb_s(current_bw)} usable of {rate_mb_s(max_bw)}"
        if self.slot_limited:
            text += f"; the slot only runs {_describe(self.kind, self.port_max_rate, self.port_max_width)}"
        elif self.kind is not LinkKind.PCIE:
            # sysfs gives the port's maximum for SATA and SAS, not the drive's.
            text += " (the drive, cable or backplane may be what limits it)"
        return text


def _describe(kind: LinkKind, rate: float | None, width: int | None) -> str:
    if rate is None:
        return "unknown"
    if kind is LinkKind.PCIE:
        gen = pcie_generation(rate)
        gen_text = f"Gen{gen} " if gen else ""
        lanes = f" x{width}" if width else ""
        return f"{gen_text}{rate:g} GT/s{lanes}"
    unit = "Gbps" if kind is LinkKind.SATA else "Gbit"
    phys = f" x{width}" if width and width > 1 else ""
    return f"{rate:g} {unit}{phys}"
