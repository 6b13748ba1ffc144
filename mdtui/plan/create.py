"""Plan an `mdadm --create` (or `--build`): validate the request, build the argv, predict size and speed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from mdtui.model.disk import Disk, Transport
from mdtui.plan import metadata as md_meta
from mdtui.plan.levels import LINEAR, RAID0, RAID4, RAID5, RAID10, RaidLevel, level_from_name
from mdtui.plan.rejected import PlanRejected

# mdadm(8): "The default when creating an array is 512KB." mdtui always passes the chunk explicitly,
# because `--build` would otherwise default to 64 KiB and the plan's numbers would silently differ.
DEFAULT_CHUNK_KIB = 512
MIN_CHUNK_KIB = 4
BITMAP_CHOICES: tuple[str, ...] = ("none", "internal")
# More waste than this (share of the members' raw capacity) is refused unless allowed explicitly:
# half the bought capacity gone is almost always a wrong pick, not a deliberate test.
MAX_WASTE_FRACTION = 0.5
# mdadm itself warns when sizes differ by more than 1%.
WARN_WASTE_FRACTION = 0.01
# A member this much slower than the next one is named as the array's bottleneck.
SLOW_MEMBER_RATIO = 0.9
SMALL_PARITY_CHUNK_KIB = 64
WIDE_RAID5_MEMBERS = 8

_DEVICE = re.compile(r"^/dev/(md\d+|md/[A-Za-z0-9_.-]+)$")
# A 1.x superblock stores at most 32 bytes of name.
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")

GIB = 1024**3


@dataclass(frozen=True)
class CreateRequest:
    """What the user asked for. ``metadata`` None means mdadm's default 1.2 (and must stay None for
    --build, which writes no superblock)."""

    device: str  # "/dev/md0" or "/dev/md/bench"
    level: str | RaidLevel  # "raid5", "5", "linear", or a level object
    members: tuple[Disk, ...]
    spares: tuple[Disk, ...] = ()
    name: str | None = None  # mdadm --name, stored in a 1.x superblock
    chunk_kib: int | None = None  # None: DEFAULT_CHUNK_KIB for levels with a chunk
    layout: str | None = None  # None: the level's default
    metadata: str | None = None  # "1.2", "1.0", "0.90"
    bitmap: str = "none"  # "none" or "internal"; benchmarks want none (finding 4 in docs/findings.md used none)
    bitmap_chunk_kib: int | None = None
    assume_clean: bool = False
    build: bool = False  # superblock-less `mdadm --build`, for raid0/linear test arrays
    allow_mixed_sizes: bool = False  # accept members so different that over half the space is unused
    active_arrays: frozenset[str] = frozenset()  # kernel names of running arrays ("md0"): not to be reused


@dataclass(frozen=True)
class ThroughputPrediction:
    """Large-block throughput expected from the slowest member's speed × how many members serve it.

    Figures assume enough parallel I/O to keep every member busy: finding 1 (docs/findings.md) needed 16 jobs
    (4989 MB/s) to 64 jobs (5872 MB/s) to saturate an md device. None means a member's speed is unknown.
    """

    slowest_members: tuple[str, ...] = ()
    slowest_member_bytes_per_s: int | None = None
    basis: str = "unknown"  # "measured", "link", "measured and link" or "unknown"
    read_factor: float = 0.0
    write_factor: float = 0.0
    seq_read_bytes_per_s: int | None = None
    seq_write_bytes_per_s: int | None = None  # an upper bound for parity levels (full stripes)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreatePlan:
    """A validated request, ready to run: the exact argv and what the array will look like."""

    request: CreateRequest
    level: RaidLevel
    argv: tuple[str, ...]
    member_paths: tuple[str, ...]
    spare_paths: tuple[str, ...]
    chunk_bytes: int | None
    layout: str | None  # effective layout (the default filled in); raid4 is always parity-last
    metadata: str | None  # None for --build
    data_disks: float
    usable_bytes: int | None  # None when a member's size is unknown
    fault_tolerance: int
    fault_tolerance_text: str
    stripe_width_bytes: int | None  # chunk × data disks; None for linear, raid1 and odd raid10
    small_write_reads: int
    small_write_writes: int
    small_write_text: str
    prediction: ThroughputPrediction
    mkfs_ext4_args: tuple[str, ...] | None  # ("-E", "stride=16,stripe_width=64")
    mkfs_xfs_args: tuple[str, ...] | None  # ("-d", "su=64k,sw=4")
    resync_expected: bool
    warnings: tuple[str, ...] = field(default=())

    @property
    def seq_read_bytes_per_s(self) -> int | None:
        return self.prediction.seq_read_bytes_per_s

    @property
    def seq_write_bytes_per_s(self) -> int | None:
        return self.prediction.seq_write_bytes_per_s


def member_path(disk: Disk) -> str:
    """The path put in argv: the by-id link names a stable identity, the kernel name may move."""
    return disk.by_id_path or disk.dev_path


def plan_create(req: CreateRequest, member_speed_bytes_per_s: Mapping[str, int] | None = None) -> CreatePlan:
    """Validate ``req`` and build its plan, or raise PlanRejected listing every problem.

    ``member_speed_bytes_per_s`` holds measured sequential speeds keyed by dev_path; members without
    one are predicted from their link bandwidth.
    """
    problems: list[str] = []
    level = _resolve_level(req.level, problems)
    _check_device_and_name(req, problems)
    _check_disks(req, problems)
    if level is not None:
        _check_level_options(req, level, problems)
        _check_sizes_hard(req, level, problems)
    if problems or level is None:
        raise PlanRejected(f"create {req.device}", problems)

    members = len(req.members)
    layout = level.effective_layout(req.layout)
    chunk_kib = (req.chunk_kib or DEFAULT_CHUNK_KIB) if level.uses_chunk else None
    chunk_bytes = chunk_kib * 1024 if chunk_kib else None
    metadata = None if req.build else (req.metadata or md_meta.DEFAULT_METADATA)
    data_disks = level.data_disks(members, layout)
    stripe_width = _stripe_width_bytes(level, chunk_bytes, data_disks)
    resync = level.redundant and not req.assume_clean and not req.build
    reads, writes = level.small_write_ios(members, layout)
    prediction = _predict(req.members, level, layout, member_speed_bytes_per_s or {})

    warnings: list[str] = []
    warnings += _speed_warnings(req.members, level, layout, member_speed_bytes_per_s or {})
    warnings += _size_warnings(req, level)
    warnings += _mix_warnings(req)
    warnings += _option_warnings(req, level, chunk_kib, resync)

    return CreatePlan(
        request=req,
        level=level,
        argv=_argv(req, level, layout, chunk_kib, metadata),
        member_paths=tuple(member_path(d) for d in req.members),
        spare_paths=tuple(member_path(d) for d in req.spares),
        chunk_bytes=chunk_bytes,
        layout=layout,
        metadata=metadata,
        data_disks=float(data_disks),
        usable_bytes=_usable_bytes(req, level, layout, chunk_kib, metadata),
        fault_tolerance=level.fault_tolerance(members, layout),
        fault_tolerance_text=level.fault_tolerance_text(members, layout),
        stripe_width_bytes=stripe_width,
        small_write_reads=reads,
        small_write_writes=writes,
        small_write_text=level.small_write_text(members, layout),
        prediction=prediction,
        mkfs_ext4_args=_mkfs_ext4(chunk_bytes, stripe_width),
        mkfs_xfs_args=_mkfs_xfs(chunk_bytes, stripe_width, data_disks),
        resync_expected=resync,
        warnings=tuple(warnings),
    )


# --- validation -----------------------------------------------------------------------------------


def _resolve_level(level: str | RaidLevel, problems: list[str]) -> RaidLevel | None:
    if isinstance(level, RaidLevel):
        return level
    try:
        return level_from_name(level)
    except ValueError as exc:
        problems.append(str(exc))
        return None


def _check_device_and_name(req: CreateRequest, problems: list[str]) -> None:
    if not _DEVICE.match(req.device):
        problems.append(f"array device {req.device!r} is not an md device path; use /dev/mdN or /dev/md/NAME")
    elif req.device.removeprefix("/dev/") in req.active_arrays:
        problems.append(f"{req.device} is already a running array; pick a free device (or stop that array first)")
    if req.name is not None and not _NAME.match(req.name):
        problems.append(f"array name {req.name!r} must be 1–32 characters of letters, digits, '.', '_' or '-'")


def _check_disks(req: CreateRequest, problems: list[str]) -> None:
    disks = (*req.members, *req.spares)
    for disk in disks:
        if disk.in_use:
            reasons = "; ".join(str(reason) for reason in disk.in_use)
            problems.append(f"{disk.name} is in use ({reasons}); it cannot join a new array")
        if disk.problems:
            problems.append(
                f"{disk.name} could not be checked ({'; '.join(disk.problems)}); "
                "mdtui only offers disks it could fully inspect"
            )
    _check_duplicates(disks, problems)
    sector_sizes = {d.logical_sector_bytes for d in disks if d.logical_sector_bytes is not None}
    if len(sector_sizes) > 1:
        listing = ", ".join(f"{d.name} {d.logical_sector_bytes} B" for d in disks if d.logical_sector_bytes)
        problems.append(f"members mix logical sector sizes ({listing}); pick disks with one logical sector size")


def _check_duplicates(disks: Sequence[Disk], problems: list[str]) -> None:
    seen: dict[tuple[str, str], Disk] = {}
    reported: set[tuple[str, ...]] = set()
    for disk in disks:
        keys = [("path", disk.dev_path)]
        if disk.serial:
            keys.append(("serial", disk.serial))
        if disk.wwn:
            keys.append(("wwn", disk.wwn))
        for key in keys:
            first = seen.get(key)
            if first is None:
                seen[key] = disk
                continue
            pair = tuple(sorted((first.dev_path, disk.dev_path)))
            if pair in reported:
                break
            reported.add(pair)
            if first.dev_path == disk.dev_path:
                problems.append(f"{disk.name} is listed more than once")
            else:
                problems.append(f"{first.name} and {disk.name} are the same disk ({key[0]} {key[1]}); list it once")
            break


def _check_level_options(req: CreateRequest, level: RaidLevel, problems: list[str]) -> None:
    members = len(req.members)
    if members < level.min_members:
        problems.append(f"{level.name} needs at least {level.min_members} members; {members} given")

    if req.chunk_kib is not None:
        if not level.uses_chunk:
            meaning = (
                "linear concatenates whole members (mdadm would read it as --rounding)"
                if level is LINEAR
                else "every member holds a full copy"
            )
            problems.append(f"{level.name} has no chunk size: {meaning}; leave the chunk unset")
        elif req.chunk_kib < MIN_CHUNK_KIB or req.chunk_kib & (req.chunk_kib - 1):
            problems.append(
                f"chunk {req.chunk_kib} KiB is invalid: it must be a power of two of at least "
                f"{MIN_CHUNK_KIB} KiB (4, 8, 16, … 512, 1024 …)"
            )

    if req.layout is not None:
        offered = level.layouts(members)
        layout = level.normalise_layout(req.layout)
        if not offered:
            problems.append(f"{level.name} takes no layout; leave the layout unset (got {req.layout!r})")
        elif layout not in offered:
            problems.append(
                f"layout {req.layout!r} is not valid for {level.name} with {members} members; "
                f"choose one of {', '.join(offered)}"
            )

    if req.spares and not level.redundant:
        problems.append(f"{level.name} cannot have spares: it has no redundancy to rebuild onto a spare")

    if req.bitmap not in BITMAP_CHOICES:
        problems.append(f"bitmap {req.bitmap!r} is not supported; choose 'none' or 'internal'")
    elif req.bitmap == "internal" and not level.redundant:
        problems.append(f"a write-intent bitmap is invalid on {level.name}: it has no redundancy to resync")
    if req.bitmap_chunk_kib is not None:
        if req.bitmap != "internal":
            problems.append("a bitmap chunk needs bitmap 'internal'")
        elif req.bitmap_chunk_kib < 4 or req.bitmap_chunk_kib & (req.bitmap_chunk_kib - 1):
            problems.append(
                f"bitmap chunk {req.bitmap_chunk_kib} KiB is invalid: it must be a power of two of at least 4 KiB"
            )

    if req.build:
        if level not in (RAID0, LINEAR):
            problems.append(f"--build makes superblock-less test arrays of raid0 or linear only, not {level.name}")
        if req.metadata is not None:
            problems.append("--build writes no superblock: leave metadata unset")
        if req.name is not None:
            problems.append("--build writes no superblock, so the array cannot carry a --name")
        if req.assume_clean:
            problems.append("--assume-clean is meaningless with --build: a built array never resyncs")
        return

    if req.metadata is not None and req.metadata not in md_meta.METADATA_VERSIONS:
        problems.append(
            f"metadata {req.metadata!r} is not supported; choose one of {', '.join(md_meta.METADATA_VERSIONS)}"
        )
    if req.metadata == "0.90":
        devices = members + len(req.spares)
        if devices > md_meta.V090_MAX_DEVICES:
            problems.append(f"metadata 0.90 allows at most {md_meta.V090_MAX_DEVICES} devices; {devices} given")
        if level.redundant:
            for disk in (*req.members, *req.spares):
                if disk.size_bytes is not None and disk.size_bytes > md_meta.V090_MAX_MEMBER_BYTES:
                    problems.append(
                        f"{disk.name} is {_gib(disk.size_bytes)}: metadata 0.90 limits members of "
                        f"{level.name} to 2 TiB; use metadata 1.2"
                    )
        if req.name is not None:
            problems.append("metadata 0.90 cannot store an array --name; use metadata 1.2 or drop the name")


def _check_sizes_hard(req: CreateRequest, level: RaidLevel, problems: list[str]) -> None:
    sizes = [d.size_bytes for d in req.members]
    if not sizes or any(s is None for s in sizes):
        return
    known = [s for s in sizes if s is not None]
    smallest = min(known)
    if level.uses_smallest_member() and not req.allow_mixed_sizes:
        waste = sum(known) - smallest * len(known)
        if waste > MAX_WASTE_FRACTION * sum(known):
            problems.append(
                f"members differ so much in size that {_gib(waste)} ({waste} bytes, "
                f"{waste / sum(known):.0%} of their capacity) would go unused; pick similar disks or "
                "allow mixed sizes"
            )
    if level.uses_smallest_member():
        for spare in req.spares:
            if spare.size_bytes is not None and spare.size_bytes < smallest:
                problems.append(
                    f"spare {spare.name} ({_gib(spare.size_bytes)}) is smaller than the smallest member "
                    f"({_gib(smallest)}); md could not rebuild onto it"
                )


# --- argv -----------------------------------------------------------------------------------------


def _argv(
    req: CreateRequest,
    level: RaidLevel,
    layout: str | None,
    chunk_kib: int | None,
    metadata: str | None,
) -> tuple[str, ...]:
    members = tuple(member_path(d) for d in req.members)
    spares = tuple(member_path(d) for d in req.spares)
    mode = "--build" if req.build else "--create"
    argv = ["mdadm", mode, req.device]
    if not req.build:
        # The tool's own confirmation replaces mdadm's "Continue creating array?" prompt.
        argv.append("--run")
    argv += [f"--level={level.mdadm_level}", f"--raid-devices={len(members)}"]
    if spares:
        argv.append(f"--spare-devices={len(spares)}")
    if chunk_kib is not None:
        argv.append(f"--chunk={chunk_kib}K")
    # mdadm 4.2 refuses --layout for raid4 ("layout not meaningful for raid4 arrays").
    if layout is not None and level is not RAID4:
        argv.append(f"--layout={layout}")
    if metadata is not None:
        argv.append(f"--metadata={metadata}")
    # mdadm adds an internal bitmap by itself on members of 100G or more, so redundant levels always
    # say which they get; raid0/linear get no --bitmap at all (mdadm refuses even --bitmap=none).
    if level.redundant and not req.build:
        argv.append(f"--bitmap={req.bitmap}")
        if req.bitmap_chunk_kib is not None:
            argv.append(f"--bitmap-chunk={req.bitmap_chunk_kib}K")
    if req.assume_clean:
        argv.append("--assume-clean")
    if req.name is not None:
        argv.append(f"--name={req.name}")
    return (*argv, *members, *spares)


# --- figures --------------------------------------------------------------------------------------


def _usable_bytes(
    req: CreateRequest,
    level: RaidLevel,
    layout: str | None,
    chunk_kib: int | None,
    metadata: str | None,
) -> int | None:
    """The array's size in bytes as mdadm 4.2 and md create it (None when a size is unknown).

    mdadm takes the 1.2 data offset from the first device in its argv and, for levels with a
    component size, the smallest data area of all devices, spares included.
    """
    devices = (*req.members, *req.spares)
    sizes = [d.size_bytes for d in devices if d.size_bytes is not None]
    if len(sizes) != len(devices):
        return None
    component = level.uses_smallest_member()
    data = md_meta.member_data_bytes(sizes, metadata, chunk_kib, component=component)
    if component:
        data = [min(data)] * len(req.members)
    return level.usable_bytes(data[: len(req.members)], layout, chunk_kib * 1024 if chunk_kib else None)


def _stripe_width_bytes(level: RaidLevel, chunk_bytes: int | None, data_disks: Fraction) -> int | None:
    # An odd raid10 (n2 over 3 members) has no whole number of data disks: no stripe to align to.
    if chunk_bytes is None or data_disks.denominator != 1 or data_disks < 1:
        return None
    return chunk_bytes * int(data_disks)


def _mkfs_ext4(chunk_bytes: int | None, stripe_width: int | None) -> tuple[str, ...] | None:
    if chunk_bytes is None or stripe_width is None:
        return None
    block = 4096  # ext4's default block size; stride and stripe_width count blocks
    return ("-E", f"stride={chunk_bytes // block},stripe_width={stripe_width // block}")


def _mkfs_xfs(chunk_bytes: int | None, stripe_width: int | None, data_disks: Fraction) -> tuple[str, ...] | None:
    if chunk_bytes is None or stripe_width is None:
        return None
    return ("-d", f"su={chunk_bytes // 1024}k,sw={int(data_disks)}")


def _member_speeds(members: Sequence[Disk], measured: Mapping[str, int]) -> list[tuple[Disk, int | None, str]]:
    speeds: list[tuple[Disk, int | None, str]] = []
    for disk in members:
        if disk.dev_path in measured:
            speeds.append((disk, measured[disk.dev_path], "measured"))
        elif disk.link is not None and disk.link.bandwidth_bytes_per_s is not None:
            speeds.append((disk, disk.link.bandwidth_bytes_per_s, "link"))
        else:
            speeds.append((disk, None, "unknown"))
    return speeds


def _predict(
    members: Sequence[Disk], level: RaidLevel, layout: str | None, measured: Mapping[str, int]
) -> ThroughputPrediction:
    n = len(members)
    read_factor = level.seq_read_factor(n, layout)
    write_factor = level.seq_write_factor(n, layout)
    speeds = _member_speeds(members, measured)
    unknown = [disk.name for disk, speed, _ in speeds if speed is None]
    if unknown:
        return ThroughputPrediction(
            read_factor=float(read_factor),
            write_factor=float(write_factor),
            notes=(
                f"no throughput prediction: the speed of {', '.join(unknown)} is unknown "
                "(no measurement and no link speed); measure each member alone first",
            ),
        )
    known = [(disk, speed, basis) for disk, speed, basis in speeds if speed is not None]
    slowest = min(speed for _, speed, _ in known)
    slow_names = tuple(disk.name for disk, speed, _ in known if speed == slowest)
    bases = {basis for _, _, basis in known}
    basis = "measured and link" if len(bases) > 1 else bases.pop()

    notes = [
        f"read: slowest member × {_factor(read_factor)} = {_mbps(slowest)} × {_factor(read_factor)} "
        f"= {_mbps(int(slowest * read_factor))}; write: × {_factor(write_factor)} = "
        f"{_mbps(int(slowest * write_factor))} (docs/findings.md, finding 1: a stripe runs at slowest member × N, "
        "832 MB/s × 4 = 3328 MB/s predicted, 3322 MB/s measured)"
    ]
    notes += _level_notes(level, n, layout, slowest)
    if basis != "measured":
        notes.append(
            "link bandwidth is only an upper bound the drives may not reach; measure each member "
            "alone (the weakest-link run) for a real prediction"
        )
    notes.append(
        "md needs more parallel I/O than one disk to reach this (docs/findings.md, finding 1: 4989 MB/s with 16 "
        "jobs, 5872 MB/s with 64)"
    )
    return ThroughputPrediction(
        slowest_members=slow_names,
        slowest_member_bytes_per_s=slowest,
        basis=basis,
        read_factor=float(read_factor),
        write_factor=float(write_factor),
        seq_read_bytes_per_s=int(slowest * read_factor),
        seq_write_bytes_per_s=int(slowest * write_factor),
        notes=tuple(notes),
    )


def _level_notes(level: RaidLevel, members: int, layout: str | None, slowest: int) -> list[str]:
    if level.name == "raid1":
        return [
            f"raid1 read × {members} needs parallel readers: one sequential stream reads one member "
            f"({_mbps(slowest)}); every write goes to all members"
        ]
    if level.name == "raid10":
        return [
            f"raid10 read × {members} needs parallel readers (f2 spreads even one stream; n2 and o2 "
            f"do not); writes go to {level.copies(members, layout)} members each"
        ]
    if level is LINEAR:
        return ["linear reads and writes one member at a time: a stream never spans members"]
    if level.parity:
        return [
            "parity write is an upper bound for full-stripe writes; partial-stripe writes read before "
            "they write and parity costs CPU (docs/findings.md, finding 3: raid6 ~400 MB/s of 64k writes; finding 4: "
            "RAID5 wrote 985 MB/s where one disk wrote 1123 MB/s)"
        ]
    return []


def _speed_warnings(
    members: Sequence[Disk], level: RaidLevel, layout: str | None, measured: Mapping[str, int]
) -> list[str]:
    warnings: list[str] = []
    for disk in members:
        finding = disk.link.finding() if disk.link is not None else None
        if finding:
            warnings.append(f"{disk.name}: {finding}")
    speeds = _member_speeds(members, measured)
    if any(speed is None for _, speed, _ in speeds) or len(speeds) < 2:
        return warnings
    slowest = min(speed for _, speed, _ in speeds if speed is not None)
    faster = [speed for _, speed, _ in speeds if speed is not None and speed > slowest]
    if not faster or slowest >= SLOW_MEMBER_RATIO * min(faster):
        return warnings
    next_speed = min(faster)
    slow = [(disk, basis) for disk, speed, basis in speeds if speed == slowest]
    described = ", ".join(_describe_speed(disk, basis, slowest) for disk, basis in slow)
    verb = "limits" if len(slow) == 1 else "limit"
    factor = level.seq_read_factor(len(members), layout)
    f = _factor(factor)
    warnings.append(
        f"{described} {verb} the array to {f} × {_mbps(slowest)} = {_mbps(int(slowest * factor))}; "
        f"the others would allow {f} × {_mbps(next_speed)} = {_mbps(int(next_speed * factor))} "
        "(docs/findings.md, finding 1: a stripe runs at slowest member × N)"
    )
    return warnings


def _describe_speed(disk: Disk, basis: str, speed: int) -> str:
    if basis == "link" and disk.link is not None:
        return f"{disk.name} at {disk.link.describe_current()} ({_mbps(speed)})"
    return f"{disk.name} measured at {_mbps(speed)}"


def _size_warnings(req: CreateRequest, level: RaidLevel) -> list[str]:
    unknown = [d.name for d in req.members if d.size_bytes is None]
    if unknown:
        return [f"size of {', '.join(unknown)} is unknown: the array size cannot be predicted"]
    sizes = [d.size_bytes for d in req.members if d.size_bytes is not None]
    if not sizes:
        return []
    smallest, largest = min(sizes), max(sizes)
    if level.uses_smallest_member():
        waste = sum(sizes) - smallest * len(sizes)
        if waste > WARN_WASTE_FRACTION * sum(sizes):
            small = next(d.name for d in req.members if d.size_bytes == smallest)
            return [
                f"members differ in size: the smallest ({small}, {_gib(smallest)}) sets every "
                f"member's share, so {_gib(waste)} ({waste} bytes) of the larger members goes unused"
            ]
    elif level is RAID0 and largest > smallest * (1 + WARN_WASTE_FRACTION):
        return [
            "raid0 uses all of each member through zones: beyond the smallest member's "
            f"{_gib(smallest)} the stripe spans fewer members, so the end of the array is slower"
        ]
    return []


def _mix_warnings(req: CreateRequest) -> list[str]:
    warnings: list[str] = []
    hdds = [d.name for d in req.members if d.rotational is True]
    ssds = [d.name for d in req.members if d.rotational is False]
    if hdds and ssds:
        warnings.append(
            f"members mix rotational disks ({', '.join(hdds)}) and SSDs ({', '.join(ssds)}): the "
            "array runs at the HDDs' speed and seek latency"
        )
    loops = [d.name for d in req.members if d.transport is Transport.LOOP]
    if loops:
        warnings.append(
            f"{', '.join(loops)} {'is a loop device' if len(loops) == 1 else 'are loop devices'}: "
            "reads over a cached backing file run at page-cache speed (~10 GB/s), so results test "
            "the tool, not disks"
        )
    return warnings


def _option_warnings(req: CreateRequest, level: RaidLevel, chunk_kib: int | None, resync: bool) -> list[str]:
    warnings: list[str] = []
    n = len(req.members)
    if resync:
        warnings.append(
            f"md will resync the new {level.name} right after creation, reading (and for parity "
            "writing) every member; benchmarks during the resync mislead: wait until it ends, or "
            "create with --assume-clean on zeroed members (finding 5 in docs/findings.md used --build or "
            "--assume-clean)"
        )
    if req.assume_clean and level.parity:
        warnings.append(
            "--assume-clean skips computing parity: fine for benchmarks, but a rebuild from unsynced "
            "parity returns garbage; run a repair (sync_action) before trusting data to it"
        )
    elif req.assume_clean and not level.redundant and not req.build:
        warnings.append(f"--assume-clean has no effect on {level.name}: it never resyncs")
    if level.parity and chunk_kib is not None and chunk_kib < SMALL_PARITY_CHUNK_KIB:
        many = f" across {n} members" if n >= 6 else ""
        warnings.append(
            f"{chunk_kib} KiB chunks on {level.name}{many} split every large request into many small "
            "member I/Os (docs/findings.md, finding 5: RAID5 read one stream at 0.20 of raw with 4 KiB chunks vs 0.95 "
            "with 2 MiB)"
        )
    if level is RAID5 and n >= WIDE_RAID5_MEMBERS:
        warnings.append(
            f"raid5 over {n} members: a rebuild reads all {n - 1} survivors and one more failure "
            "during it loses the array; raid6 tolerates two"
        )
    if level is RAID10 and n % level.copies(n, req.layout):
        warnings.append(
            f"{n} members do not divide into {level.copies(n, req.layout)} copies: md staggers the "
            "copies, so there are no fixed mirror sets and no whole-number stripe to align a "
            "filesystem to"
        )
    return warnings


# --- formatting -----------------------------------------------------------------------------------


def _mbps(bytes_per_s: int) -> str:
    # Decimal MB/s, as fio and the findings report them.
    return f"{bytes_per_s / 1e6:.0f} MB/s"


def _gib(size_bytes: int) -> str:
    return f"{size_bytes / GIB:.1f} GiB"


def _factor(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.1f}"
