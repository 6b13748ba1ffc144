"""Keeping the highlighted array from the inventory: alerts, persist, scrub and repair, each planned by the core
function its CLI verb calls, shown (argv, file diff) before anything runs, confirmed by typing as the CLI asks,
and refused on a captured tree (refused_on_tree)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.widget import Widget

from mdtui.errors import MdtuiError
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.common.render import Palette

if TYPE_CHECKING:
    from mdtui.keep.alerts import AlertsPlan
    from mdtui.keep.persist import PersistPlan
    from mdtui.keep.repair import RepairPlan
    from mdtui.keep.scrub import ScrubPlan
    from mdtui.ui.inventory.lifecycle_forms import RepairChoice

# The forms, the planners and the dialogs are imported when first used: the first screen needs none of them.

T = TypeVar("T")



@dataclass(frozen=True)
class ArrayKey:
    """A key that acts on the highlighted array: the inventory's binding, and the array detail's line and key."""

    key: str
    action: str  # the inventory's action_<name>
    label: str  # in the footer
    words: str  # in the detail's Keys line


# One list for the footer (while an array is highlighted), the array's detail (its Keys line, and the keys
# that work inside it) and the help. Not s: the inventory's tables sort with s, and a key means one thing
# on a screen (issue 44); v for verify, which a scrub is (md's "check").
ARRAY_KEYS = (
    ArrayKey("a", "alerts", "Alerts", "alerts"),
    ArrayKey("p", "persist", "Persist", "persist"),
    ArrayKey("v", "scrub", "Scrub", "scrub"),
    ArrayKey("f", "repair", "Repair", "repair"),
    ArrayKey("x", "teardown", "Tear down", "tear down"),
)


def keys_line() -> str:
    return " · ".join(f"{key.key} {key.words}" for key in ARRAY_KEYS)


def plan_body(lines: list[str], palette: Palette, intro: str | None = None) -> RenderableType:
    """A plan as the CLI prints it, diff lines coloured and marked (+/-) so they read without colour too."""
    parts: list[RenderableType] = []
    if intro:
        parts.append(Text(intro, style=palette.muted))
    for line in lines:
        body = line.lstrip()
        style = ""
        if body.startswith("+") and not body.startswith("+++"):
            style = palette.good
        elif body.startswith("-") and not body.startswith("---"):
            style = palette.error
        elif body.startswith("⚠"):
            style = palette.warning
        parts.append(Text(line, style=style))
    return Group(*parts)


class Lifecycle(Widget):
    """The four actions, shown only through their forms, confirmations and notifications; ``done`` runs after
    anything changed, to scan again."""

    DEFAULT_CSS = "Lifecycle { display: none; }"

    def __init__(self, root: str, palette: Callable[[], Palette], done: Callable[[], None]) -> None:
        super().__init__()
        self.root = root
        self._palette = palette
        self._done = done

    @property
    def system(self) -> SystemRoot:
        return SystemRoot(self.root)

    # -- running the core off the UI thread --------------------------------------------------------------

    # Not exclusive: a new plan must not mark an initramfs refresh or a repair still running as cancelled.
    @work(thread=True, exit_on_error=False, group="lifecycle")
    def background(self, doing: str, call: Callable[[], T], then: Callable[[T], None]) -> None:
        """Thread worker: ``call`` (a plan, or a confirmed change), then ``then`` with its result on the UI thread;
        a refusal or failure is shown in words, never as a traceback."""
        from mdtui.plan.rejected import PlanRejected

        try:
            result = call()
        except PlanRejected as exc:
            self.app.call_from_thread(self.refused, exc.subject, exc.problems)
            return
        except Exception as exc:
            if not isinstance(exc, MdtuiError):
                self.log.error(f"{doing} failed", exc)
            self.app.call_from_thread(self.failed, doing, exc)
            return
        self.app.call_from_thread(then, result)

    def refused(self, subject: str, problems: list[str]) -> None:
        from mdtui.ui.dialogs.detail import DetailScreen

        body = Text(f"mdtui will not {subject}:\n\n", style="bold")
        for problem in problems:
            body.append(f"• {problem}\n", style=self._palette().error)
        self.app.push_screen(DetailScreen("Refused", body))

    def failed(self, doing: str, exc: BaseException) -> None:
        sentence = doing[:1].upper() + doing[1:]  # capitalize() would lower-case the rest (MAILADDR, a path)
        self.notify(failure_reason(sentence, exc), title=f"{sentence} failed", severity="error", timeout=15)

    def confirm(self, title: str, body: RenderableType, phrase: str, label: str, then: Callable[[], None]) -> None:
        from mdtui.ui.dialogs.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                then()

        self.app.push_screen(ConfirmScreen(title, body, phrase, label), answered)

    def show(self, title: str, lines: list[str]) -> None:
        from mdtui.ui.dialogs.detail import DetailScreen

        self.app.push_screen(DetailScreen(title, plan_body(lines, self._palette())))

    # -- alerts ------------------------------------------------------------------------------------------

    def alerts(self, array: MdArray) -> None:
        """`mdtui alerts --mail ADDR | --program PATH`: the address, the diff, `alerts` typed, the test's result."""
        if refused_on_tree(self.screen, self.root, "setting alerts (mdadm.conf, the monitor service, a test alert)"):
            return
        from mdtui.ui.inventory.lifecycle_forms import AlertsForm

        self.app.push_screen(AlertsForm(), self._alerts_to)

    def _alerts_to(self, to: str | None) -> None:
        if not to:
            return
        from mdtui.keep.alerts import plan_alerts, read_alerts

        mail, program = (None, to) if to.startswith("/") else (to, None)

        def plan() -> tuple[AlertsPlan, list[str]]:
            return plan_alerts(self.system, mail=mail, program=program), read_alerts(self.system).lines

        self.background("planning the alerts", plan, self._alerts_planned)

    def _alerts_planned(self, planned: tuple[AlertsPlan, list[str]]) -> None:
        plan, now = planned
        body = plan_body(["Now:", *("  " + line for line in now), "", *plan.describe()], self._palette())
        verb = f"write {plan.edit.path} and (re)start the monitor" if plan.edit.changed else "(re)start the monitor"
        self.confirm(f"Alerts: {verb}", body, "alerts", "Set", lambda: self._alerts_run(plan))

    def _alerts_run(self, plan: AlertsPlan) -> None:
        from mdtui.keep.alerts import read_alerts, send_test, start_monitor, write_alerts_conf

        def run() -> list[str]:
            lines = [f"wrote {plan.edit.path}"] if write_alerts_conf(plan, confirmed=True, root=self.system) else []
            start_monitor(plan, confirmed=True)
            state = read_alerts(self.system)
            test = send_test(state.program, mailaddr=state.mailaddr, mailer=state.mailer)
            return [*lines, *state.lines, "", *test.lines()]

        self.notify("Setting alerts and sending a test alert…")
        self.background("setting the alerts", run, self._alerts_done)

    def _alerts_done(self, lines: list[str]) -> None:
        self.show("Alerts set: the test alert", lines)
        self._done()

    # -- persist -----------------------------------------------------------------------------------------

    def persist(self, array: MdArray) -> None:
        """`mdtui persist`: the ARRAY line's diff typed through, then the initramfs refresh typed through."""
        if refused_on_tree(self.screen, self.root, "persisting an array (mdadm.conf, the initramfs)"):
            return
        from mdtui.keep.persist import plan_persist

        self.background(
            f"planning to persist {array.name}",
            lambda: plan_persist(array.dev_path, root=self.system),
            self._persist_planned,
        )

    def _persist_planned(self, plan: PersistPlan) -> None:
        from mdtui.keep.persist import describe_persist, write_conf

        token = plan.device.removeprefix("/dev/")
        body = plan_body(describe_persist(plan), self._palette())
        if not plan.edit.changed:
            self._persist_initramfs(plan, body)
            return

        def write() -> None:
            self.background(
                f"writing {plan.edit.path}",
                lambda: write_conf(plan, confirmed=True, root=self.system),
                lambda _wrote: self._persist_initramfs(plan, None),
            )

        self.confirm(f"Persist {token}: write {plan.edit.path}", body, token, "Write", write)

    def _persist_initramfs(self, plan: PersistPlan, body: RenderableType | None) -> None:
        from mdtui.keep.persist import refresh_initramfs

        token = plan.device.removeprefix("/dev/")
        argv = " ".join(plan.initramfs_argv)
        if body is None:
            self.notify(f"wrote {plan.edit.path}")
            body = Text(f"{plan.edit.path} has {token}'s ARRAY line; the initramfs still has the old copy.")
            self._done()

        def run() -> None:
            self.notify(f"Running {argv} (it takes a while)…")
            self.background(
                f"running {argv}",
                lambda: refresh_initramfs(plan, confirmed=True),
                lambda result: self._persist_done(plan, result.duration_s),
            )

        self.confirm(f"Persist {token}: run {argv}", Group(body, Text(""), Text(argv, style="bold")), token, "Run", run)

    def _persist_done(self, plan: PersistPlan, seconds: float) -> None:
        self.notify(f"{plan.initramfs_argv[0]} finished in {seconds:.0f} s; {plan.device} will assemble at boot")
        self._done()

    # -- scrub -------------------------------------------------------------------------------------------

    def scrub(self, array: MdArray) -> None:
        """`mdtui scrub`: a check starts from its form; a repair is typed through like the CLI's."""
        if refused_on_tree(self.screen, self.root, "scrubbing an array"):
            return
        from mdtui.keep.scrub import plan_scrub

        try:
            plan = plan_scrub(array, "check", root=self.system)
        except MdtuiError as exc:
            self.notify(str(exc), title=f"Cannot scrub {array.name}", severity="error", timeout=10)
            return
        from mdtui.ui.inventory.lifecycle_forms import ScrubForm

        self.app.push_screen(ScrubForm(array.name, plan.shown), lambda chosen: self._scrub_chosen(array, chosen))

    def _scrub_chosen(self, array: MdArray, chosen: str | None) -> None:
        from mdtui.keep.scrub import plan_scrub

        if chosen == "check":
            self._scrub_start(plan_scrub(array, "check", root=self.system))
        elif chosen == "repair":
            plan = plan_scrub(array, "repair", root=self.system)
            body = plan_body(
                [plan.shown, f"⚠ md rewrites every copy or parity of {array.name} that disagrees with the others"],
                self._palette(),
            )
            title = f"Repair mismatches on {array.name}"
            self.confirm(title, body, array.name, "Repair", lambda: self._scrub_start(plan))

    def _scrub_start(self, plan: ScrubPlan) -> None:
        from mdtui.keep.scrub import start_scrub

        self.background(
            f"starting a {plan.action} of {plan.array}",
            lambda: start_scrub(plan, confirmed=True, root=self.system),
            lambda _none: self._scrub_started(plan),
        )

    def _scrub_started(self, plan: ScrubPlan) -> None:
        self.notify(f"{plan.action} of {plan.array} started; w watches it, mismatch_cnt shows here when it ends")
        self._done()

    # -- repair ------------------------------------------------------------------------------------------

    def repair(self, array: MdArray, inventory: Inventory) -> None:
        """`mdtui repair`: action, member and disk from a form, the plan's argv typed through, then run."""
        if refused_on_tree(self.screen, self.root, "repairing an array"):
            return
        members = {m.name for m in array.members}
        disks = [d.name for d in inventory.disks if d.name not in members]
        from mdtui.ui.inventory.lifecycle_forms import RepairForm

        self.app.push_screen(RepairForm(array, disks), lambda choice: self._repair_chosen(array, inventory, choice))

    def _repair_chosen(self, array: MdArray, inventory: Inventory, choice: RepairChoice | None) -> None:
        if choice is None:
            return
        from mdtui.keep.repair import plan_repair
        from mdtui.run.mdadm import array_uuid

        system = self.system
        disk = inventory.disk(choice.disk) if choice.disk else None

        def plan() -> RepairPlan:
            kib = system.read_int(f"/sys/block/{array.name}/md/component_size")
            return plan_repair(
                array,
                choice.action,
                member=choice.member,
                disk=disk,
                uuid=array_uuid(array.dev_path) if system.is_live else None,
                component_bytes=kib * 1024 if kib else None,
            )

        self.background(f"planning the {choice.action} on {array.dev_path}", plan, self._repair_planned)

    def _repair_planned(self, plan: RepairPlan) -> None:
        from mdtui.keep.repair import describe_repair, execute_repair

        array = plan.array.removeprefix("/dev/")
        # As the CLI asks: the disk overwritten is typed, or the array when nothing is overwritten.
        written = plan.disk.name if plan.disk is not None and plan.action != "re-add" else None
        token = written or array
        title = f"{plan.action} on {plan.array}" + (f", overwriting {written}" if written else "")

        def run() -> None:
            self.background(
                f"the {plan.action} on {plan.array}",
                lambda: execute_repair(plan, confirmed=True, root=self.system),
                lambda _results: self._repair_done(plan),
            )

        self.confirm(title, plan_body(describe_repair(plan), self._palette()), token, "Run", run)

    def _repair_done(self, plan: RepairPlan) -> None:
        follow = "; md recovers onto it now: w watches it" if plan.follows_recovery else ""
        self.notify(f"{plan.action} on {plan.array}: done{follow}")
        self._done()
