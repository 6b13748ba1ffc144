"""Keeping a knob's value: set it now and at every start (mdtui's udev rule), or take the rule out; one plan and
one sequence for `mdtui tune --apply/--remove` and the Tune screen, which only show the plan and ask."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError, PlanError
from mdtui.format import iec_bytes
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.tune.catalogue import Knob, Scope
from mdtui.tune.journal import write_knob
from mdtui.tune.read import Value, array_shape, read_value
from mdtui.tune.udev import RulePlan, plan_apply, plan_remove, write_plan


@dataclass(frozen=True)
class KnobApplyPlan:
    """A knob set to ``value`` now and by the rule file whenever the array appears."""

    array: MdArray
    knob: Knob
    value: str  # checked against the knob's range and the file's choices
    before: Value  # the live value now: put back if the rule cannot be written
    rule: RulePlan
    memory_bytes: int | None  # what the new value costs (stripe cache), None when it costs nothing

    @property
    def confirmation(self) -> str:
        """What the user types to change the array's knob and its rule: the array's name."""
        return self.array.name

    @property
    def headline(self) -> str:
        cost = f" (memory {iec_bytes(self.memory_bytes)})" if self.memory_bytes is not None else ""
        return (
            f"{self.array.name} {self.knob.name}: {self.before.raw} → {self.value} now{cost}, "
            "and whenever the array appears, through:"
        )

    def describe(self) -> list[str]:
        """The plan as shown before the confirmation: the change, then the rule file's diff."""
        return [self.headline, self.rule.diff or f"{self.rule.path}: already says so"]


@dataclass(frozen=True)
class KnobApplied:
    plan: KnobApplyPlan
    after: str  # what the knob's file says once written

    def lines(self) -> list[str]:
        plan = self.plan
        return [
            f"{plan.array.name} {plan.knob.name} reads {self.after}; {plan.rule.path} written.",
            f"`udevadm trigger --action=change {plan.array.dev_path}` applies the rule again without a reboot.",
        ]


def plan_knob_apply(
    root: SystemRoot, array: MdArray, knob: Knob, value: str, inventory: Inventory | None = None
) -> KnobApplyPlan:
    """The change and the rule file's new text; PlanError for a knob a rule cannot keep, a missing file or a
    value out of range (nothing is written here)."""
    if knob.scope not in (Scope.MD, Scope.QUEUE):
        plan_apply(array, knob, value, root=root)  # raises the reason a member's or a global knob is not kept by a rule
    current = read_value(root, knob, array.name)
    if current is None:
        raise PlanError(f"{knob.system_path(array.name)} does not exist: {knob.name} does not apply to {array.name}")
    checked = knob.check_value(value, current.choices)
    rule = plan_apply(array, knob, checked, root=root)
    memory = knob.memory_bytes(checked, array_shape(array, inventory))
    return KnobApplyPlan(array, knob, checked, current, rule, memory)


def apply_knob(plan: KnobApplyPlan, *, confirmed: str | None, root: SystemRoot) -> KnobApplied:
    """Write the knob, then the rule file; if the rule cannot be written the live value is put back, so the
    two never disagree (the error says whether that worked). ``confirmed``: what the user typed."""
    knob, array = plan.knob, plan.array
    require_confirmed(confirmed, plan.confirmation, f"setting {knob.name}={plan.value} on {array.name}")
    after = write_knob(root, knob, array.name, plan.value)
    try:
        write_plan(plan.rule)
    except (MdtuiError, OSError) as exc:
        reason = f"cannot write {plan.rule.path}: {exc.strerror}" if isinstance(exc, OSError) else str(exc)
        try:
            write_knob(root, knob, array.name, plan.before.restore)
        except MdtuiError as restore_failed:
            raise MdtuiError(
                f"{reason}; putting {knob.name} back to {plan.before.restore} failed too ({restore_failed}): "
                f"it reads {after} now, and no rule keeps it"
            ) from None
        raise MdtuiError(f"{reason}; {knob.name} is back to {plan.before.raw}") from None
    return KnobApplied(plan, after)


@dataclass(frozen=True)
class KnobRemovePlan:
    """The array's rule for a knob taken out of the file; the live value stays until the array starts again."""

    array: MdArray
    knob: Knob
    rule: RulePlan

    @property
    def confirmation(self) -> str:
        return self.array.name

    def describe(self) -> list[str]:
        return [f"{self.array.name} {self.knob.name} will no longer be set when the array appears:", self.rule.diff]


def plan_knob_remove(root: SystemRoot, array: MdArray, knob: Knob) -> KnobRemovePlan:
    return KnobRemovePlan(array, knob, plan_remove(array, knob, root=root))


def remove_knob_rule(plan: KnobRemovePlan, *, confirmed: str | None, root: SystemRoot) -> str:
    """Write the file without the rule; the line that says what the knob reads now."""
    array, knob = plan.array, plan.knob
    require_confirmed(confirmed, plan.confirmation, f"removing the {knob.name} rule of {array.name}")
    write_plan(plan.rule)
    live = read_value(root, knob, array.name)
    return f"removed; {array.name} {knob.name} stays {live.raw if live else 'as it is'} until the array starts again."
