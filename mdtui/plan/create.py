"""Plan an `mdadm --create` (or `--build`): validate the request, build the argv, predict size and speed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from mdtui.plan import metadata as md_meta
from mdtui.plan.figures import Prediction
from mdtui.plan.forecast import MemberSource, forecast, link_sources, small_write_text
from mdtui.plan.levels import RAID4, RaidLevel
from mdtui.plan.md_limits import small_write_ios
from mdtui.plan.member_verdict import slow_members, slow_members_warning
from mdtui.plan.request import (
    BITMAP_CHOICES,
    DEFAULT_CHUNK_KIB,
    MIN_CHUNK_KIB,
    CreateRequest,
    member_path,
)
from mdtui.plan.validate import request_warnings, safety_choice, validate
from mdtui.plan.write_safety import create_options


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
    # What the array will do: the md model over the members' figures (measured, or what bounds them); the same
    # figures `mdtui predict` gives for these members.
    prediction: Prediction
    sources: tuple[MemberSource, ...]
    mkfs_ext4_args: tuple[str, ...] | None  # ("-E", "stride=16,stripe_width=64")
    mkfs_xfs_args: tuple[str, ...] | None  # ("-d", "su=64k,sw=4")
    resync_expected: bool
    warnings: tuple[str, ...] = field(default=())

    @property
    def confirmation(self) -> str:
        """What the user types (or --yes stands for) to create the array over its members: the device."""
        return self.request.device

    @property
    def seq_read_bytes_per_s(self) -> float | None:
        return self.prediction.seq_read_bytes_per_s.rounded

    @property
    def seq_write_bytes_per_s(self) -> float | None:
        return self.prediction.seq_write_bytes_per_s.rounded

    @property
    def pace_setters(self) -> tuple[str, ...]:
        """The members with the lowest sequential read figure: the ones a stripe runs at."""
        known = [(s.name, s.figures.seq_read_bytes_per_s) for s in self.sources]
        values = [v for _, v in known if v is not None]
        if len(values) != len(known) or not values:
            return ()
        return tuple(name for name, v in known if v == min(values))


def plan_create(req: CreateRequest, sources: Sequence[MemberSource] | None = None) -> CreatePlan:
    """Validate ``req`` and build its plan, or raise PlanRejected listing every problem.

    ``sources``: each member's figures (bench.member_figures.member_sources reads the stored ones); without
    them every member is what bounds it (its link, or a hard disk's platter).
    """
    level = validate(req)

    members = len(req.members)
    layout = level.effective_layout(req.layout)
    chunk_kib = (req.chunk_kib or DEFAULT_CHUNK_KIB) if level.uses_chunk else None
    chunk_bytes = chunk_kib * 1024 if chunk_kib else None
    metadata = None if req.build else (req.metadata or md_meta.DEFAULT_METADATA)
    data_disks = level.data_disks(members, layout)
    stripe_width = _stripe_width_bytes(level, chunk_bytes, data_disks)
    resync = level.redundant and not req.assume_clean and not req.build
    reads, writes = small_write_ios(level, members, layout, 4096, chunk_bytes)
    chosen = tuple(sources) if sources is not None else tuple(link_sources(req.members))
    usable_bytes = _usable_bytes(req, level, layout, chunk_kib, metadata)
    # The prediction with the bitmap and policy asked for: what `mdtui predict` says with the same options.
    safety = safety_choice(req).model(usable_bytes)
    prediction = forecast(level, chosen, layout=layout, chunk_bytes=chunk_bytes, safety=safety)
    assert prediction is not None  # validate() refused a request without members

    warnings = [f"{d.name}: {finding}" for d in req.members if d.link is not None and (finding := d.link.finding())]
    slow = slow_members(level, chosen, layout=layout, chunk_bytes=chunk_bytes)
    if slow is not None:
        warnings.append(slow_members_warning(slow, "the array"))
    warnings += request_warnings(req, level, chunk_kib, resync)

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
        usable_bytes=usable_bytes,
        fault_tolerance=level.fault_tolerance(members, layout),
        fault_tolerance_text=level.fault_tolerance_text(members, layout),
        stripe_width_bytes=stripe_width,
        small_write_reads=reads,
        small_write_writes=writes,
        small_write_text=small_write_text(level, members, layout, chunk_bytes),
        prediction=prediction,
        sources=chosen,
        mkfs_ext4_args=_mkfs_ext4(chunk_bytes, stripe_width),
        mkfs_xfs_args=_mkfs_xfs(chunk_bytes, stripe_width, data_disks),
        resync_expected=resync,
        warnings=tuple(warnings),
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
    if not req.build:
        argv += create_options(safety_choice(req), level)
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


__all__ = [
    "BITMAP_CHOICES",
    "DEFAULT_CHUNK_KIB",
    "MIN_CHUNK_KIB",
    "CreatePlan",
    "CreateRequest",
    "member_path",
    "plan_create",
]
