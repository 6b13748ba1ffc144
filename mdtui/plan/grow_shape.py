"""The shapes `mdadm --grow` reaches from an array's shape: each one's geometry, capacity and fault tolerance, the
level changes md makes in one step and the route that works where it makes none."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from mdtui.format import plural
from mdtui.model.array import MdArray
from mdtui.plan.grow_request import GrowRequest
from mdtui.plan.levels import (
    RAID0,
    RAID1,
    RAID4,
    RAID5,
    RAID6,
    RAID10,
    RaidLevel,
    level_from_name,
    running_level,
)
from mdtui.plan.sync_time import (
    RECOVER,
    RESHAPE,
    RESYNC,
)

SECTOR = 512


KIB = 1024


# mdadm's default chunk when a raid1 of two becomes a raid5 (Grow.c analyse_change: chunk_size = 65536).
RAID1_TO_RAID5_CHUNK_BYTES = 64 * KIB


@dataclass(frozen=True)
class Geometry:
    """An array's shape: level, members (raid_disks), chunk, layout (the level's spelling), each member's data
    area (md's component_size)."""

    level: RaidLevel
    members: int
    chunk_bytes: int | None
    layout: str | None
    component_bytes: int

    @property
    def data_disks(self) -> Fraction:
        return self.level.data_disks(self.members, self.layout)

    @property
    def usable_bytes(self) -> int:
        """md's capacity for this shape: the component over the data members (raid10's own arithmetic)."""
        if self.level is RAID1:
            return self.component_bytes
        if self.level is RAID10:
            return self.level.usable_bytes([self.component_bytes] * self.members, self.layout, self.chunk_bytes)
        component = self.component_bytes
        if self.chunk_bytes:
            component -= component % self.chunk_bytes
        return int(component * self.data_disks)

    @property
    def fault_tolerance(self) -> int:
        return self.level.fault_tolerance(self.members, self.layout)

    def describe(self) -> str:
        parts = [self.level.name, plural(self.members, "member")]
        if self.level.uses_chunk and self.chunk_bytes:
            parts.append(f"{self.chunk_bytes // KIB} KiB chunk")
        if self.layout and self.level is not RAID1:
            parts.append(self.layout)
        return ", ".join(parts)


@dataclass(frozen=True)
class Shape:
    after: Geometry
    restripe: bool  # md rewrites every stripe (a reshape)
    pass_action: str | None
    problems: tuple[str, ...] = ()


def _route(frm: str, to: str) -> str | None:
    """The route that works when md cannot go from one level to another in one step."""
    routes = {
        ("raid1", "raid6"): "raid1 of 2 → raid5 (--level 5), then raid5 → raid6 with one more disk",
        ("raid1", "raid0"): "raid1 of 2 → raid5 (--level 5), then raid5 → raid0 (--level 0)",
        ("raid1", "raid10"): "raid1 of 2 → raid5 (--level 5) → raid0 → raid10, or a new raid10 and a copy",
        ("raid1", "raid4"): "raid1 of 2 → raid5 (--level 5), then raid5 → raid4",
        ("raid6", "raid0"): "raid6 → raid5 (--level 5), then raid5 → raid0 (--level 0)",
        ("raid6", "raid1"): "raid6 → raid5 with one member fewer, ... down to a raid5 of 2, then --level 1",
        ("raid6", "raid10"): "raid6 → raid5 → raid0 (--level 0), then raid0 → raid10 with as many disks again",
        ("raid10", "raid5"): "raid10 → raid0 (--level 0), then raid0 → raid5 with one more disk",
        ("raid10", "raid6"): "raid10 → raid0 (--level 0), then raid0 → raid6 with two more disks",
        ("raid10", "raid4"): "raid10 → raid0 (--level 0), then raid0 → raid4 with one more disk",
        ("raid10", "raid1"): "a new raid1 and a copy: md has no raid10 → raid1 step",
        ("raid0", "raid1"): "raid0 → raid5 with one more disk, ... down to a raid5 of 2, then --level 1",
        ("raid5", "raid10"): "raid5 → raid0 (--level 0), then raid0 → raid10 with as many disks again",
        ("raid4", "raid10"): "raid4 → raid0 (--level 0), then raid0 → raid10 with as many disks again",
    }
    return routes.get((frm, to))


def _raid6_layout_of(raid5_layout: str | None) -> str:
    return f"{raid5_layout or 'left-symmetric'}-6"


def reachable_shape(before: Geometry, req: GrowRequest, spares: int) -> Shape:
    """The geometry md reaches for ``req`` from ``before``, or the problems (each naming a route that works)."""
    frm = before.level
    problems: list[str] = []
    try:
        to = level_from_name(req.level) if req.level is not None else frm
    except ValueError as exc:
        return Shape(before, False, None, (str(exc),))
    added = len(req.add)
    n = before.members
    chunk = before.chunk_bytes
    layout = before.layout
    new_chunk = req.chunk_kib * KIB if req.chunk_kib is not None else chunk
    new_layout = to.normalise_layout(req.layout) if req.layout is not None else None
    size_change = req.size_max or req.size_bytes is not None

    if to.name == "linear" or frm.name == "linear":
        return Shape(
            before,
            False,
            None,
            (
                "md grows a linear array only by `mdadm --grow /dev/mdN --add DISK`, "
                "which mdtui does not plan: nothing else about it can change",
            ),
        )
    if size_change and (
        req.level is not None
        or added
        or req.raid_devices is not None
        or req.chunk_kib is not None
        or req.layout is not None
    ):
        return Shape(
            before,
            False,
            None,
            (
                "--size changes each member's data area and runs alone: grow the size "
                "first, then change the shape (or the other way round)",
            ),
        )
    if req.chunk_kib is not None and not to.uses_chunk:
        problems.append(f"{to.name} has no chunk: --chunk does not apply")
    if new_chunk and req.chunk_kib is not None:
        if new_chunk < 4 * KIB or new_chunk & (new_chunk - 1):
            problems.append(f"--chunk {req.chunk_kib}: md takes a power of two of at least 4 KiB")
        elif before.component_bytes % new_chunk:
            fits = before.component_bytes - before.component_bytes % new_chunk
            problems.append(
                f"a {req.chunk_kib} KiB chunk does not divide each member's data area ({before.component_bytes // KIB} "
                f"KiB): shrink what sits on the array, then `mdtui grow {{array}} --size {fits // KIB}K`, then "
                "change the chunk"
            )
    if new_layout is not None and to.layouts(n) and new_layout not in to.layouts(n):
        problems.append(f"{new_layout!r} is not a {to.name} layout ({', '.join(to.layouts(n))})")

    def members_for(default: int) -> int:
        return req.raid_devices if req.raid_devices is not None else default

    after_members = n
    after_layout = layout
    after_chunk = new_chunk if to.uses_chunk else None
    restripe = False
    action: str | None = None

    if frm is RAID1:
        if to is RAID1:
            after_members = members_for(n + added)
            if new_layout is not None or req.chunk_kib is not None:
                problems.append("a raid1 has no chunk or layout to change")
            if after_members < n:
                problems.append(
                    f"a raid1 drops a mirror only once it is out of the array: `mdtui repair {{array}} --fail MEMBER`, "
                    f"then `--remove MEMBER`, then `mdtui grow {{array}} --raid-devices {after_members}`"
                )
            action = RECOVER if after_members > n else None
        elif to is RAID5:
            if n != 2:
                problems.append(
                    f"md turns only a raid1 of 2 into a raid5 (this one has {n}): drop mirrors first (`mdtui "
                    "repair {array} --fail MEMBER`, `--remove MEMBER`, `mdtui grow {array} --raid-devices 2`)"
                )
            if before.component_bytes % RAID1_TO_RAID5_CHUNK_BYTES:
                problems.append("md needs the raid1's size to be a multiple of 64 KiB to make it a raid5")
            after_chunk = new_chunk if req.chunk_kib is not None else RAID1_TO_RAID5_CHUNK_BYTES
            after_members = members_for(2 + added)
            after_layout = new_layout or RAID5.default_layout
            restripe = after_members > 2 or after_chunk != RAID1_TO_RAID5_CHUNK_BYTES
            action = RESHAPE if restripe else None
        else:
            problems.append(_no_step(frm, to))
    elif frm is RAID10:
        near = (layout or "n2")[:1]
        copies = RAID10.copies(n, layout)
        if near == "f":
            problems.append(
                'md cannot reshape a raid10 with a far layout (mdadm: "Cannot reshape RAID10 in far-mode"): '
                "make a new array and copy the data"
            )
        elif to is RAID0:
            if near != "n" or n % copies:
                problems.append(
                    f"md turns only a near raid10 whose {n} members are a multiple of its copies into a raid0"
                )
            if req.chunk_kib is not None and new_chunk != chunk:
                problems.append("md cannot change the chunk while turning a raid10 into a raid0")
            after_members = members_for(n // copies)
            if after_members != n // copies:
                problems.append(
                    f"a raid10 of {n} with {copies} copies becomes a raid0 of {n // copies}, no other count"
                )
            after_layout = None
        elif to is RAID10:
            after_members = members_for(n + added)
            after_layout = new_layout or layout
            if after_layout and after_layout[:1] == "f":
                problems.append("md cannot reshape a raid10 into a far layout")
            elif after_layout and RAID10.copies(after_members, after_layout) != copies:
                problems.append("md cannot change the number of copies of a raid10")
            restripe = after_members != n or after_layout != layout or after_chunk != chunk
            action = RESHAPE if restripe else None
        else:
            problems.append(_no_step(frm, to))
    elif frm is RAID0:
        if to is RAID0:
            after_members = members_for(n + added)
            if after_members < n:
                problems.append("md cannot take members out of a raid0: make a smaller array and copy the data")
            restripe = after_members != n or after_chunk != chunk
            action = RESHAPE if restripe else None
        elif to is RAID10:
            after_members = members_for(2 * n + (added - n if added > n else 0))
            after_layout = new_layout or "n2"
            copies = RAID10.copies(after_members, after_layout)
            if after_layout[:1] != "n" or after_members != n * copies:
                problems.append(f"md turns a raid0 of {n} into a near raid10 of {n} × copies members (n2: {2 * n})")
            if req.chunk_kib is not None and new_chunk != chunk:
                problems.append("md cannot change the chunk while turning a raid0 into a raid10")
            action = RECOVER
        elif to in (RAID4, RAID5, RAID6):
            parity = to.parity_disks
            after_members = members_for(n + parity)
            after_layout = new_layout or (to.default_layout if to is not RAID4 else "parity-last")
            restripe = after_members != n + parity or after_chunk != chunk or after_layout != "parity-last"
            action = RESHAPE if restripe else RECOVER
        else:
            problems.append(_no_step(frm, to))
    elif frm in (RAID4, RAID5, RAID6):
        if to is frm:
            after_members = members_for(n + added)
            after_layout = new_layout or layout
        elif to is RAID6 and frm in (RAID4, RAID5):
            after_members = members_for(n + 1)
            raid5_layout = "parity-last" if frm is RAID4 else layout
            after_layout = new_layout or (RAID6.default_layout if raid5_layout != "parity-last" else "parity-last")
            if after_layout == _raid6_layout_of(raid5_layout) and after_members == n + 1:
                # --layout left-symmetric-6: Q goes onto the new member, nothing else moves (a rebuild of Q).
                action = RECOVER
        elif to in (RAID4, RAID5) and frm is RAID6:
            after_members = members_for(n - 1)
            after_layout = "parity-last" if to is RAID4 else (new_layout or (layout or "").removesuffix("-6") or None)
        elif to in (RAID4, RAID5):
            after_members = members_for(n)
            after_layout = "parity-last" if to is RAID4 else (new_layout or layout)
        elif to is RAID0:
            if frm is RAID6:
                problems.append(_no_step(frm, to))
            after_members = members_for(n - 1)
            after_layout = None
            if after_members != n - 1:
                problems.append(f"md turns a {frm.name} of {n} into a raid0 of {n - 1}, no other count")
        elif to is RAID1:
            if frm is RAID6 or n != 2:
                problems.append(
                    f"md turns only a raid5 of 2 into a raid1 (route: {_route(frm.name, 'raid1') or 'none'})"
                )
            after_members, after_layout, after_chunk = 2, None, None
        else:
            problems.append(_no_step(frm, to))
        if after_members < to.min_members and to is not RAID1:
            problems.append(f"a {to.name} needs at least {to.min_members} members, not {after_members}")
        if action is None and to is not RAID1:
            old_data = before.data_disks
            new_data = to.data_disks(after_members, after_layout) if to is not RAID0 else Fraction(after_members)
            restripe = new_data != old_data or not _same_layout(frm, layout, to, after_layout) or after_chunk != chunk
            action = RESHAPE if restripe else None
    else:
        problems.append(f"mdtui does not grow {frm.name} arrays")

    if req.raid_devices is not None and req.raid_devices < 1:
        problems.append("--raid-devices must be at least 1")
    grown = after_members - n
    if grown > 0 and grown > added + spares:
        need = grown - spares
        problems.append(
            f"{to.name} of {after_members} needs {plural(grown, 'more member')}: name "
            f"{plural(need, 'disk')} with --add"
            + (f" ({plural(spares, 'spare')} already in the array)" if spares else "")
        )
    if grown <= 0 and added and not (frm is RAID0 and to is RAID10):
        problems.append(
            f"--add {', '.join(d.name for d in req.add)}: the new shape ({to.name} of {after_members}) has no room "
            "for them; say how many members it gets (--raid-devices)"
        )
    after_component = before.component_bytes
    if size_change:
        action = RESYNC if before.level.redundant else None
    if problems:
        return Shape(before, False, None, tuple(problems))
    after = Geometry(
        to,
        after_members,
        after_chunk if to.uses_chunk else None,
        after_layout if to is not RAID1 and to is not RAID0 else None,
        after_component,
    )
    return Shape(after, restripe, action)


def _same_layout(frm: RaidLevel, layout: str | None, to: RaidLevel, new_layout: str | None) -> bool:
    """Whether the data stays where it is between two parity layouts: md's raid6 "-6" layouts keep a raid5's
    arrangement with Q on the last member, so raid5 L is raid6 L-6 (and raid4 is parity-last, raid0 too)."""

    def as_raid6(level: RaidLevel, name: str | None) -> str | None:
        if level in (RAID4, RAID0):
            name = "parity-last"
        if level is RAID6:
            return name
        return None if name is None else f"{name}-6"

    if frm is to and frm is not RAID4:
        return layout == new_layout
    return as_raid6(frm, layout) == as_raid6(to, new_layout)


def _no_step(frm: RaidLevel, to: RaidLevel) -> str:
    route = _route(frm.name, to.name)
    text = f"md cannot turn a {frm.name} into a {to.name} in one step"
    return f"{text}; the route that works: {route}" if route else text


def current_geometry(array: MdArray) -> Geometry | None:
    level, layout = running_level(array.level, array.layout)
    if level is None or not array.component_bytes:
        return None
    members = array.raid_disks or len([m for m in array.members if not m.spare and not m.faulty])
    return Geometry(level, members, array.chunk_bytes if level.uses_chunk else None, layout, array.component_bytes)
