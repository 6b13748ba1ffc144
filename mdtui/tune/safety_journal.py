"""Changing an array's bitmap or consistency policy for an experiment so that it always comes back.

Like the knob journal (mdtui.tune.journal): before the first `mdadm --grow` a journal file under
$XDG_STATE_HOME/mdtui/safety-journal/ records the array, its UUID, the bitmap and policy it had and this
process's owner token; the original is put back when the block ends, whatever ended it. A process killed
outright leaves the journal, and the next mdtui start (safety_at_start) puts the original back on the array
that still carries that UUID, and only there. An array with a bitmap file is never changed here: sysfs does
not say the file's path, so it could not be put back.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mdtui.actionlog import ActionLog, skipped
from mdtui.ascii_numbers import parse_int
from mdtui.command import CommandResult
from mdtui.errors import MdtuiError
from mdtui.model.safety import LiveSafety
from mdtui.plan.levels import RaidLevel
from mdtui.plan.write_safety import GROW_TIMEOUT_S, SafetyChoice, change_steps, live_problems
from mdtui.probe.owner import current_owner, owner_alive, state_dir
from mdtui.probe.root import SystemRoot
from mdtui.probe.safety import read_live_safety
from mdtui.state_dir import BadEntry, StateDir, UnsafeStateError, kernel_name, load_json_entries, uuid_text
from mdtui.tune.journal import array_problem, entry_text, recover_at_start

# Runs one mdadm --grow step (argv, the action log's note for it).
Runner = Callable[[list[str], str], CommandResult]
# What a restore may put back: what md reports for an array mdtui may change (never a file, never a journal).
_RESTORABLE_BITMAPS = ("none", "internal", "lockless")
_RESTORABLE_POLICIES = ("resync", "bitmap", "ppl")


def journal_dir() -> Path:
    return state_dir() / "safety-journal"


def _run(argv: list[str], note: str) -> CommandResult:
    """One step, run as root and recorded in the action log and the system journal; _apply judges its exit."""
    return ActionLog().run(argv, note, timeout_s=GROW_TIMEOUT_S, check=False)


@dataclass
class SafetyEntry:
    owner: str
    pid: int
    purpose: str
    root: str
    created_at: float
    array: str
    array_uuid: str
    bitmap: str
    bitmap_chunk_bytes: int | None
    policy: str
    path: Path | None = field(default=None)

    def record(self) -> dict:
        data = asdict(self)
        data.pop("path")
        return data

    @property
    def original(self) -> LiveSafety:
        return LiveSafety(self.bitmap, self.bitmap_chunk_bytes, self.policy)


def _entry(raw: object, path: Path) -> SafetyEntry:
    """One journal, checked: an array named by kernel name and UUID, and an original mdtui can put back."""
    if not isinstance(raw, dict):
        raise BadEntry("not a safety journal")
    bitmap, policy = entry_text(raw, "bitmap"), entry_text(raw, "policy")
    if bitmap not in _RESTORABLE_BITMAPS or policy not in _RESTORABLE_POLICIES:
        raise BadEntry(f"bitmap {bitmap!r} and policy {policy!r} are not what mdtui puts back")
    chunk = raw.get("bitmap_chunk_bytes")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or not 0 < chunk < 1 << 50):
        raise BadEntry(f"bitmap_chunk_bytes {chunk!r} is not a chunk size")
    array_uuid = uuid_text(entry_text(raw, "array_uuid"), "array_uuid")
    if array_uuid is None:
        raise BadEntry("the journal names no array UUID")
    pid = raw.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int):
        raise BadEntry("pid is not a number")
    created = raw.get("created_at", 0)
    return SafetyEntry(
        owner=entry_text(raw, "owner"),
        pid=pid,
        purpose=entry_text(raw, "purpose") or "write safety change",
        root=entry_text(raw, "root", 4096) or "/",
        created_at=float(created) if isinstance(created, int | float) else 0.0,
        array=kernel_name(entry_text(raw, "array"), "array"),
        array_uuid=array_uuid,
        bitmap=bitmap,
        bitmap_chunk_bytes=chunk,
        policy=policy,
        path=path,
    )


def load_entries(directory: Path | None = None) -> list[SafetyEntry]:
    directory = directory or journal_dir()
    return sorted(load_json_entries(directory, _entry, "safety journal", skipped), key=lambda e: e.created_at)


def _want(original: LiveSafety) -> SafetyChoice:
    chunk = None if original.bitmap_chunk_bytes is None else original.bitmap_chunk_bytes // 1024
    return SafetyChoice(original.bitmap, chunk if original.bitmap != "none" else None, original.choice_policy)


def _apply(root: SystemRoot, array: str, want: SafetyChoice, runner: Runner, note: str) -> list[str]:
    """Run the mdadm --grow steps from the array's live safety to ``want`` (each logged as ``note``); the
    lines each one said."""
    now = read_live_safety(root, array)
    if now is None:
        raise MdtuiError(f"{array} reports no consistency policy: md does not answer for it")
    lines = []
    for argv in change_steps(f"/dev/{array}", now, want):
        result = runner(list(argv), note)
        if not result.ok:
            raise MdtuiError(f"{' '.join(argv)} failed: {(result.stderr or result.stdout).strip()[:300]}")
        lines.append(" ".join(argv))
    return lines


@dataclass(frozen=True)
class SafetyRestored:
    """What putting one entry's original back did: ``ok`` when it is back; ``keep`` when its journal stays for
    a later try (mdadm failed on the array that is still there; a gone or other array is never tried again)."""

    ok: bool
    text: str
    keep: bool = False


def restore_entry(root: SystemRoot, entry: SafetyEntry, runner: Runner = _run) -> SafetyRestored:
    """Put an entry's original back on the array that still has its UUID."""
    what = f"{entry.array} bitmap {entry.bitmap}, policy {entry.original.choice_policy}"
    problem = array_problem(root, entry.array, entry.array_uuid)
    if problem is not None:
        return SafetyRestored(False, f"{what} not restored: {problem}")
    try:
        note = f"put back the write safety of /dev/{entry.array} changed by {entry.purpose} (pid {entry.pid})"
        steps = _apply(root, entry.array, _want(entry.original), runner, note)
    except MdtuiError as exc:
        return SafetyRestored(False, f"{what} not restored: {exc}", keep=True)
    return SafetyRestored(True, f"{what} restored" + (f" ({'; '.join(steps)})" if steps else " (it already was)"))


class SafetyChanger:
    """Change one array's bitmap or policy with its original journalled first; ``restore()`` puts it back."""

    def __init__(
        self,
        root: SystemRoot | None = None,
        *,
        purpose: str = "write safety change",
        directory: Path | None = None,
        runner: Runner = _run,
    ) -> None:
        self.root = root or SystemRoot("/")
        self.directory = directory or journal_dir()
        self.purpose = purpose
        self.runner = runner
        self.entry: SafetyEntry | None = None
        self.restored: list[str] = []

    def __enter__(self) -> SafetyChanger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()

    def set(
        self, array: str, array_uuid: str | None, level: RaidLevel, want: SafetyChoice, kernel: str | None
    ) -> list[str]:
        """Take ``array`` to ``want`` (refused in one line where md or mdadm would refuse); the commands run."""
        now = read_live_safety(self.root, array)
        if now is None:
            raise MdtuiError(f"{array} reports no consistency policy: md does not answer for it")
        problems = live_problems(level, now, want, kernel=kernel)
        if want.bitmap_kind == "file":
            problems.append("an experiment does not write bitmap files (it could not put them back)")
        if problems:
            raise MdtuiError(f"{array}: {'; '.join(problems)}")
        if self.entry is None:
            self._journal(array, array_uuid, now)
        elif self.entry.array != array:
            raise MdtuiError(f"this change already holds {self.entry.array}; one array at a time")
        return _apply(self.root, array, want, self.runner, f"{self.purpose}: write safety of /dev/{array}")

    def _journal(self, array: str, array_uuid: str | None, now: LiveSafety) -> None:
        if not array_uuid:
            raise MdtuiError(f"{array} has no UUID here: the restore journal must name it; not changed")
        if now.bitmap not in _RESTORABLE_BITMAPS or now.policy not in _RESTORABLE_POLICIES:
            raise MdtuiError(
                f"{array} has bitmap {now.bitmap} and policy {now.policy}: mdtui could not put that back; not changed"
            )
        for other in load_entries(self.directory):
            if other.array == array and owner_alive(other.owner):
                raise MdtuiError(f"{array}'s write safety is being changed by {other.purpose} (mdtui pid {other.pid})")
        entry = SafetyEntry(
            owner=current_owner(),
            pid=os.getpid(),
            purpose=self.purpose,
            root=str(self.root.root),
            created_at=time.time(),
            array=array,
            array_uuid=array_uuid,
            bitmap=now.bitmap,
            bitmap_chunk_bytes=now.bitmap_chunk_bytes,
            policy=now.policy,
            path=self.directory / f"safety.{os.getpid()}.{time.monotonic_ns()}.json",
        )
        try:
            _save(entry)  # on disk before mdadm runs: the only trace if mdtui dies next
        except (OSError, UnsafeStateError) as exc:
            raise MdtuiError(
                f"cannot write the restore journal in {self.directory} ({exc}); {array} not changed"
            ) from None
        self.entry = entry

    def restore(self) -> list[str]:
        """The original back, then the journal removed (kept when the restore failed). Safe to call twice."""
        if self.entry is None:
            return []
        result = restore_entry(self.root, self.entry, self.runner)
        self.restored.append(result.text)
        if not result.keep:
            _remove(self.entry)
            self.entry = None
        return [result.text]


def _save(entry: SafetyEntry) -> None:
    assert entry.path is not None
    StateDir(entry.path.parent).write(entry.path.name, json.dumps(entry.record(), indent=2).encode())


def _remove(entry: SafetyEntry) -> None:
    if entry.path is not None:
        with contextlib.suppress(UnsafeStateError):
            StateDir(entry.path.parent).remove(entry.path.name)


def recover_dead(root: SystemRoot | None = None, directory: Path | None = None, runner: Runner = _run) -> list[str]:
    """Put back the bitmap and policy of every journal whose owner died: one line each."""
    system = root or SystemRoot("/")
    lines = []
    for entry in load_entries(directory):
        if owner_alive(entry.owner) or Path(entry.root).resolve() != system.root.resolve():
            continue
        result = restore_entry(system, entry, runner)
        lines.append(f"{result.text} (left changed by {entry.purpose}, pid {entry.pid}, which did not finish)")
        if not result.keep:
            _remove(entry)
    return lines


def safety_at_start(root: str = "/") -> list[str]:
    """recover_dead on the live system; nothing for a captured tree, never an exception."""
    return recover_at_start(root, recover_dead, "write safety")


def chunk_kib(text: str) -> int:
    """A bitmap chunk in KiB from "64M", "4K", "65536" (KiB); MdtuiError (one line) otherwise."""
    raw = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1, "M": 1024, "G": 1 << 20}.get(raw[-1:], 0)
    number = parse_int(raw[:-1] if scale else raw, lo=1, hi=1 << 30)
    if number is None:
        raise MdtuiError(f"bitmap chunk {text!r}: give KiB, or a size such as 64M")
    return number * (scale or 1)
