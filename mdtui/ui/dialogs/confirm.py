"""A confirmation for a destructive action: the action's button stays disabled until the user types its target."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from mdtui.confirmation import confirms, mismatch_line

# Prompt (with its margin), input (with its margin) and the button row.
FOOTER_ROWS = 5


class ConfirmScreen(ModalScreen[str | None]):
    """Dismisses with what was typed only when it confirms ``phrase`` (the core's rule, mdtui.confirmation) and
    the action is chosen, else None; the caller hands that text to the core function, which checks it again."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, body: RenderableType, phrase: str, action_label: str) -> None:
        super().__init__()
        self._title = title
        self._body = body
        self.phrase = phrase
        self._action_label = action_label

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            with VerticalScroll(id="confirm-body"):
                yield Static(self._body, id="confirm-text")
            with Vertical(id="confirm-footer"):
                yield Static(Text.assemble("Type ", (self.phrase, "bold"), " to confirm:"), id="confirm-prompt")
                yield Input(placeholder=self.phrase, id="confirm-input", compact=True)
                yield Static(id="confirm-mismatch")
                with Horizontal(id="confirm-buttons"):
                    yield Button("Cancel", id="confirm-cancel", compact=True)
                    yield Button(self._action_label, id="confirm-go", variant="error", compact=True, disabled=True)

    def on_mount(self) -> None:
        box = self.query_one("#confirm", Vertical)
        box.border_title = self._title
        box.border_subtitle = "Esc cancels"
        self.query_one("#confirm-input", Input).focus()
        self._fit_body(self.size.height or self.app.size.height)

    def on_resize(self, event: events.Resize) -> None:
        self._fit_body(event.size.height)

    def _fit_body(self, screen_height: int) -> None:
        # The dialog grows with its text but the typed target and buttons must stay on screen, so
        # the body gets what is left after the border and the footer (prompt, input, buttons).
        footer = self.query_one("#confirm-footer", Vertical)
        reserved = 2 + (footer.outer_size.height or FOOTER_ROWS)
        self.query_one("#confirm-body", VerticalScroll).styles.max_height = max(3, screen_height - reserved)

    def typed(self) -> str:
        return self.query_one("#confirm-input", Input).value.strip()

    def matches(self) -> bool:
        return confirms(self.typed(), self.phrase)

    @on(Input.Changed, "#confirm-input")
    def _typed(self) -> None:
        self.query_one("#confirm-go", Button).disabled = not self.matches()
        self._say("")

    @on(Input.Submitted, "#confirm-input")
    def _submitted(self) -> None:
        if self.matches():
            self.dismiss(self.typed())
        else:
            self.app.bell()
            self._say(mismatch_line(self.query_one("#confirm-input", Input).value, self.phrase))

    def _say(self, line: str) -> None:
        """The line under the input: why Enter did nothing (the CLI says the same), or nothing."""
        said = self.query_one("#confirm-mismatch", Static)
        if said.has_class("-shown") == bool(line):
            if line:
                said.update(line)
            return
        said.update(line)
        said.set_class(bool(line), "-shown")
        self.call_after_refresh(self._fit_body, self.size.height or self.app.size.height)

    @on(Button.Pressed, "#confirm-go")
    def _go(self) -> None:
        if self.matches():
            self.dismiss(self.typed())

    @on(Button.Pressed, "#confirm-cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
