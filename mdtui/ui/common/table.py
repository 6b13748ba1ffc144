"""A DataTable whose rows are drawn again at their columns' widths once it has sized them."""

from __future__ import annotations

from typing import TypeVar

from textual.geometry import Size
from textual.widgets import DataTable

CellT = TypeVar("CellT")


class SizedTable(DataTable[CellT]):
    """A DataTable that draws its rows again when sizing them made a column wider.

    DataTable sizes the rows added since it was last idle, and may have drawn them before that at
    their columns' old widths (the headings' widths in a table just filled). What it drew is kept by
    what changes the drawing but not by the widths: rows drawn first could stay on screen cut to the
    old widths. Sizing only ever widens columns, and the table's virtual width is their sum: when it
    grows, everything drawn is dropped (as a change of style drops it) and drawn again.
    """

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        if new.width > old.width and self.is_mounted:
            self.notify_style_update()
