"""What every rule reads (inventory, snapshots, stored runs, weakest-link figures) and the member sets they share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mdtui.advise.findings import Workload
from mdtui.format import rate_mb_s
from mdtui.keep.boot import BootState
from mdtui.keep.grow_resume import ReshapeState
from mdtui.keep.health import Health
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.model.safety import LiveSafety
from mdtui.model.snapshot import Snapshot
from mdtui.plan.create import CreatePlan
from mdtui.plan.levels import RaidLevel, running_level
from mdtui.probe.kernel_log import ParityRoutines
from mdtui.store.records import RunRecord


@dataclass(frozen=True)
class MemberAlone:
    """One member read alone in a weakest-link run: the measured figure the member rules start from."""

    name: str  # "nvme0n1"
    read_bytes_per_s: float
    run_id: int


@dataclass(frozen=True)
class WeakestLinkFigures:
    """A weakest-link result reduced to what the rules need: read bytes/s of each step, with run ids."""

    run_id: int  # the array step
    array: str  # "/dev/md0"
    level: str | None
    members: int
    together_bytes_per_s: float  # every member read at once
    array_bytes_per_s: float
    numjobs: int | None
    alone: tuple[MemberAlone, ...] = ()  # each member alone, in step order
    together_run_id: int | None = None


@dataclass(frozen=True)
class AdviceInput:
    """Everything the rules may look at; each rule uses what is there and stays silent about the rest."""

    inventory: Inventory | None = None
    snapshots: tuple[Snapshot, ...] = ()  # oldest first, as Sampler.history holds them
    plan: CreatePlan | None = None
    runs: tuple[RunRecord, ...] = ()
    workload: Workload | None = None
    stripe_cache_pages: Mapping[str, int] = field(default_factory=dict)  # "md0" → stripe_cache_size
    write_safety: Mapping[str, LiveSafety] = field(default_factory=dict)  # "md0" → its bitmap and policy
    parity: ParityRoutines | None = None
    benchmark_target: str | None = None  # a run about to start on this device
    weakest_link: tuple[WeakestLinkFigures, ...] = ()
    boot: BootState | None = None  # mdadm.conf, the initramfs's copy, monitoring (mdtui.keep.boot)
    health: Health | None = None  # failed members, mismatch_cnt, members' SMART (mdtui.keep.health)
    reshapes: tuple[ReshapeState, ...] = ()  # running, pending or interrupted reshapes (mdtui.keep.grow)


@dataclass(frozen=True)
class MemberSet:
    """An array that exists or a plan's array: the unit the geometry rules reason about."""

    name: str  # "md0", or the planned device "/dev/md0 (planned)"
    level: RaidLevel
    layout: str | None
    disks: tuple[Disk, ...]  # members whose disk is known, in role order
    member_count: int
    chunk_bytes: int | None
    bitmap: str | None
    planned: bool


def mbps(bytes_per_s: float) -> float:
    return round(bytes_per_s / 1e6, 1)


# A rate as the findings' titles show it ("1,321 MB/s"): format.rate_mb_s, the one spelling.
mb_text = rate_mb_s


def level_layout(array: MdArray) -> tuple[RaidLevel, str | None] | None:
    """The level object and mdadm-style layout of an existing array (sysfs says "far=2", mdadm "f2")."""
    level, layout = running_level(array.level, array.layout)
    return None if level is None else (level, layout)


def disk_of(inventory: Inventory | None, member_name: str) -> Disk | None:
    """The whole disk behind a member ("sdb1" → sdb); None without an inventory."""
    if inventory is None:
        return None
    return inventory.disk_of(member_name)


def member_sets(inp: AdviceInput) -> list[MemberSet]:
    sets: list[MemberSet] = []
    if inp.plan is not None:
        plan = inp.plan
        sets.append(
            MemberSet(
                name=f"{plan.request.device} (planned)",
                level=plan.level,
                layout=plan.layout,
                disks=plan.request.members,
                member_count=len(plan.request.members),
                chunk_bytes=plan.chunk_bytes,
                bitmap=plan.request.bitmap,
                planned=True,
            )
        )
    if inp.inventory is not None:
        for array in inp.inventory.arrays:
            resolved = level_layout(array)
            if resolved is None:
                continue
            level, layout = resolved
            active = [m for m in array.members if not m.spare and not m.faulty]
            disks = tuple(d for m in active if (d := disk_of(inp.inventory, m.name)) is not None)
            sets.append(
                MemberSet(
                    name=array.name,
                    level=level,
                    layout=layout,
                    disks=disks,
                    member_count=array.raid_disks or len(active),
                    chunk_bytes=array.chunk_bytes,
                    bitmap=array.bitmap,
                    planned=False,
                )
            )
    return sets
