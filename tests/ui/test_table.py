"""SizedTable: rows drawn before the table sized their columns are drawn again at the new widths."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import DataTable

from mdtui.model.array import MdArray
from mdtui.ui.common.render import Palette
from mdtui.ui.common.table import SizedTable
from mdtui.ui.inventory.widgets import ArrayTable, InventoryTable
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


class CountedTable(SizedTable[object]):
    """Counts the times it dropped what it drew."""

    dropped = 0

    def redraw_rows(self) -> None:
        self.dropped += 1
        super().redraw_rows()


class Counted(App[None]):
    CSS = Tables.CSS

    def compose(self) -> ComposeResult:
        yield CountedTable()


async def test_a_table_whose_widths_did_not_change_keeps_what_it_drew() -> None:
    app = Counted()
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(CountedTable)
        table.add_column("A", key="a")
        table.add_row(Text("A"), key="r")  # no wider than its heading
        drawn(table)
        dropped = table.dropped
        await pilot.pause()
        assert table.dropped == dropped
        table.add_row(Text("wider than A"), key="w")
        await pilot.pause()
        drawn(table)
        assert table.dropped == dropped + 1


def test_the_screens_tables_are_sized_tables() -> None:
    assert issubclass(InventoryTable, SizedTable) and issubclass(HistoryTable, SizedTable)


class Arrays(App[None]):
    CSS = "ArrayTable { height: 6; width: 1fr; }"

    def compose(self) -> ComposeResult:
        yield ArrayTable()


async def test_an_array_table_rescan_updates_a_changed_cell_in_place() -> None:
    # Its columns that fit once shared the attribute the in-place update reads: every rescan rebuilt it.
    app = Arrays()
    async with app.run_test(size=(120, 12)) as pilot:
        table = app.query_one(ArrayTable)
        arrays = [MdArray("md0", "clean", "raid1", size_bytes=1 << 30), MdArray("md1", "active", "raid5")]
        table.show(arrays, Palette())
        await pilot.pause()
        rebuilt = []
        original_clear = table.clear

        def counted_clear(columns: bool = False) -> ArrayTable:
            rebuilt.append(columns)
            return original_clear(columns)

        table.clear = counted_clear  # type: ignore[method-assign]  # a spy: DataTable.clear, counted
        # md1 goes clean (no wider than "active"): one cell changes, and the table is not rebuilt.
        table.show([arrays[0], MdArray("md1", "clean", "raid5")], Palette())
        await pilot.pause()
        assert not rebuilt, "the array table was rebuilt for one changed cell"
        assert table.get_row_at(1)[2].plain == "clean"
        await pilot.resize_terminal(119, 12)  # the same columns still fit: nothing to redraw
        await pilot.pause()
        assert not rebuilt, "a resize that keeps the columns rebuilt the array table"
