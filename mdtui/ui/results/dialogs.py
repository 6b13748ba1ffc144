"""Small dialogs of the results screens: edit a label or note, choose an export file, pick a device run."""

from __future__ import annotations

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

from mdtui.safefile import output_problem
from mdtui.store.export import FORMATS, format_metric, unit_text
from mdtui.store.records import METRICS_BY_NAME, RunRecord
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


def resolve_export_path(text: str, cwd: Path | None = None) -> Path:
    """The file a typed path names: ~ expanded, relative to the current directory."""
    path = Path(text.strip()).expanduser()
    return path if path.is_absolute() else (cwd or Path.cwd()) / path


def export_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written as an export (a directory, a device, a database...), or None."""
    return output_problem(path)


class ExportScreen(ModalScreen[ExportRequest | None]):
    """Format and file for an export: the file defaults to the current directory; replacing one takes a second Enter."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, stem: str, fmt: str = "md") -> None:
        super().__init__()
        self._title = title
        self._stem = stem
        self._fmt = fmt
        self._replace: Path | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="export", classes="results-dialog"):
            with RadioSet(id="export-format", compact=True):
                for fmt in FORMATS:
                    yield RadioButton(FORMAT_NAMES[fmt], value=fmt == self._fmt, name=fmt, compact=True)
            with Horizontal(classes="export-field"):
                yield Label("File ")
                yield Input(f"{self._stem}.{self._fmt}", id="export-path", compact=True, select_on_focus=False)
            yield Static(Text(f"relative to {Path.cwd()}", style="dim"), id="export-note")
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
        fmt = event.pressed.name or "md"
        path_input = self.query_one("#export-path", Input)
        current = Path(path_input.value)
        # Follow the format only while the name still has one of our extensions; a typed name is kept.
        if current.suffix.lstrip(".") in FORMATS:
            path_input.value = str(current.with_suffix(f".{fmt}"))
        self._fmt = fmt
        self._replace = None

    @on(Input.Changed, "#export-path")
    def _path_changed(self) -> None:
        self._replace = None
        self._note(f"relative to {Path.cwd()}", "dim")

    def _note(self, text: str, style: str) -> None:
        self.query_one("#export-note", Static).update(Text(text, style=style))

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-go")
    def _go(self) -> None:
        text = self.query_one("#export-path", Input).value
        if not text.strip():
            self._note("Name a file to write.", "bold red")
            return
        path = resolve_export_path(text)
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


def device_option_text(run: RunRecord, metric: str) -> Text:
    info = METRICS_BY_NAME[metric]
    value = run.metrics.get(metric)
    kind = "raw device" if not run.array else geometry_text(run)
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
