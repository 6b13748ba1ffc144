"""Tearing an array down from the inventory: plan it (refusals shown), confirm it by typing the device, run it."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.widget import Widget

from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.messages import ActionFailed, TeardownFinished, TeardownPlanned, TeardownRefused, failure_reason
from mdtui.ui.common.render import Palette

if TYPE_CHECKING:
    from mdtui.plan.destroy import DestroyPlan

# The planner, the runner and the dialogs are imported when first used: the first screen needs none of them.


def teardown_plan(root: str, array: MdArray, inventory: Inventory) -> DestroyPlan:
    """plan_destroy with what the CLI checks too: mounted now, made by mdtui, members as scanned.

    Runs `mdadm --detail` (through created_by_mdtui), so call it from a worker.
    """
    from mdtui.execute import mdadm as md_run
    from mdtui.plan.destroy import plan_destroy

    system = SystemRoot(root)
    names = {member.name for member in array.members}
    members = [disk for disk in inventory.disks if disk.name in names]
    return plan_destroy(
        array,
        members if len(members) == len(array.members) else None,
        mounted=md_run.is_mounted(system, array),
        created_by_tool=md_run.created_by_mdtui(array),
    )


def teardown_body(plan: DestroyPlan, palette: Palette) -> RenderableType:
    """Every command the teardown runs, in order, and the member paths it wipes."""
    parts: list[RenderableType] = [Text("This runs, in order:", style=palette.muted)]
    for step in plan.steps:
        parts.append(Text(shlex.join(step.argv), style="bold"))
        parts.append(Text(f"  {step.description}", style=palette.muted))
    parts += [Text(""), Text("Wiped (the array's data is lost):", style=f"bold {palette.warning}")]
    parts += [Text(f"  {path}") for path in plan.member_paths]
    parts += [Text(f"⚠ {warning}", style=palette.warning) for warning in plan.warnings]
    return Group(*parts)


class Teardown(Widget):
    """The teardown flow, shown only through its dialogs and notifications; ``done`` runs once an array went
    (or failed to), to scan again."""

    DEFAULT_CSS = "Teardown { display: none; }"

    def __init__(self, root: str, palette: Callable[[], Palette], done: Callable[[], None]) -> None:
        super().__init__()
        self.root = root
        self._palette = palette
        self._done = done

    def start(self, array: MdArray, inventory: Inventory) -> None:
        """Plan the teardown of ``array``; a confirmation (or the reasons it may not go) follows."""
        if refused_on_tree(self.screen, self.root, "tearing an array down"):
            return
        self.plan_teardown(array, inventory)

    @work(thread=True, exclusive=True, exit_on_error=False, group="teardown")
    def plan_teardown(self, array: MdArray, inventory: Inventory) -> None:
        """Thread worker: ask the core whether the array may go (mounted? made by mdtui?) and post the plan."""
        from mdtui.plan.rejected import PlanRejected

        try:
            plan = teardown_plan(self.root, array, inventory)
        except PlanRejected as exc:
            self.post_message(TeardownRefused(array.dev_path, tuple(exc.problems)))
            return
        except Exception as exc:  # a refusal or failure is a message, never a traceback
            self.log.error(f"planning the teardown of {array.dev_path} failed", exc)
            reason = failure_reason(f"Planning the teardown of {array.dev_path}", exc)
            self.post_message(ActionFailed("teardown", reason))
            return
        self.post_message(TeardownPlanned(plan))

    @on(TeardownRefused)
    def _refused(self, message: TeardownRefused) -> None:
        palette = self._palette()
        body = Text(f"mdtui will not tear down {message.device}:\n\n", style="bold")
        for problem in message.problems:
            body.append(f"• {problem}\n", style=palette.error)
        from mdtui.ui.dialogs.detail import DetailScreen

        self.app.push_screen(DetailScreen(f"Cannot tear down {message.device}", body))

    @on(TeardownPlanned)
    def _planned(self, message: TeardownPlanned) -> None:
        from mdtui.ui.dialogs.confirm import ConfirmScreen

        plan = message.plan
        body = teardown_body(plan, self._palette())
        dialog = ConfirmScreen(f"Tear down {plan.array}", body, plan.confirmation, "Destroy")

        def confirmed(typed: str | None) -> None:
            if typed:
                self.notify(f"Tearing down {plan.array}…")
                self.run_teardown(plan, typed)

        self.app.push_screen(dialog, confirmed)

    @work(thread=True, exclusive=True, exit_on_error=False, group="teardown")
    def run_teardown(self, plan: DestroyPlan, confirmed: str) -> None:
        """Thread worker: run the confirmed teardown and post how it went."""
        from mdtui.execute import mdadm as md_run

        try:
            md_run.execute_destroy(plan, confirmed=confirmed, root=SystemRoot(self.root))
        except Exception as exc:
            self.log.error(f"teardown of {plan.array} failed", exc)
            self.post_message(ActionFailed("teardown", failure_reason(f"Tearing down {plan.array}", exc)))
            return
        self.post_message(TeardownFinished(plan.array))

    @on(TeardownFinished)
    def _finished(self, message: TeardownFinished) -> None:
        self.notify(f"{message.device} stopped and its members wiped.")
        self._done()

    @on(ActionFailed)
    def _failed(self, message: ActionFailed) -> None:
        self.notify(message.reason, title="Teardown failed", severity="error", timeout=15)
        self._done()
