"""Where mdtui keeps its own state: the action log, the registry of arrays it created, and the journal of
temporary arrays an experiment has up right now."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from mdtui.command import CommandResult
from mdtui.errors import MdtuiError
from mdtui.probe.owner import current_owner, owner_alive, state_dir


class ActionLog:
    """Every destructive command and its output, one JSON line each, kept for the admin to audit."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "actions.log"

    def record(self, result: CommandResult, note: str = "") -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": list(result.argv),
            "returncode": result.returncode,
            "duration_s": round(result.duration_s, 3),
            "stdout": result.stdout[-4000:],
            "stderr": result.stderr[-4000:],
            "note": note,
        }
        with self.path.open("a") as handle:
            handle.write(json.dumps(entry) + "\n")

    def entries(self) -> list[dict]:
        try:
            lines = self.path.read_text().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out


@dataclass(frozen=True)
class CreatedArray:
    device: str
    uuid: str | None  # None for --build arrays, which have no superblock
    member_serials: tuple[str, ...]
    member_paths: tuple[str, ...]
    created_at: float


class ArrayRegistry:
    """Arrays mdtui created: only these may be torn down by it, since others may hold data."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "created-arrays.json"

    def _load(self) -> list[CreatedArray]:
        try:
            raw = json.loads(self.path.read_text())
        except (OSError, json.JSONDecodeError):
            return []
        out = []
        for item in raw if isinstance(raw, list) else []:
            try:
                out.append(
                    CreatedArray(
                        device=item["device"],
                        uuid=item.get("uuid"),
                        member_serials=tuple(item.get("member_serials", ())),
                        member_paths=tuple(item.get("member_paths", ())),
                        created_at=float(item.get("created_at", 0)),
                    )
                )
            except (KeyError, TypeError, ValueError):
                continue
        return out

    def add(self, entry: CreatedArray) -> None:
        entries = [e for e in self._load() if not (e.device == entry.device and e.uuid == entry.uuid)]
        entries.append(entry)
        self._save(entries)

    def remove(self, device: str, uuid: str | None) -> None:
        self._save([e for e in self._load() if not (e.device == device and e.uuid == uuid)])

    def find(self, device: str, uuid: str | None) -> CreatedArray | None:
        for entry in self._load():
            if entry.device == device and (entry.uuid == uuid or entry.uuid is None):
                return entry
        return None

    def _save(self, entries: list[CreatedArray]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps([asdict(e) for e in entries], indent=2))
        os.replace(tmp, self.path)


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
        self.directory.mkdir(parents=True, exist_ok=True)
        record = {k: v for k, v in asdict(entry).items() if k != "path"}
        tmp = entry.path.with_suffix(".tmp")
        with tmp.open("w") as handle:
            handle.write(json.dumps(record, indent=2))
            handle.flush()
            # On disk before mdadm runs: the entry is the only trace of the array if mdtui dies next.
            os.fsync(handle.fileno())
        os.replace(tmp, entry.path)
        with contextlib.suppress(OSError):
            directory = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
        return entry

    def remove(self, entry: TemporaryArray) -> None:
        if entry.path is not None:
            with contextlib.suppress(FileNotFoundError):
                entry.path.unlink()

    def forget(self, device: str) -> None:
        """Drop every entry for ``device``: it was torn down (by `mdtui destroy` or the experiment)."""
        for entry in self.entries():
            if entry.device == device:
                self.remove(entry)

    def entries(self) -> list[TemporaryArray]:
        """Every readable entry, oldest first; a damaged file is skipped (and left for a person to see)."""
        try:
            paths = sorted(self.directory.glob("*.json"))
        except OSError:
            return []
        found = []
        for path in paths:
            try:
                raw = json.loads(path.read_text())
                found.append(
                    TemporaryArray(
                        device=str(raw["device"]),
                        purpose=str(raw.get("purpose") or "experiment"),
                        owner=str(raw["owner"]),
                        pid=int(raw["pid"]),
                        created_at=float(raw.get("created_at", 0)),
                        members=tuple(str(m) for m in raw.get("members", ())),
                        db=str(raw["db"]) if raw.get("db") else None,
                        uuid=str(raw["uuid"]) if raw.get("uuid") else None,
                        path=path,
                    )
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return sorted(found, key=lambda entry: entry.created_at)

    def left_behind(self) -> list[TemporaryArray]:
        """Entries whose owner no longer runs: it was killed before its teardown."""
        return [entry for entry in self.entries() if not owner_alive(entry.owner)]
