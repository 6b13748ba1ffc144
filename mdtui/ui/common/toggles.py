"""Checkboxes and radio buttons whose state reads without colour (NO_COLOR, a monochrome terminal).

Textual draws one glyph for both states of a toggle (`▐X▌`) and tells them apart by colour alone, so an
unticked box looked ticked under NO_COLOR or in a copied screen; these swap the glyph itself, through Textual's
public BUTTON_* class variables (a SelectionList draws them for every row, so it swaps them as it draws a row).
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Checkbox, RadioButton, SelectionList
from textual.widgets.option_list import OptionDoesNotExist


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


class MarkSelectionList(SelectionList[Any]):
    """A selection list whose rows read ``[x]`` ticked and ``[ ]`` not (the guide's disks)."""

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        try:
            selection = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return line
        segments = list(line)
        # SelectionList draws BUTTON_LEFT, BUTTON_INNER and BUTTON_RIGHT as the row's first three segments.
        if len(segments) < 3:
            return line
        mark = "[x]" if selection.value in self.selected else "[ ]"
        return Strip([Segment(mark, segments[1].style), *segments[3:]], line.cell_length)
