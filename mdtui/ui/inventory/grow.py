"""The grow form (e on an array): what to change, as `mdtui grow` takes it; the plan, its typed confirmation and
the run are the Lifecycle's (mdtui.ui.inventory.lifecycle), through the same core as the CLI."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Select, Static

from mdtui.model.array import MdArray
from mdtui.ui.inventory.lifecycle_forms import LifecycleForm

# What the form offers, in `mdtui grow`'s words: (choice, what the value field asks for, or None for none).
CHANGES: tuple[tuple[str, str, str | None], ...] = (
    ("add", "add a member (the count follows)", None),
    ("raid-devices", "members after (fewer: a shrink)", "4"),
    ("level", "level after (5 → 6 needs a disk added too)", "6"),
    ("chunk", "chunk after, KiB", "128"),
    ("layout", "layout after", "left-symmetric"),
    ("size-max", "use all of each member (after larger disks)", None),
    ("filesystem", "grow what sits on the array to fill it", None),
    ("resume", "resume an interrupted reshape", None),
)


@dataclass(frozen=True)
class GrowChoice:
    change: str
    value: str | None = None  # the count, level, chunk or layout
    disk: str | None = None  # the disk added (add, or a level change that needs one)
    backup_file: str | None = None


class GrowForm(LifecycleForm):
    """What to change on the array; the plan (every mdadm argv, capacity, time, backup file) comes next."""

    def __init__(self, array: MdArray, disks: list[str]) -> None:
        super().__init__()
        self._array = array
        self._disks = disks

    def compose(self) -> ComposeResult:
        with Vertical(id="grow-form"):
            yield Static(
                "Change the array's shape or size while it holds data. The plan comes next: every mdadm argv, "
                "capacity before, during and after, how long md takes and whether it needs a backup file.",
                classes="hint",
            )
            with Horizontal(classes="field"):
                yield Static("Change", classes="label")
                choices = [(words, change) for change, words, _ in CHANGES]
                yield Select(choices, value="add", allow_blank=False, id="grow-change", compact=True)
            with Horizontal(classes="field", id="grow-disk-field"):
                yield Static("Disk", classes="label")
                yield Select([(d, d) for d in self._disks], prompt="the disk added", id="grow-disk", compact=True)
            yield Input(id="grow-value", compact=True)
            yield Input(placeholder="backup file (optional: mdtui picks one when md needs it)", id="grow-backup",
                        compact=True)  # fmt: skip
            with Horizontal(classes="buttons"):
                yield Button("Cancel", classes="cancel", compact=True)
                yield Button("Plan", id="grow-plan", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#grow-form").border_title = f"Grow {self._array.name}"
        self.query_one("#grow-form").border_subtitle = "Esc cancels"
        self.query_one("#grow-change", Select).focus()
        self._fields()

    @on(Select.Changed, "#grow-change")
    def _fields(self) -> None:
        change = str(self.query_one("#grow-change", Select).value)
        asks = next(value for key, _, value in CHANGES if key == change)
        value = self.query_one("#grow-value", Input)
        value.display = asks is not None
        value.placeholder = f"e.g. {asks}" if asks else ""
        self.query_one("#grow-disk-field").display = change in ("add", "level")
        self.query_one("#grow-backup", Input).display = change not in ("filesystem", "resume", "size-max")

    @on(Input.Submitted)
    @on(Button.Pressed, "#grow-plan")
    def _plan(self) -> None:
        change = str(self.query_one("#grow-change", Select).value)
        value = self.query_one("#grow-value", Input)
        disk = self.query_one("#grow-disk", Select)
        backup = self.query_one("#grow-backup", Input).value.strip()
        chosen = (
            str(disk.value) if self.query_one("#grow-disk-field").display and disk.value is not Select.BLANK else None
        )
        if (value.display and not value.value.strip()) or (change == "add" and chosen is None):
            self.app.bell()
            return
        self.dismiss(
            GrowChoice(
                change,
                value.value.strip() if value.display else None,
                chosen,
                backup if self.query_one("#grow-backup", Input).display and backup else None,
            )
        )
