"""Where mdtui keeps its own state: the action log and the registry of arrays it created."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from mdtui.command import CommandResult


def state_dir() -> Path:
    """$MDTUI_STATE_DIR, else $XDG_STATE_HOME/mdtui, else ~/.local/state/mdtui."""
    override = os.environ.get("MDTUI_STATE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mdtui"


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
