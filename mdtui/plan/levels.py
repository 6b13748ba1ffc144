"""RAID levels as small objects that know their geometry, capacity and fault tolerance (what each does for a
workload, small writes included, is the md model's: plan/md_model.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

# mdadm spells the raid5 layouts this way; the short aliases are accepted on input and normalised.
RAID5_LAYOUTS: tuple[str, ...] = (
    "left-asymmetric",
    "right-asymmetric",
    "left-symmetric",
    "right-symmetric",
    "parity-first",
    "parity-last",
    "ddf-zero-restart",
    "ddf-N-restart",
    "ddf-N-continue",
)
# The "-6" layouts keep the raid5 arrangement on the first N-1 members and put Q on the last one
# (the intermediate stage of a raid5 → raid6 conversion, mdadm(8) --layout).
RAID6_LAYOUTS: tuple[str, ...] = (
    *RAID5_LAYOUTS,
    "left-asymmetric-6",
    "right-asymmetric-6",
    "left-symmetric-6",
    "right-symmetric-6",
    "parity-first-6",
)
LAYOUT_ALIASES: dict[str, str] = {
    "la": "left-asymmetric",
    "ra": "right-asymmetric",
    "ls": "left-symmetric",
    "rs": "right-symmetric",
}
_RAID10_LAYOUT = re.compile(r"^([nfo])([23])$")
# mdadm --detail and sysfs spell a raid10 layout "near=2", "far=2", "offset=2"; --layout takes "n2", "f2", "o2".
_DETAIL_RAID10_LAYOUT = re.compile(r"^(near|far|offset)=(\d+)$")


@dataclass(frozen=True)
class RaidLevel:
    """One md personality. Subclasses override what differs; instances are module singletons."""

    name: str  # as /proc/mdstat and sysfs name it: "raid5", "linear"
    mdadm_level: str  # value of mdadm --level=
    min_members: int
    uses_chunk: bool  # a chunk (stripe unit) is part of the geometry
    default_layout: str | None = None

    @property
    def redundant(self) -> bool:
        """The level survives at least one member failure (and so has a resync and a bitmap)."""
        return self.fault_tolerance(self.min_members) > 0

    @property
    def parity(self) -> bool:
        return False

    @property
    def parity_disks(self) -> int:
        """Members' worth of each stripe that holds parity (raid4/5: 1, raid6: 2; mirrors and stripes: 0)."""
        return 0

    def degraded_reads_text(self) -> str:
        """What a benchmark's reads measure on this level with a member missing."""
        if self.parity:
            return "reads of the missing member's blocks are rebuilt from every other member and parity"
        return "reads come from the copies left, on fewer disks"

    def layouts(self, members: int) -> tuple[str, ...]:
        """Layouts mdtui offers for this many members; empty when the level has no layout choice."""
        return ()

    def normalise_layout(self, layout: str | None) -> str | None:
        """The canonical spelling of a layout (mdadm's --layout, as an existing array's "far=2" reads "f2"), or
        None when none was given."""
        if layout is None:
            return None
        if match := _DETAIL_RAID10_LAYOUT.match(layout):
            return match.group(1)[0] + match.group(2)
        return LAYOUT_ALIASES.get(layout, layout)

    def effective_layout(self, layout: str | None) -> str | None:
        return self.normalise_layout(layout) or self.default_layout

    def copies(self, members: int, layout: str | None = None) -> int:
        """How many copies of each block the level stores (1 for striping and parity levels)."""
        return 1

    def data_disks(self, members: int, layout: str | None = None) -> Fraction:
        """Members' worth of capacity that holds data; a fraction for raid10 with an odd split."""
        return Fraction(members)

    def usable_bytes(
        self, member_bytes: Sequence[int], layout: str | None = None, chunk_bytes: int | None = None
    ) -> int:
        """Array capacity from each member's data area (after metadata).

        Striped levels round each member's share down to a whole chunk, as md does.
        """
        share = _round_down(min(member_bytes), chunk_bytes if self.uses_chunk else None)
        return int(share * self.data_disks(len(member_bytes), layout))

    def uses_smallest_member(self) -> bool:
        """Every member contributes only as much as the smallest one (space beyond it is unused)."""
        return True

    def fault_tolerance(self, members: int, layout: str | None = None) -> int:
        """Members that may fail, in any combination, without losing data."""
        return 0

    def fault_tolerance_text(self, members: int, layout: str | None = None) -> str:
        return "no member may fail: losing any one loses the whole array"


def _round_down(value: int, step: int | None) -> int:
    if not step:
        return value
    return value - value % step


@dataclass(frozen=True)
class Linear(RaidLevel):
    def usable_bytes(
        self, member_bytes: Sequence[int], layout: str | None = None, chunk_bytes: int | None = None
    ) -> int:
        return sum(member_bytes)

    def uses_smallest_member(self) -> bool:
        return False

    def data_disks(self, members: int, layout: str | None = None) -> Fraction:
        # Capacity-wise every member holds data, but a stream sees one member at a time.
        return Fraction(members)


@dataclass(frozen=True)
class Raid0(RaidLevel):
    def usable_bytes(
        self, member_bytes: Sequence[int], layout: str | None = None, chunk_bytes: int | None = None
    ) -> int:
        # md raid0 builds zones: first a stripe over all members up to the smallest, then a stripe
        # over the remaining larger members, and so on, so every member is used to its end.
        return sum(_round_down(size, chunk_bytes) for size in member_bytes)

    def uses_smallest_member(self) -> bool:
        return False


# mdadm rounds a raid1's component size down to 64 KiB, in case it is ever reshaped to raid5
# (Create.c: "we will need a chunksize. So round it off a bit now just to be safe").
RAID1_ROUNDING_BYTES = 64 * 1024


@dataclass(frozen=True)
class Raid1(RaidLevel):
    def usable_bytes(
        self, member_bytes: Sequence[int], layout: str | None = None, chunk_bytes: int | None = None
    ) -> int:
        return _round_down(min(member_bytes), RAID1_ROUNDING_BYTES)

    def copies(self, members: int, layout: str | None = None) -> int:
        return members

    def data_disks(self, members: int, layout: str | None = None) -> Fraction:
        return Fraction(1)

    def fault_tolerance(self, members: int, layout: str | None = None) -> int:
        return members - 1

    def fault_tolerance_text(self, members: int, layout: str | None = None) -> str:
        lost = members - 1
        return f"any {lost} of {members} members may fail; one surviving member holds all data"


@dataclass(frozen=True)
class Raid4(RaidLevel):
    @property
    def parity(self) -> bool:
        return True

    @property
    def parity_disks(self) -> int:
        return 1

    def layouts(self, members: int) -> tuple[str, ...]:
        # md raid4 keeps parity on the last member; mdadm 4.2 rejects any --layout for raid4
        # ("layout not meaningful for raid4 arrays"), so the layout is implied, never passed.
        return ("parity-last",)

    def data_disks(self, members: int, layout: str | None = None) -> Fraction:
        return Fraction(members - 1)

    def fault_tolerance(self, members: int, layout: str | None = None) -> int:
        return 1

    def fault_tolerance_text(self, members: int, layout: str | None = None) -> str:
        return f"any 1 of {members} members may fail; a second failure before the rebuild ends loses the array"


@dataclass(frozen=True)
class Raid5(Raid4):
    def layouts(self, members: int) -> tuple[str, ...]:
        return RAID5_LAYOUTS


@dataclass(frozen=True)
class Raid6(Raid4):
    @property
    def parity_disks(self) -> int:
        return 2

    def layouts(self, members: int) -> tuple[str, ...]:
        return RAID6_LAYOUTS

    def data_disks(self, members: int, layout: str | None = None) -> Fraction:
        return Fraction(members - self.parity_disks)

    def fault_tolerance(self, members: int, layout: str | None = None) -> int:
        return 2

    def fault_tolerance_text(self, members: int, layout: str | None = None) -> str:
        return f"any 2 of {members} members may fail"


@dataclass(frozen=True)
class Raid10(RaidLevel):
    def layouts(self, members: int) -> tuple[str, ...]:
        found = ["n2", "f2", "o2"]
        if members >= 3:
            found += ["n3", "f3", "o3"]
        return tuple(found)

    def copies(self, members: int, layout: str | None = None) -> int:
        return self._geometry(layout)[1]

    def _geometry(self, layout: str | None) -> tuple[str, int]:
        match = _RAID10_LAYOUT.match(self.effective_layout(layout) or "")
        if match is None:
            raise ValueError(f"not a raid10 layout mdtui offers: {layout!r} (n2, f2, o2, n3, f3, o3)")
        return match.group(1), int(match.group(2))

    def usable_bytes(
        self, member_bytes: Sequence[int], layout: str | None = None, chunk_bytes: int | None = None
    ) -> int:
        """md's raid10 arithmetic in whole chunks (calc_sectors, then raid10_size).

        Far and offset layouts keep a whole number of chunks per copy on each member, so an odd
        chunk count loses one chunk; near copies over an odd member count round down to a chunk.
        """
        if not chunk_bytes:
            return super().usable_bytes(member_bytes, layout, chunk_bytes)
        kind, copies = self._geometry(layout)
        near, far = (copies, 1) if kind == "n" else (1, copies)
        disks = len(member_bytes)
        chunks = min(member_bytes) // chunk_bytes  # per member
        in_array = chunks // far * disks // near
        per_member = -(-in_array * copies // disks)  # calc_sectors rounds the used chunks up
        return per_member // far * disks // near * chunk_bytes

    def data_disks(self, members: int, layout: str | None = None) -> Fraction:
        # md allows an odd member count (n2 over 3 members): capacity is members / copies.
        return Fraction(members, self.copies(members, layout))

    def fault_tolerance(self, members: int, layout: str | None = None) -> int:
        return self.copies(members, layout) - 1

    def fault_tolerance_text(self, members: int, layout: str | None = None) -> str:
        copies = self.copies(members, layout)
        guaranteed = copies - 1
        return (
            f"{guaranteed} member{'s' if guaranteed > 1 else ''} guaranteed ({copies} copies of each block); "
            f"more survive if lucky: up to {guaranteed} per mirror set, as long as no block loses all copies"
        )


LINEAR = Linear("linear", "linear", min_members=2, uses_chunk=False)
RAID0 = Raid0("raid0", "0", min_members=2, uses_chunk=True)
RAID1 = Raid1("raid1", "1", min_members=2, uses_chunk=False)
# mdadm accepts 2 members for raid4/5, but that is a mirror paying parity costs: mdtui asks for 3.
RAID4 = Raid4("raid4", "4", min_members=3, uses_chunk=True, default_layout="parity-last")
RAID5 = Raid5("raid5", "5", min_members=3, uses_chunk=True, default_layout="left-symmetric")
RAID6 = Raid6("raid6", "6", min_members=4, uses_chunk=True, default_layout="left-symmetric")
RAID10 = Raid10("raid10", "10", min_members=2, uses_chunk=True, default_layout="n2")

LEVELS: tuple[RaidLevel, ...] = (LINEAR, RAID0, RAID1, RAID4, RAID5, RAID6, RAID10)


def level_from_name(text: str) -> RaidLevel:
    """The level for "raid5", "5", "linear", ...; raises ValueError for anything else."""
    key = text.strip().lower()
    for level in LEVELS:
        if key in (level.name, level.mdadm_level):
            return level
    names = ", ".join(level.name for level in LEVELS)
    raise ValueError(f"unknown RAID level {text!r}; mdtui offers {names}")


def running_level(level_name: str | None, layout: str | None) -> tuple[RaidLevel | None, str | None]:
    """The level object of a running array (sysfs's "raid5") and its layout in the level's spelling (raid10's
    "near=2" → "n2"); (None, None) for an inactive array or a personality mdtui has no object for."""
    if level_name is None:
        return None, None
    try:
        level = level_from_name(level_name)
    except ValueError:
        return None, None
    return level, level.normalise_layout(layout)
