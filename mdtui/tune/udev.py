"""Making a knob's value survive a reboot the way admins do: a udev rule file of mdtui's own.

One file, ``90-mdtui-tune.rules`` in /etc/udev/rules.d ($MDTUI_UDEV_RULES_DIR for tests), one rule per
array and knob, matched on the array's UUID as mdadm's own rules export it (ENV{MD_UUID}, set by
63-md-raid-arrays.rules, which runs first), or on the kernel name for an array without a UUID. Every
change is shown as a diff before it is written; the file is written whole through mdtui.output_file and
removed when its last rule goes.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult
from mdtui.errors import MdtuiError, PlanError
from mdtui.model.array import MdArray
from mdtui.output_file import write_text
from mdtui.probe.root import SystemRoot
from mdtui.rootwrite import remove_file
from mdtui.state_dir import env_location
from mdtui.tune.catalogue import Knob, Scope

RULES_DIR = "/etc/udev/rules.d"
RULES_FILE = "90-mdtui-tune.rules"
HEADER = (
    "# Written by mdtui (`mdtui tune --apply NAME=VALUE ARRAY`): md knobs set again whenever the array appears.\n"
    "# `mdtui tune --remove NAME ARRAY` takes a rule out; the file goes with its last rule.\n"
)
_RULE = re.compile(
    r'^ACTION=="add\|change", SUBSYSTEM=="block", KERNEL=="(?P<kernel>md[^"]*)"'
    r'(?:, ENV\{MD_UUID\}=="(?P<uuid>[0-9a-fA-F:]+)")?, ATTR\{(?P<attr>(?:md|queue)/[a-z_]+)\}="(?P<value>[^"]*)"$'
)
_COMMENT = re.compile(r"^# mdtui: (?P<array>\S+) (?P<knob>\S+)$")


# The rule file holds a few lines per array; anything far larger is not mdtui's and is not read.
RULES_LIMIT = 1 << 20


def rules_path(directory: str | os.PathLike[str] | None = None) -> Path:
    # In another user's environment (sudo, su) a directory from it is used only when root owns it (env_location):
    # root must not write udev rules where the invoking user chose.
    base = directory or env_location("MDTUI_UDEV_RULES_DIR") or RULES_DIR
    return Path(base) / RULES_FILE


def rules_file(root: SystemRoot) -> Path:
    """The rule file mdtui reads and plans against: the live one, or a captured tree's own copy under --root."""
    path = rules_path()
    return path if root.is_live else root.path(str(path))


def mdadm_uuid(uuid: str) -> str:
    """sysfs's 8-4-4-4-12 form as mdadm exports it (8:8:8:8), which is what udev's MD_UUID holds."""
    digits = "".join(c for c in uuid.lower() if c in "0123456789abcdef")
    if len(digits) != 32:
        raise PlanError(f"{uuid!r} is not an md array UUID")
    return ":".join(digits[i : i + 8] for i in range(0, 32, 8))


@dataclass(frozen=True)
class Rule:
    array: str  # the array's name when the rule was written ("md0")
    knob: str  # catalogue name
    attribute: str  # "md/stripe_cache_size"
    value: str
    uuid: str | None  # mdadm form; None: matched on the kernel name

    def matches(self, array: MdArray) -> bool:
        if self.uuid and array.uuid:
            with contextlib.suppress(PlanError):
                return mdadm_uuid(array.uuid) == self.uuid.lower()
        return self.uuid is None and self.array == array.name

    def text(self) -> str:
        match = f'ENV{{MD_UUID}}=="{self.uuid}", ' if self.uuid else ""
        kernel = "md*" if self.uuid else self.array
        return (
            f"# mdtui: {self.array} {self.knob}\n"
            f'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="{kernel}", {match}'
            f'ATTR{{{self.attribute}}}="{self.value}"\n'
        )


def parse_rules(text: str) -> list[Rule]:
    """mdtui's rules in the file (other lines are left alone and not reported)."""
    rules = []
    pending: tuple[str, str] | None = None
    for line in text.splitlines():
        if comment := _COMMENT.match(line):
            pending = (comment["array"], comment["knob"])
            continue
        if (rule := _RULE.match(line)) and pending is not None:
            rules.append(Rule(pending[0], pending[1], rule["attr"], rule["value"], rule["uuid"]))
        pending = None
    return rules


def _rules_text(path: Path | None, root: SystemRoot | None) -> str:
    """The rule file's text ("" when there is none), read bounded and never blocking; a captured tree's is
    found beneath the tree only (a link out of it is refused, never followed). PlanError when unusable."""
    system = root or SystemRoot("/")
    where = path or rules_file(system)
    try:
        text = system.read_table(where, limit=RULES_LIMIT)
    except MdtuiError as exc:
        raise PlanError(f"cannot read {where}: {exc}") from None
    return text or ""


def read_rules(path: Path | None = None, root: SystemRoot | None = None) -> list[Rule]:
    try:
        return parse_rules(_rules_text(path, root))
    except PlanError:
        return []


def rules_for(array: MdArray, path: Path | None = None, root: SystemRoot | None = None) -> dict[str, Rule]:
    """This array's rules by knob name."""
    return {rule.knob: rule for rule in read_rules(path, root) if rule.matches(array)}


def kept_by_rule(knob: Knob) -> bool:
    """Whether an array's udev rule can keep this knob (its own md and queue knobs; not a member's or md's
    global limits)."""
    return knob.persistable and knob.scope in (Scope.MD, Scope.QUEUE)


def rule_of(knob: Knob, rules: dict[str, Rule]) -> Rule | None:
    """The array's rule for ``knob``, if it has one and the knob is one a rule keeps."""
    return rules.get(knob.name) if kept_by_rule(knob) else None


# The RULE column's words for a knob without a rule, and what they mean (the CLI prints it under the table).
NO_RULE = "none"
NOT_KEPT = "-"
RULE_LEGEND = (
    "RULE: the value mdtui's udev rule sets at every start; none: not kept after a reboot (tune --apply "
    "NAME=VALUE keeps it); -: a member's knob or a global limit, which no array rule keeps"
)


def rule_cell(knob: Knob, live: str | None, rules: dict[str, Rule]) -> str:
    """The RULE column for one knob: the rule's value ("4096", "4096 ≠ live 256" when the live value differs),
    NO_RULE, or NOT_KEPT."""
    if not kept_by_rule(knob):
        return NOT_KEPT
    rule = rules.get(knob.name)
    if rule is None:
        return NO_RULE
    return rule.value if rule.value == live else f"{rule.value} ≠ live {live if live is not None else '?'}"


def render(rules: list[Rule]) -> str:
    return HEADER + "".join(rule.text() for rule in rules) if rules else ""


@dataclass(frozen=True)
class RulePlan:
    path: Path
    old: str
    new: str  # "" removes the file
    summary: str

    @property
    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.old.splitlines(keepends=True),
            self.new.splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.old else "/dev/null",
            tofile=f"{self.path} (after)" if self.new else "/dev/null",
        )
        return "".join(lines)


def plan_apply(
    array: MdArray, knob: Knob, value: str, path: Path | None = None, root: SystemRoot | None = None
) -> RulePlan:
    """The file with this array's rule for ``knob`` set to ``value`` (added, or replacing the old one)."""
    if not knob.persistable or knob.scope is Scope.GLOBAL:
        raise PlanError(
            f"{knob.name} is a global md limit, not an array's: persist it with a file in /etc/sysctl.d "
            f"(dev.raid.{knob.attribute} = {value})"
        )
    if knob.scope is Scope.MEMBER:
        raise PlanError(f"{knob.name} is a member's knob: mdtui persists only the array's own knobs")
    old = _rules_text(path, root)
    path = path or rules_file(root or SystemRoot("/"))
    uuid = mdadm_uuid(array.uuid) if array.uuid else None
    rule = Rule(array.name, knob.name, f"{knob.scope.value}/{knob.attribute}", value, uuid)
    kept = [r for r in parse_rules(old) if not (r.knob == knob.name and r.matches(array))]
    return RulePlan(path, old, render([*kept, rule]), f"{array.name} {knob.name}={value} at every start")


def plan_remove(array: MdArray, knob: Knob, path: Path | None = None, root: SystemRoot | None = None) -> RulePlan:
    old = _rules_text(path, root)
    path = path or rules_file(root or SystemRoot("/"))
    rules = parse_rules(old)
    kept = [r for r in rules if not (r.knob == knob.name and r.matches(array))]
    if len(kept) == len(rules):
        raise PlanError(f"{path} has no rule for {array.name} {knob.name}: nothing to remove")
    return RulePlan(path, old, render(kept), f"{array.name} {knob.name} no longer set by udev")


def write_plan(plan: RulePlan) -> None:
    """Write the planned file whole (through mdtui.output_file), or remove it when no rule is left; either is
    recorded in the action log and the system journal with its diff."""
    started = time.monotonic()
    failure: MdtuiError | None = None
    try:
        if plan.new:
            write_text(plan.path, plan.new, replace=True)
        else:
            try:
                remove_file(plan.path)
            except MdtuiError as exc:
                raise PlanError(str(exc)) from None
    except MdtuiError as exc:
        failure = exc
    argv = ("mdtui-write", str(plan.path)) if plan.new else ("mdtui-remove", str(plan.path))
    returncode, error = (0, "") if failure is None else (1, str(failure))
    ActionLog().record(CommandResult(argv, returncode, plan.diff, error, time.monotonic() - started), plan.summary)
    if failure is not None:
        raise failure
