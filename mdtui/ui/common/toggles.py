"""Checkboxes and radio buttons whose state reads without colour (NO_COLOR, a monochrome terminal).

Textual draws one glyph for both states of a toggle and tells them apart by colour alone; these swap the
glyph itself through Textual's public BUTTON_* class variables.
"""

from __future__ import annotations

from textual.widgets import Checkbox, RadioButton


class MarkCheckbox(Checkbox):
    """A checkbox that reads ``[x]`` on and ``[ ]`` off."""

    DEFAULT_CSS = """
    MarkCheckbox > .toggle--button { color: $text-muted; }
    MarkCheckbox.-on > .toggle--button { color: $text-success; text-style: bold; }
    """

    BUTTON_LEFT = ""
    BUTTON_INNER = "[ ]"
    BUTTON_RIGHT = ""

    def watch_value(self) -> None:
        self.BUTTON_INNER = "[x]" if self.value else "[ ]"
        super().watch_value()


class MarkRadioButton(RadioButton):
    """A radio button that reads ``(•)`` chosen and ``( )`` not."""

    DEFAULT_CSS = """
    MarkRadioButton > .toggle--button { color: $text-muted; }
    MarkRadioButton.-on > .toggle--button { color: $text-success; text-style: bold; }
    """

    BUTTON_LEFT = ""
    BUTTON_INNER = "( )"
    BUTTON_RIGHT = ""

    def watch_value(self) -> None:
        self.BUTTON_INNER = "(•)" if self.value else "( )"
        super().watch_value()
