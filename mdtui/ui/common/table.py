"""A DataTable whose rows are drawn again at their columns' widths once it has sized them."""

from __future__ import annotations

from typing import TypeVar

from textual.strip import Strip
from textual.widgets import DataTable

CellT = TypeVar("CellT")


class SizedTable(DataTable[CellT]):
    """A DataTable that draws its rows again when a column's width changed since it last drew a line.

    DataTable sizes the rows added since it was last idle, and may have drawn them before that at
    their columns' old widths (the headings' widths in a table just filled). What it drew is kept by
    what changes the drawing but not by the widths: when a column's width changes while the table's
    size stays the same, rows drawn first could stay on screen cut to the old widths. Each line drawn
    checks the widths first; a change drops everything drawn (as a change of style drops it).
    """

    _drawn_widths: tuple[int, ...] = ()  # each column's width (padding included) when a line was last drawn

    def column_widths(self) -> tuple[int, ...]:
        """Each column's width on screen, padding included, in order."""
        return tuple(column.get_render_width(self) for column in self.ordered_columns)

    def render_line(self, y: int) -> Strip:
        widths = self.column_widths()
        if widths != self._drawn_widths:
            if self._drawn_widths:
                self.redraw_rows()
            self._drawn_widths = widths
        return super().render_line(y)

    def redraw_rows(self) -> None:
        """Drop every line and cell drawn, and repaint."""
        self.notify_style_update()
