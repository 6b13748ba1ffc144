"""The create form's state and the choices it may offer: pure functions the create screen draws from."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from mdtui.bench.member_figures import member_sources
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.plan import metadata as md_meta
from mdtui.plan.create import BITMAP_CHOICES, DEFAULT_CHUNK_KIB, MIN_CHUNK_KIB, CreatePlan, CreateRequest, plan_create
from mdtui.plan.levels import LEVELS, LINEAR, RAID0, RAID5, RaidLevel, level_from_name
from mdtui.plan.md_limits import LOCKLESS_BITMAP, kernel_version
from mdtui.plan.rejected import PlanRejected
from mdtui.store.records import RunRecord

# Finding 5 (docs/findings.md) swept chunks up to 8 MiB; one step beyond leaves room for the sweep's largest point.
MAX_CHUNK_KIB = 16 * 1024
CHUNK_CHOICES_KIB: tuple[int, ...] = tuple(
    MIN_CHUNK_KIB << shift for shift in range(64) if MIN_CHUNK_KIB << shift <= MAX_CHUNK_KIB
)
BUILD_LEVELS: tuple[RaidLevel, ...] = (RAID0, LINEAR)
DEFAULT_LEVEL = RAID5
DEFAULT_MARK = " (default)"

_MD_NUMBER = re.compile(r"^md(\d+)$")

MIXED_SIZES_LABEL = "Allow mixed sizes"
# How the plan words the CLI's --allow-mixed-sizes; in the form the checkbox is named instead.
_MIXED_SIZES_WORDS = "allow mixed sizes"
# The kernel module behind a personality where its name differs (raid4, raid5 and raid6 share one).
_PERSONALITY_MODULE = {"raid4": "raid456", "raid5": "raid456", "raid6": "raid456"}

Choice = tuple[str, str]  # (label, value) as a Select takes them
# A bitmap's chunk as offered: mdadm's own choice, a small one (a short resync, a dear first write to a clean chunk)
# up to mdadm's usual 64 MiB (cheap writes, a longer resync).
BITMAP_CHUNK_CHOICES_KIB: tuple[int, ...] = (4, 64, 1024, 16 * 1024, 64 * 1024)
FILE_BITMAP = "file"


@dataclass(frozen=True)
class CreateForm:
    """What the user entered. Values a level cannot use are kept (switching back restores them) but
    left out of the request; ``members`` and ``spares`` hold kernel names."""

    device: str
    level: str = DEFAULT_LEVEL.name
    members: tuple[str, ...] = ()
    spares: tuple[str, ...] = ()
    chunk_kib: int = DEFAULT_CHUNK_KIB
    layout: str | None = None  # None: the level's default
    metadata: str = md_meta.DEFAULT_METADATA
    bitmap: str = "none"  # none, internal, lockless or FILE_BITMAP (the path is bitmap_file)
    bitmap_chunk_kib: int | None = None  # None: mdadm's choice
    bitmap_file: str = ""
    policy: str = "resync"
    journal: str = ""  # the write journal disk's kernel name (policy journal)
    kernel: str | None = None  # the running kernel (the lockless bitmap needs 6.18); set by the screen
    free_disks: tuple[str, ...] = ()  # disks not in use, which a journal may be; set by the screen
    name: str = ""
    assume_clean: bool = False
    build: bool = False
    allow_mixed_sizes: bool = False

    @property
    def raid_level(self) -> RaidLevel:
        try:
            return level_from_name(self.level)
        except ValueError:
            return DEFAULT_LEVEL


@dataclass(frozen=True)
class FormChoices:
    """What each field offers for the current level and member count; a disabled field offers one
    explanatory placeholder."""

    levels: tuple[Choice, ...]
    chunks: tuple[Choice, ...]
    chunk_enabled: bool
    layouts: tuple[Choice, ...]
    layout_enabled: bool
    metadata: tuple[Choice, ...]
    metadata_enabled: bool
    bitmaps: tuple[Choice, ...]
    bitmap_enabled: bool
    bitmap_chunks: tuple[Choice, ...]
    bitmap_chunk_enabled: bool
    bitmap_file_enabled: bool
    policies: tuple[Choice, ...]
    policy_enabled: bool
    journals: tuple[Choice, ...]
    journal_enabled: bool
    name_enabled: bool
    assume_clean_enabled: bool
    build_enabled: bool
    spares_allowed: bool
    mixed_sizes_enabled: bool  # the level sizes every member to the smallest, so very mixed sizes waste space


def next_free_device(inventory: Inventory | None) -> str:
    """The lowest /dev/mdN no array in the inventory uses."""
    used = set()
    for array in inventory.arrays if inventory else ():
        match = _MD_NUMBER.match(array.name)
        if match:
            used.add(int(match.group(1)))
    number = 0
    while number in used:
        number += 1
    return f"/dev/md{number}"


def chunk_label(kib: int) -> str:
    return f"{kib // 1024} MiB" if kib >= 1024 else f"{kib} KiB"


def _marked(label: str, is_default: bool) -> str:
    return label + DEFAULT_MARK if is_default else label


def choices(form: CreateForm) -> FormChoices:
    level = form.raid_level
    members = len(form.members)
    build = form.build and level in BUILD_LEVELS
    levels = tuple((f"{lv.name} (≥{lv.min_members})", lv.name) for lv in LEVELS)

    if level.uses_chunk:
        chunks = tuple((_marked(chunk_label(kib), kib == DEFAULT_CHUNK_KIB), str(kib)) for kib in CHUNK_CHOICES_KIB)
    else:
        chunks = ((f"none: {level.name} has no chunk", ""),)

    offered = level.layouts(members)
    if offered:
        layouts = tuple((_marked(layout, layout == level.default_layout), layout) for layout in offered)
    else:
        layouts = ((f"none: {level.name} has no layout", ""),)

    if build:
        metadata: tuple[Choice, ...] = (("none: --build has no superblock", ""),)
    else:
        metadata = tuple(
            (_marked(version, version == md_meta.DEFAULT_METADATA), version) for version in md_meta.METADATA_VERSIONS
        )

    bitmap_enabled = level.redundant and not build
    if bitmap_enabled:
        kinds = [*BITMAP_CHOICES]
        version = kernel_version(form.kernel)
        if version is not None and version >= LOCKLESS_BITMAP:
            kinds.append("lockless")
        bitmaps = tuple((_marked(choice, choice == "none"), choice) for choice in kinds)
        bitmaps += (("file (the path below)", FILE_BITMAP),)
    else:
        bitmaps = (("none: no redundancy to resync", "none"),)
    bitmap_chunk_enabled = bitmap_enabled and form.bitmap != "none"
    if bitmap_chunk_enabled:
        bitmap_chunks = (("mdadm's choice", ""), *((chunk_label(kib), str(kib)) for kib in BITMAP_CHUNK_CHOICES_KIB))
    else:
        bitmap_chunks = (("none: no bitmap", ""),)
    policies: tuple[Choice, ...] = (("resync (default)", "resync"),)
    if level is RAID5 and not build:
        policies += (("ppl: partial parity log, no bitmap", "ppl"),)
    if level.parity and not build:
        policies += (("journal: a write journal disk", "journal"),)
    journal_enabled = form.policy == "journal" and level.parity and not build
    taken = set(form.members) | set(form.spares)
    journals: tuple[Choice, ...] = (("none: for policy journal", ""),)
    if journal_enabled:
        journals = (("pick the journal disk", ""), *((name, name) for name in form.free_disks if name not in taken))

    return FormChoices(
        levels=levels,
        chunks=chunks,
        chunk_enabled=level.uses_chunk,
        layouts=layouts,
        layout_enabled=len(offered) > 1,
        metadata=metadata,
        metadata_enabled=not build,
        bitmaps=bitmaps,
        bitmap_enabled=bitmap_enabled,
        bitmap_chunks=bitmap_chunks,
        bitmap_chunk_enabled=bitmap_chunk_enabled,
        bitmap_file_enabled=bitmap_enabled and form.bitmap == FILE_BITMAP,
        policies=policies,
        policy_enabled=len(policies) > 1,
        journals=journals,
        journal_enabled=journal_enabled,
        name_enabled=not build and form.metadata != "0.90",
        assume_clean_enabled=level.redundant and not build,
        build_enabled=level in BUILD_LEVELS,
        spares_allowed=level.redundant and not build,
        mixed_sizes_enabled=level.uses_smallest_member(),
    )


def current_layout(form: CreateForm) -> str | None:
    """The layout the form stands for: the chosen one while still offered, else the level's default."""
    level = form.raid_level
    offered = level.layouts(len(form.members))
    if form.layout in offered:
        return form.layout
    return level.default_layout if level.default_layout in offered else (offered[0] if offered else None)


def _pick(disks: Sequence[Disk], names: Sequence[str]) -> tuple[Disk, ...]:
    # Inventory order, not click order: mdadm's role order then matches the disk table.
    wanted = set(names)
    return tuple(disk for disk in disks if disk.name in wanted)


def to_request(form: CreateForm, inventory: Inventory) -> CreateRequest:
    """The request the form stands for, leaving out every value the level or mode cannot use."""
    level = form.raid_level
    offered = choices(form)
    build = form.build and offered.build_enabled
    members = _pick(inventory.disks, form.members)
    spares = _pick(inventory.disks, [n for n in form.spares if n not in form.members]) if offered.spares_allowed else ()
    name = form.name.strip() if offered.name_enabled else ""
    return CreateRequest(
        device=form.device.strip(),
        level=level,
        members=members,
        spares=spares,
        name=name or None,
        chunk_kib=form.chunk_kib if level.uses_chunk else None,
        layout=current_layout(form),
        metadata=None if build else form.metadata,
        bitmap=_bitmap(form, offered),
        bitmap_chunk_kib=form.bitmap_chunk_kib if offered.bitmap_chunk_enabled else None,
        policy=form.policy if form.policy in {v for _, v in offered.policies} else "resync",
        journal=next((d for d in inventory.disks if d.name == form.journal), None) if offered.journal_enabled else None,
        kernel=form.kernel,
        assume_clean=form.assume_clean and offered.assume_clean_enabled,
        build=build,
        allow_mixed_sizes=form.allow_mixed_sizes and offered.mixed_sizes_enabled,
        active_arrays=frozenset(a.name for a in inventory.arrays),
    )


def _bitmap(form: CreateForm, offered: FormChoices) -> str:
    if not offered.bitmap_enabled:
        return "none"
    # A file bitmap is its path (write_safety refuses one that is not absolute and plain).
    return form.bitmap_file.strip() or FILE_BITMAP if form.bitmap == FILE_BITMAP else form.bitmap


@dataclass(frozen=True)
class Preview:
    """A plan, or every problem that stops one."""

    plan: CreatePlan | None
    problems: tuple[str, ...] = ()


def _name_the_control(problem: str) -> str:
    if problem.endswith(_MIXED_SIZES_WORDS):
        return f"{problem[: -len(_MIXED_SIZES_WORDS)]}tick “{MIXED_SIZES_LABEL}”"
    return problem


def preview(form: CreateForm, inventory: Inventory, member_runs: Sequence[RunRecord] = ()) -> Preview:
    """The plan of ``form``, predicting from the members' stored figures in ``member_runs`` (what bounds a
    member without them: its link, or a hard disk's platter)."""
    try:
        request = to_request(form, inventory)
        return Preview(plan_create(request, member_sources(member_runs, request.members)))
    except PlanRejected as exc:
        return Preview(None, tuple(_name_the_control(problem) for problem in exc.problems))


@dataclass(frozen=True)
class DriverCheck:
    """What the md driver means for creating this level: a problem stops the create, a note does not."""

    problem: str | None = None
    note: str | None = None


def check_driver(personalities: tuple[str, ...] | None, form: CreateForm) -> DriverCheck:
    """``personalities`` as /proc/mdstat lists them; None when there is no /proc/mdstat (no md driver)."""
    if personalities is None:
        return DriverCheck(
            problem="No md driver: this host has no /proc/mdstat, so mdadm cannot create an array. "
            "Load it with `modprobe md_mod`; the plan is checked again on every change."
        )
    level = form.raid_level.name
    if level in personalities:
        return DriverCheck()
    module = _PERSONALITY_MODULE.get(level, level)
    return DriverCheck(
        note=f"The md driver has no {level} personality loaded yet: the kernel loads module {module} when the "
        f"array starts; if mdadm then fails, run `modprobe {module}`."
    )


def toggle(names: tuple[str, ...], name: str) -> tuple[str, ...]:
    return tuple(n for n in names if n != name) if name in names else (*names, name)


def set_member(form: CreateForm, name: str) -> CreateForm:
    """Toggle a disk as member (a spare that becomes a member stops being a spare)."""
    return replace(form, members=toggle(form.members, name), spares=tuple(n for n in form.spares if n != name))


def set_spare(form: CreateForm, name: str) -> CreateForm:
    return replace(form, spares=toggle(form.spares, name), members=tuple(n for n in form.members if n != name))
