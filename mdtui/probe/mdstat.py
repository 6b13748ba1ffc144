"""Parser for /proc/mdstat: one MdArray per array block, never raising on odd input."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

from mdtui.ascii_numbers import U64_MAX, parse_float, parse_int
from mdtui.model.array import ArrayMember, MdArray, SyncStatus

# mdadm's names for the raid4/5/6 "algorithm" numbers (kernel ALGORITHM_* constants);
# raid6 shares 0-5 with raid5 and adds the DDF (8-10) and "-6" (16-20) variants.
ALGORITHM_NAMES: dict[int, str] = {
    0: "left-asymmetric",
    1: "right-asymmetric",
    2: "left-symmetric",
    3: "right-symmetric",
    4: "parity-first",
    5: "parity-last",
    8: "ddf-zero-restart",
    9: "ddf-N-restart",
    10: "ddf-N-continue",
    16: "left-asymmetric-6",
    17: "right-asymmetric-6",
    18: "left-symmetric-6",
    19: "right-symmetric-6",
    20: "parity-first-6",
}

# raid0 multi-zone layouts as mdadm names them; 0 means "not set" and is not a layout.
RAID0_LAYOUT_NAMES: dict[int, str] = {1: "original", 2: "alternate"}

# Bounds for mdstat's numbers; a figure outside them is damage and reads as unknown. Sizes are
# KiB (so twice that in sectors still fits a u64); md allows far fewer devices than MAX_DEVICES.
MAX_KIB = U64_MAX // 2
MAX_DEVICES = 1 << 20
MAX_CHUNK_KIB = 1 << 31
MAX_ALGORITHM = 1 << 31
MAX_FINISH_MIN = 1e12

# Kernel sync words in mdstat -> the words sysfs sync_action uses, so both sources agree.
_SYNC_ACTIONS = {
    "resync": "resync",
    "recovery": "recover",
    "recover": "recover",
    "reshape": "reshape",
    "check": "check",
    "repair": "repair",
}

_MEMBER_FLAGS = {
    "F": "faulty",
    "S": "spare",
    "W": "write_mostly",
    "R": "replacement",
    "J": "journal",
}

_HEADER_RE = re.compile(r"^(?P<name>md[^\s:]*)\s*:\s*(?P<rest>.*)$", re.ASCII)
_MEMBER_RE = re.compile(r"^(?P<name>[^\s\[\]()]+)\[(?P<num>\d+)\](?P<flags>(?:\([A-Z]\))*)$", re.ASCII)
_BLOCKS_RE = re.compile(r"(?:^|\s)(?P<blocks>\d+)\s+blocks\b", re.ASCII)
_SUPER_RE = re.compile(r"\bsuper\s+(?P<meta>\S+)", re.ASCII)
_PARITY_RE = re.compile(
    r"\blevel\s+(?P<level>\d+),\s*(?P<chunk>\d+)[kK]\s+chunk,\s*algorithm\s+(?P<algo>\d+)", re.ASCII
)
# raid0 and raid10 print "64k chunks"/"512K chunks"; linear prints its rounding the same way.
_CHUNKS_RE = re.compile(r"\b(?P<chunk>\d+)[kK]\s+(?:chunks|rounding)\b", re.ASCII)
_COPIES_RE = re.compile(r"\b(?P<count>\d+)\s+(?P<kind>near|far|offset)-copies\b", re.ASCII)
_DISKS_RE = re.compile(r"\[(?P<total>\d+)/(?P<working>\d+)\]\s*\[(?P<map>[U_]*)\]", re.ASCII)
_PROGRESS_RE = re.compile(
    r"\b(?P<action>resync|recovery|recover|reshape|check|repair)\s*=\s*(?P<pct>\d+(?:\.\d+)?)%", re.ASCII
)
_COUNTS_RE = re.compile(r"\((?P<done>\d+)/(?P<total>\d+)\)", re.ASCII)
_FINISH_RE = re.compile(r"\bfinish\s*=\s*(?P<minutes>\d+(?:\.\d+)?)min\b", re.ASCII)
_SPEED_RE = re.compile(r"\bspeed\s*=\s*(?P<speed>\d+)K/sec\b", re.ASCII)
_WAITING_RE = re.compile(
    r"\b(?P<action>resync|recovery|recover|reshape|check|repair)\s*=\s*(?P<state>DELAYED|PENDING|REMOTE)\b", re.ASCII
)
_BITMAP_RE = re.compile(r"^\s*bitmap:", re.ASCII)
_BITMAP_FILE_RE = re.compile(r",\s*file:\s*(?P<path>\S+)", re.ASCII)


def algorithm_name(number: int) -> str:
    """mdadm's name for a raid4/5/6 algorithm number; unknown numbers stay as digits."""
    return ALGORITHM_NAMES.get(number, str(number))


def raid10_layout_name(near: int, far: int, offset: bool) -> str:
    """Name a raid10 geometry as mdadm --detail does: "near=2", "far=2", "offset=2", or both."""
    parts = []
    if near > 1:
        parts.append(f"near={near}")
    if far > 1:
        parts.append(f"{'offset' if offset else 'far'}={far}")
    # A one-copy raid10 has no redundancy; naming it near=1 keeps it a valid --layout value.
    return ", ".join(parts) if parts else "near=1"


# "[" is excluded inside the name so that a failed match stops at the next "[": linear on "[[[[...",
# where a name pattern that may contain "[" rescans the rest of the line from every bracket.
# doctor names the loaded personalities (mdtui.probe.host).
_PERSONALITY = re.compile(r"\[([^\[\]\s]+)\]")


def parse_personalities(text: str) -> tuple[str, ...]:
    """The personalities the kernel has loaded, e.g. ("raid1", "raid6")."""
    for line in text.splitlines():
        if line.startswith("Personalities"):
            return tuple(_PERSONALITY.findall(line))
    return ()


@dataclass
class _Block:
    """Mutable accumulator for one array while its lines are read."""

    name: str
    state: str = "active"
    level: str | None = None
    members: list[ArrayMember] = field(default_factory=list)
    raid_disks: int | None = None
    working: int | None = None
    status_map: str | None = None
    blocks: int | None = None
    seen_blocks_line: bool = False
    chunk_bytes: int | None = None
    layout: str | None = None
    metadata: str | None = None
    bitmap: str | None = None
    sync: SyncStatus | None = None

    @property
    def active(self) -> bool:
        return self.state != "inactive"

    def build(self) -> MdArray:
        degraded = 0
        if self.active:
            # "[4/3]" is the kernel's own count (raid_disks, raid_disks - mddev->degraded); the "[UU__]" map
            # shows which slots are in sync, which during a reshape or a level takeover is not the same.
            if self.raid_disks is not None and self.working is not None:
                degraded = max(self.raid_disks - self.working, 0)
            elif self.status_map is not None:
                degraded = self.status_map.count("_")
        metadata = self.metadata
        if metadata is None and self.seen_blocks_line:
            # The kernel prints no "super" word for exactly one case: persistent 0.90 metadata.
            metadata = "0.90"
        raid_disks = self.raid_disks
        if raid_disks is None and self.active and self.level in ("raid0", "linear"):
            # Striped and linear arrays print no [n/m]; every non-spare member is a raid disk.
            raid_disks = sum(1 for m in self.members if "spare" not in m.states) or None
        bitmap = self.bitmap
        if bitmap is None and self.active and self.seen_blocks_line:
            # An active array with a bitmap always shows a bitmap line, so its absence means none.
            bitmap = "none"
        return MdArray(
            name=self.name,
            state=self.state,
            level=self.level,
            members=tuple(_sorted_members(self._member_states())),
            raid_disks=raid_disks,
            # An inactive array's block count is the sum of its components, not an array size.
            size_bytes=self.blocks * 1024 if self.blocks is not None and self.active else None,
            chunk_bytes=self.chunk_bytes,
            layout=self.layout,
            metadata=metadata,
            bitmap=bitmap,
            degraded=degraded,
            sync=self.sync,
        )

    def _member_states(self) -> list[ArrayMember]:
        """Mark members in_sync only when mdstat proves it: every active member has a U."""
        if not self.active:
            return self.members
        active = [m for m in self.members if not {"faulty", "spare", "replacement", "journal"} & set(m.states)]
        if self.status_map is not None and self.status_map.count("U") != len(active):
            return self.members
        result = []
        for member in self.members:
            if member in active and "in_sync" not in member.states:
                member = ArrayMember(member.name, member.slot, ("in_sync", *member.states))
            result.append(member)
        return result


def _sorted_members(members: list[ArrayMember]) -> list[ArrayMember]:
    return sorted(members, key=lambda m: (m.slot is None, m.slot if m.slot is not None else 0, m.name))


def _parse_member(token: str) -> ArrayMember | None:
    match = _MEMBER_RE.match(token)
    if match is None:
        return None
    flags = re.findall(r"\(([A-Z])\)", match["flags"])
    states = tuple(_MEMBER_FLAGS[f] for f in flags if f in _MEMBER_FLAGS)
    # mdstat shows the descriptor number, which often but not always equals the role (a
    # replaced or re-added disk gets a new number); sysfs "slot" gives the true role and
    # overrides it. Spares and failed devices hold no role (mdadm --detail shows "-").
    slot = None if {"spare", "faulty"} & set(states) else parse_int(match["num"], hi=MAX_DEVICES)
    return ArrayMember(name=match["name"], slot=slot, states=states)


def _parse_header(name: str, rest: str) -> _Block:
    block = _Block(name=name)
    tokens = rest.split()
    if tokens and tokens[0] in ("active", "inactive"):
        block.state = tokens.pop(0)
    else:
        block.state = "unknown"
    if (m := _SUPER_RE.search(rest)) is not None:
        # Arrays without disks print their "super" word on the header line itself.
        block.metadata = "none" if m["meta"] == "non-persistent" else m["meta"]
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
        elif token == "super":
            skip_next = True
        elif token == "(read-only)":
            block.state = "read-only"
        elif token == "(auto-read-only)":
            block.state = "auto-read-only"
        elif (member := _parse_member(token)) is not None:
            block.members.append(member)
        elif block.level is None and not block.members and re.fullmatch(r"[a-z][a-z0-9]*", token):
            block.level = token
    if not block.members and "[" in rest:
        # An array whose members are all gone prints its geometry and disk count on the header line itself
        # ("md126 : active raid5 super 1.2 level 5, 64k chunk, algorithm 2 [4/0] [____]"): 4 missing, not 0.
        _parse_detail(block, rest)
    return block


def _parse_detail(block: _Block, line: str) -> None:
    """Fold one continuation line (sizes, geometry, progress, bitmap) into the block."""
    if _BITMAP_RE.match(line):
        file_match = _BITMAP_FILE_RE.search(line)
        block.bitmap = file_match["path"] if file_match else "internal"
        return

    # Each pattern is tried only when its keyword is on the line: hosts with many arrays have long mdstats.
    if "blocks" in line and (m := _BLOCKS_RE.search(line)) is not None:
        block.blocks = parse_int(m["blocks"], hi=MAX_KIB)
        block.seen_blocks_line = True
    if "super" in line and (m := _SUPER_RE.search(line)) is not None:
        block.seen_blocks_line = True
        meta = m["meta"]
        block.metadata = "none" if meta == "non-persistent" else meta
    if "algorithm" in line and (m := _PARITY_RE.search(line)) is not None:
        block.chunk_bytes = _chunk_bytes(m["chunk"])
        algorithm = parse_int(m["algo"], hi=MAX_ALGORITHM)
        block.layout = algorithm_name(algorithm) if algorithm is not None else None
        if block.level is None and parse_int(m["level"], hi=99) is not None:
            block.level = f"raid{m['level']}"
    elif ("chunks" in line or "rounding" in line) and (m := _CHUNKS_RE.search(line)) is not None:
        block.chunk_bytes = _chunk_bytes(m["chunk"])
    if "-copies" in line:
        copies = {c["kind"]: parse_int(c["count"], hi=255) for c in _COPIES_RE.finditer(line)}
        if copies and None not in copies.values():
            far = copies.get("far", copies.get("offset", 1)) or 1
            block.layout = raid10_layout_name(copies.get("near", 1) or 1, far, "offset" in copies)
    if "[" in line and (m := _DISKS_RE.search(line)) is not None:
        block.raid_disks = parse_int(m["total"], hi=MAX_DEVICES)
        block.working = parse_int(m["working"], hi=MAX_DEVICES)
        block.status_map = m["map"]

    if (sync := parse_progress_line(line)) is not None:
        block.sync = sync


def is_progress_line(line: str) -> bool:
    """Whether an mdstat line is a sync's progress or waiting line (the one line a running sync rewrites)."""
    return "=" in line and (_PROGRESS_RE.search(line) is not None or _WAITING_RE.search(line) is not None)


# The progress line as md_seq_show prints it for a running sync (the line a sampler re-reads every
# tick): bar, action, percentage, (done/total), finish and speed. Such a line reads here with one
# match; any other spelling goes through the patterns one by one, with the same result.
_USUAL_PROGRESS_RE = re.compile(
    r"\s*\[[=>.]*\]\s+(?P<action>resync|recovery|reshape|check|repair) = [0-9]{1,3}\.[0-9]%"
    r" \((?P<done>[0-9]{1,19})/(?P<total>[0-9]{1,19})\)\s+finish=(?P<minutes>[0-9]{1,12}\.[0-9])min"
    r" speed=(?P<speed>[0-9]{1,19})K/sec\s*",
    re.ASCII,
)


def parse_progress_line(line: str) -> SyncStatus | None:
    """The sync an mdstat progress or waiting line describes, as parse_mdstat reads it; None for other lines."""
    if "=" not in line:
        return None
    if (m := _USUAL_PROGRESS_RE.fullmatch(line)) is not None:
        done, total, speed, minutes = int(m["done"]), int(m["total"]), int(m["speed"]), float(m["minutes"])
        if done <= MAX_KIB and total <= MAX_KIB and speed <= MAX_KIB:
            return SyncStatus(
                action=_SYNC_ACTIONS[m["action"]],
                done_sectors=done * 2,
                total_sectors=total * 2,
                speed_bytes_per_s=speed * 1024,
                eta_seconds=minutes * 60.0 if minutes else None,  # at most 1e12 by its 12 digits
            )
    return _progress_by_patterns(line)


def _progress_by_patterns(line: str) -> SyncStatus | None:
    """parse_progress_line for any line, pattern by pattern."""
    if "=" not in line:
        return None
    if (m := _PROGRESS_RE.search(line)) is not None:
        return _parse_progress(m["action"], line)
    if (m := _WAITING_RE.search(line)) is not None:
        return SyncStatus(action=_SYNC_ACTIONS[m["action"]], state=m["state"].lower())
    return None


def _chunk_bytes(kib_text: str) -> int | None:
    kib = parse_int(kib_text, hi=MAX_CHUNK_KIB)
    return kib * 1024 if kib else None


def _parse_progress(action: str, line: str) -> SyncStatus:
    """A running sync; mdstat counts 1 KiB blocks, the model counts 512-byte sectors."""
    done = total = speed = None
    eta = None
    if (m := _COUNTS_RE.search(line)) is not None:
        done_kib, total_kib = parse_int(m["done"], hi=MAX_KIB), parse_int(m["total"], hi=MAX_KIB)
        if done_kib is not None and total_kib is not None:
            done, total = done_kib * 2, total_kib * 2
    if (m := _SPEED_RE.search(line)) is not None and (kib_s := parse_int(m["speed"], hi=MAX_KIB)) is not None:
        speed = kib_s * 1024
    if (m := _FINISH_RE.search(line)) is not None and (minutes := parse_float(m["minutes"], hi=MAX_FINISH_MIN)):
        eta = minutes * 60.0
    return SyncStatus(
        action=_SYNC_ACTIONS[action],
        done_sectors=done,
        total_sectors=total,
        speed_bytes_per_s=speed,
        eta_seconds=eta,
    )


def parse_mdstat(text: str) -> list[MdArray]:
    """Every array block in /proc/mdstat text, in file order.

    Sizes are bytes; sync progress is in 512-byte sectors (mdstat's 1 KiB blocks times two);
    speeds are bytes per second (mdstat's K is 1024). Lines that cannot be understood are
    skipped, so malformed input yields whatever arrays and fields could be read; a number that is not
    plain ASCII digits within its bound leaves its field unknown. Never raises.
    """
    arrays: list[MdArray] = []
    current: _Block | None = None

    def finish() -> None:
        nonlocal current
        if current is not None:
            with contextlib.suppress(ValueError, TypeError, OverflowError):
                arrays.append(current.build())
            current = None

    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if not line[0].isspace():
            header = _HEADER_RE.match(line)
            finish()
            if header is not None:
                try:
                    current = _parse_header(header["name"], header["rest"])
                except (ValueError, OverflowError):
                    current = _Block(name=header["name"], state="unknown")
            # Personalities, "unused devices" and unknown top-level lines end any block.
            continue
        if current is None:
            continue
        try:
            _parse_detail(current, line)
        except (ValueError, KeyError, OverflowError):
            continue
    finish()
    return arrays
