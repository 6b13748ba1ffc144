"""Keeping the highlighted array from the inventory: alerts, persist, scrub and repair, each planned by the core
function its CLI verb calls, shown (argv, file diff) before anything runs, confirmed by typing as the CLI asks.
On a captured tree persist, scrub and repair show their plan as the CLI's --dry-run prints it and run nothing;
alerts is refused (refused_on_tree)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from mdtui.errors import MdtuiError
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.render import app_db_path
from mdtui.ui.inventory.action_runner import ActionRunner, plan_body

if TYPE_CHECKING:
    from mdtui.keep.alerts import AlertsPlan
    from mdtui.keep.grow_resume import ResumePlan
    from mdtui.keep.persist import PersistPlan
    from mdtui.keep.repair import RepairPlan
    from mdtui.keep.scrub import ScrubPlan
    from mdtui.plan.grow import GrowPlan
    from mdtui.plan.sync_time import SyncTime
    from mdtui.ui.inventory.grow import GrowChoice
    from mdtui.ui.inventory.lifecycle_forms import RepairChoice


@dataclass(frozen=True)
class RepairPlanned:
    """A repair's plan (with its pulled drive's identity) and its rebuild's predicted time."""

    plan: RepairPlan
    predicted: SyncTime | None
    label: str


# The forms, the planners and the dialogs are imported when first used: the first screen needs none of them.


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
    ArrayKey("e", "grow", "Grow", "grow"),
    ArrayKey("x", "teardown", "Tear down", "tear down"),
)


def keys_line() -> str:
    return " · ".join(f"{key.key} {key.words}" for key in ARRAY_KEYS)


class Lifecycle(ActionRunner):
    """The five actions, shown only through their forms, confirmations and notifications; ``done`` runs after
    anything changed, to scan again."""

    DEFAULT_CSS = "Lifecycle { display: none; }"

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
        self.confirm(f"Alerts: {verb}", body, plan.confirmation, "Set", lambda typed: self._alerts_run(plan, typed))

    def _alerts_run(self, plan: AlertsPlan, confirmed: str) -> None:
        from mdtui.keep.alerts import read_alerts, send_test, start_monitor, write_alerts_conf

        def run() -> list[str]:
            wrote = write_alerts_conf(plan, confirmed=confirmed, root=self.system)
            lines = [f"wrote {plan.edit.path}"] if wrote else []
            start_monitor(plan, confirmed=confirmed)
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
        from mdtui.keep.persist import plan_persist

        self.background(
            f"planning to persist {array.name}",
            lambda: plan_persist(array.dev_path, root=self.system),
            self._persist_planned,
        )

    def _persist_planned(self, plan: PersistPlan) -> None:
        from mdtui.keep.persist import describe_persist, write_conf

        token = plan.confirmation
        if self.dry_run:
            name = plan.device.removeprefix("/dev/")
            self.show_plan(f"Persist {name}", describe_persist(plan), f"mdtui persist {name}")
            return
        body = plan_body(describe_persist(plan), self._palette())
        if not plan.edit.changed:
            self._persist_initramfs(plan, body)
            return

        def write(typed: str) -> None:
            self.background(
                f"writing {plan.edit.path}",
                lambda: write_conf(plan, confirmed=typed, root=self.system),
                lambda _wrote: self._persist_initramfs(plan, None),
            )

        self.confirm(f"Persist {token}: write {plan.edit.path}", body, token, "Write", write)

    def _persist_initramfs(self, plan: PersistPlan, body: RenderableType | None) -> None:
        from mdtui.keep.persist import refresh_initramfs

        token = plan.confirmation
        argv = " ".join(plan.initramfs_argv)
        if body is None:
            self.notify(f"wrote {plan.edit.path}")
            body = Text(f"{plan.edit.path} has {token}'s ARRAY line; the initramfs still has the old copy.")
            self._done()

        def run(typed: str) -> None:
            self.notify(f"Running {argv} (it takes a while)…")
            self.background(
                f"running {argv}",
                lambda: refresh_initramfs(plan, confirmed=typed),
                lambda result: self._persist_done(plan, result.duration_s),
            )

        self.confirm(f"Persist {token}: run {argv}", Group(body, Text(""), Text(argv, style="bold")), token, "Run", run)

    def _persist_done(self, plan: PersistPlan, seconds: float) -> None:
        self.notify(f"{plan.initramfs_argv[0]} finished in {seconds:.0f} s; {plan.device} will assemble at boot")
        self._done()

    # -- scrub -------------------------------------------------------------------------------------------

    def scrub(self, array: MdArray) -> None:
        """`mdtui scrub`: a check starts from its form; a repair is typed through like the CLI's."""
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

        if chosen in ("check", "repair") and self.dry_run:
            action = chosen
            command = f"mdtui scrub {array.name}" + (" --repair" if chosen == "repair" else "")

            def planned() -> list[str]:
                from mdtui.bench.member_figures import stored_member_runs
                from mdtui.bench.sync_forecast import scrub_time
                from mdtui.keep.scrub import describe_scrub
                from mdtui.probe.inventory import scan

                runs = stored_member_runs(app_db_path(self.app))
                # What `mdtui scrub --dry-run` reads: the scan (for members' links) and the stored figures.
                predicted = scrub_time(self.system, array, scan(self.root), runs, repair=action == "repair")
                return describe_scrub(plan_scrub(array, action, root=self.system), predicted)

            self.background(
                f"planning the {chosen} of {array.name}",
                planned,
                lambda lines: self.show_plan(f"Scrub {array.name}", lines, command),
            )
            return
        if chosen == "check":
            self._scrub_start(array, plan_scrub(array, "check", root=self.system))
        elif chosen == "repair":
            plan = plan_scrub(array, "repair", root=self.system)
            body = plan_body(
                [plan.shown, f"⚠ md rewrites every copy or parity of {array.name} that disagrees with the others"],
                self._palette(),
            )
            title = f"Repair mismatches on {array.name}"
            self.confirm(title, body, plan.confirmation, "Repair", lambda typed: self._scrub_start(array, plan, typed))

    def _scrub_start(self, array: MdArray, plan: ScrubPlan, confirmed: str | None = None) -> None:
        from mdtui.keep.scrub_history import ScrubHistory, begin_scrub

        self.background(
            f"starting a {plan.action} of {plan.array}",
            lambda: begin_scrub(plan, array, ScrubHistory(), confirmed=confirmed, root=self.system),
            lambda _none: self._scrub_started(plan),
        )

    def _scrub_started(self, plan: ScrubPlan) -> None:
        self.notify(f"{plan.action} of {plan.array} started; w watches it, mismatch_cnt shows here when it ends")
        self._done()

    # -- repair ------------------------------------------------------------------------------------------

    def repair(self, array: MdArray, inventory: Inventory) -> None:
        """`mdtui repair`: action, member and disk from a form, the plan's argv typed through, then run."""
        members = {m.name for m in array.members}
        disks = [d.name for d in inventory.disks if d.name not in members]
        from mdtui.ui.inventory.lifecycle_forms import RepairForm

        self.app.push_screen(RepairForm(array, disks), lambda choice: self._repair_chosen(array, inventory, choice))

    def _repair_chosen(self, array: MdArray, inventory: Inventory, choice: RepairChoice | None) -> None:
        if choice is None:
            return
        from mdtui.execute.mdadm import array_uuid
        from mdtui.keep.repair import plan_repair, with_identity

        system = self.system
        disk = inventory.disk(choice.disk) if choice.disk else None

        def plan() -> RepairPlanned:
            from mdtui.bench.member_figures import stored_member_runs
            from mdtui.bench.sync_forecast import repair_forecast

            planned = plan_repair(
                array,
                choice.action,
                member=choice.member,
                disk=disk,
                uuid=array_uuid(array.dev_path) if system.is_live else None,
                component_bytes=array.component_bytes,
            )
            # As the CLI: the drive acted on, told apart from the others, and how long its rebuild takes.
            planned = with_identity(planned, system, inventory)
            predicted, label = repair_forecast(
                system, array, inventory, stored_member_runs(app_db_path(self.app)), planned.action,
                member=planned.member, disk=disk.name if disk is not None else None,
            )  # fmt: skip
            return RepairPlanned(planned, predicted, label)

        self.background(f"planning the {choice.action} on {array.dev_path}", plan, self._repair_planned)

    def _repair_planned(self, planned: RepairPlanned) -> None:
        from mdtui.keep.repair import describe_repair, execute_repair

        # As the CLI asks (RepairPlan.confirmation): the serial on the label of the member failed, removed or
        # replaced; the disk overwritten; or the array when nothing is overwritten.
        plan = planned.plan
        lines = describe_repair(plan, planned.predicted, planned.label)
        if self.dry_run:
            self.show_plan(f"{plan.action.capitalize()} on {plan.array}", lines, plan.command)
            return
        written = plan.overwritten
        title = f"{plan.action} on {plan.array}" + (f", overwriting {written}" if written else "")

        def run(typed: str) -> None:
            self.background(
                f"the {plan.action} on {plan.array}",
                lambda: execute_repair(plan, confirmed=typed, root=self.system),
                lambda _results: self._repair_done(plan),
            )

        self.confirm(title, plan_body(lines, self._palette()), plan.confirmation, "Run", run)

    def _repair_done(self, plan: RepairPlan) -> None:
        follow = "; md recovers onto it now: w watches it" if plan.follows_recovery else ""
        self.notify(f"{plan.action} on {plan.array}: done{follow}")
        self._done()

    # -- grow --------------------------------------------------------------------------------------------

    def grow(self, array: MdArray, inventory: Inventory) -> None:
        """`mdtui grow`: what to change from a form, the plan (argv, capacity, time, backup file) typed through,
        then run; md's pass shows in watch and the array's detail. On a captured tree, the plan only (as the CLI's
        --dry-run prints it on the same tree)."""
        members = {m.name for m in array.members}
        disks = [d.name for d in inventory.disks if d.name not in members and not d.in_use]
        from mdtui.ui.inventory.grow import GrowForm

        self.app.push_screen(GrowForm(array, disks), lambda choice: self._grow_chosen(array, inventory, choice))

    def _grow_chosen(self, array: MdArray, inventory: Inventory, choice: GrowChoice | None) -> None:
        if choice is None:
            return
        if choice.change == "resume":
            from mdtui.keep.grow_resume import plan_resume

            self.background(
                f"planning to resume {array.name}'s reshape",
                lambda: plan_resume(self.system, array.dev_path),
                self._resume_planned,
            )
            return
        from mdtui.bench.member_figures import stored_member_runs
        from mdtui.bench.sync_forecast import grow_inputs
        from mdtui.keep.grow import plan_grow_now
        from mdtui.plan.grow_request import GrowRequest

        disk = inventory.disk(choice.disk) if choice.disk else None
        value = choice.value or ""

        def plan() -> GrowPlan:
            number = int(value) if value.isdigit() else None
            if choice.change in ("raid-devices", "chunk") and number is None:
                raise MdtuiError(f"{value!r} is not a number")
            req = GrowRequest(
                add=(disk,) if disk is not None else (),
                raid_devices=number if choice.change == "raid-devices" else None,
                level=value if choice.change == "level" else None,
                chunk_kib=number if choice.change == "chunk" else None,
                layout=value if choice.change == "layout" else None,
                size_max=choice.change == "size-max",
                backup_file=choice.backup_file,
                filesystem_only=choice.change == "filesystem",
            )
            runs = stored_member_runs(app_db_path(self.app))
            members, limits, ceilings = grow_inputs(
                self.system, array, inventory, runs, [disk.name] if disk is not None else []
            )
            return plan_grow_now(self.system, array.dev_path, req, members, limits=limits, ceilings=ceilings)

        self.background(f"planning the grow of {array.dev_path}", plan, self._grow_planned)

    def _grow_planned(self, plan: GrowPlan) -> None:
        from mdtui.keep.grow import execute_grow, run_followup
        from mdtui.plan.grow_describe import describe_grow

        token = plan.confirmation
        if self.dry_run:
            self.show_plan(f"Grow {plan.array}", describe_grow(plan), f"mdtui grow {token}")
            return
        body = plan_body(describe_grow(plan), self._palette())
        if not plan.steps:
            follow = plan.followup
            if follow is None or not follow.argvs:
                self.show(f"Grow {token}: nothing to run", describe_grow(plan))
                return

            def grow_fs(typed: str) -> None:
                self.background(
                    f"growing what sits on {plan.array}",
                    lambda: run_followup(plan, confirmed=typed),
                    lambda _results: self._grow_done(plan, f"{follow.kind} on {plan.array} grown"),
                )

            self.confirm(f"Grow {token}: {follow.description}", body, token, "Grow", grow_fs)
            return
        written = f", overwriting {', '.join(d.name for d in plan.new_disks)}" if plan.new_disks else ""

        def run(typed: str) -> None:
            self.notify(f"Starting the grow of {plan.array}…")
            self.background(
                f"the grow of {plan.array}",
                lambda: execute_grow(plan, confirmed=typed, system=self.system),
                lambda _results: self._grow_started(plan),
            )

        self.confirm(f"Grow {plan.array}{written}", body, token, "Grow", run)

    def _grow_started(self, plan: GrowPlan) -> None:
        then = ""
        if plan.followup is not None and plan.followup.argvs:
            then = f"; when it ends, e → grow what sits on it ({' '.join(plan.followup.argvs[-1])})"
        if plan.pass_action is None:
            self._grow_done(plan, f"{plan.array} is now {plan.after.describe()}{then}")
            return
        self._grow_done(plan, f"{plan.pass_action} of {plan.array} started: w watches it{then}; p checks mdadm.conf")

    def _grow_done(self, plan: GrowPlan, words: str) -> None:
        self.notify(words, timeout=15)
        self._done()

    def _resume_planned(self, plan: ResumePlan) -> None:
        from mdtui.keep.grow_resume import describe_resume, execute_resume

        token = plan.confirmation
        if self.dry_run:
            self.show_plan(f"Resume {plan.device}", describe_resume(plan), f"mdtui grow {token} --resume")
            return

        def run(typed: str) -> None:
            self.background(
                f"resuming the reshape of {plan.device}",
                lambda: execute_resume(plan, confirmed=typed, system=self.system),
                lambda _results: self._resumed(plan),
            )

        self.confirm(f"Resume the reshape of {plan.device}", plan_body(describe_resume(plan), self._palette()),
                     token, "Resume", run)  # fmt: skip

    def _resumed(self, plan: ResumePlan) -> None:
        self.notify(f"the reshape of {plan.device} goes on: w watches it", timeout=15)
        self._done()
