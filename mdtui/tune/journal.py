"""Changing knobs so that they always come back: a restore journal on disk before the first write.

A KnobChanger writes (and syncs) a journal file under $XDG_STATE_HOME/mdtui/knob-journal/ with each
knob's original value, the array's UUID and this process's owner token before it changes that knob, and
puts every original back when it is closed, whatever ended the block (success, an error, a refusal, a
stop signal turned into an exception). A process killed outright (SIGKILL, the OOM killer, a power
cut) cannot do that: the next mdtui start finds the journal of a dead owner (recover_dead), restores
what still applies, names each knob it restored, and removes the journal. A knob of an array that is
gone, or that now carries another UUID, is reported and not written.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import stat
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from mdtui.actionlog import ActionLog, skipped
from mdtui.errors import MdtuiError
from mdtui.probe.owner import current_owner, owner_alive, state_dir
from mdtui.probe.root import SystemRoot
from mdtui.state_dir import BadEntry, StateDir, UnsafeStateError, kernel_name, load_json_entries, same_uuid, uuid_text
from mdtui.tune.catalogue import KNOBS_BY_NAME, Knob, Scope, knob_named
from mdtui.tune.read import parse_value, read_value

log = logging.getLogger(__name__)


def journal_dir() -> Path:
    return state_dir() / "knob-journal"


# --- writing a knob -----------------------------------------------------------------------------------


class KnobPermissionError(MdtuiError):
    """The knob's file may not be written by this user: a restore is tried again by the next start."""


# Where a knob's file may lead once its links are followed: sysfs's block devices, and md's global limits.
_KNOB_HOMES = ("/sys/block/", "/sys/devices/", "/proc/sys/dev/raid/")


def _open_knob(root: SystemRoot, path: str) -> int:
    """A write descriptor for a knob file that is, links followed, a regular file under _KNOB_HOMES."""
    real = os.path.realpath(root.path(path))
    base = os.path.realpath(root.root)
    homes = [os.path.join(base, home.lstrip("/")) for home in _KNOB_HOMES]
    if not any(real.startswith(home) for home in homes):
        raise MdtuiError(
            f"{path} leads to {real}, outside /sys/block, /sys/devices and /proc/sys/dev/raid; not written"
        )
    # The resolved path has no links left: O_NOFOLLOW refuses one planted since; O_NONBLOCK a FIFO.
    fd = os.open(real, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise MdtuiError(f"{path} is not a regular file; not written")
    return fd


def write_sysfs(root: SystemRoot, path: str, value: str, note: str, log: ActionLog | None = None) -> None:
    """Write ``value`` to a kernel attribute that is, links followed, a regular file under /sys/block,
    /sys/devices or /proc/sys/dev/raid (no link planted since is followed); MdtuiError if refused.

    The one writer of kernel attributes (knobs, a sweep's points and restores, a sync boost, sync_action, a
    locate LED, a CPU governor): every write is recorded in the action log and the system journal as ``note``,
    refused or not."""
    log = log or ActionLog()
    started = time.monotonic()
    try:
        fd = _open_knob(root, path)
        try:
            os.write(fd, value.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        log.record_write(path, value, note, started=started, error=exc.strerror or str(exc))
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise KnobPermissionError(f"cannot write {path}: {exc.strerror} (it needs root)") from None
        raise MdtuiError(f"the kernel refused {value!r} for {path}: {exc.strerror or exc}") from None
    log.record_write(path, value, note, started=started)


def write_knob(root: SystemRoot, knob: Knob, device: str, value: str) -> str:
    """Write ``value`` to the knob's file and return what the file says afterwards; MdtuiError if refused."""
    path = knob.system_path(device)
    where = root.path(path)
    if not where.is_file():
        raise MdtuiError(f"{path} does not exist: {knob.name} does not apply to {device or 'this kernel'}")
    write_sysfs(root, path, value, f"knob {knob.name}" + (f" of {device}" if device else ""))
    current = read_value(root, knob, device)
    return current.raw if current is not None else ""


@dataclass(frozen=True)
class Change:
    """One knob mdtui changed and what it was before."""

    knob: str  # catalogue name
    device: str  # where the file is ("md0", "nvme0n1", "" for a global limit)
    path: str
    original: str  # what to write to put it back
    shown: str  # the original as the file said it
    array: str = ""  # the array it was changed for
    array_uuid: str = ""


@dataclass
class JournalFile:
    owner: str
    pid: int
    purpose: str
    root: str
    created_at: float
    changes: list[Change] = field(default_factory=list)
    path: Path | None = None

    def record(self) -> dict:
        data = asdict(self)
        data.pop("path")
        return data


def _save(entry: JournalFile) -> None:
    assert entry.path is not None
    try:
        StateDir(entry.path.parent).write(entry.path.name, json.dumps(entry.record(), indent=2).encode())
    except UnsafeStateError as exc:
        raise OSError(str(exc)) from None


def entry_text(raw: dict, key: str, limit: int = 256) -> str:
    """A journal's field that must be one printable line of at most ``limit`` characters ("" when absent);
    BadEntry otherwise. Read so by the knob journal and the safety journal (mdtui.tune.safety_journal)."""
    value = raw.get(key, "")
    if not isinstance(value, str) or len(value) > limit or not value.isprintable():
        raise BadEntry(f"{key} {value!r} is not a line of text")
    return value


def _change(raw: object) -> Change:
    """One journalled change, checked: a knob of the catalogue at its own file, on a kernel device, for an
    array named with its UUID, with an original the knob's range allows. Anything else is never written."""
    if not isinstance(raw, dict) or set(raw) - {f.name for f in fields(Change)}:
        raise BadEntry("a change is not a journal change")
    name = entry_text(raw, "knob")
    knob = KNOBS_BY_NAME.get(name)
    if knob is None:
        raise BadEntry(f"knob {name!r} is not in the catalogue")
    device = entry_text(raw, "device")
    if knob.scope is Scope.GLOBAL:
        if device:
            raise BadEntry(f"{name} is global; device {device!r} is not")
    else:
        kernel_name(device, "device")
    array = kernel_name(entry_text(raw, "array"), "array")
    if knob.scope in (Scope.MD, Scope.QUEUE) and device != array:
        raise BadEntry(f"{name} is a knob of the array itself, not of {device}")
    array_uuid = uuid_text(entry_text(raw, "array_uuid"), "array_uuid")
    if array_uuid is None:
        raise BadEntry(f"the change of {name} names no array UUID")
    path = entry_text(raw, "path")
    if path != knob.system_path(device):
        raise BadEntry(f"{path!r} is not where {name} lives")
    original = entry_text(raw, "original")
    try:
        knob.check_value(original)
    except MdtuiError as exc:
        raise BadEntry(str(exc)) from None
    return Change(name, device, path, original, entry_text(raw, "shown"), array, array_uuid)


def _journal(raw: object, path: Path) -> JournalFile:
    if not isinstance(raw, dict) or not isinstance(raw.get("changes", []), list):
        raise BadEntry("not a knob journal")
    return JournalFile(
        owner=entry_text(raw, "owner"),
        pid=int(raw["pid"]),
        purpose=entry_text(raw, "purpose") or "knob change",
        root=entry_text(raw, "root", 4096) or "/",
        created_at=float(raw.get("created_at", 0)),
        changes=[_change(item) for item in raw.get("changes", [])],
        path=path,
    )


def load_journals(directory: Path | None = None) -> list[JournalFile]:
    """Every journal that passes its checks, oldest first; any other is skipped with one line on stderr,
    never acted on, and left for a person to see."""
    directory = directory or journal_dir()
    found = load_json_entries(directory, _journal, "knob journal", skipped)
    return sorted(found, key=lambda entry: entry.created_at)


@dataclass(frozen=True)
class Restored:
    """What putting one knob back did: ``ok`` False when it was not (array gone, kernel refused)."""

    change: Change
    ok: bool
    text: str
    keep: bool = False  # not written for lack of permission: the journal keeps it for the next start


def array_problem(root: SystemRoot, array: str, uuid: str) -> str | None:
    """Why ``array`` is not the array with ``uuid`` a journal changed (gone, or another UUID or none readable
    there now); None when it still is. Checked before the knob journal or the safety journal writes to it."""
    md = f"/sys/block/{array}/md"
    if not root.path(md).is_dir():
        return f"{array} no longer exists"
    now = root.read_text(f"{md}/uuid")
    if not same_uuid(now, uuid):
        return f"{array} is now another array (UUID {now or 'unknown'})"
    return None


def _array_problem(root: SystemRoot, change: Change) -> str | None:
    """Why the array a change was made for is not the one there now (or the device no longer its member);
    None when it still is."""
    if not change.array:
        return None
    problem = array_problem(root, change.array, change.array_uuid)
    if problem is not None or change.device == change.array:
        return problem
    if not root.path(f"/sys/block/{change.array}/md/dev-{change.device}").exists():
        return f"{change.device} is no longer a member of {change.array}"
    return None


def restore_change(root: SystemRoot, change: Change) -> Restored:
    where = f"{change.device + ' ' if change.device else ''}{change.knob}"
    problem = _array_problem(root, change)
    if problem is not None:
        return Restored(change, False, f"{where} not restored: {problem} (it was {change.shown})")
    try:
        knob = knob_named(change.knob)
        if knob.system_path(change.device) != change.path:
            raise MdtuiError(f"{change.path} is not where {change.knob} lives")
        after = write_knob(root, knob, change.device, change.original)
    except KnobPermissionError as exc:
        return Restored(change, False, f"{where} not restored yet: {exc}; the next mdtui start as root will", True)
    except MdtuiError as exc:
        return Restored(change, False, f"{where} not restored: {exc} (it was {change.shown})")
    now = parse_value(knob, after)
    back = now.restore == change.original or now.value == change.original
    if not back:
        return Restored(change, False, f"{where} reads {after} after restoring {change.original}")
    return Restored(change, True, f"{where} restored to {change.shown}")


class KnobChanger:
    """Change knobs with every original journalled first; ``restore()`` (or leaving the block) puts them back."""

    def __init__(
        self, root: SystemRoot | None = None, *, purpose: str = "knob change", directory: Path | None = None
    ) -> None:
        self.root = root or SystemRoot("/")
        self.directory = directory or journal_dir()
        self.entry = JournalFile(
            owner=current_owner(),
            pid=os.getpid(),
            purpose=purpose,
            root=str(self.root.root),
            created_at=time.time(),
            path=self.directory / f"knobs.{os.getpid()}.{time.monotonic_ns()}.json",
        )
        self.restored: list[Restored] = []

    def __enter__(self) -> KnobChanger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()

    @property
    def changes(self) -> list[Change]:
        return list(self.entry.changes)

    def set(self, knob: Knob, device: str, value: str, *, array: str = "", array_uuid: str = "") -> str:
        """Write ``value`` (checked against the knob's range first) and return what the file reads back."""
        device = "" if knob.scope is Scope.GLOBAL else device
        current = read_value(self.root, knob, device)
        if current is None:
            raise MdtuiError(f"{knob.system_path(device)} does not exist: {knob.name} does not apply here")
        checked = knob.check_value(value, current.choices)
        path = knob.system_path(device)
        if all(change.path != path for change in self.entry.changes):
            self._refuse_if_another_changes(path)
            if not array or not array_uuid:
                # A journal entry is acted on only with the array it names and that array's UUID (a restore
                # must not write to whatever array later carries the name): without them it would be
                # unreadable, and a crash would leave the knob changed for good.
                raise MdtuiError(
                    f"{knob.name} is changed only for an array with a UUID (the restore journal names it); "
                    f"{array or 'no array'} has none here: not changed"
                )
            self.entry.changes.append(
                Change(knob.name, device, path, current.restore, current.raw, array, array_uuid or "")
            )
            try:
                _save(self.entry)  # on disk before the knob changes: the only trace if mdtui dies next
            except OSError as exc:
                self.entry.changes.pop()
                raise MdtuiError(
                    f"cannot write the restore journal in {self.directory} ({exc.strerror or exc}); "
                    f"{knob.name} was not changed"
                ) from None
        return write_knob(self.root, knob, device, checked)

    def _refuse_if_another_changes(self, path: str) -> None:
        """Two processes changing one knob would each put back what the other set: the second is refused."""
        for other in load_journals(self.directory):
            if other.path == self.entry.path or not owner_alive(other.owner):
                continue
            if any(change.path == path for change in other.changes):
                raise MdtuiError(
                    f"{path} is being changed by {other.purpose} (mdtui pid {other.pid}); "
                    "wait for it to finish, it puts the value back"
                )

    def restore(self) -> list[Restored]:
        """Every original back, newest change first; the journal is removed afterwards. Safe to call twice."""
        done = [restore_change(self.root, change) for change in reversed(self.entry.changes)]
        self.entry.changes = [item.change for item in reversed(done) if item.keep]
        _settle(self.entry)
        self.restored += done
        return done


def recover_dead(root: SystemRoot | None = None, directory: Path | None = None) -> list[str]:
    """Restore the knobs of every journal whose owner died, and remove the journal: one line per knob."""
    system = root or SystemRoot("/")
    lines = []
    for entry in load_journals(directory):
        if owner_alive(entry.owner) or Path(entry.root).resolve() != system.root.resolve():
            continue
        done = [restore_change(system, change) for change in reversed(entry.changes)]
        why = f"left changed by {entry.purpose}, pid {entry.pid}, which did not finish"
        lines += [f"{item.text} ({why})" for item in done]
        entry.changes = [item.change for item in reversed(done) if item.keep]
        _settle(entry)
    return lines


def _settle(entry: JournalFile) -> None:
    """Remove a journal with nothing left to restore; rewrite one that keeps changes for a later start."""
    if entry.path is None:
        return
    if not entry.changes:
        with contextlib.suppress(UnsafeStateError):
            StateDir(entry.path.parent).remove(entry.path.name)
        return
    with contextlib.suppress(OSError):
        _save(entry)


def knobs_at_start(root: str = "/") -> list[str]:
    """recover_dead on the live system; nothing for a captured tree (--root), and never an exception."""
    return recover_at_start(root, recover_dead, "knobs")


def recover_at_start(root: str, recover: Callable[[SystemRoot], list[str]], what: str) -> list[str]:
    """A journal's ``recover`` on the live system at start: nothing for a captured tree, never an exception."""
    system = SystemRoot(root)
    if not system.is_live:
        return []
    try:
        return recover(system)
    except (OSError, MdtuiError) as exc:  # a notice must never stop the command the user asked for
        log.warning("could not look for %s left changed: %s", what, exc)
        return []
