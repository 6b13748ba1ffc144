"""What stands in for a member's figures nobody measured, decided here once: its link where the link limits the
device, a hard disk's platter, and published figures for its kind of disk (an NVMe, SATA or SAS SSD by its link,
a 7,200 rpm hard disk), each with its basis and range. docs/predictions.md has every source."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mdtui.model.link import LinkKind
from mdtui.plan.figures import FIELD, LINK, MEMBER_FIGURE_NAMES, RANDOM_BLOCK_BYTES, MemberFigures

# A hard disk's platter read sequentially at its outer tracks: docs/findings.md, finding 5 (three 4 TB disks,
# 16 MiB direct reads) read about 200 MiB/s, 210 MB/s, at offset 0. A spinning disk gives no more whatever its
# link carries, so a link limits it only below this (a 1.5 Gbps SATA link, 150 MB/s); 3, 6 or 12 Gbit never do.
PLATTER_BYTES_PER_S = 210e6


@dataclass(frozen=True)
class FieldRange:
    """A device class's figure as published sources put it: the range it may land in (the sources are named
    beside each class below and in docs/predictions.md); the figure used is the range's geometric middle."""

    low: float
    high: float

    @property
    def value(self) -> float:
        return math.sqrt(self.low * self.high)


@dataclass(frozen=True)
class DeviceClass:
    """What a kind of disk does where nobody measured it: its random 4 KiB IOPS at the workload's depth and its
    Q1 latencies (None: the field says nothing for it)."""

    name: str  # "an NVMe SSD", as a note says it
    rand_read_iops: FieldRange | None
    rand_write_iops: FieldRange | None
    q1_read_latency_s: FieldRange
    q1_write_latency_s: FieldRange


# Flash at Q1, whatever its link: reads 58 µs (docs/findings.md, finding 4: a SAS3 SSD did 17.3K IOPS at
# RND4KQ1T1) to 152 µs (a SATA SSD's CrystalDiskMark 4 KiB QD1 read, 6,588.1 IOPS; superuser.com question 1108034);
# Intel's P4500 NVMe datasheet (Lenovo's product guide) says 85-115 µs and its S4500 SATA datasheet 110 µs.
# Writes 20 µs (the P4500's random write latency) to 52 µs (the S4500's); that SATA SSD's QD1 write did
# 33,106 IOPS, 30 µs.
FLASH_Q1_READ = FieldRange(1 / 17.3e3, 1 / 6588.1)
FLASH_Q1_WRITE = FieldRange(20e-6, 52e-6)
FLASH_Q1 = (FLASH_Q1_READ, FLASH_Q1_WRITE)
# Random 4 KiB at depth, by the link the flash sits on (datasheets quote QD32 or deeper, as the workload's 8 x 32):
# - NVMe: reads 279.5K (Intel P4500 1 TB, Lenovo's product guide) to 1M (Micron 7400 U.3, its launch figures);
#   writes 30.5K (the P4500 1 TB) to 190K (the Micron 7400 U.3).
# - SATA: reads 72K (Intel S4500/S4600 datasheet: fio, QD32, full LBA range) to 100K (Samsung 860 Pro's
#   datasheet; KitGuru measured 97,992); writes 33K (the S4500) to 90K (the 860 Pro; measured 88,246).
# - SAS: reads 180K (finding 4's SAS3 SSD, measured) to 400K (Samsung PM1643, Blocks & Files); writes 19K
#   (Toshiba PX04SL, Tom's IT Pro) to 169K (finding 4, measured).
NVME_SSD = DeviceClass("an NVMe SSD", FieldRange(279.5e3, 1e6), FieldRange(30.5e3, 190e3), *FLASH_Q1)
SATA_SSD = DeviceClass("a SATA SSD", FieldRange(72e3, 100e3), FieldRange(33e3, 90e3), *FLASH_Q1)
SAS_SSD = DeviceClass("a SAS SSD", FieldRange(180e3, 400e3), FieldRange(19e3, 169e3), *FLASH_Q1)
# Flash on no link mdtui can read (virtio, a loop device): its Q1 latency is flash's; its random I/O could be
# anything from a SATA SSD's to an NVMe's.
FLASH = DeviceClass("flash", None, None, *FLASH_Q1)
# A 7,200 rpm hard disk (the capacity disk md arrays are made of; 5,400 rpm and 10K/15K disks fall outside these
# ranges). Q1 read: an average seek plus half a turn, 7.4 ms + 4.16 ms (WD Ultrastar DC HC310 specification) to
# 8.5 ms + 4.17 ms (Hitachi Deskstar 7K1000.C); HGST's Ultrastar 7K4000 says 8.2 ms. Q1 write: 5.4 ms (a SATA
# hard disk's CrystalDiskMark 4 KiB QD1 write, 184.9 IOPS: the disk's write cache; superuser.com 1108034) to
# 8.2 ms + 4.16 ms (the HC310's write seek, cache off). At depth: reads from a request per seek and half turn
# (1 / 11.56 ms, 87 IOPS: no reordering) to 386.3 IOPS (the same disk's CrystalDiskMark QD32 read, which seeks
# over a 1 GiB file only); writes from 1 / 12.36 ms (81 IOPS) to its cache's 184.9 (171 at QD32).
PLATTER = DeviceClass(
    "a 7,200 rpm hard disk",
    FieldRange(1 / 11.56e-3, 386.3),
    FieldRange(1 / 12.36e-3, 184.9),
    FieldRange(11.56e-3, 12.67e-3),
    FieldRange(1 / 184.9, 12.36e-3),
)
_FLASH_BY_LINK = {LinkKind.PCIE: NVME_SSD, LinkKind.SATA: SATA_SSD, LinkKind.SAS: SAS_SSD}


def device_class(rotational: bool | None, link_kind: LinkKind | None) -> DeviceClass:
    """The kind of disk a member nobody measured is: a hard disk, or flash by the link it sits on (unknown
    rotation is read as flash, as the link rule reads it)."""
    if rotational:
        return PLATTER
    return _FLASH_BY_LINK.get(link_kind, FLASH) if link_kind is not None else FLASH


def device_ceiling(rotational: bool | None) -> float | None:
    """What a member nobody measured can read at most by itself: a platter's field figure for a hard disk;
    None for flash, which is built to fill the link it was made for (its link's maximum is its own)."""
    return PLATTER_BYTES_PER_S if rotational else None


def link_limits(link_bytes_per_s: float | None, rotational: bool | None) -> bool:
    """Whether a link carrying this much is the member's limit: only where the device could go faster than it
    (a 16 TB hard disk on a 6 Gbit link is held by its platter, not the link)."""
    ceiling = device_ceiling(rotational)
    return link_bytes_per_s is not None and (ceiling is None or link_bytes_per_s < ceiling)


def unmeasured_figures(
    link_bytes_per_s: float | None, rotational: bool | None, link_kind: LinkKind | None
) -> MemberFigures:
    """A member nobody measured: every figure from what bounds it, decided here once.

    - Sequential read and write: its link where the link limits the device (basis "link": at most that), else
      a platter's field figure; unknown for flash on no link.
    - Random 4 KiB read and write: its device class's field figure (``device_class``), with its range, where
      the link carries more than that; else what the link carries in 4 KiB requests (at most: basis "link").
    - Q1 read and write latency: its device class's field figure, with its range.
    """
    if link_limits(link_bytes_per_s, rotational):
        seq, seq_basis = link_bytes_per_s, LINK
    else:
        seq, seq_basis = device_ceiling(rotational), (FIELD if rotational else LINK)
    kind = device_class(rotational, link_kind)
    link_iops = None if link_bytes_per_s is None else link_bytes_per_s / RANDOM_BLOCK_BYTES
    values: dict[str, float | None] = {}
    bases: list[tuple[str, str]] = []
    ranges: list[tuple[str, float, float]] = []
    for name in MEMBER_FIGURE_NAMES[2:]:
        found: FieldRange | None = getattr(kind, name)
        if found is None:
            values[name] = None
            bases.append((name, FIELD))
        elif name.endswith("iops") and link_iops is not None and link_iops < found.value:
            values[name] = link_iops  # the link, not the device, is the limit: at most this
            bases.append((name, LINK))
        else:
            high = found.high if not name.endswith("iops") or link_iops is None else min(found.high, link_iops)
            values[name] = found.value
            bases.append((name, FIELD))
            ranges.append((name, found.low, high))
    return MemberFigures(
        seq_read_bytes_per_s=seq,
        seq_write_bytes_per_s=seq,
        rotational=rotational,
        basis=seq_basis,
        bases=tuple(bases),
        ranges=tuple(ranges),
        **values,
    )


def with_unmeasured(stored: MemberFigures, bound: MemberFigures) -> MemberFigures:
    """A member measured in part: its measured figures where it has them, each gap filled from what bounds it
    (``unmeasured_figures``) with that figure's own basis and range."""
    values: dict[str, float | None] = {}
    bases: list[tuple[str, str]] = []
    ranges: list[tuple[str, float, float]] = []
    for name in MEMBER_FIGURE_NAMES:
        mine: float | None = getattr(stored, name)
        source = stored if mine is not None else bound
        values[name] = mine if mine is not None else getattr(bound, name)
        bases.append((name, source.basis_of(name)))
        span = source.range_of(name)
        if span is not None:
            ranges.append((name, *span))
    return MemberFigures(
        rotational=bound.rotational, basis=stored.basis, bases=tuple(bases), ranges=tuple(ranges), **values
    )
