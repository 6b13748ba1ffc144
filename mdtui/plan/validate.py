"""Checking a create request: every problem that refuses it, and the warnings that do not."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.format import iec_bytes
from mdtui.model.disk import Disk, Transport
from mdtui.plan import metadata as md_meta
from mdtui.plan.levels import LINEAR, RAID0, RAID5, RAID10, RaidLevel, level_from_name
from mdtui.plan.rejected import PlanRejected
from mdtui.plan.request import (
    MAX_WASTE_FRACTION,
    MD_DEVICE,
    MIN_CHUNK_KIB,
    SMALL_PARITY_CHUNK_KIB,
    SUPERBLOCK_NAME,
    WARN_WASTE_FRACTION,
    WIDE_RAID5_MEMBERS,
    CreateRequest,
    member_path,
)
from mdtui.plan.write_safety import SafetyChoice
from mdtui.plan.write_safety import problems as safety_problems


def validate(req: CreateRequest) -> RaidLevel:
    """The request's level, or PlanRejected listing every problem with the request."""
    problems: list[str] = []
    level = _resolve_level(req.level, problems)
    _check_device_and_name(req, problems)
    _check_disks(req, problems)
    if level is not None:
        _check_level_options(req, level, problems)
        _check_sizes_hard(req, level, problems)
    if problems or level is None:
        raise PlanRejected(f"create {req.device}", problems)
    return level


def request_warnings(req: CreateRequest, level: RaidLevel, chunk_kib: int | None, resync: bool) -> list[str]:
    """What the plan shows but does not refuse: mixed sizes, mixed media, unusual options."""
    return _size_warnings(req, level) + _mix_warnings(req) + _option_warnings(req, level, chunk_kib, resync)


def safety_choice(req: CreateRequest) -> SafetyChoice:
    """The request's bitmap and consistency policy as mdtui.plan.write_safety decides them."""
    journal = None if req.journal is None else member_path(req.journal)
    return SafetyChoice(req.bitmap, req.bitmap_chunk_kib, req.policy, journal)


def _resolve_level(level: str | RaidLevel, problems: list[str]) -> RaidLevel | None:
    if isinstance(level, RaidLevel):
        return level
    try:
        return level_from_name(level)
    except ValueError as exc:
        problems.append(str(exc))
        return None


def _check_device_and_name(req: CreateRequest, problems: list[str]) -> None:
    if not MD_DEVICE.match(req.device):
        problems.append(f"array device {req.device!r} is not an md device path; use /dev/mdN or /dev/md/NAME")
    elif req.device.removeprefix("/dev/") in req.active_arrays:
        problems.append(f"{req.device} is already a running array; pick a free device (or stop that array first)")
    if req.name is not None and not SUPERBLOCK_NAME.match(req.name):
        problems.append(f"array name {req.name!r} must be 1–32 characters of letters, digits, '.', '_' or '-'")


def _check_disks(req: CreateRequest, problems: list[str]) -> None:
    disks = (*req.members, *req.spares, *((req.journal,) if req.journal is not None else ()))
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

    problems += safety_problems(level, safety_choice(req), kernel=req.kernel, metadata=req.metadata)

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
                        f"{disk.name} is {iec_bytes(disk.size_bytes)}: metadata 0.90 limits members of "
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
                f"members differ so much in size that {iec_bytes(waste)} ({waste} bytes, "
                f"{waste / sum(known):.0%} of their capacity) would go unused; pick similar disks or "
                "allow mixed sizes"
            )
    if level.uses_smallest_member():
        for spare in req.spares:
            if spare.size_bytes is not None and spare.size_bytes < smallest:
                problems.append(
                    f"spare {spare.name} ({iec_bytes(spare.size_bytes)}) is smaller than the smallest member "
                    f"({iec_bytes(smallest)}); md could not rebuild onto it"
                )


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
                f"members differ in size: the smallest ({small}, {iec_bytes(smallest)}) sets every "
                f"member's share, so {iec_bytes(waste)} ({waste} bytes) of the larger members goes unused"
            ]
    elif level is RAID0 and largest > smallest * (1 + WARN_WASTE_FRACTION):
        return [
            "raid0 uses all of each member through zones: beyond the smallest member's "
            f"{iec_bytes(smallest)} the stripe spans fewer members, so the end of the array is slower"
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


__all__ = ["request_warnings", "validate"]
