"""A DataTable whose rows are drawn again at their columns' widths once it has sized them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

CellT = TypeVar("CellT")


class SizedTable(DataTable[CellT]):
    """A DataTable that draws its rows again when sizing them changed a column's width.

    DataTable sizes the rows added since it was last idle, and may have drawn them before that at
    their columns' old widths (the headings' widths in a table just filled). Its caches of drawn cells,
    rows and lines are keyed by what changes the drawing but not by the widths: when a column's width
    changes while the table's size stays the same, the rows drawn first could stay on screen cut to the
    old widths. A change of any column's width now drops them (every cache is keyed by _update_count).
    Subclasses that size their cells more quickly override _size_rows, not _update_dimensions.
    """

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        before = self._widths()
        self._size_rows(new_rows)
        if self._widths() != before:
            self._update_count += 1  # every DataTable cache is keyed by it
            self.refresh()

    def _size_rows(self, new_rows: Iterable[RowKey]) -> None:
        """Size the columns (and auto-height rows) for ``new_rows``: DataTable's own sizing."""
        super()._update_dimensions(new_rows)

    def _widths(self) -> tuple[int, ...]:
        """The row labels' width and each column's content width, in order."""
        return (self._label_column.content_width, *(column.content_width for column in self.ordered_columns))
