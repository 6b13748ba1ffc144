"""Repair an array: mark a member failed, remove it, add a disk, replace a member with a spare while the array
stays redundant (`mdadm --replace`), re-add a member that came back. Planned like a create: argv first, the
in-use rules checked for any disk that will be written, a typed confirmation, identities re-checked right
before running, every command logged; the recovery is then followed like a resync."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult
from mdtui.confirmation import require_confirmed
from mdtui.errors import SafetyError
from mdtui.execute.mdadm import array_uuid, find_array, resolve_member
from mdtui.format import plural
from mdtui.keep.locate import Identity, identify
from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.disk import Disk, InUseKind
from mdtui.model.inventory import Inventory
from mdtui.plan.create import member_path
from mdtui.plan.describe import overwrite_line, step_lines
from mdtui.plan.rejected import PlanRejected
from mdtui.plan.sync_time import SyncTime
from mdtui.plan.sync_words import prediction_words
from mdtui.probe.disks import DiskProber
from mdtui.probe.root import SystemRoot

ACTIONS = ("fail", "remove", "add", "replace", "re-add")
# The actions whose member's drive is taken out or handed over: the one the admin must find at the machine.
PULLED_ACTIONS = ("fail", "remove", "replace")
# Members an array of each level can lose and still serve all data (raid10 near=2: one for sure).
_TOLERANCE = {"raid1": None, "raid4": 1, "raid5": 1, "raid6": 2, "raid10": 1, "raid0": 0, "linear": 0}
# `mdadm --remove` also takes these words for members whose device node is gone (hot-unplugged).
REMOVE_KEYWORDS = ("failed", "detached")


@dataclass(frozen=True)
class RepairStep:
    argv: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class RepairPlan:
    array: str  # /dev/md0
    uuid: str | None
    action: str
    member: str | None  # the member acted on (kernel name, or failed/detached)
    disk: Disk | None  # the disk written (add, replace --with, re-add)
    steps: tuple[RepairStep, ...]
    warnings: tuple[str, ...] = ()
    follows_recovery: bool = False  # a recovery/replace copy starts
    # The member failed, removed or replaced, as its drive is told apart at the machine (keep.locate.identify);
    # set by the front end once it has read it, so the confirmation is the serial on that drive's label.
    identity: Identity | None = None

    @property
    def argvs(self) -> tuple[tuple[str, ...], ...]:
        return tuple(step.argv for step in self.steps)

    @property
    def pulled(self) -> str | None:
        """The member whose drive the admin takes out or hands over (fail, remove, replace), or None."""
        return self.member if self.action in PULLED_ACTIONS else None

    @property
    def overwritten(self) -> str | None:
        """The disk the repair writes over (add, replace --with), or None (a re-add keeps its data)."""
        return self.disk.name if self.disk is not None and self.action != "re-add" else None

    @property
    def confirmation(self) -> str:
        """What the user types: the serial on the label of the member failed, removed or replaced (what the admin
        reads before pulling it); else the disk overwritten; else the array."""
        if self.identity is not None and self.pulled is not None:
            return self.identity.token
        return self.overwritten or self.array.removeprefix("/dev/")

    @property
    def command(self) -> str:
        """The `mdtui repair` command line that makes this plan."""
        disk = self.disk.name if self.disk is not None else "DISK"
        options = {
            "fail": f"--fail {self.member}",
            "remove": f"--remove {self.member}",
            "add": f"--add {disk}",
            "replace": f"--replace {self.member} --with {disk}",
            "re-add": f"--re-add {disk}",
        }
        return f"mdtui repair {self.array.removeprefix('/dev/')} {options.get(self.action, '--' + self.action)}"


def _tolerance(array: MdArray) -> int:
    level = array.level or ""
    tolerance = _TOLERANCE.get(level, 0)
    if tolerance is None:  # raid1: all but one
        return max((array.raid_disks or len(array.members)) - 1, 0)
    return tolerance


def _member(array: MdArray, name: str | None) -> ArrayMember | None:
    if name is None:
        return None
    short = name.rsplit("/", 1)[-1]
    return next((m for m in array.members if m.name == short), None)


def plan_repair(
    array: MdArray,
    action: str,
    *,
    member: str | None = None,
    disk: Disk | None = None,
    uuid: str | None = None,
    component_bytes: int | None = None,
) -> RepairPlan:
    """Plan one repair action, or raise PlanRejected naming every problem.

    ``member`` is the member acted on (fail, remove, replace, re-add names the disk coming back through
    ``disk``); ``disk`` the disk to write (add, replace's spare, re-add); ``component_bytes`` the space each
    member gives the array (md/component_size), which a new disk must have.
    """
    problems: list[str] = []
    warnings: list[str] = []
    dev = array.dev_path
    steps: list[RepairStep] = []
    if action not in ACTIONS:
        raise PlanRejected(f"repair {dev}", [f"unknown action {action!r} (one of {', '.join(ACTIONS)})"])
    if array.level in ("raid0", "linear") or array.metadata in (None, "none"):
        problems.append(f"{dev} is {array.level or 'inactive'} without redundancy; it cannot rebuild a member")
    found = _member(array, member)
    active = [m for m in array.members if not m.faulty and not m.spare]
    if action in PULLED_ACTIONS and member is None:
        problems.append(f"name the member to {action}")
    elif action in ("fail", "replace") and found is None:
        names = ", ".join(m.name for m in array.members) or "none"
        problems.append(f"{member} is not a member of {array.name} (members: {names})")
    if action == "fail" and found is not None:
        if found.faulty:
            problems.append(f"{found.name} is already marked failed")
        elif not found.spare:
            lost = array.degraded + 1
            if lost > _tolerance(array):
                problems.append(
                    f"failing {found.name} would leave {array.name} ({array.level}) missing "
                    f"{plural(lost, 'member')}, more than it can lose ({_tolerance(array)}): "
                    "data would become unreadable"
                )
            else:
                warnings.append(f"{array.name} runs degraded from then on until a disk is added")
        fail_argv = ("mdadm", "--manage", dev, "--fail", f"/dev/{found.name}")
        steps.append(RepairStep(fail_argv, f"mark {found.name} failed"))
    if action == "remove" and member is not None:
        if member in REMOVE_KEYWORDS:
            steps.append(RepairStep(("mdadm", "--manage", dev, "--remove", member), f"remove the {member} members"))
        elif found is None:
            problems.append(
                f"{member} is not a member of {array.name}; for a member whose disk is gone use `--remove detached`"
            )
        elif not found.faulty and not found.spare:
            problems.append(f"{found.name} is an active member; mark it failed first (`--fail {found.name}`)")
        else:
            steps.append(
                RepairStep(("mdadm", "--manage", dev, "--remove", f"/dev/{found.name}"), f"remove {found.name}")
            )
    if action in ("add", "replace", "re-add"):
        if disk is None:
            problems.append(f"name the disk to {'add' if action != 'replace' else 'copy onto (--with)'}")
        else:
            problems += _disk_problems(array, disk, action, component_bytes)
    if action == "replace" and found is not None and (found.faulty or found.spare or found not in active):
        problems.append(f"{found.name} is not an active member; `--replace` copies from a working one")
    if not problems and disk is not None:
        path = member_path(disk)
        if action == "add":
            steps.append(RepairStep(("mdadm", "--manage", dev, "--add", path), f"add {disk.name} (overwritten)"))
        elif action == "re-add":
            steps.append(RepairStep(("mdadm", "--manage", dev, "--re-add", path), f"re-add {disk.name}"))
        elif action == "replace" and found is not None:
            if _member(array, disk.name) is None:
                steps.append(RepairStep(("mdadm", "--manage", dev, "--add", path), f"add {disk.name} as a spare"))
            steps.append(
                RepairStep(
                    ("mdadm", "--manage", dev, "--replace", f"/dev/{found.name}", "--with", path),
                    f"copy {found.name} onto {disk.name}, then mark {found.name} failed",
                )
            )
    if problems:
        raise PlanRejected(f"{action} on {dev}", problems)
    return RepairPlan(
        array=dev,
        uuid=uuid,
        action=action,
        member=found.name if found is not None else member,
        disk=disk,
        steps=tuple(steps),
        warnings=tuple(warnings),
        follows_recovery=action in ("add", "replace", "re-add"),
    )


def _disk_problems(array: MdArray, disk: Disk, action: str, component_bytes: int | None) -> list[str]:
    problems = []
    already = _member(array, disk.name)
    if action == "replace" and already is not None:
        if not already.spare:
            problems.append(f"{disk.name} is already an active member of {array.name}")
        return problems
    # A re-added member still carries this array's superblock; that is the one reason allowed.
    problems += disk.refusals(allowed=frozenset({InUseKind.MD_SUPERBLOCK}) if action == "re-add" else frozenset())
    if action == "re-add" and not any(r.kind is InUseKind.MD_SUPERBLOCK for r in disk.in_use):
        problems.append(f"{disk.name} carries no md superblock: there is nothing to re-add; use --add")
    if component_bytes is not None and disk.size_bytes is not None and disk.size_bytes < component_bytes:
        problems.append(
            f"{disk.name} holds {disk.size_bytes} bytes, less than the {component_bytes} each member of "
            f"{array.name} gives it"
        )
    return problems


def with_identity(plan: RepairPlan, root: SystemRoot, inventory: Inventory) -> RepairPlan:
    """The plan with its pulled member's drive told apart at the machine (keep.locate.identify), so what is typed
    to confirm is the serial on that drive's label; the plan as it was when no member is pulled."""
    disk = inventory.disk_of(plan.pulled) if plan.pulled is not None else None
    return replace(plan, identity=identify(root, disk)) if disk is not None else plan


def describe_repair(plan: RepairPlan, predicted: SyncTime | None = None, predicted_label: str = "") -> list[str]:
    """The plan in lines; with the plan's identity (with_identity) what tells the pulled drive apart, with
    ``predicted`` how long the rebuild takes (bench/sync_forecast.repair_forecast)."""
    lines = [f"{plan.action} on {plan.array}:"]
    lines += step_lines((step.argv, step.description) for step in plan.steps)
    if plan.disk is not None and plan.action != "re-add":
        lines.append(overwrite_line(plan.disk))
    for warning in plan.warnings:
        lines.append(f"  ⚠ {warning}")
    if plan.follows_recovery:
        lines.append("  then md copies data onto it (recovery); mdtui follows it to the end")
    identity = plan.identity
    if identity is not None and plan.pulled is not None:
        lines += ["  the drive:", *("    " + line for line in identity.lines())]
        lines.append(f"    `mdtui locate {identity.disk}` blinks its LED; the confirmation is the serial on its label")
    if predicted is not None:
        lines.append("  " + prediction_words(predicted, predicted_label))
    return lines


def recheck(plan: RepairPlan, root: SystemRoot | None = None) -> None:
    """Right before running: the array is the one planned (same UUID), and the disk to write is the same disk,
    still free."""
    system = root or SystemRoot("/")
    problems = []
    array = find_array(system, plan.array)
    if array is None:
        raise SafetyError(f"{plan.array} is gone; nothing was run")
    if plan.uuid is not None and array_uuid(plan.array) not in (None, plan.uuid):
        problems.append(f"{plan.array} is a different array now (UUID changed); plan again")
    if plan.disk is not None:
        disk = plan.disk
        path = member_path(disk)
        name = resolve_member(system, path)
        if name is None:
            problems.append(f"{path} is gone (planned as {disk.name})")
        else:
            current = DiskProber(system).probe(name)
            if disk.serial and current.serial != disk.serial:
                problems.append(f"{path} now has serial {current.serial or 'unknown'}, planned {disk.serial}")
            if name != disk.name:
                problems.append(f"{path} is now {name}, planned as {disk.name}")
            # As at planning (_disk_problems), right before the write: a re-added disk carries the array's
            # superblock, and a disk already in the array is its member.
            allowed = {InUseKind.MD_SUPERBLOCK} if plan.action == "re-add" else set()
            if _member(array, name) is not None:
                allowed.add(InUseKind.MD_MEMBER)
            problems += current.refusals(f"{path} ({name})", frozenset(allowed))
    if problems:
        raise SafetyError(f"refusing to {plan.action} on {plan.array}:\n  - " + "\n  - ".join(problems))


def execute_repair(
    plan: RepairPlan, *, confirmed: str | None, root: SystemRoot | None = None, log: ActionLog | None = None
) -> Sequence[CommandResult]:
    require_confirmed(confirmed, plan.confirmation, f"the {plan.action} on {plan.array}")
    system = root or SystemRoot("/")
    log = log or ActionLog()
    recheck(plan, system)
    results = []
    for step in plan.steps:
        results.append(log.run(step.argv, f"repair {plan.array}: {step.description}"))
    return tuple(results)
