"""After a crash or a reboot: every reshape mdtui started (its journal) or md reports, what an interrupted one needs,
and the steps that resume it."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult
from mdtui.confirmation import require_confirmed
from mdtui.errors import CommandError, MdtuiError
from mdtui.execute.mdadm import find_array, resolve_member
from mdtui.execute.state import ReshapeEntry, ReshapeJournal
from mdtui.format import plural
from mdtui.keep.grow import GROW_TIMEOUT_S, SHAPE_WAIT_S, has_shape
from mdtui.keep.grow_facts import reshape_position
from mdtui.model.array import MdArray
from mdtui.plan.describe import step_lines
from mdtui.plan.sync_time import RESHAPE
from mdtui.probe.root import SystemRoot
from mdtui.state_dir import same_uuid


@dataclass(frozen=True)
class ReshapeState:
    """A reshape mdtui started (its journal) or md reports, as it stands now."""

    device: str  # the device the grow was planned on (/dev/md0)
    state: str  # running, pending, not assembled, finished
    needs: str  # what it needs, in words
    backup_file: str | None
    fraction: float | None = None
    entry: ReshapeEntry | None = None
    holder: str | None = None  # an inactive array holding the members (/dev/md127)

    @property
    def name(self) -> str:
        return Path(self.device).name


def reshape_line(state: ReshapeState) -> str:
    """One line for scan and the app: which array, how far, what it goes to, what it needs."""
    done = f" {state.fraction * 100:.1f}%" if state.fraction is not None and state.state == "running" else ""
    entry = state.entry
    target = ""
    if entry is not None:
        chunk = f", {entry.target_chunk_bytes // 1024} KiB chunk" if entry.target_chunk_bytes else ""
        target = f" to {entry.target_level}, {plural(entry.target_members, 'member')}{chunk}"
    backup = f"; backup file {state.backup_file}" if state.backup_file and state.state != "finished" else ""
    return f"reshape of {state.device}{target}: {state.state}{done}{backup}; needs {state.needs}"


def _members_of(system: SystemRoot, entry: ReshapeEntry) -> set[str]:
    return {name for path in entry.member_paths if (name := resolve_member(system, path)) is not None}


def reshape_states(
    system: SystemRoot, arrays: Sequence[MdArray], journal: ReshapeJournal | None = None
) -> list[ReshapeState]:
    """Every reshape running, pending or interrupted: journal entries matched to the arrays by UUID (an inactive
    array by its members), and any array md reports reshaping that mdtui did not start."""
    journal = journal or ReshapeJournal()
    states: list[ReshapeState] = []
    seen: set[str] = set()
    for entry in journal.entries():
        array = next((a for a in arrays if same_uuid(a.uuid, entry.uuid)), None)
        if array is None:
            members = _members_of(system, entry)
            array = next((a for a in arrays if members and members & {m.name for m in a.members}), None)
        states.append(_state(system, entry, array))
        if array is not None:
            seen.add(array.name)
    for array in arrays:
        if array.name in seen:
            continue
        position = reshape_position(system, array.name)
        if array.sync is not None and array.sync.action == RESHAPE:
            states.append(
                ReshapeState(array.dev_path, "running", "nothing: md is reshaping it", None, array.sync.fraction)
            )
        elif position not in (None, "none") and array.state not in ("inactive", "clear"):
            states.append(_pending(array, None, None))
    return states


def _backup_words(backup: str | None) -> str:
    return f" with its backup file {backup}" if backup else ""


def _state(system: SystemRoot, entry: ReshapeEntry, array: MdArray | None) -> ReshapeState:
    backup = entry.backup_file
    if array is None:
        return ReshapeState(
            entry.device,
            "not assembled",
            f"assemble it{_backup_words(backup)}: `mdtui grow {entry.device} --resume`",
            backup,
            entry=entry,
        )
    if array.state in ("inactive", "clear"):
        return ReshapeState(
            entry.device,
            "not assembled",
            f"{array.dev_path} holds its members inactive (mdadm --incremental does not start an interrupted "
            f"reshape{' that has a backup file' if backup else ''}): `mdtui grow {entry.device} --resume` stops it "
            f"and assembles{_backup_words(backup)}",
            backup,
            entry=entry,
            holder=array.dev_path,
        )
    if array.sync is not None and array.sync.action == RESHAPE:
        keep = f"; keep {backup} until it ends" if backup else ""
        return ReshapeState(
            entry.device, "running", f"nothing: md is reshaping it{keep}", backup, array.sync.fraction, entry
        )
    position = reshape_position(system, array.name)
    if position not in (None, "none"):
        return _pending(array, entry, backup)
    return ReshapeState(entry.device, "finished", "nothing: it has its new shape", backup, 1.0, entry)


def _pending(array: MdArray, entry: ReshapeEntry | None, backup: str | None) -> ReshapeState:
    if array.state == "auto-read-only":
        needs = f"its first write, or `mdtui grow {array.dev_path} --resume` (mdadm --readwrite)"
    else:
        needs = f"`mdtui grow {array.dev_path} --resume` (mdadm --grow --continue{_backup_words(backup)})"
    return ReshapeState(array.dev_path, "pending", needs, backup, entry=entry)


@dataclass(frozen=True)
class ResumeStep:
    argv: tuple[str, ...]
    description: str
    leaves_child: bool = False


@dataclass(frozen=True)
class ResumePlan:
    device: str
    state: ReshapeState
    steps: tuple[ResumeStep, ...]

    @property
    def confirmation(self) -> str:
        """What the user types (or --yes stands for) to resume the reshape: the array's name."""
        return self.device.removeprefix("/dev/")


def plan_resume(system: SystemRoot, device: str, journal: ReshapeJournal | None = None) -> ResumePlan:
    """The steps that resume an interrupted or pending reshape of ``device`` (its journal entry says where its
    members and backup file are)."""
    from mdtui.probe.arrays import read_arrays

    arrays = read_arrays(system)
    name = Path(device).name
    found = [
        s
        for s in reshape_states(system, arrays, journal)
        if s.name == name or (s.holder and Path(s.holder).name == name)
    ]
    if not found:
        raise MdtuiError(f"no reshape of {device} is pending: nothing to resume")
    state = found[0]
    steps: list[ResumeStep] = []
    backup = [f"--backup-file={state.backup_file}"] if state.backup_file else []
    if state.state == "running":
        raise MdtuiError(f"{device} is reshaping now: nothing to resume (`mdtui grow {device} --follow` follows it)")
    if state.state == "finished":
        raise MdtuiError(f"{device} has its new shape: nothing to resume")
    if state.backup_file and not os.path.exists(state.backup_file):
        raise MdtuiError(
            f"the backup file {state.backup_file} is gone: md cannot restore the critical section without it "
            "(mdadm --assemble --invalid-backup can start the array without it, losing that section)"
        )
    if state.state == "pending":
        array = next(a for a in arrays if a.dev_path == state.device)
        if array.state == "auto-read-only":
            steps.append(
                ResumeStep(("mdadm", "--readwrite", array.dev_path), f"let md write {array.name}: the reshape goes on")
            )
        else:
            steps.append(
                ResumeStep(
                    ("mdadm", "--grow", "--continue", array.dev_path, *backup),
                    "let mdadm take the reshape up again",
                    leaves_child=True,
                )
            )
        return ResumePlan(state.device, state, tuple(steps))
    entry = state.entry
    assert entry is not None
    missing = [path for path in entry.member_paths if resolve_member(system, path) is None]
    if missing:
        raise MdtuiError(f"{', '.join(missing)} ({entry.device}'s) not there: plug it in, then resume")
    holder = next((a for a in arrays if state.holder and a.dev_path == state.holder), None)
    if holder is not None:
        steps.append(
            ResumeStep(("mdadm", "--stop", holder.dev_path), f"stop the inactive {holder.name} that holds the members")
        )
    steps.append(
        ResumeStep(
            ("mdadm", "--assemble", entry.device, f"--uuid={entry.uuid}", *backup, *entry.member_paths),
            f"assemble {Path(entry.device).name}"
            + (", restoring the critical section from the backup file" if backup else ""),
            leaves_child=bool(backup),
        )
    )
    return ResumePlan(entry.device, state, tuple(steps))


def _has_target(array: MdArray, entry: ReshapeEntry) -> bool:
    """The journal entry's shape reached, as grow's own wait (keep.grow.has_shape) decides it, its layout too."""
    return has_shape(array, entry.target_level, entry.target_members, entry.target_chunk_bytes,
                     entry.target_component_bytes, entry.target_layout)  # fmt: skip


def finish_resumed(system: SystemRoot, plan: ResumePlan, journal: ReshapeJournal | None = None) -> bool:
    """After a resumed reshape ended: whether the array has the shape its journal entry asked for (mdadm's watcher
    may still change the level); the entry goes once it has."""
    entry = plan.state.entry
    deadline = time.monotonic() + SHAPE_WAIT_S
    while True:
        array = find_array(system, plan.device)
        done = (
            array is not None
            and array.sync is None
            and reshape_position(system, array.name) in (None, "none")
            and (entry is None or _has_target(array, entry))
        )
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if done and entry is not None:
        (journal or ReshapeJournal()).remove(entry.uuid)
    return done


def describe_resume(plan: ResumePlan) -> list[str]:
    lines = [f"resume the reshape of {plan.device} ({plan.state.state}): {plan.state.needs}"]
    lines += step_lines((step.argv, step.description) for step in plan.steps)
    return lines


def execute_resume(
    plan: ResumePlan, *, confirmed: str | None, system: SystemRoot | None = None, log: ActionLog | None = None
) -> tuple[CommandResult, ...]:
    """Run the resume steps. mdadm --assemble may exit with an error after it started the array (mdadm 4.2
    crashed so in the lab): then the array reshaping again is what counts."""
    require_confirmed(confirmed, plan.confirmation, f"resuming the reshape of {plan.device}")
    system = system or SystemRoot("/")
    log = log or ActionLog()
    results = []
    for step in plan.steps:
        note = f"resume {plan.device}: {step.description}"
        result = log.run(step.argv, note, timeout_s=GROW_TIMEOUT_S, check=False, leaves_child=step.leaves_child)
        results.append(result)
        if not result.ok:
            array = find_array(system, plan.device)
            started = array is not None and array.state not in ("inactive", "clear")
            if not started or step is not plan.steps[-1]:
                raise CommandError(list(step.argv), result.returncode, result.stderr)
    return tuple(results)
