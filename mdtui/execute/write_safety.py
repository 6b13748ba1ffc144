"""Changing a live array's bitmap or consistency policy: planned as mdadm --grow argv, the array re-checked
right before the first command (the same UUID, the same bitmap and policy as planned), every command logged."""

from __future__ import annotations

from dataclasses import dataclass, field

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError, SafetyError
from mdtui.execute.record import kernel_release
from mdtui.model.array import MdArray
from mdtui.model.safety import LiveSafety
from mdtui.plan.levels import RaidLevel, level_from_name
from mdtui.plan.write_safety import GROW_TIMEOUT_S, SafetyChoice, change_steps, live_problems
from mdtui.probe.root import SystemRoot
from mdtui.probe.safety import bitmap_file_problems, read_live_safety
from mdtui.state_dir import same_uuid


@dataclass(frozen=True)
class SafetyChangePlan:
    array: str  # kernel name: md0
    uuid: str | None
    level: RaidLevel
    members: tuple[str, ...]
    now: LiveSafety
    want: SafetyChoice
    steps: tuple[tuple[str, ...], ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def device(self) -> str:
        return f"/dev/{self.array}"

    @property
    def confirmation(self) -> str:
        """What the user types (or --yes stands for) to change the array's bitmap or policy: the array."""
        return self.array


def live_safety(root: SystemRoot, array: MdArray) -> LiveSafety:
    found = read_live_safety(root, array.name)
    if found is None:
        raise MdtuiError(f"{array.name} reports no consistency policy: md does not answer for it here")
    return found


def plan_safety_change(root: SystemRoot, array: MdArray, want: SafetyChoice) -> SafetyChangePlan:
    """The mdadm --grow steps from the array's bitmap and policy to ``want``, and why md would refuse any."""
    if array.level is None:
        raise MdtuiError(f"{array.name} reports no level")
    try:
        level = level_from_name(array.level)
    except ValueError as exc:
        raise MdtuiError(str(exc)) from None
    now = live_safety(root, array)
    problems = live_problems(level, now, want, kernel=kernel_release(root))
    members = tuple(m.name for m in array.members)
    if want.bitmap_kind == "file" and root.is_live:
        problems += bitmap_file_problems(root, want.bitmap, members)
    steps = tuple(change_steps(array.dev_path, now, want)) if not problems else ()
    return SafetyChangePlan(array.name, array.uuid, level, members, now, want, steps, tuple(problems))


def execute_safety_change(
    plan: SafetyChangePlan, *, confirmed: str | None, root: SystemRoot | None = None, log: ActionLog | None = None
) -> list[CommandResult]:
    """Run a plan ``confirmed`` by its token (mdtui.confirmation): the array must still carry the planned UUID
    and the planned bitmap and policy."""
    require_confirmed(confirmed, plan.confirmation, f"changing the write safety of {plan.device}")
    if plan.problems:
        raise SafetyError(f"{plan.array}: {'; '.join(plan.problems)}")
    system = root or SystemRoot("/")
    log = log or ActionLog()
    uuid = system.read_text(f"/sys/block/{plan.array}/md/uuid")
    if not same_uuid(uuid, plan.uuid):
        raise SafetyError(f"{plan.device} is not the array planned (UUID {uuid or 'unknown'}); plan again")
    now = read_live_safety(system, plan.array)
    if now != plan.now:
        raise SafetyError(f"{plan.device}'s bitmap or policy changed since the plan; plan again")
    if plan.want.bitmap_kind == "file":
        problems = bitmap_file_problems(system, plan.want.bitmap, plan.members)
        if problems:
            raise SafetyError(f"{plan.device}: {'; '.join(problems)}")
    return [log.run(argv, f"write safety of {plan.device}", timeout_s=GROW_TIMEOUT_S) for argv in plan.steps]
