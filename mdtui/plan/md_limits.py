"""What md itself does and where it stops, whatever its members: its small-write choice, its stripe cache, and
its own ceilings (calibrated on this host, else field figures that follow the kernel where md's code changed)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mdtui.plan.figures import FIELD, SEQ_STREAMS, WORKLOAD_JOBS
from mdtui.plan.levels import RaidLevel

# md's default stripe_cache_size (stripe heads; one 4 KiB page per member each).
DEFAULT_STRIPE_CACHE = 256
# md handles a raid4/5/6 write in 4 KiB stripe units (one page per member): a 4 KiB write covers one.
STRIPE_UNIT_BYTES = 4096

# The stripe cache's measured fraction (docs/predictions.md, the lab): raid5 over four, 512 KiB chunk, 8
# streams, stripe_cache_size 256 where full stripes need 1,024: 34.3 MB/s steady where the members allow 60.3
# (0.57); the same step's members read 498 MB for 1,091 MB written (0.69 of the traffic was writes: the most
# the cache's pre-reads leave); a 5 s step of the same 19.1 MB/s (0.32).
STRIPE_CACHE_FRACTION = 0.57
STRIPE_CACHE_FRACTION_RANGE = (0.32, 0.69)
# The cache that fraction was measured at, as a share of the heads full stripes need (256 of 1,024).
STRIPE_CACHE_MEASURED_SHARE = 0.25


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


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """(major, minor) of a kernel release ("6.1.0-56-amd64" → (6, 1)); None when it does not say."""
    match = re.match(r"^(\d{1,3})\.(\d{1,3})", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _before(release: str | None, version: tuple[int, int]) -> bool:
    found = kernel_version(release)
    return found is not None and found < version


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
    copies = level.copies(members, layout)
    parity = level.parity_disks
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
