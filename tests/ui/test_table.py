"""SizedTable: rows drawn before the table sized their columns are drawn again at the new widths."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from mdtui.ui.common.table import SizedTable
from mdtui.ui.inventory.widgets import InventoryTable
from mdtui.ui.results.widgets import HistoryTable

ROWS = [("one", Text("a long first cell"), "x"), ("two", Text("second"), "a wider last cell")]


class Tables(App[None]):
    def compose(self) -> ComposeResult:
        yield SizedTable(id="sized")
        yield DataTable(id="reference")


def fill_and_draw(table: DataTable[object]) -> list[str]:
    """Rows added, drawn before the table sized them (as a frame may, before it is idle), then sized."""
    table.add_column("A", key="a")
    table.add_column("B", key="b")
    for key, first, last in ROWS:
        table.add_row(first, last, key=key)
    width = table.size.width
    style = table.rich_style
    for y in range(3):
        table._render_line(y, 0, width, style)  # drawn at the headings' widths, and kept
    rows, table._new_rows = set(table._new_rows), set()
    table._require_update_dimensions = False
    table._update_dimensions(rows)  # what the table does once idle
    return [table._render_line(y, 0, width, table.rich_style).text.rstrip() for y in range(3)]


def sized_first(table: DataTable[object]) -> list[str]:
    """The same rows, sized before they are first drawn."""
    table.clear(columns=True)
    table.add_column("A", key="a")
    table.add_column("B", key="b")
    for key, first, last in ROWS:
        table.add_row(first, last, key=key)
    rows, table._new_rows = set(table._new_rows), set()
    table._require_update_dimensions = False
    table._update_dimensions(rows)
    return [table._render_line(y, 0, table.size.width, table.rich_style).text.rstrip() for y in range(3)]


async def test_rows_drawn_before_the_table_sized_them_are_drawn_again_at_their_widths() -> None:
    app = Tables()
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        table = app.query_one("#sized", SizedTable)
        lines = fill_and_draw(table)
        assert "a long first cell" in lines[1] and "a wider last cell" in lines[2]
        assert lines == sized_first(table)


async def test_a_table_whose_widths_did_not_change_keeps_what_it_drew() -> None:
    app = Tables()
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        table = app.query_one("#sized", SizedTable)
        table.add_column("A", key="a")
        table.add_row(Text("A"), key="r")  # no wider than its heading
        count = table._update_count
        rows, table._new_rows = set(table._new_rows), set()
        table._update_dimensions(rows)
        assert table._update_count == count


def test_the_screens_tables_are_sized_tables() -> None:
    assert issubclass(InventoryTable, SizedTable) and issubclass(HistoryTable, SizedTable)
