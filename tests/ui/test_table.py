"""SizedTable: rows drawn before the table sized their columns are drawn again at the new widths."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import DataTable

from mdtui.ui.common.table import SizedTable
from mdtui.ui.inventory.widgets import InventoryTable
from mdtui.ui.results.widgets import HistoryTable

ROWS = [("one", Text("a long first cell"), "x"), ("two", Text("second"), "a wider last cell")]


class Tables(App[None]):
    CSS = "DataTable { height: 5; width: 60; }"  # fixed: no resize redraws them on its own

    def compose(self) -> ComposeResult:
        yield SizedTable(id="sized")
        yield DataTable(id="reference")


def drawn(table: DataTable[object]) -> list[Strip]:
    return table.render_lines(Region(0, 0, table.size.width, 3))


async def fill_draw_and_size(pilot: Pilot[None], table: DataTable[object]) -> list[str]:
    """Rows added and drawn before the table sized them (as a frame may, before it is idle), then sized."""
    table.add_column("A", key="a")
    table.add_column("B", key="b")
    for key, first, last in ROWS:
        table.add_row(first, last, key=key)
    drawn(table)  # at the headings' widths, and kept
    await pilot.pause()  # idle: the table sizes its new rows
    return [strip.text.rstrip() for strip in drawn(table)]


async def test_rows_drawn_before_the_table_sized_them_are_drawn_again_at_their_widths() -> None:
    app = Tables()
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        lines = await fill_draw_and_size(pilot, app.query_one("#sized", SizedTable))
        assert "a long first cell" in lines[1] and "a wider last cell" in lines[2]
        # What DataTable alone shows: the rows cut to the headings' widths (what SizedTable is for).
        reference = await fill_draw_and_size(pilot, app.query_one("#reference", DataTable))
        assert "a long first cell" not in reference[1]


async def test_a_table_whose_widths_did_not_change_keeps_what_it_drew() -> None:
    app = Tables()
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        table = app.query_one("#sized", SizedTable)
        table.add_column("A", key="a")
        table.add_row(Text("A"), key="r")  # no wider than its heading
        before = drawn(table)
        await pilot.pause()
        assert all(now is then for now, then in zip(drawn(table), before, strict=True))


def test_the_screens_tables_are_sized_tables() -> None:
    assert issubclass(InventoryTable, SizedTable) and issubclass(HistoryTable, SizedTable)
