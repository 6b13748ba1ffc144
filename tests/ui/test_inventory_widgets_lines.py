"""Inventory tables lay out a row's line themselves (issue 17, scrolling): every line must be DataTable's own."""

from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import DataTable

from mdtui.ui.app import MdtuiApp
from mdtui.ui.inventory.widgets import InventoryTable
from mdtui.ui.themes import repo_themes_dir

from .conftest import settle


def with_meta(segments: list[Segment]) -> list[tuple[str, Style | None, object]]:
    """Segments as compared here: text, style, and the mouse's meta (Style == ignores meta)."""
    return [(s.text, s.style, s.style.meta if s.style is not None else None) for s in segments]


def datatable_row(
    table: InventoryTable, row: int, base: Style, cursor: Coordinate, hover: Coordinate
) -> tuple[list[list[Segment]], list[list[Segment]]]:
    """The row as Textual's DataTable draws it: its own _render_line_in_row and _render_cell, no cache."""
    table._row_render_cache.clear()
    table._cell_render_cache.clear()
    table._render_cell = functools.partial(DataTable._render_cell, table)  # type: ignore[method-assign]
    try:
        key = table._row_locations.get_key(row)
        assert key is not None
        return DataTable._render_line_in_row(table, key, 0, base, cursor, hover)
    finally:
        del table._render_cell


def datatable_line(table: InventoryTable, y: int, x1: int, x2: int, base: Style) -> Strip:
    """A line of the table as Textual's DataTable draws it, with none of this table's caches or drawing."""
    for cache in (table._row_render_cache, table._cell_render_cache, table._line_cache):
        cache.clear()
    table._render_cell = functools.partial(DataTable._render_cell, table)  # type: ignore[method-assign]
    table._render_line_in_row = functools.partial(DataTable._render_line_in_row, table)  # type: ignore[method-assign]
    try:
        return DataTable._render_line(table, y, x1, x2, base)
    finally:
        del table._render_cell, table._render_line_in_row


def assert_rows_equal(table: InventoryTable, rows: range) -> None:
    base = table.rich_style
    elsewhere = Coordinate(-5, 0)
    for row in rows:
        key = table._row_locations.get_key(row)
        assert key is not None
        for cursor, hover in ((row, -5), (-5, row), (row, row), (-5, -5), (row + 1, -5)):
            at, over = Coordinate(cursor, 0), Coordinate(hover, 0) if hover >= 0 else elsewhere
            table._row_render_cache.clear()
            table._cell_render_cache.clear()
            ours = table._render_line_in_row(key, 0, base, at, over)
            theirs = datatable_row(table, row, base, at, over)
            assert ours[0] == theirs[0] == []
            assert [with_meta(cell) for cell in ours[1]] == [with_meta(cell) for cell in theirs[1]], (table.id, row)


def assert_lines_equal(table: InventoryTable) -> None:
    """Every line on screen, with the cursor on one row and the mouse over another, as DataTable draws it."""
    width = table.size.width
    base = table.rich_style
    for y in range(table.virtual_size.height):
        ours = table._render_line(y, 0, width, base)
        theirs = datatable_line(table, y, 0, width, base)
        assert with_meta(list(ours)) == with_meta(list(theirs)), (table.id, y)
        assert ours.cell_length == theirs.cell_length
    # What the screen gets: the table's lines at its scroll offset, the header kept on top.
    region = Region(0, 0, table.size.width, table.size.height)
    table._styles_cache.clear()
    drawn = table.render_lines(region)
    table.render_line = functools.partial(DataTable.render_line, table)  # type: ignore[method-assign]
    table._styles_cache.clear()
    try:
        reference = table.render_lines(region)
    finally:
        del table.render_line
    assert [with_meta(list(strip)) for strip in drawn] == [with_meta(list(strip)) for strip in reference]


async def test_every_row_of_a_big_host_is_laid_out_as_datatable_lays_it_out(
    tmp_path: Path, bigtree: ModuleType
) -> None:
    """Both inventory tables of a 64-disk host, every row under and off the cursor and the mouse, focused
    and not, in both themes and at a width that cuts the model/serial column."""
    tree = bigtree.build(tmp_path / "tree", 64)
    app = MdtuiApp(str(tree.base), privileged=True, theme_dirs=(repo_themes_dir(),), db_path=tmp_path / "r.db")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        for size in ((160, 48), (90, 30)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            for theme in ("mdtui-dark", "mdtui-light"):
                app.theme = theme
                await settle(pilot)
                for table in app.screen.query(InventoryTable):
                    assert table.row_count
                    assert_rows_equal(table, range(table.row_count))
                    for show_hover in (False, True):
                        table._show_hover_cursor = show_hover
                        table.hover_coordinate = Coordinate(min(3, table.row_count - 1), 1)
                        table.move_cursor(row=min(2, table.row_count - 1), animate=False)
                        table._lines.clear()
                        assert_lines_equal(table)
                        table.scroll_to(y=5, animate=False, immediate=True)
                        assert_lines_equal(table)
                        table.scroll_to(y=0, animate=False, immediate=True)


class OddCells(App[None]):
    """An InventoryTable given cells _fill never gives: plain strings, two-line Text, a tab, wide characters."""

    def compose(self) -> ComposeResult:
        yield InventoryTable(id="odd")

    def on_mount(self) -> None:
        table = self.query_one(InventoryTable)
        table.add_column("A", key="a")
        table.add_column("B", key="b", width=6)
        table.add_column("C", key="c")
        table.add_row(Text("one", style="bold"), "plain", Text("日本語テキスト"), key="r0")
        table.add_row(Text("two\nlines"), Text("a\tb"), Text("right", justify="right"), key="r1")
        table.add_row(Text("x" * 20, style="red"), Text("cut me off", style="green"), "", key="r2")
        table.add_row(Text("multi\nline", style="blue"), Text("tall"), Text("row"), key="r3", height=2)


async def test_cells_the_fast_layout_does_not_draw_are_drawn_by_datatable() -> None:
    app = OddCells()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(InventoryTable)
        assert_rows_equal(table, range(3))
        table.move_cursor(row=1, animate=False)
        await pilot.pause()
        table._lines.clear()
        assert_lines_equal(table)


async def test_a_cell_under_the_cursor_gets_the_cursor_style_and_the_mouse_meta() -> None:
    """The fast layout can fail: a row drawn without the cursor's style, or without its meta, differs."""
    app = OddCells()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(InventoryTable)
        base = table.rich_style
        key = table._row_locations.get_key(0)
        assert key is not None
        on = table._render_line_in_row(key, 0, base, Coordinate(0, 0), Coordinate(-1, 0))
        off = table._render_line_in_row(key, 0, base, Coordinate(1, 0), Coordinate(-1, 0))
        assert with_meta(on[1][0]) != with_meta(off[1][0])
        metas = [segment.style.meta for cell in on[1] for segment in cell if segment.style is not None]
        assert {"row": 0, "column": 0} in metas and {"row": 0, "column": 2} in metas


TRICKY = [
    Text("sda"), Text("sdb"), Text("sdab"), Text("xx"), Text("ST16000NM / ZL2A0B1C"), Text("AB12345QQ / 9Z9Z9Z9Z"),
    Text(" lead"), Text("trail  "), Text("trail  ", justify="right"), Text("mid  dle ", justify="center"),
    Text("1.8 TiB", justify="right"), Text("10.9 TiB", justify="right"), Text("exactly10!"), Text("longer than ten"),
    Text("longer than ten", overflow="ellipsis"), Text("longer than ten", overflow="crop"), Text("a…b"),
    Text("日本語"), Text("bold", style="bold red"), Text("dim", style="dim"), Text("  "), Text(""),
    Text("x y z", justify="full"), Text("sp an", spans=[]), Text("styled", style="on blue", justify="center"),
    Text("", style="on red", justify="right"), Text("ab  cd "), Text("ef  gh ", justify="right"),
]  # fmt: skip


class TrickyCells(App[None]):
    """One-line Text cells of every shape the stand-in drawing must get right, in a cut and a wide column."""

    def compose(self) -> ComposeResult:
        yield InventoryTable(id="tricky")

    def on_mount(self) -> None:
        table = self.query_one(InventoryTable)
        table.add_column("Cut", key="cut", width=10)
        table.add_column("Wide", key="wide")
        table.add_column("Right", key="right", width=12)
        for index, cell in enumerate(TRICKY):
            right = cell.copy()
            right.justify = "right" if cell.justify in (None, "default", "left") else cell.justify
            table.add_row(cell, cell.copy(), right, key=f"r{index}")
        spanned = Text("has spans")
        spanned.stylize("bold", 0, 3)
        table.add_row(spanned, spanned.copy(), Text("plain"), key="spans")


async def test_cells_drawn_from_a_stand_in_are_drawn_as_datatable_draws_them() -> None:
    app = TrickyCells()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        table = app.query_one(InventoryTable)
        drawn_through_rich = 0
        draw_cell = table._draw_cell

        def counted(*args: object, **kwargs: object) -> list[list[Segment]]:
            nonlocal drawn_through_rich
            drawn_through_rich += 1
            return draw_cell(*args, **kwargs)  # type: ignore[arg-type]

        table._draw_cell = counted  # type: ignore[method-assign]
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            table._cells_drawn.clear()
            drawn_through_rich = 0
            assert_rows_equal(table, range(table.row_count))
            looks = len(table._cells_drawn)
            assert drawn_through_rich < looks  # some cells were drawn from a stand-in
            table.move_cursor(row=4, animate=False)
            await pilot.pause()
            table._lines.clear()
            assert_lines_equal(table)
