"""Existing md arrays: /proc/mdstat, refined by each array's /sys/block/<md>/md/ directory."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mdtui.ascii_numbers import MAX_DIGITS, U64_MAX, parse_int
from mdtui.model.array import ArrayMember, MdArray, SyncStatus
from mdtui.model.names import kernel_name_key
from mdtui.probe.kept import KeptFile
from mdtui.probe.mdstat import (
    MAX_DEVICES,
    RAID0_LAYOUT_NAMES,
    algorithm_name,
    is_progress_line,
    parse_mdstat,
    parse_progress_line,
    raid10_layout_name,
)
from mdtui.probe.root import ATTRIBUTE_LIMIT, SystemRoot
from mdtui.probe.safety import bitmap_kind

MDSTAT = "/proc/mdstat"

# sysfs spells two states differently from mdstat; keep the mdstat words so both sources agree.
_ARRAY_STATE_WORDS = {"readonly": "read-only", "read-auto": "auto-read-only"}

# Bounds for sysfs numbers (sectors, bytes); a larger value is damage and reads as unknown.
MAX_SECTORS = U64_MAX // 512
_MAX_CHUNK_BYTES = 1 << 40
_MAX_LAYOUT = (1 << 32) - 1

# mdstat prints "resync" while a repair runs, so the two are the same running sync.
_SAME_SYNC = {"repair": "resync"}

_COMPLETED_RE = re.compile(r"([0-9]+)\s*/\s*([0-9]+)", re.ASCII)  # sync_completed: "done / total" sectors
_ROLE_LINK_RE = re.compile(r"rd[0-9]{1,7}")  # md/rdN links name the member in role N
_STATE_SEPARATORS_RE = re.compile(r"[,\s]+")  # a member's state words


def _system_path(root: SystemRoot, absolute: str) -> str:
    """root.path(absolute) as text: the same file, without building a Path (a full read of a big
    host's arrays follows hundreds of role links)."""
    return os.path.join(os.fspath(root.root), absolute.lstrip("/"))


def md_available(root: SystemRoot) -> bool:
    """Whether the md driver is loaded: without it the kernel has no /proc/mdstat.

    Raises RefusedFileError when /proc/mdstat exists but cannot be read (a FIFO, a device, too large).
    """
    return root.read_table(MDSTAT) is not None


def read_arrays(root: SystemRoot, text: str | None = None) -> list[MdArray]:
    """Every md array the kernel knows, sorted by name; empty when there is no md driver.

    mdstat gives the list; sysfs values replace mdstat's wherever they can be read, because
    sysfs is exact (sectors, roles, numeric layouts) where mdstat is rounded or ambiguous.
    A sysfs value that is not a plain number in range is ignored, as if it were missing; a
    /proc/mdstat that exists but cannot be read raises RefusedFileError (a ParseError) naming it.
    text: /proc/mdstat as the caller already read it (the sampler keeps it open).
    """
    if text is None:
        text = root.read_table(MDSTAT)
    if text is None:
        return []
    return _complete(root, [array for _, found in _parse_entries(text) for array in found])


# The entries of the last mdstat text read in full, with the arrays each holds. A scan and a sampler
# started right after it (advise does both) read the same text: a host of thousands of arrays parses
# each entry once. Replaced as a whole by every full read, so it holds one text's entries at most.
_parsed_entries: dict[str, tuple[MdArray, ...]] = {}


def _parse_entries(text: str) -> list[tuple[str, tuple[MdArray, ...]]]:
    """parse_mdstat(text) entry by entry (the same arrays in the same order), each with its entry's text."""
    global _parsed_entries
    known = _parsed_entries
    parsed = []
    for entry in _entries(text):
        found = known.get(entry)
        if found is None:
            found = tuple(parse_mdstat(entry))
        parsed.append((entry, found))
    _parsed_entries = dict(parsed)
    return parsed


def _complete(root: SystemRoot, parsed: list[MdArray]) -> list[MdArray]:
    """read_arrays from parsed mdstat: arrays only sysfs has yet added, every one enriched, sorted."""
    arrays = {array.name: array for array in parsed}
    for name in root.listdir("/sys/block"):
        if name.startswith("md") and name not in arrays and _sysfs_only_array(root, name):
            # Assembled between our read of mdstat and the listing of /sys/block.
            arrays[name] = MdArray(name=name, state="unknown", level=None)
    enriched = [_enrich(root, array) for array in arrays.values()]
    return sorted(enriched, key=lambda a: kernel_name_key(a.name))


class ArrayReader:
    """read_arrays for a sampler that reads /proc/mdstat every tick.

    A resync, check or rebuild rewrites its array's progress line in mdstat every tick, and a full
    read_arrays parses every array's entry and re-reads dozens of sysfs files per array (every
    member's slot and state). Here mdstat is split into its entries: an entry identical to last
    tick's keeps last tick's array as it was; one whose other lines are as they were (same members,
    roles, states and geometry) parses only its progress line, keeps its sysfs details and re-reads
    only its three sync files (through descriptors kept open), as read_arrays would; anything else is
    read in full. ``full=True`` re-reads everything, so sysfs-only details (clean/active flips) lag by
    at most the caller's rescan period, as they do when mdstat does not change at all.
    """

    # Past this many kept files (every array's sysfs attributes, two per member, three sync files per
    # syncing array) they are opened per read instead; at most a quarter of the process's descriptors.
    MAX_KEPT_FILES = 768

    def __init__(self, root: SystemRoot) -> None:
        self.root = root
        self._entries: dict[str, tuple[MdArray, ...]] = {}  # an mdstat entry's text -> its arrays
        self._shapes: dict[str, tuple[MdArray, MdArray]] = {}  # name -> (as mdstat gave it, as returned)
        self._outlines: dict[str, str] = {}  # name -> its entry without the progress line (one-array entries)
        self._files: dict[str, KeptFile] = {}
        self._kept_limit = min(self.MAX_KEPT_FILES, _descriptor_limit() // 4)
        # What full reads and re-reads of changed arrays read sysfs through: root's reads, each file
        # through a descriptor kept open for the next one (a full re-read every rescan period).
        self._sysfs = _KeptReads(root, self._read_attribute)
        self._touched: set[str] | None = None  # the files a full read has read so far

    def read(self, text: str | None, *, full: bool = False) -> list[MdArray]:
        if text is None:
            self._entries, self._shapes, self._outlines = {}, {}, {}
            return []
        if full or not self._entries:
            # read_arrays, with mdstat parsed entry by entry to remember each entry's arrays.
            parsed = _parse_entries(text)
            self._touched = set()
            try:
                arrays = _complete(self._sysfs, [array for _, found in parsed for array in found])
            finally:
                touched, self._touched = self._touched, None
            # A file a full read no longer reads (a member removed, an array stopped) is let go.
            for path in [path for path in self._files if path not in touched]:
                self._files.pop(path).close()
            by_name = {array.name: array for array in arrays}
            self._entries, self._shapes, self._outlines = {}, {}, {}
            for entry, found in parsed:
                self._entries[entry] = tuple(by_name[a.name] for a in found if a.name in by_name)
                for array in found:
                    if array.name in by_name:
                        self._shapes[array.name] = (array, by_name[array.name])
                if len(found) == 1:
                    self._outlines[found[0].name] = _outline(entry)[0]
            return arrays
        entries, shapes, outlines = self._entries, self._shapes, self._outlines
        self._entries, self._shapes, self._outlines = {}, {}, {}
        result: dict[str, MdArray] = {}  # by name: a name mdstat lists twice counts once, the last, as in read_arrays
        for entry in _entries(text):
            known = entries.get(entry)
            if known is None:
                known = self._changed(entry, shapes, outlines)
            else:
                for array in known:
                    self._shapes[array.name] = shapes[array.name]
                    if array.name in outlines:
                        self._outlines[array.name] = outlines[array.name]
            self._entries[entry] = known
            result.update((array.name, array) for array in known)
        return sorted(result.values(), key=lambda a: kernel_name_key(a.name))

    def _changed(
        self, entry: str, shapes: dict[str, tuple[MdArray, MdArray]], outlines: dict[str, str]
    ) -> tuple[MdArray, ...]:
        """An entry that is not last tick's: its progress alone changed, or it is read in full."""
        name = entry.split(None, 1)[0] if entry else ""
        outline, progress = _outline(entry)
        before = shapes.get(name)
        if before is not None and outlines.get(name) == outline:
            # Only the progress line moved: that line is all mdstat has new, the sync files all sysfs has.
            parsed = _with_sync(before[0], parse_progress_line(progress) if progress else None)
            enriched = before[1]
            if enriched.state not in ("inactive", "clear"):
                md = f"/sys/block/{name}/md"
                enriched = _with_sync(enriched, _sync(self.root, md, parsed.sync, self._read_kept))
            self._shapes[name] = (parsed, enriched)
            self._outlines[name] = outline
            return (enriched,)
        found = parse_mdstat(entry)
        if len(found) == 1:
            self._outlines[found[0].name] = outline
        return tuple(self._refresh(array, shapes.get(array.name)) for array in found)

    def _read_kept(self, absolute: str) -> str | None:
        """A sysfs file as _text reads it, through a descriptor kept open for the next tick."""
        return self._read_attribute(absolute) or None

    def _read_attribute(self, absolute: str) -> str | None:
        """root.read_text(absolute) (stripped; None when missing or refused), through a kept descriptor."""
        if self._touched is not None:
            self._touched.add(absolute)
        file = self._files.get(absolute)
        if file is None:
            keep = len(self._files) < self._kept_limit
            opener = (lambda: self.root.open_file(absolute)) if self.root.confined else None
            file = KeptFile(str(self.root.path(absolute)), keep, opener=opener)
            if keep:
                self._files[absolute] = file
        was_open = file.is_open
        data = file.read_small(256)  # read()'s text as bytes: one pread while the descriptor is open
        if data is None and was_open:
            # The file went away under its descriptor (sysfs revokes a removed attribute, an array was
            # stopped or a member removed): what the path holds now, as a fresh read would find.
            data = file.read_small(256)
        return data.decode(errors="replace").strip() if data is not None else None

    def close(self) -> None:
        """Close the kept sync files; they are opened again when read."""
        for file in self._files.values():
            file.close()
        self._files = {}

    def _refresh(self, array: MdArray, before: tuple[MdArray, MdArray] | None) -> MdArray:
        if before is None or dataclasses.replace(before[0], sync=None) != dataclasses.replace(array, sync=None):
            enriched = _enrich(self._sysfs, array)
        else:
            enriched = before[1]
            if enriched.state not in ("inactive", "clear"):
                # Missing sync files (no md directory) leave mdstat's reading, as _sync does.
                md = f"/sys/block/{array.name}/md"
                enriched = _with_sync(enriched, _sync(self.root, md, array.sync, self._read_kept))
        self._shapes[array.name] = (array, enriched)
        return enriched


def _replaces_by_copy(cls: type) -> bool:
    """Whether a copy of an instance's attributes is what dataclasses.replace builds: every field is
    set by __init__ from its argument and nothing runs after it (no __post_init__, no InitVar)."""
    fields = dataclasses.fields(cls)
    return (
        not hasattr(cls, "__post_init__")
        and all(f.init for f in fields)
        and len(fields) == len(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    )


def _with_sync(array: MdArray, sync: SyncStatus | None) -> MdArray:
    """dataclasses.replace(array, sync=sync), the same array, in a third of the time: a resyncing
    array is rebuilt every tick with its new progress, and replace() goes through __init__."""
    if type(array) is not MdArray or not _COPY_REPLACES:
        return dataclasses.replace(array, sync=sync)
    clone = object.__new__(MdArray)
    clone.__dict__.update(array.__dict__)
    object.__setattr__(clone, "sync", sync)
    return clone


_COPY_REPLACES = _replaces_by_copy(MdArray)


class _KeptReads(SystemRoot):
    """A SystemRoot whose attribute reads (read_text, and read_int through it) go through ``read``."""

    def __init__(self, root: SystemRoot, read: Callable[[str], str | None]) -> None:
        super().__init__(root.root)
        self._read = read

    def read_text(self, absolute: str | Path, *, limit: int = ATTRIBUTE_LIMIT) -> str | None:
        if isinstance(absolute, str) and limit == ATTRIBUTE_LIMIT:
            return self._read(absolute)
        return super().read_text(absolute, limit=limit)


def _descriptor_limit() -> int:
    """The process's soft limit on open descriptors (1024 when it cannot be known)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 1024
    return soft if soft > 0 else 1 << 20


def _outline(entry: str) -> tuple[str, str | None]:
    """An mdstat entry without its progress line, and that line (None when it has none or several)."""
    lines = entry.split("\n")
    progress = [index for index, line in enumerate(lines) if is_progress_line(line)]
    if len(progress) != 1:
        return entry, None
    line = lines.pop(progress[0])
    return "\n".join(lines), line


def _entries(text: str) -> list[str]:
    """mdstat split into entries: each line that starts in column 0 with the indented lines after it."""
    entries: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        if line[:1].strip() and lines:
            entries.append("\n".join(lines))
            lines = []
        lines.append(line)
    if lines:
        entries.append("\n".join(lines))
    return entries


def layout_name(level: str | None, number: int) -> str | None:
    """mdadm's name for a sysfs layout number, which means something different per level."""
    if level in ("raid4", "raid5", "raid6"):
        return algorithm_name(number)
    if level == "raid10":
        near = number & 0xFF
        far = (number >> 8) & 0xFF
        return raid10_layout_name(near, far, bool(number & 0x10000))
    if level == "raid0":
        return RAID0_LAYOUT_NAMES.get(number)
    return None


def _sysfs_only_array(root: SystemRoot, name: str) -> bool:
    # "clear" is an unused device node (opened but never assembled); mdstat omits those too.
    state = root.read_text(f"/sys/block/{name}/md/array_state")
    return bool(state) and state != "clear"


def _text(root: SystemRoot, path: str) -> str | None:
    """A sysfs value, or None when missing or empty (inactive arrays leave files empty)."""
    text = root.read_text(path)
    return text if text else None


def _enrich(root: SystemRoot, array: MdArray) -> MdArray:
    md = f"/sys/block/{array.name}/md"
    if not os.path.isdir(_system_path(root, md)):
        return array
    changes: dict[str, Any] = {}

    if (state := _text(root, f"{md}/array_state")) is not None:
        changes["state"] = _ARRAY_STATE_WORDS.get(state, state)
    level = _text(root, f"{md}/level") or array.level
    changes["level"] = level
    if array.level is not None and level != array.level:
        # mdstat described another personality (a takeover raced our reads): its geometry is stale.
        changes.update(layout=None, chunk_bytes=None, raid_disks=None)
    if (raid_disks := root.read_int(f"{md}/raid_disks", hi=MAX_DEVICES)) is not None:
        changes["raid_disks"] = raid_disks
    if (chunk := root.read_int(f"{md}/chunk_size", hi=_MAX_CHUNK_BYTES)) is not None:
        changes["chunk_bytes"] = chunk or None
    if (layout := root.read_int(f"{md}/layout", hi=_MAX_LAYOUT)) is not None:
        changes["layout"] = layout_name(level, layout)
    if (metadata := _text(root, f"{md}/metadata_version")) is not None:
        changes["metadata"] = metadata
    if (degraded := root.read_int(f"{md}/degraded", hi=MAX_DEVICES)) is not None:
        changes["degraded"] = degraded
    if (uuid := _text(root, f"{md}/uuid")) is not None:
        changes["uuid"] = uuid
    sectors = root.read_int(f"/sys/block/{array.name}/size", hi=MAX_SECTORS)
    if sectors:
        changes["size_bytes"] = sectors * 512
    if component_kib := root.read_int(f"{md}/component_size", hi=MAX_SECTORS // 2):
        changes["component_bytes"] = component_kib * 1024
    changes["bitmap"] = _bitmap(root, array.name, array.bitmap)
    changes["sync"] = _sync(root, md, array.sync)
    if (members := _members(root, md, array.members)) is not None:
        changes["members"] = members
    if changes.get("state") in ("inactive", "clear"):
        # A stopped array has no size, no redundancy to lose and nothing to sync.
        changes.update(size_bytes=None, component_bytes=None, degraded=0, sync=None)
    return dataclasses.replace(array, **changes)


def _bitmap(root: SystemRoot, name: str, known: str | None) -> str | None:
    """The bitmap as probe.safety.bitmap_kind reads it; mdstat's reading (known) where sysfs is silent, and
    its path for a file, which sysfs does not name."""
    kind = bitmap_kind(root, name)
    if kind is None:
        return known
    if kind == "file":
        return known if known and known.startswith("/") else "file"
    return kind


def _sync(
    root: SystemRoot, md: str, known: SyncStatus | None, read: Callable[[str], str | None] | None = None
) -> SyncStatus | None:
    """The running sync from md's sysfs files (known, mdstat's reading, where they say nothing).

    read: how a file is read (stripped text, None when missing or empty); the sampler's ArrayReader
    passes one that keeps the three files open, as a resync rewrites them every tick.
    """

    def text(path: str) -> str | None:
        return read(path) if read is not None else _text(root, path)

    action_text = text(f"{md}/sync_action")
    if action_text is None:
        return known
    action = action_text.split()[0]
    if action == "frozen":
        return known
    if action == "idle":
        # A pending or delayed sync is not running yet, so sysfs calls the array idle.
        return known if known is not None and known.state != "running" else None

    same = known if known is not None and _SAME_SYNC.get(action, action) == known.action else None
    state = same.state if same is not None else "running"
    done = total = None
    completed = text(f"{md}/sync_completed")
    if completed == "delayed":
        state = "delayed"
    elif completed is not None and (m := _COMPLETED_RE.fullmatch(completed)):
        # The pattern matched ASCII digits alone: parse_int's checks come down to its length and range.
        done_text, total_text = m.groups()
        if len(done_text) <= MAX_DIGITS >= len(total_text):
            done_sectors, total_sectors = int(done_text), int(total_text)
            if done_sectors <= MAX_SECTORS >= total_sectors:
                done, total = done_sectors, total_sectors
                state = "running"
    if done is None and same is not None:
        done, total = same.done_sectors, same.total_sectors

    speed_text = text(f"{md}/sync_speed")
    kib_per_s = parse_int(speed_text.split(maxsplit=1)[0], hi=MAX_SECTORS) if speed_text else None
    speed = kib_per_s * 1024 if kib_per_s is not None else (same.speed_bytes_per_s if same else None)
    eta = same.eta_seconds if same is not None else None
    if kib_per_s and done is not None and total is not None:
        # Recompute from sysfs's own figures so the estimate matches the progress shown with it.
        eta = max(total - done, 0) * 512 / (kib_per_s * 1024)
    return SyncStatus(
        action=action,
        state=state,
        done_sectors=done,
        total_sectors=total,
        speed_bytes_per_s=speed,
        eta_seconds=eta,
    )


def _link_name(root: SystemRoot, path: str) -> str | None:
    """The target of an rdN link; captured trees store it as a file holding the name."""
    try:
        return os.path.basename(os.readlink(_system_path(root, path)))
    except OSError:
        return _text(root, path)


def _members(root: SystemRoot, md: str, known: tuple[ArrayMember, ...]) -> tuple[ArrayMember, ...] | None:
    entries = root.listdir(md)
    devices = [entry for entry in entries if entry.startswith("dev-")]
    if not devices:
        return None
    roles: dict[str, int] = {}
    for entry in entries:
        if _ROLE_LINK_RE.fullmatch(entry) and (target := _link_name(root, f"{md}/{entry}")):
            roles[target.removeprefix("dev-")] = int(entry[2:])
    by_name = {member.name: member for member in known}

    members = []
    for entry in devices:
        name = entry.removeprefix("dev-")
        previous = by_name.get(name)
        slot_text = _text(root, f"{md}/{entry}/slot")
        slot: int | None
        if slot_text == "none":
            slot = None
        elif (number := parse_int(slot_text, hi=MAX_DEVICES)) is not None:
            slot = number
        elif name in roles:
            slot = roles[name]
        else:
            slot = previous.slot if previous is not None else None
        state_text = root.read_text(f"{md}/{entry}/state")
        if state_text is not None:
            states = tuple(word for word in _STATE_SEPARATORS_RE.split(state_text) if word)
        else:
            states = previous.states if previous is not None else ()
        members.append(ArrayMember(name=name, slot=slot, states=states))
    members.sort(key=lambda m: (m.slot is None, m.slot if m.slot is not None else 0, m.name))
    return tuple(members)
