"""Benchmark presets as data (from the field findings in docs/findings.md): each preset's steps of JobSpecs and what
target it takes, in one registry (PRESETS); execute/argv turns a JobSpec into its fio or dd command line."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mdtui.errors import PlanError
from mdtui.execute.argv import size_arg
from mdtui.model.job import GIB, KIB, MIB, IoEngine, JobSpec, RwMode, SteadyState, Tool

# A quick first look must finish in under a minute whatever the preset; steps share this budget.
QUICK_BUDGET_S = 45
QUICK_MIN_RUNTIME_S = 2
QUICK_MAX_RUNTIME_S = 5


@dataclass(frozen=True)
class Step:
    """Jobs that run at the same time; a preset is a sequence of steps run one after another."""

    label: str
    jobs: tuple[JobSpec, ...]
    # The caller samples md kernel-thread CPU (utime+stime from /proc/PID/stat) before and after.
    measure_md_cpu: bool = False

    @property
    def writes(self) -> bool:
        return any(job.writes for job in self.jobs)


@dataclass(frozen=True)
class PresetTarget:
    """What a preset's steps are built for: the same fields for every preset (each reads what it needs)."""

    path: str
    members: tuple[str, ...] = ()  # weakest-link: each member alone, then all at once
    size_bytes: int | None = None  # offset-sweep: where the offsets fall
    quick: bool = False
    steady: bool = False  # end each step once its figure is steady (fio's --steadystate), its runtime the ceiling
    job: Mapping[str, Any] = field(default_factory=dict)  # custom: its one job's options (custom()'s keywords)


@dataclass(frozen=True)
class Preset:
    """One preset of the registry (PRESETS): its steps, and what target it takes, for every planner."""

    key: str
    title: str
    doc: str  # what the preset answers and where its parameters come from
    writes: bool  # some step overwrites the targets: needs an explicit confirmation
    build: Callable[[PresetTarget], tuple[Step, ...]]
    needs_members: bool = False  # measures an array's members: an array target, or members listed
    needs_array: str = ""  # why it needs an md array as its target ("": any target)
    refuses_array: str = ""  # why an md array is the wrong target ("": an array will do)
    local_only: str = ""  # why fio's server on another host cannot run it ("": it can)
    # --runtime, --size, --iodepth and --numjobs adjust its steps (the custom preset takes them as its job's own).
    overridable: bool = True

    @property
    def array_target(self) -> bool:
        """Its natural target is an md array (what a screen offers it on)."""
        return self.needs_members or bool(self.needs_array)

    def steps(self, target: PresetTarget) -> tuple[Step, ...]:
        return self.build(target)


def _quick_runtime(step_count: int) -> int:
    per_step = QUICK_BUDGET_S // max(step_count, 1)
    return max(QUICK_MIN_RUNTIME_S, min(QUICK_MAX_RUNTIME_S, per_step))


# When a step may end early (fio's --steadystate; see model.job.SteadyState). Reads settle within seconds on
# most devices: bandwidth (or IOPS) whose slope over 5 s stays within 2 % of its mean, after 2 s. Writes get a
# longer ramp and window, 1 % over 10 s after 5 s, and a longer ceiling: a drive's write cache can hold a
# figure twice the sustained one for tens of seconds, and only a window that long sees it still falling.
READ_STEADY_BW = SteadyState("bw", "slope", 2.0, window_s=5, ramp_s=2)
READ_STEADY_IOPS = SteadyState("iops", "slope", 2.0, window_s=5, ramp_s=2)
# A write step is also confirmed (SteadyState.confirm): a cache burst longer than ramp + window is flat while
# fio judges it, so fio alone calls the burst steady.
WRITE_STEADY_BW = SteadyState("bw", "slope", 1.0, window_s=10, ramp_s=5, confirm=True)
WRITE_STEADY_IOPS = SteadyState("iops", "slope", 1.0, window_s=10, ramp_s=5, confirm=True)
WRITE_CEILING_S = 120


def steady_for(rw: RwMode, *, random: bool) -> SteadyState:
    """The steady-state criterion of a step: by IOPS for small random I/O, by bandwidth otherwise."""
    if rw.writes:
        return WRITE_STEADY_IOPS if random else WRITE_STEADY_BW
    return READ_STEADY_IOPS if random else READ_STEADY_BW


def _steady_runtime(rw: RwMode, fixed_runtime: int, *, random: bool, steady: bool) -> tuple[int, SteadyState | None]:
    """(runtime, criterion) of a step: the fixed runtime, or a ceiling with a criterion to end sooner."""
    if not steady:
        return fixed_runtime, None
    criterion = steady_for(rw, random=random)
    ceiling = max(fixed_runtime, WRITE_CEILING_S) if rw.writes else fixed_runtime
    return max(ceiling, criterion.floor_s), criterion


def _slug(device: str) -> str:
    """A fio job name part from a device path: /dev/nvme0n1 → nvme0n1."""
    return device.rstrip("/").rsplit("/", 1)[-1].replace(" ", "_") or "target"


# --- weakest link ----------------------------------------------------------------------------------

WEAKEST_LINK_DOC = (
    "Which member holds the array back? A stripe runs at the slowest member times the member count: "
    "in the field a RAID0 of four NVMe drives read 3,322 MB/s while the raw drives together read 5,645 MB/s, "
    "because one drive sat in a PCIe 1.0 slot and read 832 MB/s (832 × 4 = 3,328). This preset repeats "
    "that test: 4 MiB sequential direct reads, libaio, iodepth 12, 16 jobs, on each member alone, "
    "on all members at once, then on the array, each step until its figure is steady (30 s at most). Read-only."
)
WEAKEST_LINK_BLOCK = 4 * MIB
WEAKEST_LINK_IODEPTH = 12
WEAKEST_LINK_NUMJOBS = 16
WEAKEST_LINK_RUNTIME_S = 30


def weakest_link(members: Sequence[str], array: str, *, quick: bool = False, steady: bool = False) -> tuple[Step, ...]:
    if not members:
        raise PlanError("the weakest-link run needs at least one member device")
    runtime = _quick_runtime(len(members) + 2) if quick else WEAKEST_LINK_RUNTIME_S
    runtime, criterion = _steady_runtime(RwMode.READ, runtime, random=False, steady=steady and not quick)

    def spec(target: str, name: str) -> JobSpec:
        return JobSpec(
            name=name,
            target=target,
            rw=RwMode.READ,
            block_size_bytes=WEAKEST_LINK_BLOCK,
            iodepth=WEAKEST_LINK_IODEPTH,
            numjobs=WEAKEST_LINK_NUMJOBS,
            ioengine=IoEngine.LIBAIO,
            runtime_s=runtime,
            steady=criterion,
        )

    steps = [Step(f"{_slug(m)} alone", (spec(m, f"alone-{_slug(m)}"),)) for m in members]
    steps.append(Step("all members at once", tuple(spec(m, f"together-{_slug(m)}") for m in members)))
    steps.append(Step(f"array {_slug(array)}", (spec(array, f"array-{_slug(array)}"),)))
    return tuple(steps)


# --- disk-mark matrix ------------------------------------------------------------------------------

DISK_MARK_DOC = (
    "How do RAID levels compare on the CrystalDiskMark matrix? Four SAS3 SSDs measured this way showed "
    "random 4K writes at Q32T8 of 169K IOPS on one disk, 613K on RAID0 but 58K on RAID5 (the small-write "
    "penalty), and Q1T1 random reads falling from 17.3K IOPS raw to 7-9K through md. The matrix: SEQ1MQ8T8, "
    "SEQ1MQ8T1 (1 MiB sequential, queue depth 8, 8 or 1 jobs), RND4KQ32T8, RND4KQ32T1, RND4KQ1T1 (4 KiB "
    "random), each read then write, libaio, direct I/O, 20 s each. Overwrites the target."
)
DISK_MARK_RUNTIME_S = 20
# (label, block size, sequential, queue depth, jobs)
DISK_MARK_TESTS: tuple[tuple[str, int, bool, int, int], ...] = (
    ("SEQ1MQ8T8", MIB, True, 8, 8),
    ("SEQ1MQ8T1", MIB, True, 8, 1),
    ("RND4KQ32T8", 4 * KIB, False, 32, 8),
    ("RND4KQ32T1", 4 * KIB, False, 32, 1),
    ("RND4KQ1T1", 4 * KIB, False, 1, 1),
)


def disk_mark(target: str, *, quick: bool = False, steady: bool = False) -> tuple[Step, ...]:
    fixed = _quick_runtime(2 * len(DISK_MARK_TESTS)) if quick else DISK_MARK_RUNTIME_S
    steps = []
    for label, block, sequential, depth, jobs in DISK_MARK_TESTS:
        for writing in (False, True):
            if sequential:
                rw = RwMode.WRITE if writing else RwMode.READ
            else:
                rw = RwMode.RANDWRITE if writing else RwMode.RANDREAD
            direction = "write" if writing else "read"
            spec = _libaio_spec(f"{label}-{direction}", target, rw, block, depth, jobs, fixed, steady and not quick)
            steps.append(Step(f"{label} {direction}", (spec,)))
    return tuple(steps)


def _libaio_spec(
    name: str, target: str, rw: RwMode, block: int, depth: int, jobs: int, fixed_s: int, steady: bool
) -> JobSpec:
    """One direct libaio job of a matrix preset, steady by its direction's criterion unless ``steady`` is off."""
    random = rw in (RwMode.RANDREAD, RwMode.RANDWRITE)
    runtime, criterion = _steady_runtime(rw, fixed_s, random=random, steady=steady)
    return JobSpec(
        name=name,
        target=target,
        rw=rw,
        block_size_bytes=block,
        iodepth=depth,
        numjobs=jobs,
        ioengine=IoEngine.LIBAIO,
        runtime_s=runtime,
        steady=criterion,
    )


# --- member matrix ---------------------------------------------------------------------------------

MEMBER_MATRIX_DOC = (
    "What can one member do alone? The figures every prediction of an array starts from (mdtui predict, "
    "create --dry-run): sequential 1 MiB read and write at a saturating depth (8 jobs × queue depth 8, "
    "SEQ1MQ8T8), random 4 KiB read and write at Q32 (8 jobs × queue depth 32, RND4KQ32T8) and 4 KiB random "
    "reads and writes at queue depth 1 (RND4KQ1T1) for the latency md adds to (and what a bitmap or a parity "
    "write waits for). libaio, direct I/O, 20 s each or until steady. Run it on each disk before it joins an "
    "array. Overwrites the target."
)
MEMBER_MATRIX_RUNTIME_S = 20
# (step label, rw, block size, queue depth, jobs): the label is how the stored runs are read back.
MEMBER_MATRIX_TESTS: tuple[tuple[str, RwMode, int, int, int], ...] = (
    ("sequential read SEQ1MQ8T8", RwMode.READ, MIB, 8, 8),
    ("sequential write SEQ1MQ8T8", RwMode.WRITE, MIB, 8, 8),
    ("random read RND4KQ32T8", RwMode.RANDREAD, 4 * KIB, 32, 8),
    ("random write RND4KQ32T8", RwMode.RANDWRITE, 4 * KIB, 32, 8),
    ("Q1 read latency RND4KQ1T1", RwMode.RANDREAD, 4 * KIB, 1, 1),
    ("Q1 write latency RND4KQ1T1", RwMode.RANDWRITE, 4 * KIB, 1, 1),
)


def member_matrix(target: str, *, quick: bool = False, steady: bool = False) -> tuple[Step, ...]:
    fixed = _quick_runtime(len(MEMBER_MATRIX_TESTS)) if quick else MEMBER_MATRIX_RUNTIME_S
    steps = []
    for label, rw, block, depth, jobs in MEMBER_MATRIX_TESTS:
        name = f"member-{label.rsplit(' ', 1)[-1]}-{rw.value}"
        steps.append(Step(label, (_libaio_spec(name, target, rw, block, depth, jobs, fixed, steady and not quick),)))
    return tuple(steps)


# --- sync random ------------------------------------------------------------------------------------

SYNC_RANDOM_DOC = (
    "Is the CPU governor costing throughput? A RAID10 of four SATA SSDs read/wrote 780/754 MB/s under the "
    "ondemand governor, 669/605 MB/s under intel_pstate powersave and 780/750 MB/s under performance, with "
    "a wider spread under powersave. Single-threaded synchronous I/O shows it best: ioengine=sync, "
    "iodepth 1, one job, randread then randwrite of 500 MiB at 512 KiB and at 1 MiB blocks. Run it once "
    "per governor for an A/B comparison. Overwrites the target."
)
SYNC_RANDOM_SIZE = 500 * MIB
SYNC_RANDOM_QUICK_SIZE = 128 * MIB
SYNC_RANDOM_BLOCKS: tuple[int, ...] = (512 * KIB, MIB)


def sync_random(target: str, *, quick: bool = False) -> tuple[Step, ...]:
    size = SYNC_RANDOM_QUICK_SIZE if quick else SYNC_RANDOM_SIZE
    steps = []
    for block in SYNC_RANDOM_BLOCKS:
        for rw in (RwMode.RANDREAD, RwMode.RANDWRITE):
            spec = JobSpec(
                name=f"sync-{rw.value}-{size_arg(block)}",
                target=target,
                rw=rw,
                block_size_bytes=block,
                iodepth=1,
                numjobs=1,
                ioengine=IoEngine.SYNC,
                size_bytes=size,
            )
            steps.append(Step(f"{rw.value} {size_arg(block)}", (spec,)))
    return tuple(steps)


# --- parity cost -----------------------------------------------------------------------------------

PARITY_COST_DOC = (
    "What does parity cost the CPU? A raid6 volume pushed ~400 MB/s of 64 KiB sequential writes (libaio, "
    "iodepth 4) with its md127_raid6 kernel thread at just under 10% of a core with AVX, ~250 MB/s at ~20% "
    "without; reads of a clean array cost md almost nothing. This preset writes then reads 64 KiB "
    "sequentially for 30 s each; the md thread's CPU is sampled before and after each step. Overwrites "
    "the target."
)
PARITY_COST_BLOCK = 64 * KIB
PARITY_COST_IODEPTH = 4
PARITY_COST_RUNTIME_S = 30


def parity_cost(target: str, *, quick: bool = False, steady: bool = False) -> tuple[Step, ...]:
    fixed = _quick_runtime(2) if quick else PARITY_COST_RUNTIME_S
    steps = []
    for rw in (RwMode.WRITE, RwMode.READ):
        runtime, criterion = _steady_runtime(rw, fixed, random=False, steady=steady and not quick)
        spec = JobSpec(
            name=f"parity-{rw.value}",
            target=target,
            rw=rw,
            block_size_bytes=PARITY_COST_BLOCK,
            iodepth=PARITY_COST_IODEPTH,
            numjobs=1,
            ioengine=IoEngine.LIBAIO,
            runtime_s=runtime,
            steady=criterion,
        )
        steps.append(Step(f"64k sequential {rw.value}", (spec,), measure_md_cpu=True))
    return tuple(steps)


# --- offset sweep ----------------------------------------------------------------------------------

OFFSET_SWEEP_DOC = (
    "Does throughput hold across the array, and with several readers? Three 4 TB HDDs read with "
    "`dd iflag=direct bs=16M count=1024` at 0/25/50/75/100% of the array, one reader at a time and all "
    "five at once, showed chunk size barely matters for RAID0 but decides RAID5 (2 MiB chunk best for one "
    "reader, larger always better for concurrent readers), and HDDs falling to ~0.47 at the end of the "
    "disk. This preset repeats those reads; the 100% point reads the last window before the end of the "
    "device. Read-only."
)
OFFSET_SWEEP_BLOCK = 16 * MIB
OFFSET_SWEEP_COUNT = 1024
OFFSET_SWEEP_QUICK_COUNT = 64
OFFSET_SWEEP_POINTS: tuple[int, ...] = (0, 25, 50, 75, 100)


def offset_sweep(target: str, size_bytes: int, *, quick: bool = False, count: int | None = None) -> tuple[Step, ...]:
    total_blocks = size_bytes // OFFSET_SWEEP_BLOCK
    if total_blocks < 1:
        raise PlanError(f"{target} is smaller than one {OFFSET_SWEEP_BLOCK // MIB} MiB block")
    wanted = count or (OFFSET_SWEEP_QUICK_COUNT if quick else OFFSET_SWEEP_COUNT)
    # A small device gets shorter reads rather than windows that overlap the next offset point.
    blocks = max(1, min(wanted, total_blocks // len(OFFSET_SWEEP_POINTS)))
    last_start = total_blocks - blocks

    def spec(percent: int, role: str) -> JobSpec:
        skip = min(math.floor(total_blocks * percent / 100), last_start)
        return JobSpec(
            name=f"{role}-s{percent}",
            target=target,
            tool=Tool.DD,
            rw=RwMode.READ,
            block_size_bytes=OFFSET_SWEEP_BLOCK,
            size_bytes=blocks * OFFSET_SWEEP_BLOCK,
            offset_bytes=skip * OFFSET_SWEEP_BLOCK,
        )

    steps = [Step(f"one reader at {p}%", (spec(p, "single"),)) for p in OFFSET_SWEEP_POINTS]
    steps.append(Step("all readers at once", tuple(spec(p, "concurrent") for p in OFFSET_SWEEP_POINTS)))
    return tuple(steps)


# --- custom ----------------------------------------------------------------------------------------

# The custom doc's last sentence: a screen that knows the chosen pattern says what this run does instead.
CUSTOM_WRITE_NOTE = "Overwrites the target when the pattern writes."
CUSTOM_DOC = (
    "Any single fio job: read/write pattern, block size, queue depth, job count, runtime or size, engine "
    "(libaio, io_uring, sync), direct I/O, target and offset. Quick mode caps it at 10 s or 1 GiB. " + CUSTOM_WRITE_NOTE
)
CUSTOM_QUICK_RUNTIME_S = 10
CUSTOM_QUICK_SIZE = GIB


def custom(
    target: str,
    *,
    rw: RwMode = RwMode.READ,
    block_size_bytes: int = 4 * KIB,
    iodepth: int = 1,
    numjobs: int = 1,
    runtime_s: int | None = None,
    size_bytes: int | None = None,
    ioengine: IoEngine = IoEngine.LIBAIO,
    direct: bool = True,
    offset_bytes: int = 0,
    quick: bool = False,
    name: str = "custom",
) -> tuple[Step, ...]:
    if quick and runtime_s is not None:
        runtime_s = min(runtime_s, CUSTOM_QUICK_RUNTIME_S)
    if quick and size_bytes is not None:
        size_bytes = min(size_bytes, CUSTOM_QUICK_SIZE)
    spec = JobSpec(
        name=name,
        target=target,
        rw=rw,
        block_size_bytes=block_size_bytes,
        iodepth=iodepth,
        numjobs=numjobs,
        ioengine=ioengine,
        direct=direct,
        runtime_s=runtime_s,
        size_bytes=size_bytes,
        offset_bytes=offset_bytes,
    )
    return (Step(name, (spec,)),)


def _offset_sweep(target: PresetTarget) -> tuple[Step, ...]:
    if not target.size_bytes:
        raise PlanError(f"the size of {target.path} is unknown, so the offsets cannot be placed")
    return offset_sweep(target.path, target.size_bytes, quick=target.quick)


# The one registry of presets: every planner (mdtui bench, the app's bench screen, the fleet, experiments)
# picks a preset here and builds its steps with Preset.steps; what each needs of its target is said once.
PRESETS: tuple[Preset, ...] = (
    Preset(
        "weakest-link",
        "Find the weakest link",
        WEAKEST_LINK_DOC,
        False,
        lambda t: weakest_link(t.members, t.path, quick=t.quick, steady=t.steady),
        needs_members=True,
    ),
    Preset(
        "disk-mark",
        "Disk-mark matrix",
        DISK_MARK_DOC,
        True,
        lambda t: disk_mark(t.path, quick=t.quick, steady=t.steady),
    ),
    Preset(
        "member-matrix",
        "One member alone, for predictions",
        MEMBER_MATRIX_DOC,
        True,
        lambda t: member_matrix(t.path, quick=t.quick, steady=t.steady),
        refuses_array="member-matrix measures one disk alone, before it joins an array: give a member disk, not an "
        "md array (its figures would be the array's)",
        local_only="its figures feed this host's predictions of arrays made of its own disks",
    ),
    Preset(
        "sync-random",
        "Synchronous random I/O (governor A/B)",
        SYNC_RANDOM_DOC,
        True,
        lambda t: sync_random(t.path, quick=t.quick),
    ),
    Preset(
        "parity-cost",
        "Parity CPU cost",
        PARITY_COST_DOC,
        True,
        lambda t: parity_cost(t.path, quick=t.quick, steady=t.steady),
        needs_array="parity-cost measures an md array's kernel thread and check pass: give an array as the target",
        local_only="it reads the md kernel thread's CPU and runs a check pass through the host's sysfs",
    ),
    Preset(
        "offset-sweep",
        "Offset and concurrency sweep",
        OFFSET_SWEEP_DOC,
        False,
        _offset_sweep,
        local_only="its steps are dd reads, which fio's server cannot run",
    ),
    Preset(
        "custom",
        "Custom fio job",
        CUSTOM_DOC,
        True,
        lambda t: custom(t.path, quick=t.quick, **t.job),
        overridable=False,
    ),
)


def preset(key: str) -> Preset:
    for candidate in PRESETS:
        if candidate.key == key:
            return candidate
    known = ", ".join(p.key for p in PRESETS)
    raise PlanError(f"unknown preset {key!r}; known presets: {known}")
