"""Where mdtui keeps its own state: the registry of arrays it created, the journal of temporary arrays an
experiment has up right now, and the reshape journal (the action log is mdtui.actionlog)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mdtui.actionlog import skipped
from mdtui.errors import MdtuiError
from mdtui.model.array import MdArray, normalize_uuid
from mdtui.probe.owner import boot_id, current_owner, owner_alive, state_dir
from mdtui.state_dir import (
    BadEntry,
    StateDir,
    UnsafeStateError,
    dev_path,
    kernel_name,
    load_json_entries,
    same_uuid,
    uuid_text,
)


@dataclass(frozen=True)
class CreatedArray:
    """An array mdtui made. One with a superblock is known by its UUID. A --build array has none, so it is
    known by what cannot outlive it: the boot it was built in (a built array is gone after a reboot) and
    its exact set of member kernel names; an entry with neither a UUID nor that identity matches nothing."""

    device: str
    uuid: str | None  # None for --build arrays, which have no superblock
    member_serials: tuple[str, ...]
    member_paths: tuple[str, ...]
    created_at: float
    member_names: tuple[str, ...] = ()  # kernel names of the members when it was made
    boot_id: str = field(default_factory=lambda: boot_id())

    def matches(self, array: MdArray, uuid: str | None) -> bool:
        """Whether ``array`` (with ``uuid`` as mdadm or sysfs reports it, None for none) is this one."""
        if self.device not in (array.dev_path, f"/dev/md/{array.name}"):
            return False
        if array.metadata != "none":
            return same_uuid(self.uuid, uuid)
        if self.uuid is not None or not self.boot_id or not self.member_names:
            return False
        return self.boot_id == boot_id() and set(self.member_names) == {m.name for m in array.members}


def _member(value: Any, what: str = "member") -> str:
    if isinstance(value, str) and value.startswith("/dev/") and "/../" not in value and len(value) < 256:
        return value
    return kernel_name(value, what)


def _created_array(item: Any) -> CreatedArray:
    if not isinstance(item, dict):
        raise BadEntry("an entry is not a JSON object")

    def names(key: str, check: Any) -> tuple[str, ...]:
        value = item.get(key, ())
        if not isinstance(value, list | tuple):
            raise BadEntry(f"{key} is not a list")
        return tuple(check(v, key) for v in value)

    def text(value: Any, what: str) -> str:
        if not isinstance(value, str) or len(value) > 256:
            raise BadEntry(f"{what} {value!r} is not text")
        return value

    created_at = item.get("created_at", 0)
    if isinstance(created_at, bool) or not isinstance(created_at, int | float):
        raise BadEntry(f"created_at {created_at!r} is not a time")
    return CreatedArray(
        device=dev_path(item.get("device"), "device"),
        uuid=uuid_text(item.get("uuid"), "uuid"),
        member_serials=names("member_serials", text),
        member_paths=names("member_paths", _member),
        created_at=float(created_at),
        member_names=names("member_names", kernel_name),
        boot_id=text(item.get("boot_id", ""), "boot_id"),
    )


class ArrayRegistry:
    """Arrays mdtui created: only these may be torn down by it, since others may hold data."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "created-arrays.json"

    def _load(self) -> list[CreatedArray]:
        try:
            data = StateDir(self.path.parent).read(self.path.name)
            raw = json.loads(data) if data is not None else []
        except UnsafeStateError as exc:
            skipped(self.path, exc)
            return []
        except ValueError:
            skipped(self.path, "not JSON")
            return []
        out = []
        for index, item in enumerate(raw if isinstance(raw, list) else []):
            try:
                out.append(_created_array(item))
            except BadEntry as exc:
                skipped(self.path, f"entry {index + 1}: {exc}")
        return out

    def add(self, entry: CreatedArray) -> None:
        entries = [e for e in self._load() if not (e.device == entry.device and e.uuid == entry.uuid)]
        entries.append(entry)
        self._save(entries)

    def remove(self, device: str, uuid: str | None) -> None:
        self._save([e for e in self._load() if not (e.device == device and e.uuid == uuid)])

    def find(self, device: str, uuid: str | None) -> CreatedArray | None:
        """The entry of ``device`` with this UUID; a missing UUID (either side) matches nothing."""
        return next((e for e in self._load() if e.device == device and same_uuid(e.uuid, uuid)), None)

    def owner_entry(self, array: MdArray, uuid: str | None) -> CreatedArray | None:
        """The entry saying mdtui made ``array`` (see CreatedArray for how a built array is known), or None."""
        return next((e for e in self._load() if e.matches(array, uuid)), None)

    def _save(self, entries: list[CreatedArray]) -> None:
        StateDir(self.path.parent).write(self.path.name, json.dumps([asdict(e) for e in entries], indent=2).encode())


@dataclass(frozen=True)
class TemporaryArray:
    """One array an experiment made for a measurement and will tear down: which, why, and whose it is."""

    device: str  # /dev/md9
    purpose: str  # "chunk sweep", "level comparison": named in the notice if it is left behind
    owner: str  # mdtui.probe.owner token (boot ID, pid, start time) of the process that made it
    pid: int
    created_at: float
    members: tuple[str, ...] = ()
    db: str | None = None  # the results database its runs go to, to name the run it was made for
    uuid: str | None = None  # known once the array exists
    path: Path | None = field(default=None, compare=False)  # its journal file

    @property
    def name(self) -> str:
        return os.path.basename(self.device)


def _temporary_array(raw: Any, path: Path) -> TemporaryArray:
    members = raw.get("members", ())
    if not isinstance(members, list):
        raise BadEntry("members is not a list")
    return TemporaryArray(
        device=dev_path(raw["device"], "device"),
        purpose=str(raw.get("purpose") or "experiment")[:200],
        owner=str(raw["owner"]),
        pid=int(raw["pid"]),
        created_at=float(raw.get("created_at", 0)),
        members=tuple(_member(m) for m in members),
        db=str(raw["db"]) if raw.get("db") else None,
        uuid=uuid_text(raw.get("uuid"), "uuid"),
        path=path,
    )


class TemporaryArrayJournal:
    """A file per temporary array, written (and synced) before the array is created and removed after its
    teardown; one whose owner is gone names an array a killed experiment left behind.

    Owners are recorded as mdtui.probe.owner tokens, so a reused pid or a reboot never passes for the owner.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or state_dir() / "temporary-arrays"

    def add(
        self, device: str, purpose: str, *, members: Sequence[str] = (), db: str | os.PathLike[str] | None = None
    ) -> TemporaryArray:
        entry = TemporaryArray(
            device=device,
            purpose=purpose,
            owner=current_owner(),
            pid=os.getpid(),
            created_at=time.time(),
            members=tuple(members),
            db=str(db) if db is not None else None,
        )
        path = self.directory / f"{entry.name}.{entry.pid}.{time.monotonic_ns()}.json"
        try:
            return self._write(replace(entry, path=path))
        except OSError as exc:
            raise MdtuiError(
                f"cannot record the temporary array {device} in {self.directory} ({exc.strerror or exc}); "
                "it was not created"
            ) from None

    def set_uuid(self, entry: TemporaryArray, uuid: str | None) -> TemporaryArray:
        """The entry with the array's UUID, once it exists (kept as it was if the file cannot be rewritten)."""
        if not uuid or entry.path is None:
            return entry
        try:
            return self._write(replace(entry, uuid=uuid))
        except OSError:
            return entry

    def _write(self, entry: TemporaryArray) -> TemporaryArray:
        assert entry.path is not None
        record = {k: v for k, v in asdict(entry).items() if k != "path"}
        # Synced (file and directory) before mdadm runs: the entry is the only trace of the array if mdtui dies next.
        StateDir(self.directory).write(entry.path.name, json.dumps(record, indent=2).encode())
        return entry

    def remove(self, entry: TemporaryArray) -> None:
        if entry.path is not None:
            StateDir(entry.path.parent).remove(entry.path.name)

    def forget(self, device: str) -> None:
        """Drop every entry for ``device``: it was torn down (by `mdtui destroy` or the experiment)."""
        for entry in self.entries():
            if entry.device == device:
                self.remove(entry)

    def entries(self) -> list[TemporaryArray]:
        """Every readable entry, oldest first; a damaged file is skipped (and left for a person to see)."""
        found = load_json_entries(self.directory, _temporary_array, "temporary-array entry", skipped)
        return sorted(found, key=lambda entry: entry.created_at)

    def left_behind(self) -> list[TemporaryArray]:
        """Entries whose owner no longer runs: it was killed before its teardown."""
        return [entry for entry in self.entries() if not owner_alive(entry.owner)]


@dataclass(frozen=True)
class ReshapeEntry:
    """A grow mdtui started: the array (by UUID), the shape it goes to, and the backup file md needs to resume
    it after a crash. Written (and synced) before the reshape starts; removed once the array has the shape."""

    device: str  # /dev/md0
    uuid: str
    target_level: str  # raid6
    target_members: int
    target_chunk_bytes: int | None
    target_layout: str | None
    target_component_bytes: int
    backup_file: str | None  # absolute path, or None when md needs none
    member_paths: tuple[str, ...]  # every member after the grow, by its by-id path
    started_at: float
    predicted_seconds: float | None = None
    bound: str = ""

    @property
    def name(self) -> str:
        return os.path.basename(self.device)


# A backup file's path as a state file may give it: absolute, printable, no "..": it goes into mdadm's argv.
MAX_PATH_BYTES = 4096


def backup_path(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value.startswith("/")
        or len(value.encode()) > MAX_PATH_BYTES
        or "/../" in value + "/"
        or not value.isprintable()
    ):
        raise BadEntry(f"{what} {value!r} is not an absolute path")
    return value


def _reshape_entry(raw: Any, path: Path) -> ReshapeEntry:
    del path
    if not isinstance(raw, dict):
        raise BadEntry("an entry is not a JSON object")
    uuid = uuid_text(raw.get("uuid"), "uuid")
    if uuid is None:
        raise BadEntry("an entry without a UUID matches no array")
    members = raw.get("member_paths", [])
    if not isinstance(members, list):
        raise BadEntry("member_paths is not a list")

    def count(key: str, optional: bool = False) -> int | None:
        value = raw.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 1 << 62:
            raise BadEntry(f"{key} {value!r} is not a count")
        return value

    predicted = raw.get("predicted_seconds")
    if predicted is not None and (
        isinstance(predicted, bool) or not isinstance(predicted, int | float) or predicted < 0
    ):
        raise BadEntry(f"predicted_seconds {predicted!r} is not a time")
    layout = raw.get("target_layout")
    if layout is not None and (not isinstance(layout, str) or len(layout) > 64 or not layout.isprintable()):
        raise BadEntry(f"target_layout {layout!r} is not a layout")
    level = raw.get("target_level")
    if not isinstance(level, str) or not kernel_name(level, "target_level"):
        raise BadEntry(f"target_level {level!r} is not a level")
    started = raw.get("started_at", 0)
    if isinstance(started, bool) or not isinstance(started, int | float):
        raise BadEntry(f"started_at {started!r} is not a time")
    members_count = count("target_members")
    component = count("target_component_bytes")
    assert members_count is not None and component is not None
    return ReshapeEntry(
        device=dev_path(raw.get("device"), "device"),
        uuid=uuid,
        target_level=level,
        target_members=members_count,
        target_chunk_bytes=count("target_chunk_bytes", optional=True),
        target_layout=layout,
        target_component_bytes=component,
        backup_file=backup_path(raw.get("backup_file"), "backup_file"),
        member_paths=tuple(_member(m) for m in members),
        started_at=float(started),
        predicted_seconds=float(predicted) if predicted is not None else None,
        bound=str(raw.get("bound") or "")[:300],
    )


class ReshapeJournal:
    """One file per array mdtui is growing (named by its UUID): what the reshape needs if it is interrupted.

    `mdtui scan`, `advise` and the app read it to say a reshape is pending and where its backup file is;
    `mdtui grow --resume` assembles with it. Entries are validated like every state file (a UUID, /dev and
    by-id paths, an absolute backup path).
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or state_dir() / "reshapes"

    @staticmethod
    def _file(uuid: str) -> str:
        digits = normalize_uuid(uuid)
        if digits is None:
            raise MdtuiError(f"{uuid!r} is not an md UUID: no reshape file is named after it")
        return digits + ".json"

    def add(self, entry: ReshapeEntry) -> None:
        try:
            StateDir(self.directory).write(self._file(entry.uuid), json.dumps(asdict(entry), indent=2).encode())
        except OSError as exc:
            raise MdtuiError(
                f"cannot record the grow of {entry.device} in {self.directory} ({exc.strerror or exc}); nothing was run"
            ) from None

    def remove(self, uuid: str) -> None:
        StateDir(self.directory).remove(self._file(uuid))

    def entries(self) -> list[ReshapeEntry]:
        found = load_json_entries(self.directory, _reshape_entry, "reshape entry", skipped)
        return sorted(found, key=lambda entry: entry.started_at)

    def find(self, uuid: str | None) -> ReshapeEntry | None:
        return next((e for e in self.entries() if same_uuid(e.uuid, uuid)), None)
