"""Small dialogs of the results screens: edit a label or note, choose an export file, pick a device run."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, RadioButton, RadioSet, Static
from textual.widgets.option_list import Option

from mdtui.errors import MdtuiError
from mdtui.output_file import output_problem
from mdtui.state_dir import env_location, home_dir
from mdtui.store.cells import format_metric, unit_text
from mdtui.store.export import FORMATS
from mdtui.store.records import METRICS_BY_NAME, RunRecord
from mdtui.ui.common.toggles import MarkRadioButton
from mdtui.ui.results.render import geometry_text

FORMAT_NAMES = {"md": "Markdown", "csv": "CSV", "json": "JSON"}


class TextPromptScreen(ModalScreen[str | None]):
    """One line of text: Enter keeps it (empty clears), Escape leaves it as it was."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str, hint: str) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt", classes="results-dialog"):
            yield Static(Text(self._hint, style="dim"), id="prompt-hint")
            yield Input(self._value, id="prompt-input", compact=True, select_on_focus=False)

    def on_mount(self) -> None:
        box = self.query_one("#prompt", Vertical)
        box.border_title = self._title
        box.border_subtitle = "Enter saves · Esc cancels"
        self.query_one("#prompt-input", Input).focus()

    @on(Input.Submitted, "#prompt-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class ExportRequest:
    fmt: str  # one of store.export.FORMATS
    path: Path  # absolute


def export_dir() -> Path:
    """Where exports go unless told otherwise: $XDG_DATA_HOME/mdtui/exports, else the home directory.

    Never the current directory: the app is often started from a checkout, where a file would land unseen.
    """
    try:
        base = env_location("XDG_DATA_HOME")
    except MdtuiError:  # under sudo, a location root does not own is not used
        base = None
    if base and os.path.isabs(base):
        return Path(base) / "mdtui" / "exports"
    return home_dir()


def resolve_export_path(text: str, base: Path | None = None) -> Path:
    """The file a typed path names: ~ expanded, a relative name in ``base`` (the export directory)."""
    path = Path(text.strip()).expanduser()
    return path if path.is_absolute() else (base or export_dir()) / path


def prepare_export_dir(path: Path) -> None:
    """Make the default export directory when the export goes there and it does not exist yet."""
    default = export_dir()
    if path.parent == default and not os.path.lexists(default):
        default.mkdir(parents=True, mode=0o700, exist_ok=True)


def export_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written as an export (a directory, a device, a database...), or None."""
    if path.parent == export_dir() and not os.path.lexists(path.parent):
        return None  # made on writing
    return output_problem(path)


class ExportScreen(ModalScreen[ExportRequest | None]):
    """Format and file for an export: the file defaults to export_dir(), its full path shown; Enter exports from
    any field; replacing a file takes a second Enter."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("enter", "export", "Export", show=False, priority=True)]

    def __init__(self, title: str, stem: str, fmt: str = "md") -> None:
        super().__init__()
        self._title = title
        self._stem = stem
        self._fmt = fmt
        self._replace: Path | None = None
        self._base = export_dir()
        self._checked: str | None = None  # the name Enter last checked

    def compose(self) -> ComposeResult:
        with Vertical(id="export", classes="results-dialog"):
            with RadioSet(id="export-format", compact=True):
                for fmt in FORMATS:
                    yield MarkRadioButton(FORMAT_NAMES[fmt], value=fmt == self._fmt, name=fmt, compact=True)
            with Horizontal(classes="export-field"):
                yield Label("File ")
                yield Input(
                    str(self._base / f"{self._stem}.{self._fmt}"),
                    id="export-path",
                    compact=True,
                    select_on_focus=False,
                )
            yield Static(self._destination(), id="export-note")
            with Horizontal(id="export-buttons"):
                yield Button("Cancel", id="export-cancel", compact=True)
                yield Button("Export", id="export-go", variant="primary", compact=True)

    def on_mount(self) -> None:
        box = self.query_one("#export", Vertical)
        box.border_title = self._title
        box.border_subtitle = "Enter exports · Esc cancels"
        self.query_one("#export-path", Input).focus()

    @on(RadioSet.Changed, "#export-format")
    def _format_changed(self, event: RadioSet.Changed) -> None:
        self._use_format(event.pressed.name or "md")

    def _use_format(self, fmt: str) -> None:
        if fmt == self._fmt:
            return
        path_input = self.query_one("#export-path", Input)
        current = Path(path_input.value)
        # Follow the format only while the name still has one of our extensions; a typed name is kept.
        if current.suffix.lstrip(".") in FORMATS:
            path_input.value = str(current.with_suffix(f".{fmt}"))
        self._fmt = fmt
        self._replace = None

    @on(Input.Changed, "#export-path")
    def _path_changed(self) -> None:
        # Another name asks again before replacing; the same one (a format chosen by Enter) keeps the question.
        text = self.query_one("#export-path", Input).value
        if text == self._checked:
            return  # a change Enter overtook: what Enter said about this name stands
        if self._replace is not None and resolve_export_path(text, self._base) == self._replace:
            return
        self._replace = None
        self.query_one("#export-note", Static).update(self._destination())

    def _destination(self) -> Text:
        """The full path the file will be written to, as the field now names it."""
        text = self.query_one("#export-path", Input).value if self.is_mounted else f"{self._stem}.{self._fmt}"
        if not text.strip():
            return Text("Name a file to write.", style="dim")
        return Text.assemble(("writes ", "dim"), str(resolve_export_path(text, self._base)))

    def action_export(self) -> None:
        """Enter on the format choice exports too, as the dialog's border says (on a button it presses it)."""
        focused = self.focused
        if isinstance(focused, Button):
            focused.press()
            return
        if isinstance(focused, RadioSet):
            # The highlighted format (RadioSet marks it -selected) is the one meant: choose it, then export.
            highlighted = next((b for b in focused.query(RadioButton) if b.has_class("-selected")), None)
            if highlighted is not None and highlighted.name:
                highlighted.value = True
                self._use_format(highlighted.name)
        self._go()

    def _note(self, text: str, style: str) -> None:
        self.query_one("#export-note", Static).update(Text(text, style=style))

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-go")
    def _go(self) -> None:
        text = self.query_one("#export-path", Input).value
        self._checked = text
        if not text.strip():
            self._note("Name a file to write.", "bold red")
            return
        path = resolve_export_path(text, self._base)
        problem = export_path_problem(path)
        if problem:
            self._note(problem, "bold red")
            return
        if path.exists() and self._replace != path:
            self._replace = path
            self._note(f"{path} exists: Enter again replaces it", "bold yellow")
            return
        self.dismiss(ExportRequest(self._fmt, path))

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def target_kind_text(target: str) -> str:
    """What a run without an array measured: a block device under /dev, else the regular file fio wrote."""
    if not target:
        return "-"
    return "raw device" if target.startswith("/dev/") else "file"


def device_option_text(run: RunRecord, metric: str) -> Text:
    info = METRICS_BY_NAME[metric]
    value = run.metrics.get(metric)
    kind = geometry_text(run) if run.array else target_kind_text(run.target)
    figure = f"{format_metric(info, value)} {unit_text(info)}" if value is not None else f"no {info.label}"
    return Text.assemble((run.title, "bold"), f"  {run.target or '-'}  {kind}  ", (figure, "dim"))


class DevicePickerScreen(ModalScreen[int | None]):
    """Which run's figure stands for one raw disk's speed; runs on a raw device are offered first."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, runs: Sequence[RunRecord], metric: str, chosen: int | None) -> None:
        super().__init__()
        measured = [run for run in runs if run.metrics.get(metric)]
        self._runs = sorted(measured, key=lambda run: (bool(run.array), -run.id))
        self._metric = metric
        self._chosen = chosen

    def compose(self) -> ComposeResult:
        with Vertical(id="device", classes="results-dialog"):
            yield Static(
                Text(
                    "Divide by which run's speed? Pick a run on one raw disk (the chunk study used the raw "
                    "disk at offset 0).",
                    style="dim",
                ),
                id="device-hint",
            )
            options = [Option(device_option_text(run, self._metric), id=str(run.id)) for run in self._runs]
            yield OptionList(*options, id="device-list", compact=True)
            if not options:
                yield Static(Text(f"No stored run has a {METRICS_BY_NAME[self._metric].label} figure.", style="bold"))

    def on_mount(self) -> None:
        box = self.query_one("#device", Vertical)
        box.border_title = "Baseline device run"
        box.border_subtitle = "Enter picks · Esc cancels"
        options = self.query_one("#device-list", OptionList)
        ids = [run.id for run in self._runs]
        if self._chosen in ids:
            options.highlighted = ids.index(self._chosen)
        elif ids:
            options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected, "#device-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0) or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
