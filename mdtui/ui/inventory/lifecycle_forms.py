"""The small forms the inventory's lifecycle actions ask through before planning (mdtui.ui.inventory.lifecycle):
where alerts go, check or repair, and a repair's action, member and disk."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, Static

from mdtui.model.array import MdArray

REPAIR_ACTIONS = ("fail", "remove", "add", "replace", "re-add")
# What `mdadm --remove` takes besides a member's name: members whose device node is gone.
REMOVE_WORDS = ("failed", "detached")

FORM_CSS = """
LifecycleForm { align: center middle; }
LifecycleForm > Vertical {
    width: 100%; max-width: 100; height: auto; max-height: 100%;
    border: round $primary; background: $surface; padding: 0 1;
}
LifecycleForm .hint { color: $text-muted; margin-bottom: 1; }
LifecycleForm Input, LifecycleForm Select { width: 100%; margin-bottom: 1; }
LifecycleForm .field { height: 1; margin-bottom: 1; }
LifecycleForm .field .label { width: 8; }
LifecycleForm .field Select { width: 1fr; margin-bottom: 0; }
LifecycleForm .buttons { height: 1; align-horizontal: right; }
LifecycleForm .buttons Button { margin-left: 2; }
"""


class LifecycleForm(ModalScreen[Any]):
    """A small form that asks what the action needs before it is planned; Esc cancels."""

    DEFAULT_CSS = FORM_CSS
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, ".cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class AlertsForm(LifecycleForm):
    """Where mdadm's monitor sends alerts: a mail address, or a program's path (it starts with /)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="alerts-form"):
            yield Static(
                "Who is told when an array fails: a mail address (root, ops@example.org) sets MAILADDR, an "
                "absolute path (/usr/local/sbin/md-alert) sets PROGRAM. The diff of mdadm.conf comes next.",
                classes="hint",
            )
            yield Input(placeholder="root", id="alerts-to", compact=True)
            with Horizontal(classes="buttons"):
                yield Button("Cancel", classes="cancel", compact=True)
                yield Button("Plan", id="alerts-plan", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#alerts-form").border_title = "Set alerts"
        self.query_one("#alerts-form").border_subtitle = "Esc cancels"
        self.query_one(Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#alerts-plan")
    def _plan(self) -> None:
        value = self.query_one(Input).value.strip()
        if value:
            self.dismiss(value)
        else:
            self.app.bell()


class ScrubForm(LifecycleForm):
    """A check (reads, counts mismatches) starts from here; a repair asks again, by typing."""

    def __init__(self, array: str, shown: str) -> None:
        super().__init__()
        self._array = array
        self._shown = shown

    def compose(self) -> ComposeResult:
        with Vertical(id="scrub-form"):
            yield Static(Text(self._shown, style="bold"), id="scrub-plan")
            yield Static(
                f"A check reads all of {self._array} and counts mismatches (mismatch_cnt); it changes nothing. "
                "A repair rewrites every copy or parity that disagrees, and is confirmed by typing.",
                classes="hint",
            )
            with Horizontal(classes="buttons"):
                yield Button("Cancel", classes="cancel", compact=True)
                yield Button("Repair…", id="scrub-repair", variant="warning", compact=True)
                yield Button("Start check", id="scrub-check", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#scrub-form").border_title = f"Scrub {self._array}"
        self.query_one("#scrub-form").border_subtitle = "Esc cancels"
        self.query_one("#scrub-check", Button).focus()

    @on(Button.Pressed, "#scrub-check")
    def _check(self) -> None:
        self.dismiss("check")

    @on(Button.Pressed, "#scrub-repair")
    def _repair(self) -> None:
        self.dismiss("repair")


@dataclass(frozen=True)
class RepairChoice:
    action: str
    member: str | None
    disk: str | None


class RepairForm(LifecycleForm):
    """The repair's action, the member it acts on and the disk it writes, as `mdtui repair` takes them."""

    def __init__(self, array: MdArray, disks: list[str]) -> None:
        super().__init__()
        self._array = array
        self._disks = disks

    def compose(self) -> ComposeResult:
        members = [m.name for m in self._array.members]
        with Vertical(id="repair-form"):
            yield Static(
                "fail and remove take a member; add and re-add a disk; replace copies a member onto a disk while "
                "the array stays redundant. The plan (every mdadm argv) comes next.",
                classes="hint",
            )
            actions = [(a, a) for a in REPAIR_ACTIONS]
            with Horizontal(classes="field", id="repair-action-field"):
                yield Static("Action", classes="label")
                yield Select(actions, value="fail", allow_blank=False, id="repair-action", compact=True)
            with Horizontal(classes="field", id="repair-member-field"):
                yield Static("Member", classes="label")
                choices = [(m, m) for m in [*members, *REMOVE_WORDS]]
                yield Select(choices, prompt="pick one", id="repair-member", compact=True)
            with Horizontal(classes="field", id="repair-disk-field"):
                yield Static("Disk", classes="label")
                yield Select([(d, d) for d in self._disks], prompt="the disk written", id="repair-disk", compact=True)
            with Horizontal(classes="buttons"):
                yield Button("Cancel", classes="cancel", compact=True)
                yield Button("Plan", id="repair-plan", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#repair-form").border_title = f"Repair {self._array.name}"
        self.query_one("#repair-form").border_subtitle = "Esc cancels"
        self.query_one("#repair-action", Select).focus()
        self._fields()

    @on(Select.Changed, "#repair-action")
    def _fields(self) -> None:
        action = str(self.query_one("#repair-action", Select).value)
        self.query_one("#repair-member-field").display = action in ("fail", "remove", "replace")
        self.query_one("#repair-disk-field").display = action in ("add", "replace", "re-add")

    @on(Button.Pressed, "#repair-plan")
    def _plan(self) -> None:
        action = str(self.query_one("#repair-action", Select).value)
        member = self.query_one("#repair-member", Select)
        disk = self.query_one("#repair-disk", Select)
        with_member = self.query_one("#repair-member-field").display
        with_disk = self.query_one("#repair-disk-field").display
        self.dismiss(
            RepairChoice(
                action,
                str(member.value) if with_member and member.value is not Select.BLANK else None,
                str(disk.value) if with_disk and disk.value is not Select.BLANK else None,
            )
        )
