"""A full-screen view of one disk or array, for terminals too small for the inline detail pane."""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class DetailScreen(ModalScreen[str | None]):
    """Closes with None; a subclass whose keys act on what it shows closes with the action's name (act)."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("enter", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-full"):
            yield Static(self._body, id="detail-full-body")

    def on_mount(self) -> None:
        container = self.query_one("#detail-full", VerticalScroll)
        container.border_title = self._title
        container.border_subtitle = "Esc closes"
        container.focus()

    def action_act(self, action: str) -> None:
        """Close, naming the action the screen below is to run on what was shown."""
        self.dismiss(action)
