"""What an md array will do for each workload, from its members' figures, per level and layout.

The model follows what md itself does, not a fixed penalty per level:

- **Reads** are served by every member that holds the data. With the parallel job the figures are for
  (below), raid1 and raid10 spread reads over all copies; raid4/5/6 skip parity chunks, which costs a
  flash member nothing and a platter a rotation (so a rotational member delivers (n - parity)/n of its
  speed as data).
- **Writes**: mirrored levels write every copy; a parity level's small write costs what md chooses for
  it: read-modify-write (old data and old parity: 1 + p reads) or reconstruct-write (the stripe's other
  data: D - k reads), whichever reads less, then k + p writes; a write covering a whole stripe
  (chunk × data disks) reads nothing.
- **md's stripe cache**: raid4/5/6 build every write in the stripe cache, ``stripe_cache_size`` stripe
  heads of one 4 KiB page per member (256 by default). A sequential stream whose writes are smaller than a
  chunk row (chunk × data disks) writes full stripes only while the cache holds a whole row (chunk / 4 KiB
  heads) for each stream at once, waiting for the stream's next writes; with fewer, md hands
  the stripes over part-written and completes them by reading (the delayed stripes raid5_activate_delayed
  releases for pre-reading), and writers sleep for free heads (raid5_get_active_stripe). What that gives is
  not a member figure: the sequential write is then not predicted, its bound names the cache and a note
  says what size lifts it.
- **md's own ceilings**: raid4/5/6 do their stripe work in one kernel thread per array (raid5d) unless
  ``group_thread_cnt`` is set, which caps full-stripe write throughput and small-write IOPS whatever
  the members could do; md adds latency to every Q1 request; links members share (an HBA's PCIe link,
  a SAS wide port) cap the traffic they carry together.

Each figure names its bound ("members", "md stripe thread", "HBA link x8 Gen3") and its basis
("measured", "given", "field figure", "link"); it is rounded to what its basis can claim, and a figure a link
binds is an upper bound ("at most"), rounded up. A member nobody measured has figures all the same: its link,
and published figures for its kind of disk (``unmeasured_figures``).

The workloads are the saturating jobs of the member-matrix (CrystalDiskMark's names):

========================  ======================================================
sequential read / write   1 MiB blocks, 8 jobs × queue depth 8 (SEQ1MQ8T8)
random read / write       4 KiB blocks, 8 jobs × queue depth 32 (RND4KQ32T8)
Q1 read latency           4 KiB random reads, 1 job, queue depth 1 (RND4KQ1T1)
========================  ======================================================
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mdtui.errors import PlanError
from mdtui.model.link import LinkKind
from mdtui.plan.levels import LINEAR, RaidLevel

SEQ_BLOCK_BYTES = 1 << 20
# Concurrent sequential streams in the workload the figures are for (SEQ1MQ8T8: 8 jobs).
SEQ_STREAMS = 8
# Jobs submitting I/O in the saturating workloads (SEQ1MQ8T8, RND4KQ32T8): what md's CPU cost per request
# is multiplied by.
WORKLOAD_JOBS = 8
# Requests in flight in the random workload (8 jobs × queue depth 32): how many writes one bitmap flush can
# carry at once.
RANDOM_IN_FLIGHT = 8 * 32
# md's default stripe_cache_size (stripe heads; one 4 KiB page per member each).
DEFAULT_STRIPE_CACHE = 256
RANDOM_BLOCK_BYTES = 4096
Q1_READ = ("q1_read_latency_s",)
# md handles a raid4/5/6 write in 4 KiB stripe units (one page per member): a 4 KiB write covers one.
STRIPE_UNIT_BYTES = 4096

MEASURED = "measured"
GIVEN = "given"
FIELD = "field figure"
LINK = "link"
# A figure scaled by a fraction the lab measured (the stripe cache's): known to a few tens of percent.
LAB_FRACTION = "lab fraction"
# Significant digits each basis can claim: a figure from a field report or a link's nominal rate is
# known to a few tens of percent, a measurement to a few percent.
_DIGITS = {MEASURED: 3, GIVEN: 3, FIELD: 2, LINK: 2, LAB_FRACTION: 2}

# The array's state a prediction is for.
OPTIMAL = "optimal"
DEGRADED = "degraded"  # one member missing
RESYNC = "resync"  # the initial sync (or a resync after a crash) running under the workload
CONDITIONS = (OPTIMAL, DEGRADED, RESYNC)


@dataclass(frozen=True)
class MemberFigures:
    """One member measured alone (or given for a disk not bought yet). None: not known.

    ``basis``: what the figures rest on (for a member nobody measured, what its sequential figures rest on);
    ``bases``: (figure, basis) for each figure that rests on something else (a device class's field figure
    beside a link); ``ranges``: (figure, low, high) for each figure known only to a range.
    """

    seq_read_bytes_per_s: float | None = None
    seq_write_bytes_per_s: float | None = None
    rand_read_iops: float | None = None
    rand_write_iops: float | None = None
    q1_read_latency_s: float | None = None
    rotational: bool | None = None
    basis: str = MEASURED
    q1_write_latency_s: float | None = None
    bases: tuple[tuple[str, str], ...] = ()
    ranges: tuple[tuple[str, float, float], ...] = ()

    def basis_of(self, name: str) -> str:
        """What the figure ``name`` ("rand_read_iops") rests on."""
        return next((basis for figure, basis in self.bases if figure == name), self.basis)

    def range_of(self, name: str) -> tuple[float, float] | None:
        return next(((low, high) for figure, low, high in self.ranges if figure == name), None)

    def at_end(self, end: int) -> MemberFigures:
        """These figures with each one known to a range at its low (0) or high (1) end."""
        ends: dict[str, Any] = {figure: (low, high)[end] for figure, low, high in self.ranges}
        return replace(self, ranges=(), **ends)


@dataclass(frozen=True)
class MdCeilings:
    """md's own limits on this host (calibrated here) or, failing that, from the field.

    ``stripe_write_bytes_per_s`` and ``stripe_small_write_iops``: one raid5d thread's full-stripe write
    throughput and 4 KiB random-write IOPS with ``group_thread_cnt`` 0; ``parity_bytes_per_s``: the
    kernel's xor/raid6 routine speed (its boot benchmark); ``layer_latency_s``: what md adds to a Q1
    read. The rest were measured over RAM members for one level (None: not measured here, and a field
    figure stands in where the field has one): ``seq_read_bytes_per_s``, ``rand_read_iops``,
    ``seq_write_bytes_per_s`` and ``rand_write_iops`` (raid0/1/10; parity levels use the stripe thread's),
    ``write_latency_s``: what md adds to a Q1 write beyond the members' own I/O. ``kernel``: the release
    the prediction is for, which picks the field figures where md's code changed (None: the newest).
    """

    stripe_write_bytes_per_s: float | None = None
    stripe_small_write_iops: float | None = None
    parity_bytes_per_s: float | None = None
    layer_latency_s: float | None = None
    basis: str = FIELD
    seq_read_bytes_per_s: float | None = None
    rand_read_iops: float | None = None
    seq_write_bytes_per_s: float | None = None
    rand_write_iops: float | None = None
    write_latency_s: float | None = None
    kernel: str | None = None


# Field figures (docs/findings.md, finding 4: four SAS3 SSDs, 256 KiB chunk, no bitmap): raid5 wrote
# 985 MB/s sequentially and 58.3K random 4 KiB IOPS where its members allowed 3369 MB/s and ~170K,
# raid6 951 MB/s and 65.4K: one stripe thread's limit on that host. Q1 random reads fell from 17.3K
# IOPS on the raw disk (58 µs) to 7-9K through md (~125 µs): md added ~65 µs a request there.
FIELD_CEILINGS = MdCeilings(
    stripe_write_bytes_per_s=985e6,
    stripe_small_write_iops=60e3,
    parity_bytes_per_s=None,
    layer_latency_s=65e-6,
    basis=FIELD,
)

# md's CPU cost per 4 KiB read as the IOPS one submitting job drives through md, from the field (what a job
# of the same workload on the raw device did shows it is md's share, not the device's):
# - raid0 (and linear): linux-raid, June 2024, four NVMe, 4 KiB reads, 4 jobs × QD256: the raid0 (64 KiB
#   chunk) read 666k IOPS where one of its members alone read 828k: 167k a job.
# - raid1 and raid10: md/raid10's lock rework (2022, Xeon Platinum 8380, four NVMe, 16 jobs × QD256 4 KiB random
#   reads): 9.3 GiB/s, 2.44M IOPS: 152k a job.
# - raid4/5/6 since kernel 5.14 (md/raid5: avoid device_lock in read_one_chunk(), 97ae27252f49): linux-raid,
#   August 2021, 11-member raid5 over PM1733a, 64 jobs × QD128 on a 5.14-rc3 kernel: 5.33M and 5.89M IOPS
#   (two arrays): 87k a job.
FIELD_READ_IOPS_PER_JOB = {"raid0": 167e3, "raid10": 152e3, "raid5": 87e3}
# Before 5.14 every raid5 read took device_lock: one lock for the whole array, whatever the jobs. The same
# thread on the RHEL 4.18 kernel: 1.26M and 1.07M IOPS; the patch itself (raid6 6+2, 8 NVMe of 250k each,
# 1024 threads): 1.6M before, 2M (the members) after.
FIELD_RAID5_READ_LOCK_IOPS = 1.3e6
RAID5_LOCKLESS_READS = (5, 14)
# Kernel 6.18's lockless bitmap (mdadm --bitmap=lockless): a new array with it skips the initial sync.
LOCKLESS_BITMAP = (6, 18)
_FIELD_READ_LEVEL = {"linear": "raid0", "raid0": "raid0", "raid1": "raid10", "raid10": "raid10", "raid4": "raid5",
                     "raid5": "raid5", "raid6": "raid5"}  # fmt: skip

# md clears a write-intent bitmap bit once its chunk has seen no write for one to two passes of the bitmap
# daemon (md-bitmap.c: a counter of 2 drops to 1, then to 0 and the bit clears), daemon_sleep 5 s by default.
BITMAP_DAEMON_SLEEP_S = 5.0
BITMAP_CLEAN_AFTER_S = 1.5 * BITMAP_DAEMON_SLEEP_S
# One on-disk bitmap page holds a bit per chunk: 4 KiB × 8.
BITMAP_CHUNKS_PER_PAGE = 4096 * 8
# Member requests one bitmap page write costs: md writes it with PREFLUSH and FUA (md_super_write), so a member
# with a volatile write cache flushes it first, then takes the write with FUA (2; 3 where the device emulates FUA
# by a second flush, 1 where it reports write-through and the block layer drops both). Not confirmed in the lab:
# its Q1 writes through a QEMU iops throttle are the emulator's latency (docs/predictions.md, write safety).
BITMAP_UPDATE_REQUESTS = 2
# The stripe cache's measured fraction (docs/predictions.md, the lab): raid5 over four, 512 KiB chunk, 8
# streams, stripe_cache_size 256 where full stripes need 1,024: 34.3 MB/s steady where the members allow 60.3
# (0.57); the same step's members read 498 MB for 1,091 MB written (0.69 of the traffic was writes: the most
# the cache's pre-reads leave); a 5 s step of the same 19.1 MB/s (0.32).
STRIPE_CACHE_FRACTION = 0.57
STRIPE_CACHE_FRACTION_RANGE = (0.32, 0.69)
# The cache that fraction was measured at, as a share of the heads full stripes need (256 of 1,024).
STRIPE_CACHE_MEASURED_SHARE = 0.25
# md throttles a resync to speed_limit_min (KiB/s a member) while the array serves other I/O.
RESYNC_MIN_KIB_S = 1000


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """(major, minor) of a kernel release ("6.1.0-56-amd64" → (6, 1)); None when it does not say."""
    match = re.match(r"^(\d{1,3})\.(\d{1,3})", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _before(release: str | None, version: tuple[int, int]) -> bool:
    found = kernel_version(release)
    return found is not None and found < version


@dataclass(frozen=True)
class WriteSafety:
    """What protects the array's writes: the write-intent bitmap and the consistency policy.

    ``bitmap``: "none", "internal" (on every member, beside the superblock), "file" (an external file) or
    "lockless" (kernel 6.18's); ``bitmap_chunk_bytes``: the region one bit covers (None: mdadm's choice);
    ``policy``: "resync" (md's default), "ppl" (raid5's partial parity log) or "journal" (a write journal
    device, raid4/5/6); ``journal``: that device's figures when known; ``array_bytes``: the array's size,
    which with the chunk sets how many bits random writes spread over (None: large, every write a new one).
    """

    bitmap: str = "none"
    bitmap_chunk_bytes: int | None = None
    policy: str = "resync"
    journal: MemberFigures | None = None
    array_bytes: int | None = None


NO_SAFETY = WriteSafety()
# mdadm 4.2 picks a bitmap chunk of at least 64 MiB when it is not given (a bitmap of at most 2^21 bits).
MDADM_DEFAULT_BITMAP_CHUNK = 64 << 20


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


# The figures of a member by name, in MemberFigures' order.
MEMBER_FIGURE_NAMES = (
    "seq_read_bytes_per_s",
    "seq_write_bytes_per_s",
    "rand_read_iops",
    "rand_write_iops",
    "q1_read_latency_s",
    "q1_write_latency_s",
)


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


@dataclass(frozen=True)
class SharedLink:
    """A link ``members`` of the array share (by index), with what it carries per second."""

    name: str  # "HBA link x8 Gen3"
    bytes_per_s: float
    members: tuple[int, ...]


@dataclass(frozen=True)
class Figure:
    """One predicted figure, what bounds it and what it rests on; value None when it cannot be said.

    ``low`` and ``high``: the range the figure may land in where the model knows it only to a range (a
    fraction the lab measured, a resync's progress, platter seeks), else None.
    """

    value: float | None
    bound: str
    basis: str
    low: float | None = None
    high: float | None = None
    # An upper bound rather than an estimate: a link's nominal rate binds it (the slowest member's figure is
    # what its link carries, or a link members share caps it), and real traffic never quite reaches that.
    at_most: bool = False

    @property
    def rounded(self) -> float | None:
        """The value to the significant digits its basis allows (an upper bound rounded up, so it stays one)."""
        return _round(self.value, self.basis, self.at_most)

    @property
    def range_rounded(self) -> tuple[float, float] | None:
        if self.low is None or self.high is None:
            return None
        low, high = _round(self.low, self.basis, self.at_most), _round(self.high, self.basis, self.at_most)
        return None if low is None or high is None else (low, high)


def _kinds(basis: str) -> list[str]:
    return [kind.strip() for kind in basis.split(",")]


def _round(value: float | None, basis: str, at_most: bool = False) -> float | None:
    if value is None or value <= 0:
        return value
    digits = _DIGITS.get(_kinds(basis)[0], 2)
    places = digits - 1 - math.floor(math.log10(value))
    if at_most:
        # An upper bound: rounding it down could put it below what the link allows.
        step = 10.0**-places
        return round(math.ceil(value / step - 1e-9) * step, places)
    return round(value, places)


NOT_PREDICTED = Figure(None, "not predicted", "")

# Workload fields of a Prediction and how `predict --json` names them (MB = 10^6 bytes).
JSON_FIGURES: tuple[tuple[str, str, float], ...] = (
    ("seq_read_bytes_per_s", "seq_read_mb_s", 1e-6),
    ("seq_write_bytes_per_s", "seq_write_mb_s", 1e-6),
    ("rand_read_iops", "rand_read_iops", 1.0),
    ("rand_write_iops", "rand_write_iops", 1.0),
    ("q1_read_latency_s", "q1_read_latency_us", 1e6),
    ("q1_write_latency_s", "q1_write_latency_us", 1e6),
)


@dataclass(frozen=True)
class Prediction:
    level: str
    members: int
    layout: str | None
    chunk_bytes: int | None
    seq_read_bytes_per_s: Figure
    seq_write_bytes_per_s: Figure
    rand_read_iops: Figure
    rand_write_iops: Figure
    q1_read_latency_s: Figure
    notes: tuple[str, ...] = field(default=())
    q1_write_latency_s: Figure = NOT_PREDICTED
    condition: str = OPTIMAL

    def as_json(self) -> dict[str, Mapping[str, float | str | list[float] | bool | None]]:
        """The document `mdtui predict --json` prints (MB = 10^6 bytes); ``at_most``: the figures that are upper
        bounds (a link binds them), rounded up."""
        predicted: dict[str, float | str | list[float] | None] = {}
        bounds: dict[str, float | str | list[float] | None] = {}
        basis: dict[str, float | str | list[float] | None] = {}
        ranges: dict[str, float | str | list[float] | None] = {}
        at_most: dict[str, bool] = {}
        for attribute, key, scale in JSON_FIGURES:
            figure: Figure = getattr(self, attribute)
            rounded = figure.rounded
            predicted[key] = None if rounded is None else _tidy(rounded * scale)
            bounds[key] = figure.bound
            basis[key] = figure.basis
            span = figure.range_rounded
            ranges[key] = None if span is None else [_tidy(span[0] * scale), _tidy(span[1] * scale)]
            at_most[key] = figure.at_most
        return {"predicted": predicted, "bounds": bounds, "basis": basis, "range": ranges, "at_most": at_most}


def _tidy(value: float) -> float:
    """A rounded figure scaled back without binary noise (1112.0000000001 -> 1112.0)."""
    return float(f"{value:.6g}")


def _slowest(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else min(v for v in values if v is not None)


def _largest(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else max(v for v in values if v is not None)


def _basis(members: Sequence[MemberFigures], names: Sequence[str] = (), *extra: str) -> str:
    """The bases a figure rests on: each member's for the figures ``names`` it is made of (every member's own
    basis when none is named) and ``extra``, the weakest first."""
    own = [m.basis_of(name) for m in members for name in names] if names else [m.basis for m in members]
    kinds = list(dict.fromkeys(own + [e for e in extra if e]))
    # The weakest basis first: it sets the precision of the figure.
    kinds.sort(key=lambda kind: _DIGITS.get(kind, 0))
    return ", ".join(kinds)


Cap = tuple[float | None, str, str]


def _capped(value: float | None, caps: Sequence[Cap], bound: str, basis: str, at_most: bool = False) -> Figure:
    """The lowest of the members' figure (``at_most``: an upper bound, see ``_link_bound``) and every
    (cap, name, basis) that applies; a link's cap is an upper bound too."""
    if value is None:
        return Figure(None, "unknown: a member's figure is missing", basis)
    best = Figure(value, bound, basis, at_most=at_most)
    for cap, name, cap_basis in caps:
        if cap is not None and cap < (best.value or 0.0):
            best = Figure(cap, name, cap_basis, at_most=cap_basis == LINK)
    return best


def _link_bound(members: Sequence[MemberFigures], names: Sequence[str]) -> bool:
    """Whether the slowest member's figure of any of ``names`` (IOPS or bytes/s: the lowest) is what its link
    carries: the array's figure over it is then at most what it says."""
    for name in names:
        values: list[float | None] = [getattr(m, name) for m in members]
        known = [v for v in values if v is not None]
        if len(known) < len(values) or not known:
            continue
        slowest = min(known)
        if any(v == slowest and m.basis_of(name) == LINK for m, v in zip(members, values, strict=True)):
            return True
    return False


def _copies(level: RaidLevel, members: int, layout: str | None) -> int:
    return level.copies(members, layout)


def _parity(level: RaidLevel) -> int:
    if not level.parity:
        return 0
    return 2 if level.name == "raid6" else 1


def small_write_ios(
    level: RaidLevel,
    members: int,
    layout: str | None,
    io_bytes: int,
    chunk_bytes: int | None,
    *,
    force_rcw: bool = False,
) -> tuple[int, int]:
    """(member reads, member writes) one random write of ``io_bytes`` costs, as md would do it.

    Parity levels work in 4 KiB stripe units: a write touching k units of a stripe of D data units either
    reads the old data and parity (read-modify-write: k + p reads) or the stripe's other data
    (reconstruct-write: D - k reads), whichever reads less, then writes k + p units. A write that covers a
    whole stripe (chunk × data disks) reads nothing. ``force_rcw``: md forces reconstruct-write where the
    parity is not yet known good (a stripe past the resync point, raid5.c handle_stripe_dirtying).
    """
    copies = _copies(level, members, layout)
    parity = _parity(level)
    if not parity:
        return (0, copies)
    data = members - parity
    if chunk_bytes is not None and io_bytes >= chunk_bytes * data:
        return (0, members)
    touched = max(1, min(data, math.ceil(io_bytes / STRIPE_UNIT_BYTES)))
    reads = data - touched if force_rcw else min(touched + parity, data - touched)
    return (reads, touched + parity)


def stripe_heads_for_full_stripes(chunk_bytes: int, streams: int = SEQ_STREAMS) -> int:
    """Stripe heads md needs so that ``streams`` sequential writers each fill a whole chunk row at once."""
    return streams * max(1, chunk_bytes // STRIPE_UNIT_BYTES)


def stripe_cache_fraction(stripe_cache_size: int, needed: int) -> tuple[float, float, float]:
    """(fraction, low, high) of the full-stripe write speed a cache of ``stripe_cache_size`` heads gives where
    ``needed`` would hold a row for every stream: the lab's measured fraction at a quarter of the heads, rising
    linearly to 1 at the full count (an assumption between the two measured ends; below a quarter the
    measured fraction with its range stands, never a figure below the lab's low end)."""
    share = min(1.0, stripe_cache_size / needed)
    if share <= STRIPE_CACHE_MEASURED_SHARE:
        return (STRIPE_CACHE_FRACTION, *STRIPE_CACHE_FRACTION_RANGE)
    lift = (share - STRIPE_CACHE_MEASURED_SHARE) / (1 - STRIPE_CACHE_MEASURED_SHARE)

    def toward_one(value: float) -> float:
        return value + (1 - value) * lift

    low, high = STRIPE_CACHE_FRACTION_RANGE
    return (toward_one(STRIPE_CACHE_FRACTION), toward_one(low), toward_one(high))


def field_read_iops(level_name: str, kernel: str | None, jobs: int = WORKLOAD_JOBS) -> tuple[float, str] | None:
    """md's own 4 KiB random-read ceiling for ``jobs`` submitting jobs on ``kernel`` from the field figures,
    with its name as a bound; None where the field has no figure."""
    family = _FIELD_READ_LEVEL.get(level_name)
    if family is None:
        return None
    per_job = FIELD_READ_IOPS_PER_JOB[family] * jobs
    name = f"md's {level_name} read path (CPU a request: {FIELD_READ_IOPS_PER_JOB[family] / 1e3:.0f}k IOPS a job)"
    if family == "raid5" and _before(kernel, RAID5_LOCKLESS_READS) and per_job > FIELD_RAID5_READ_LOCK_IOPS:
        return (FIELD_RAID5_READ_LOCK_IOPS, f"md's {level_name} read path (device_lock, kernel before 5.14)")
    return (per_job, name)


def bitmap_clean_share(safety: WriteSafety, writes_per_s: float) -> float:
    """The share of random writes that land in a bitmap chunk with no write in the last
    BITMAP_CLEAN_AFTER_S, each of which makes md write the bitmap before the data (0 without a bitmap)."""
    if safety.bitmap == "none":
        return 0.0
    chunk = safety.bitmap_chunk_bytes or MDADM_DEFAULT_BITMAP_CHUNK
    if safety.array_bytes is None:
        return 1.0  # an array far larger than the writes' reach: every write finds a clean chunk
    chunks = max(1.0, safety.array_bytes / chunk)
    return math.exp(-writes_per_s * BITMAP_CLEAN_AFTER_S / chunks)


def bitmap_pages(safety: WriteSafety) -> float:
    """On-disk bitmap pages (one bit a chunk); unknown size counts as more pages than writes in flight."""
    if safety.array_bytes is None:
        return float(RANDOM_IN_FLIGHT)
    chunk = safety.bitmap_chunk_bytes or MDADM_DEFAULT_BITMAP_CHUNK
    return max(1.0, math.ceil(safety.array_bytes / chunk / BITMAP_CHUNKS_PER_PAGE))


def _bitmap_writes_per_write(safety: WriteSafety, members: int, writes_per_s: float) -> float:
    """Member writes the bitmap adds to one random array write at the workload's depth: each flush writes
    every dirty page to every member holding the bitmap (internal: all), and one flush carries the writes
    in flight, so a bitmap of few pages costs little however small its chunk."""
    if safety.bitmap in ("none", "file"):
        return 0.0  # a file's writes go to the device holding it, not to the members
    share = bitmap_clean_share(safety, writes_per_s)
    pages_per_write = min(1.0, bitmap_pages(safety) / RANDOM_IN_FLIGHT)
    return share * members * pages_per_write * BITMAP_UPDATE_REQUESTS


def _partial_write_extra(safety: WriteSafety, parity: int, members: int) -> tuple[float, str]:
    """Member writes a consistency policy adds to a partial-stripe write at the workload's depth, and what it is."""
    if parity and safety.policy == "ppl":
        # raid5-ppl.c: a stripe's partial parity goes to the log on its parity member before the data, but the
        # log gathers the stripes in flight into one io_unit a member (a header and a page each), so at the
        # workload's depth it is about one log write a member per flight, not one a write. (In the lab, raid5
        # with ppl over 500-IOPS members wrote 483 IOPS where the same members without it wrote 503.)
        return (members / RANDOM_IN_FLIGHT, "the partial parity log's writes (one io_unit a member per flight)")
    return (0.0, "")


def predict(
    level: RaidLevel,
    members: Sequence[MemberFigures],
    *,
    layout: str | None = None,
    chunk_bytes: int | None = None,
    ceilings: MdCeilings = FIELD_CEILINGS,
    links: Sequence[SharedLink] = (),
    stripe_cache_size: int | None = DEFAULT_STRIPE_CACHE,
    condition: str = OPTIMAL,
    safety: WriteSafety = NO_SAFETY,
    jobs: int = WORKLOAD_JOBS,
) -> Prediction:
    """Each workload's figure for an array of ``members`` at ``level``; see the module docstring.

    ``stripe_cache_size``: the array's (raid4/5/6), md's default 256 when not given; None when unknown.
    ``condition``: OPTIMAL, DEGRADED (one member missing) or RESYNC (a sync running under the workload).
    ``safety``: the bitmap and consistency policy (none and resync: md's fastest). ``jobs``: the jobs the
    field's per-job read ceilings are multiplied by (the workloads' 8; a published test's own count).
    """
    if any(m.ranges for m in members):
        # Members known to a range (a device class's field figures): the figure from their middles, its range
        # from the same array with every member at its low end and at its high end.
        def over(figures: Sequence[MemberFigures]) -> Prediction:
            return predict(level, figures, layout=layout, chunk_bytes=chunk_bytes, ceilings=ceilings, links=links,
                           stripe_cache_size=stripe_cache_size, condition=condition, safety=safety,
                           jobs=jobs)  # fmt: skip

        middle = over([replace(m, ranges=()) for m in members])
        return _spread(middle, over([m.at_end(0) for m in members]), over([m.at_end(1) for m in members]))
    n = len(members)
    if n < level.min_members:
        raise PlanError(f"{level.name} needs at least {level.min_members} members; {n} given")
    if condition not in CONDITIONS:
        raise PlanError(f"no array condition {condition!r}: {', '.join(CONDITIONS)}")
    layout = level.effective_layout(layout)
    if level.uses_chunk and chunk_bytes is None:
        chunk_bytes = 512 * 1024  # mdadm's default
    copies = _copies(level, n, layout)
    parity = _parity(level)
    data = n - parity
    base = _basis(members)
    notes: list[str] = []

    def prediction(figures: Sequence[Figure]) -> Prediction:
        seq_read, seq_write, rand_read, rand_write, q1_read, q1_write = figures
        return Prediction(
            level=level.name,
            members=n,
            layout=layout,
            chunk_bytes=chunk_bytes if level.uses_chunk else None,
            seq_read_bytes_per_s=seq_read,
            seq_write_bytes_per_s=seq_write,
            rand_read_iops=rand_read,
            rand_write_iops=rand_write,
            q1_read_latency_s=q1_read,
            q1_write_latency_s=q1_write,
            notes=tuple(notes),
            condition=condition,
        )

    if condition == DEGRADED and not level.redundant:
        gone = Figure(None, f"{level.name} has no redundancy: a missing member stops the array", base)
        return prediction([gone] * 6)

    seq_r = _slowest([m.seq_read_bytes_per_s for m in members])
    seq_w = _slowest([m.seq_write_bytes_per_s for m in members])
    rr = _slowest([m.rand_read_iops for m in members])
    rw = _slowest([m.rand_write_iops for m in members])
    q1 = _slowest([m.q1_read_latency_s for m in members])
    q1w = _largest([m.q1_write_latency_s for m in members])
    rotational = any(m.rotational for m in members)
    far_layout = level.name == "raid10" and (layout or "").startswith("f")

    # Reads: how many members' worth of reading serves the array.
    if level is LINEAR:
        seq_read_factor: float = 1.0  # one member at a time: a stream walks the members in turn
        notes.append("linear: a sequential stream reads one member at a time; random I/O over the whole array spreads")
    elif parity and rotational:
        seq_read_factor = float(data)  # a platter turns under every parity chunk it skips
    elif parity and level.name == "raid4":
        seq_read_factor = float(data)  # the parity member holds no data
    else:
        seq_read_factor = float(n)
    rand_read_factor = float(data if level.name == "raid4" else n)
    # Sync speed md keeps up under load takes its share of every member.
    resync_share = 0.0
    if condition == DEGRADED:
        seq_read_factor, rand_read_factor = _degraded_read_factors(level, n, copies, parity, seq_read_factor)
    elif condition == RESYNC and seq_r is not None:
        resync_share = min(0.5, RESYNC_MIN_KIB_S * 1024 / seq_r)

    seq_write_factor = 1.0 if level is LINEAR else (n / copies if not parity else float(data))
    force_rcw = condition == RESYNC and bool(parity)
    reads, writes = small_write_ios(level, n, layout, RANDOM_BLOCK_BYTES, chunk_bytes)
    reads_f, writes_f = float(reads), float(writes)
    serving = n
    if condition == DEGRADED and parity:
        reads_f, writes_f = _degraded_small_write(n, parity)
        serving = n - 1
    ppl_writes, ppl_what = _partial_write_extra(safety, parity, n)
    writes_f += ppl_writes

    def random_writes(extra_writes: float, member_reads: float = reads_f) -> float | None:
        if level is LINEAR:
            return None if rw is None else rw * n / (1 + extra_writes)
        if rw is None or (member_reads and rr is None):
            return None
        if not member_reads or rr is None:
            return rw * serving / (writes_f + extra_writes)
        # The serving members share the work: each write costs reads and writes of member time.
        return serving / (member_reads / rr + (writes_f + extra_writes) / rw)

    seq_read_value = None if seq_r is None else seq_r * seq_read_factor
    seq_write_value = None if seq_w is None else seq_w * seq_write_factor
    rand_read_value = None if rr is None else rr * rand_read_factor
    rand_write_value = random_writes(0.0)
    bitmap_extra = 0.0
    if rand_write_value is not None and safety.bitmap != "none":
        for _ in range(3):  # the clean share depends on the write rate it sets: a few rounds settle it
            if rand_write_value is None:
                break
            bitmap_extra = _bitmap_writes_per_write(safety, n, rand_write_value)
            rand_write_value = random_writes(bitmap_extra)

    # Links members share carry the array's traffic, parity and second copies included; a cap is in the
    # figure's own unit (bytes/s, or IOPS of `unit_bytes` blocks).
    def link_caps(traffic_per_byte: float, unit_bytes: float = 1.0) -> list[Cap]:
        return [
            (link.bytes_per_s / (len(link.members) / n * traffic_per_byte) / unit_bytes, link.name, LINK)
            for link in links
            if link.members
        ]

    write_traffic = n / data if parity else float(copies)
    md = ceilings.basis
    seq_read_caps: list[Cap] = [(ceilings.seq_read_bytes_per_s, f"md's {level.name} read path", md)]
    rand_read_caps: list[Cap] = []
    if ceilings.rand_read_iops is not None:
        rand_read_caps.append((ceilings.rand_read_iops, f"md's {level.name} read path", md))
    elif (found := field_read_iops(level.name, ceilings.kernel, jobs)) is not None:
        rand_read_caps.append((found[0], found[1], FIELD))
    stripe_bw: list[Cap] = []
    stripe_iops: list[Cap] = []
    if parity:
        thread = "md stripe thread (group_thread_cnt 0)"
        stripe_bw.append((ceilings.stripe_write_bytes_per_s, thread, md))
        stripe_bw.append((ceilings.parity_bytes_per_s, "parity CPU (the kernel's xor/raid6 speed)", md))
        stripe_iops.append((ceilings.stripe_small_write_iops, thread, md))
        if condition == DEGRADED:
            # Reads of the missing member's chunks are rebuilt in stripes by the same thread.
            rebuilt = "md stripe thread rebuilding the missing member's reads"
            if ceilings.stripe_small_write_iops is not None:
                rand_read_caps.append((ceilings.stripe_small_write_iops * n, rebuilt, md))
            if ceilings.stripe_write_bytes_per_s is not None:
                seq_read_caps.append((ceilings.stripe_write_bytes_per_s * n / data, rebuilt, md))
    else:
        stripe_bw.append((ceilings.seq_write_bytes_per_s, f"md's {level.name} write path", md))
        stripe_iops.append((ceilings.rand_write_iops, f"md's {level.name} write path", md))
    journal_caps = _journal_caps(safety, parity, data, n, notes)

    def members_bound(factor: float) -> str:
        return f"members (slowest × {factor:.3g})"

    if reads_f and parity:
        rand_write_bound = (
            f"members ({reads_f:.3g} reads + {writes_f + bitmap_extra:.3g} writes per write over {serving})"
        )
    else:
        rand_write_bound = members_bound(serving / (writes_f + bitmap_extra) if level is not LINEAR else n)
    # What each workload's figure rests on: the members' figures it is made of (a parity write reads first).
    writes_read = ("rand_read_iops",) if reads_f and parity else ()
    seq_read_basis = _basis(members, ("seq_read_bytes_per_s",))
    seq_write_basis = _basis(members, ("seq_write_bytes_per_s",))
    seq_read = _capped(seq_read_value, seq_read_caps + link_caps(1.0), members_bound(seq_read_factor), seq_read_basis,
                       _link_bound(members, ("seq_read_bytes_per_s",)))  # fmt: skip
    seq_write = _capped(
        seq_write_value,
        stripe_bw + journal_caps[0] + link_caps(write_traffic),
        members_bound(seq_write_factor),
        seq_write_basis,
        _link_bound(members, ("seq_write_bytes_per_s",)),
    )
    if far_layout and rotational and seq_write.value is not None and seq_write.bound.startswith("members"):
        seq_write = _far_platter_writes(seq_write, seq_w, q1, notes)
    # A 1 MiB write that covers a whole chunk row fills every head of it itself; a smaller one leaves the row
    # waiting in the cache for the stream's next write.
    partial_rows = chunk_bytes is not None and chunk_bytes * data > SEQ_BLOCK_BYTES
    if (
        parity
        and chunk_bytes
        and partial_rows
        and stripe_cache_size is not None
        and seq_write.bound.startswith("members")
    ):
        needed = stripe_heads_for_full_stripes(chunk_bytes)
        if stripe_cache_size < needed and seq_write.value is not None:
            # Part-written stripes read before they write and writers wait for heads: the members' figure
            # times the fraction the lab measured, with its range.
            fraction, low, high = stripe_cache_fraction(stripe_cache_size, needed)
            notes.append(
                f"sequential writes: stripe_cache_size {stripe_cache_size} holds fewer stripe heads than "
                f"{SEQ_STREAMS} streams × {needed // SEQ_STREAMS} (a {chunk_bytes // 1024} KiB chunk row each) "
                f"need for full stripes: {fraction:.2f} of the members' {seq_write.value / 1e6:.3g} MB/s "
                f"(the lab's measured fraction, range {low:.2f}-{high:.2f}); {needed} or more gives the "
                "full-stripe figure"
            )
            full = seq_write.value
            seq_write = replace(
                seq_write,
                value=full * fraction,
                bound=f"md stripe cache (stripe_cache_size {stripe_cache_size})",
                basis=_basis(members, ("seq_write_bytes_per_s",), LAB_FRACTION),
                low=full * low,
                high=full * high,
            )
    rand_read = _capped(rand_read_value, rand_read_caps + link_caps(1.0, RANDOM_BLOCK_BYTES),
                        members_bound(rand_read_factor), _basis(members, ("rand_read_iops",)),
                        _link_bound(members, ("rand_read_iops",)))  # fmt: skip
    rand_write = _capped(
        rand_write_value,
        stripe_iops + journal_caps[1] + link_caps(write_traffic, RANDOM_BLOCK_BYTES),
        rand_write_bound,
        _basis(members, ("rand_write_iops", *writes_read)),
        _link_bound(members, ("rand_write_iops", *writes_read)),
    )
    if condition == RESYNC:
        seq_read, rand_read = _resync_reads(level, n, copies, seq_read, rand_read, notes)
        if force_rcw and rand_write.value is not None and rand_write.bound.startswith("members"):
            rand_write = _resync_parity_writes(level, n, layout, chunk_bytes, rand_write, random_writes, notes)
        if resync_share:
            seq_read, seq_write, rand_read, rand_write = (
                _less(f, resync_share) for f in (seq_read, seq_write, rand_read, rand_write)
            )
            notes.append(
                f"during a resync md keeps it at speed_limit_min ({RESYNC_MIN_KIB_S:,} KiB/s a member) while the "
                f"array is in use: {resync_share:.1%} of each member's time"
            )
    if q1 is None:
        latency = Figure(None, "unknown: a member's Q1 latency is missing", _basis(members, Q1_READ))
    elif ceilings.layer_latency_s is None:
        latency = Figure(q1, "the member (md's own latency not known)", _basis(members, Q1_READ))
    else:
        latency = Figure(q1 + ceilings.layer_latency_s, "the member plus md's layer", _basis(members, Q1_READ, md))
    if condition == DEGRADED and parity and latency.value is not None:
        # One read in n lands on the missing member and is rebuilt from the others through the stripe thread.
        latency = replace(latency, bound=latency.bound + " (1 read in " + str(n) + " rebuilt from the others)")
    write_latency = _q1_write(members, level, n, reads, q1, q1w, ceilings, safety, parity, notes)
    if parity and reads_f:
        how = "read-modify-write" if reads == 1 + parity else "reconstruct-write"
        if condition == DEGRADED:
            notes.append(
                f"degraded: a 4 KiB random write costs {reads_f:.3g} member reads and {writes_f:.3g} writes on "
                f"average over the {n - 1} members left"
            )
        else:
            notes.append(
                f"a 4 KiB random write costs {reads} member read{'s' if reads > 1 else ''} and {writes} writes "
                f"({how}, as md chooses for {n} members)"
            )
    if ppl_what and parity:
        notes.append(f"consistency policy ppl: every partial-stripe write adds {ppl_what}")
    if bitmap_extra:
        notes.append(
            f"bitmap: {bitmap_extra:.2g} member writes a random write on average (a chunk with no write in the last "
            f"{BITMAP_CLEAN_AFTER_S:g} s is marked before the data, PREFLUSH and FUA, on every member holding it)"
        )
    return prediction([seq_read, seq_write, rand_read, rand_write, latency, write_latency])


def _spread(middle: Prediction, low: Prediction, high: Prediction) -> Prediction:
    """``middle`` with each figure's range widened to what ``low`` and ``high`` (the same array over its members'
    low and high ends) give."""
    spread: dict[str, Any] = {}
    for attribute, _, _ in JSON_FIGURES:
        figure: Figure = getattr(middle, attribute)
        if figure.value is None:
            continue
        ends = [
            value
            for other in (figure, getattr(low, attribute), getattr(high, attribute))
            for value in (other.value, other.low, other.high)
            if value is not None
        ]
        if min(ends) < figure.value or max(ends) > figure.value:
            spread[attribute] = replace(figure, low=min(ends), high=max(ends))
    return replace(middle, **spread)


def _degraded_read_factors(
    level: RaidLevel, n: int, copies: int, parity: int, seq_factor: float
) -> tuple[float, float]:
    """(sequential, random) members' worth of reading with one member missing."""
    if parity:
        data = n - parity
        # A read of the missing member's chunk reads the data disks' worth of the others to rebuild it.
        random_reads = (n - 1) / n + data / n
        # A stripe whose missing chunk is data is read twice: its present chunks directly, then all n - 1
        # into the stripe cache to rebuild the missing one.
        stripe_reads = data / n * (2 * data - 1) + parity / n * data
        return (data * (n - 1) / stripe_reads, (n - 1) / random_reads)
    # Mirrors: the set that lost a member serves its share of the reads with one copy fewer.
    factor = (copies - 1) * n / copies
    return (factor, factor)


def _degraded_small_write(n: int, parity: int) -> tuple[float, float]:
    """Average (member reads, member writes) of a 4 KiB write with one member missing: onto the missing
    member's data it reconstructs (the other data disks' worth of reads, parity written); onto a stripe
    whose parity is missing it writes the data (and the other syndrome, raid6); else read-modify-write."""
    data = n - parity
    onto_missing = (data - 1, parity)
    parity_missing = (parity - 1 + (1 if parity > 1 else 0), parity)
    normal = (1 + parity, 1 + parity)
    weights = ((1 / n, onto_missing), (parity / n, parity_missing), ((data - 1) / n, normal))
    return (sum(w * c[0] for w, c in weights), sum(w * c[1] for w, c in weights))


def _journal_caps(safety: WriteSafety, parity: int, data: int, n: int, notes: list[str]) -> tuple[list[Cap], list[Cap]]:
    """Caps a write journal puts on (sequential, random) writes: every write goes to the journal device
    first, data and parity, as a sequential log."""
    if not parity or safety.policy != "journal":
        return ([], [])
    journal = safety.journal
    if journal is None or journal.seq_write_bytes_per_s is None:
        notes.append(
            "write journal: every write goes to the journal device first; its own sequential write figure is not "
            "known, so it does not bound these figures (measure it with member-matrix)"
        )
        return ([], [])
    name = "the write journal device (data and parity logged first)"
    basis = journal.basis
    seq = journal.seq_write_bytes_per_s * data / n
    rand = journal.seq_write_bytes_per_s / (RANDOM_BLOCK_BYTES * (1 + parity))
    return ([(seq, name, basis)], [(rand, name, basis)])


def _far_platter_writes(figure: Figure, seq_w: float | None, q1: float | None, notes: list[str]) -> Figure:
    """raid10 far on platters: every member writes two regions half a disk apart, so a head seeks between
    them; the elevator sorts the 8 streams' requests, so a seek per stream's write is the worst case."""
    if seq_w is None or q1 is None or figure.value is None:
        notes.append("raid10 far on platters: each write seeks between the near and far copy; without the "
                     "members' Q1 latency the seeks are not in the figure")  # fmt: skip
        return figure
    per_mib = SEQ_BLOCK_BYTES / seq_w
    worst = per_mib / (per_mib + q1)
    sorted_share = per_mib / (per_mib + q1 / SEQ_STREAMS)
    notes.append(
        f"raid10 far on platters: a member writes both copies half a disk apart; a seek ({q1 * 1e3:.3g} ms, the "
        f"member's Q1 latency) per {SEQ_STREAMS} writes sorted, per write at worst"
    )
    return replace(figure, value=figure.value * sorted_share, bound="platter seeks between the far layout's copies",
                   low=figure.value * worst, high=figure.value)  # fmt: skip


def _resync_reads(
    level: RaidLevel, n: int, copies: int, seq_read: Figure, rand_read: Figure, notes: list[str]
) -> tuple[Figure, Figure]:
    """Mirrors read the region the sync has not reached from one copy only (raid1/raid10 read_balance):
    from the members' figure at the sync's end down to one copy's share at its start."""
    if level.name not in ("raid1", "raid10") or copies < 2:
        return (seq_read, rand_read)
    notes.append(
        "resync: reads past the sync point come from one copy only; the figure is half-way, the range from the "
        "sync's start to its end"
    )
    out = []
    for figure in (seq_read, rand_read):
        if figure.value is None or not figure.bound.startswith("members"):
            out.append(figure)
            continue
        one_copy = figure.value / copies
        half_way = 1 / (0.5 / figure.value + 0.5 / one_copy)
        out.append(replace(figure, value=half_way, bound=figure.bound + ", one copy past the sync point",
                           low=one_copy, high=figure.value))  # fmt: skip
    return (out[0], out[1])


def _resync_parity_writes(
    level: RaidLevel,
    n: int,
    layout: str | None,
    chunk_bytes: int | None,
    figure: Figure,
    random_writes: Callable[[float, float], float | None],
    notes: list[str],
) -> Figure:
    """Past the sync point md forces reconstruct-write (its parity is not known good): the figure is half-way,
    the range from all writes reconstructing (the sync's start) to none (its end)."""
    reads, _ = small_write_ios(level, n, layout, RANDOM_BLOCK_BYTES, chunk_bytes, force_rcw=True)
    forced = random_writes(0.0, float(reads))
    if forced is None or figure.value is None:
        return figure
    low, high = sorted((forced, figure.value))
    half_way = 1 / (0.5 / figure.value + 0.5 / forced)
    notes.append(f"resync: past the sync point a 4 KiB write reconstructs ({reads} reads); the range runs from the "
                 "sync's start to its end")  # fmt: skip
    return replace(figure, value=half_way, bound=figure.bound + ", reconstruct-write past the sync point", low=low,
                   high=high)  # fmt: skip


def _less(figure: Figure, share: float) -> Figure:
    if figure.value is None:
        return figure
    scale = 1 - share
    low = None if figure.low is None else figure.low * scale
    high = None if figure.high is None else figure.high * scale
    return replace(figure, value=figure.value * scale, low=low, high=high)


def _q1_write(
    members: Sequence[MemberFigures],
    level: RaidLevel,
    n: int,
    reads: int,
    q1: float | None,
    q1w: float | None,
    ceilings: MdCeilings,
    safety: WriteSafety,
    parity: int,
    notes: list[str],
) -> Figure:
    """A 4 KiB write at queue depth 1: the slowest copy's write (a parity level first reads what it needs),
    md's own share, and what the bitmap, the partial parity log or the journal put before it."""
    names = ("q1_write_latency_s", *(Q1_READ if parity and reads else ()))
    base = _basis(members, names)
    if q1w is None:
        return Figure(None, "unknown: a member's Q1 write latency is missing (member-matrix measures it)", base)
    value = q1w
    parts = ["the slowest copy's write"]
    if parity and reads:
        if q1 is None:
            return Figure(None, "unknown: a member's Q1 read latency is missing (a parity write reads first)", base)
        value += q1
        parts = ["a member read, then the writes"]
    layer = ceilings.write_latency_s if ceilings.write_latency_s is not None else ceilings.layer_latency_s
    basis = base
    if layer is None:
        parts.append("md's own share not known")
    else:
        value += layer
        parts.append("md's layer")
        basis = _basis(members, names, ceilings.basis)
    if safety.bitmap != "none":
        # The bitmap page (a flush, then the write with FUA) before the data, on a write to a clean chunk.
        share = bitmap_clean_share(safety, 1 / value)
        value += share * q1w * BITMAP_UPDATE_REQUESTS
        parts.append(f"the bitmap on {share:.0%} of writes")
    if parity and safety.policy == "ppl":
        value += q1w
        parts.append("the partial parity log's write")
    if parity and safety.policy == "journal":
        journal = None if safety.journal is None else safety.journal.q1_write_latency_s
        if journal is None:
            notes.append("write journal: each write waits for the journal device first; its Q1 write latency is "
                         "not known, so it is not in the Q1 write figure")  # fmt: skip
        else:
            value += journal
            parts.append("the journal device's write")
    return Figure(value, " + ".join(parts), basis)


def parse_member_figures(text: str) -> MemberFigures:
    """``seq-read=1112MB/s,seq-write=1123MB/s,rand-read=180k,rand-write=169k,q1-read=58us,q1-write=20us,rotational=no``.

    Rates in MB/s (10^6 bytes), GB/s or MiB/s; IOPS as plain numbers with an optional k or M; latency in
    us, ms or s. PlanError (one line) for anything else.
    """
    values: dict[str, float | bool] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, raw = part.partition("=")
        key, raw = key.strip().lower(), raw.strip()
        if not sep or not raw:
            raise PlanError(f"--member-figures: {part!r} is not NAME=VALUE")
        try:
            if key in ("seq-read", "seq-write"):
                values[key] = _rate(raw)
            elif key in ("rand-read", "rand-write"):
                values[key] = _count(raw)
            elif key in ("q1-read", "q1-write"):
                values[key] = _seconds(raw)
            elif key == "rotational":
                if raw.lower() not in ("yes", "no", "true", "false", "1", "0"):
                    raise ValueError("say yes or no")
                values[key] = raw.lower() in ("yes", "true", "1")
            else:
                raise PlanError(
                    f"--member-figures: unknown figure {key!r} (seq-read, seq-write, rand-read, rand-write, "
                    "q1-read, q1-write, rotational)"
                )
        except ValueError as exc:
            raise PlanError(f"--member-figures: {part!r}: {exc}") from None

    def number(key: str) -> float | None:
        value = values.get(key)
        return None if value is None or isinstance(value, bool) else float(value)

    rotational = values.get("rotational")
    return MemberFigures(
        seq_read_bytes_per_s=number("seq-read"),
        seq_write_bytes_per_s=number("seq-write"),
        rand_read_iops=number("rand-read"),
        rand_write_iops=number("rand-write"),
        q1_read_latency_s=number("q1-read"),
        rotational=rotational if isinstance(rotational, bool) else None,
        basis=GIVEN,
        q1_write_latency_s=number("q1-write"),
    )


_RATE_UNITS = {"b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "kib/s": 1024.0, "mib/s": 1 << 20, "gib/s": 1 << 30}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _positive(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a positive number")
    return value


def _rate(raw: str) -> float:
    lowered = raw.lower()
    for unit in sorted(_RATE_UNITS, key=len, reverse=True):
        if lowered.endswith(unit):
            return _positive(lowered[: -len(unit)]) * _RATE_UNITS[unit]
    raise ValueError("give a rate with its unit, e.g. 1112MB/s (MB = 10^6 bytes) or 1060MiB/s")


def _count(raw: str) -> float:
    lowered = raw.lower()
    scale = {"k": 1e3, "m": 1e6}.get(lowered[-1:], 1.0)
    return _positive(lowered[:-1] if scale != 1.0 else lowered) * scale


def _seconds(raw: str) -> float:
    lowered = raw.lower()
    for unit in sorted(_TIME_UNITS, key=len, reverse=True):
        if lowered.endswith(unit):
            return _positive(lowered[: -len(unit)]) * _TIME_UNITS[unit]
    raise ValueError("give a time with its unit, e.g. 58us or 0.06ms")
