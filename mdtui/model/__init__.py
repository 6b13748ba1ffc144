"""Frozen dataclasses shared by every layer: no I/O happens here."""

from mdtui.model.array import ArrayMember, MdArray, SyncStatus
from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.model.inventory import Inventory
from mdtui.model.link import Link, LinkKind, pcie_lane_bytes_per_s, serial_link_bytes_per_s

__all__ = [
    "ArrayMember",
    "Disk",
    "InUseKind",
    "InUseReason",
    "Inventory",
    "Link",
    "LinkKind",
    "MdArray",
    "SyncStatus",
    "Transport",
    "pcie_lane_bytes_per_s",
    "serial_link_bytes_per_s",
]
