"""Tables for disks and arrays: each redraws itself from immutable core objects it is given."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeGuard

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.renderables.styled import Styled
from textual.strip import Strip
from textual.widgets import Footer, Static
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowKey

from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.ui.common.render import ARRAY_COLUMNS, DISK_COLUMNS, Palette, array_cells, disk_cells, truncate
from mdtui.ui.common.table import SizedTable

_NOT_SPACE = re.compile(r"[^ ]")
_EMPTY_CELL = Text(no_wrap=True, end="")  # DataTable's _EMPTY_TEXT

# The model/serial column gives way first so the state column always stays on screen.
_IDENT_COLUMN = "ident"
_MIN_IDENT_WIDTH = 3


class SteadyFooter(Footer):
    """A Footer that recomposes only when the keys it would show changed.

    Textual's Footer rebuilds its key widgets on every bindings refresh (a focus change, a rescan),
    and each rebuild restyles a dozen widgets: at launch that was five rebuilds of the same keys
    (issue 17, launch time). What it would show is compared first; the same keys keep the widgets.
    """

    def __init__(self, *, show_command_palette: bool = True) -> None:
        super().__init__(show_command_palette=show_command_palette)
        self._composed: tuple[object, ...] | None = None

    def _keys(self) -> tuple[object, ...]:
        """What compose would show: each shown binding's key, label, action and state, in order."""
        if not self._bindings_ready:
            return ()
        app = self.app
        keys = [
            (key, binding.action, binding.description, app.get_key_display(binding), enabled, tooltip, binding.show)
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == app.COMMAND_PALETTE_BINDING
        ]
        return (*keys, self.show_command_palette, self.compact)

    def compose(self) -> ComposeResult:
        self._composed = self._keys()
        yield from super().compose()

    async def recompose(self) -> None:
        if self.is_attached and self._composed is not None and self._keys() == self._composed:
            return
        await super().recompose()


class InventoryTable(SizedTable[Text]):
    """A row-cursor table whose rows are keyed by kernel name, so a rescan keeps the selection."""

    BINDINGS = [Binding("enter", "select_cursor", "Details")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        # What the table shows: its columns, each row's cells, the row keys in order; and each row's cells
        # as _look sees them, worked out when a rescan compares them (not at each fill).
        self._shown: tuple[tuple[tuple[str, str, int | None], ...], dict[str, Sequence[Text]], list[str]] | None
        self._shown = None
        self._looks: dict[str, tuple[object, ...]] = {}
        self._sized: set[str] = set()  # rows _fill has sized already (see _update_dimensions)
        # Rendered lines by what they show (see _render_line), dropped whenever the table changes.
        self._lines: dict[tuple[object, ...], Strip] = {}
        # Rendered cells by what they show, without the row they are in (see _render_cell).
        self._cells_drawn: dict[tuple[object, ...], list[list[Segment]]] = {}
        self._line_style: Style | None = None  # the table's style while render_lines draws (see render_line)

    @property
    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except CellDoesNotExist:  # the cursor can point past a table that just shrank
            return None

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines in ``crop``, with the table's style worked out once for them all (see render_line)."""
        self._line_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._line_style = None

    def render_line(self, y: int) -> Strip:
        """DataTable's render_line, without working out the table's style from its ancestors for each line
        (a scroll of the disk table draws every visible line again, issue 17)."""
        style = self._line_style
        if style is None or self.fixed_rows:
            return super().render_line(y)
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        if y >= (self.header_height if self.show_header else 0):
            y += scroll_y
        return self._render_line(y, scroll_x, scroll_x + width, style)

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """A line of the table, kept by what it shows: with a row cursor, whether the cursor is on its row.

        DataTable keeps rendered lines by the cursor's coordinate, so every cursor move rendered every
        visible line again (forty rows of cells per key, issue 17: scrolling a thousand disks). A row's
        line looks the same wherever the cursor is, as long as it is not on that row (nor the mouse).
        """
        if self.cursor_type != "row":
            return super()._render_line(y, x1, x2, base_style)
        try:
            row_key, _ = self._get_offsets(y)
        except LookupError:
            return super()._render_line(y, x1, x2, base_style)
        row = self._row_locations.get(row_key)  # None for the header
        key = (
            y, x1, x2, self.size.width, base_style, row == self.cursor_coordinate.row,
            row == self.hover_coordinate.row, self.show_cursor, self._show_hover_cursor,
            self._update_count, self._pseudo_class_state,
        )  # fmt: skip
        line = self._lines.get(key)
        if line is None:
            if len(self._lines) > 4000:
                self._lines.clear()
            line = self._lines[key] = super()._render_line(y, x1, x2, base_style)
        return line

    def _render_line_in_row(
        self,
        row_key: RowKey,
        line_no: int,
        base_style: Style,
        cursor_location: Coordinate,
        hover_location: Coordinate,
    ) -> tuple[list[list[Segment]], list[list[Segment]]]:
        """A row's cells as DataTable lays them out, for a one-line row of one-line Text cells.

        A page down at a thousand disks shows some twenty rows never drawn: DataTable works out, for
        each of their cells, the cursor and hover state, the header's style, a cache key and an entry in
        two caches, which cost more than the cells themselves (issue 17, scrolling). This is its layout
        for a row cursor without fixed columns or row labels (the inventory's), each cell drawn once per
        look (_drawn_cell); the lines it makes are kept by _render_line. Anything else is DataTable's.
        """
        row_index = self._row_locations.get(row_key)
        row = self.rows.get(row_key)
        if (
            row_index is None or row is None or row.height != 1 or line_no or self.cursor_type != "row"
            or self.fixed_columns or (self._labelled_row_exists and self.show_row_labels)
        ):  # fmt: skip
            return super()._render_line_in_row(row_key, line_no, base_style, cursor_location, hover_location)
        cells = self._data.get(row_key, {})
        columns = self.ordered_columns
        cursor = cursor_location.row == row_index
        hover = hover_location.row == row_index
        row_style = self._get_row_style(row_index, base_style)
        scrollable_row: list[list[Segment]] = []
        table_width = self._row_label_column_width
        for column_index, column in enumerate(columns):
            width = column.get_render_width(self)
            table_width += width
            cell = cells.get(column.key)
            drawn = self._drawn_cell(cell, row_style, width, cursor, hover) if _one_line(cell) else None
            if drawn is None:  # DataTable's own drawing, for a cell that is not one line of Text
                lines = super()._render_cell(row_index, column_index, row_style, width, cursor, hover)
                scrollable_row.append(lines[0])
            else:
                scrollable_row.append(_with_meta(drawn[0], Style.from_meta({"row": row_index, "column": column_index})))
        remaining_space = max(0, self.size.width - table_width)
        extend_style, _ = self._get_styles_to_render_cell(
            False, False, False, hover, cursor, self.show_cursor, self._show_hover_cursor, False, False
        )
        extend_style = row_style + extend_style
        extend_style += Style.from_meta({"row": row_index, "column": 0, "out_of_bounds": True})
        scrollable_row.append([Segment(" " * remaining_space, extend_style)])
        return [], scrollable_row

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        """A cell as DataTable draws it, drawn once for every cell that shows the same.

        DataTable draws each cell through Rich the first time its row is shown (a page down on a long
        table draws some 250), and keeps it by row and column. Most cells of a column repeat (the bus,
        size, type, link and state of a thousand disks take a few values): a one-line Text cell is drawn
        here once per look, then given its row and column (the mouse's meta) for each row that shows it.
        """
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        row = self.rows.get(row_key) if row_key is not None else None
        cell = self._data.get(row_key, {}).get(column_key) if row_key is not None else None
        if row is None or row.height != 1 or self.fixed_rows or self.fixed_columns or column_key is None:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        state = (base_style, cursor, hover, self._show_hover_cursor, self._update_count, self._pseudo_class_state)
        key = (row_key, column_key, *state)
        lines = self._cell_render_cache.get(key)
        if lines is not None:
            return lines
        drawn = self._drawn_cell(cell, base_style, width, cursor, hover) if _one_line(cell) else None
        if drawn is None:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        meta = Style.from_meta({"row": row_index, "column": column_index})
        lines = [_with_meta(line, meta) for line in drawn]
        self._cell_render_cache[key] = lines
        return lines

    def _drawn_cell(
        self, cell: Text, base_style: Style, width: int, cursor: bool, hover: bool
    ) -> list[list[Segment]] | None:
        """A one-line Text cell drawn as DataTable draws it, without the mouse's meta: once per look.

        A look not drawn yet is drawn through Rich, or, for plain text of one-cell characters (a disk's
        name, its model and serial), copied from the drawing of a stand-in of the same shape (every
        character but spaces an "x", the same style, alignment and width) with its own text put in
        place of the stand-in's: a page of new rows draws two such cells a row (issue 17, scrolling).
        """
        if self.fixed_rows:
            return None
        if not cell:
            cell = _EMPTY_CELL  # DataTable draws any empty cell so, whatever its style and alignment
        state = (base_style, cursor, hover, self._show_hover_cursor, self._update_count, self._pseudo_class_state)
        look = (cell.plain, cell.style, tuple(cell.spans), cell.justify, cell.overflow, cell.end, width, *state)
        drawn = self._cells_drawn.get(look)
        if drawn is None:
            drawn = self._drawn_like(cell, look, base_style, width, cursor, hover)
            if drawn is None:
                drawn = self._draw_cell(cell, base_style, width, cursor, hover)
            if len(self._cells_drawn) > 20000:
                self._cells_drawn.clear()
            self._cells_drawn[look] = drawn
        return drawn

    def _drawn_like(
        self, cell: Text, look: tuple[object, ...], base_style: Style, width: int, cursor: bool, hover: bool
    ) -> list[list[Segment]] | None:
        """The cell drawn as its stand-in is (see _drawn_cell), or None when the stand-in cannot tell."""
        plain = cell.plain
        if cell.spans or cell.justify == "full" or not plain.strip() or cell_len(plain) != len(plain):
            return None
        if not plain.isprintable():
            return None
        mask = _NOT_SPACE.sub("x", plain)
        template_look = (mask, *look[1:])
        template = self._cells_drawn.get(template_look)
        if template is None:
            stand_in = cell.copy()
            stand_in.plain = mask
            template = self._cells_drawn[template_look] = self._draw_cell(stand_in, base_style, width, cursor, hover)
        if len(template) != 1:
            return None
        line = template[0]
        shown = [index for index, segment in enumerate(line) if "x" in segment.text]
        if len(shown) != 1:
            return None
        index = shown[0]
        segment = line[index]
        text, core = segment.text, mask.strip(" ")
        if text.strip(" ") != core:  # cut, or drawn with an ellipsis: Rich draws it
            return None
        # The stand-in's characters, between the spaces it was padded or aligned with, become the cell's
        # own (its spaces are where the stand-in's are).
        lead = len(text) - len(text.lstrip(" "))
        text = text[:lead] + plain.strip(" ") + text[lead + len(core) :]
        return [[*line[:index], Segment(text, segment.style, segment.control), *line[index + 1 :]]]

    def _draw_cell(self, cell: Text, base_style: Style, width: int, cursor: bool, hover: bool) -> list[list[Segment]]:
        """The cell drawn through Rich as DataTable._render_cell draws it."""
        component_style, post_style = self._get_styles_to_render_cell(
            False, False, False, hover, cursor, self.show_cursor, self._show_hover_cursor,
            self.cursor_foreground_priority == "css", self.cursor_background_priority == "css",
        )  # fmt: skip
        options = self.app.console_options.update_dimensions(width, 1).update(no_wrap=True)
        padded = Padding(cell, (0, self.cell_padding))
        styled = Styled(padded, pre_style=base_style + component_style, post_style=post_style)
        return self.app.console.render_lines(styled, options)

    def _size_rows(self, new_rows: Iterable[RowKey]) -> None:
        """Column widths for new rows from each cell's length, then DataTable's own sizing.

        DataTable measures every cell of every new row through Rich (console options built per cell):
        7000 cells at each fill of a thousand disks, the most of a fill's time (issue 17). Every cell
        here is one line of Text, whose measure is its cell length; anything else is left to DataTable.
        SizedTable draws the rows again if this changed a column's width; _fill sizes its rows at once,
        so this finds nothing to change after it.
        """
        sized, self._sized = self._sized, set()
        rows = [key for key in new_rows if key.value not in sized]
        cells = [list(self._data.get(key, {}).values()) for key in rows]
        if all(type(cell) is Text and "\n" not in cell.plain for row in cells for cell in row):
            self._widen(cells)  # type: ignore[arg-type]
            super()._size_rows(())
        else:
            super()._size_rows(rows)

    def _widen(self, rows: Sequence[Sequence[Text]]) -> None:
        """Widen each column to its longest cell in ``rows`` (each a row's cells in column order)."""
        for column, cells in zip(self.ordered_columns, zip(*rows, strict=False), strict=False):
            column.content_width = max(column.content_width, *(cell_len(cell.plain) for cell in cells))

    def _fill(self, columns: Sequence[tuple[str, str, int | None]], rows: Sequence[tuple[str, Sequence[Text]]]) -> None:
        if self._update_in_place(columns, rows):
            return
        keep = self.selected_key
        keys = [key for key, _ in rows]
        self._shown = (tuple(columns), dict(rows), keys)
        self._looks = {}
        self.clear(columns=True)
        for key, label, width in columns:
            self.add_column(Text(label), key=key, width=width)
        for key, cells in rows:
            self.add_row(*cells, key=key)
        # Sized now, not when idle: the first draw of the rows has their widths.
        self._widen([cells for _, cells in rows])
        self._sized = set(keys)
        if keep in keys:
            self.move_cursor(row=keys.index(keep), animate=False, scroll=True)

    def _update_in_place(
        self, columns: Sequence[tuple[str, str, int | None]], rows: Sequence[tuple[str, Sequence[Text]]]
    ) -> bool:
        """A rescan that found the same rows and columns updates only the cells that changed.

        Rebuilding a table of a thousand disks redraws and re-measures every cell; a rescan usually
        changes a few (a disk joined an array, a link retrained). False when the table must be
        rebuilt: other rows or columns, or a changed cell wider than its column.
        """
        shown = self._shown
        if shown is None or shown[0] != tuple(columns) or shown[2] != [key for key, _ in rows]:
            return False
        looks, shown_cells = self._looks, shown[1]
        changed = []
        for key, cells in rows:
            new = tuple(map(_look, cells))
            old = looks.get(key)
            if old is None:
                old = looks[key] = tuple(map(_look, shown_cells[key]))
            if new != old:
                changed.append((key, cells, new))
        for _key, cells, _new in changed:
            for (column, _, _), cell in zip(columns, cells, strict=True):
                shown_column = self.columns.get(ColumnKey(column))
                if shown_column is None:
                    return False
                width = shown_column.content_width if shown_column.auto_width else shown_column.width
                if cell_len(cell.plain) > width:
                    return False
        for key, cells, new in changed:
            for (column, _, _), cell, old, now in zip(columns, cells, looks[key], new, strict=True):
                if old != now:
                    self.update_cell(key, column, cell)
            looks[key] = new
            shown_cells[key] = cells
        return True


def _one_line(cell: object) -> TypeGuard[Text]:
    """True for a cell _drawn_cell draws: one line of Text (no line break, no tab)."""
    return type(cell) is Text and "\n" not in cell.plain and "\t" not in cell.plain


def _with_meta(line: list[Segment], meta: Style) -> list[Segment]:
    """A drawn line with the mouse's meta added to each styled segment (each style combined once)."""
    combined: dict[Style, Style] = {}
    out = []
    for segment in line:
        style = segment.style
        if style is None:
            out.append(segment)
            continue
        with_meta = combined.get(style)
        if with_meta is None:
            with_meta = combined[style] = style + meta
        out.append(Segment(segment.text, with_meta, segment.control))
    return out


def _look(cell: Text) -> tuple[object, ...]:
    """What a cell shows: its text, styles and alignment (rich's Text == compares text and spans only)."""
    return (cell.plain, str(cell.style), tuple(cell.spans), cell.justify)


class DiskTable(InventoryTable):
    """Disks, and while the first scan is still probing, the names of the disks it has not reached yet."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._disks: tuple[Disk, ...] = ()
        self._pending: tuple[str, ...] = ()
        self._palette = Palette()
        self._ident_width: int | None = None
        self._cells: list[tuple[Text, ...]] = []  # each row's cells at full width, made once per show()

    def show(self, disks: Sequence[Disk], palette: Palette, pending: Sequence[str] = ()) -> None:
        """The disks, then a row per name in ``pending`` (not probed yet: its cells wait with "…")."""
        self._disks = tuple(disks)
        self._pending = tuple(pending)
        self._palette = palette
        self._cells = [disk_cells(disk, palette) for disk in self._disks]
        self._cells += [pending_cells(name, palette) for name in self._pending]
        self._redraw()

    def on_resize(self, event: events.Resize) -> None:
        if self._ident_budget() != self._ident_width:
            self._redraw()

    def _ident_budget(self) -> int | None:
        """Cells left for model/serial once every other column has what it needs."""
        if self.size.width == 0:
            return None
        pad = 2 * self.cell_padding
        used = 0
        ident_need = cell_len(DISK_COLUMNS[5][1])
        for index, (key, label) in enumerate(DISK_COLUMNS):
            need = max([cell_len(label), *(cell_len(cells[index].plain) for cells in self._cells)])
            if key == _IDENT_COLUMN:
                ident_need = need
            else:
                used += need + pad
        scrollbar = self.styles.scrollbar_size_vertical
        budget = self.size.width - used - pad - scrollbar
        return max(_MIN_IDENT_WIDTH, min(ident_need, budget))

    def _redraw(self) -> None:
        self._ident_width = width = self._ident_budget()
        columns = [(key, label, width if key == _IDENT_COLUMN else None) for key, label in DISK_COLUMNS]
        names = [disk.name for disk in self._disks] + list(self._pending)
        self._fill(columns, [(name, _cut_ident(cells, width)) for name, cells in zip(names, self._cells, strict=True)])


_IDENT_INDEX = [key for key, _ in DISK_COLUMNS].index(_IDENT_COLUMN)
PENDING = "…"


def pending_cells(name: str, palette: Palette) -> tuple[Text, ...]:
    """A disk the scan has not probed yet: its name, and "…" where its other cells will be (one Text for
    them all: nothing changes a cell once made)."""
    waiting = Text(PENDING, style=palette.muted)
    return (Text(name, style=palette.label), *(waiting for _ in DISK_COLUMNS[1:]))


def _cut_ident(cells: tuple[Text, ...], width: int | None) -> tuple[Text, ...]:
    """The row's cells with model/serial cut to ``width`` (as disk_cells cuts it), the others as they are."""
    ident = cells[_IDENT_INDEX]
    if width is None or cell_len(ident.plain) <= width:
        return cells
    cut = Text(truncate(ident.plain, width), style=ident.style, justify=ident.justify)
    return (*cells[:_IDENT_INDEX], cut, *cells[_IDENT_INDEX + 1 :])


class ArrayTable(InventoryTable):
    """Arrays; on a narrow terminal the trailing geometry columns (layout, then chunk) are left to the detail pane."""

    OPTIONAL_COLUMNS = ("layout", "chunk")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._arrays: tuple[MdArray, ...] = ()
        self._palette = Palette()
        self._shown: tuple[str, ...] | None = None

    def show(self, arrays: Sequence[MdArray], palette: Palette) -> None:
        self._arrays = tuple(arrays)
        self._palette = palette
        self._redraw()

    def on_resize(self, event: events.Resize) -> None:
        if self._columns_that_fit() != self._shown:
            self._redraw()

    def _columns_that_fit(self) -> tuple[str, ...]:
        rows = [array_cells(array, self._palette) for array in self._arrays]
        need = {
            key: max([cell_len(label), *(cell_len(row[index].plain) for row in rows)]) + 2 * self.cell_padding
            for index, (key, label) in enumerate(ARRAY_COLUMNS)
        }
        shown = [key for key, _ in ARRAY_COLUMNS]
        available = self.size.width - self.styles.scrollbar_size_vertical
        for optional in self.OPTIONAL_COLUMNS:
            if self.size.width and sum(need[key] for key in shown) > available:
                shown.remove(optional)
        return tuple(shown)

    def _redraw(self) -> None:
        self._shown = self._columns_that_fit()
        indexes = [index for index, (key, _) in enumerate(ARRAY_COLUMNS) if key in self._shown]
        columns = [(ARRAY_COLUMNS[i][0], ARRAY_COLUMNS[i][1], None) for i in indexes]
        rows = []
        for array in self._arrays:
            cells = array_cells(array, self._palette)
            rows.append((array.name, [cells[i] for i in indexes]))
        self._fill(columns, rows)


class Drawn:
    """A Rich renderable drawn once at a width: its lines, given back as they are (see DetailBody)."""

    def __init__(self, source: RenderableType, lines: list[list[Segment]], width: int) -> None:
        self.source = source
        self.lines = lines
        self.width = width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        new_line = Segment.line()
        for line in self.lines:
            yield from line
            yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.width, self.width)


class DetailBody(Static):
    """The detail pane's text, drawn once for each content and width.

    A disk's or an array's detail is a Rich table: Static drew it twice each time the cursor moved,
    once to measure its height and once to show it (the most of a cursor move's time on a long table,
    issue 17). It is drawn here once at the pane's width, and again only when that width changes (a
    resize, the scrollbar coming or going). ``source`` is what was given to show.
    """

    def __init__(self, content: RenderableType, *, id: str | None = None) -> None:
        super().__init__(content, id=id)
        self.source: RenderableType = content
        self._drawn_width = 0

    def show(self, renderable: RenderableType) -> None:
        self.source = renderable
        self._draw()

    def _draw(self) -> None:
        width = self.size.width
        self._drawn_width = width
        if width <= 0 or isinstance(self.source, Text):  # not laid out yet; Text is measured cheaply
            self.update(self.source)
            return
        app = self.app
        options = app.console_options.update(highlight=False, width=width).update_width(width)
        segments = app.console.render(self.source, options)
        lines = list(Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False))
        self.update(Drawn(self.source, lines, width), layout=not self._fits(lines, width))

    def _fits(self, lines: list[list[Segment]], width: int) -> bool:
        """True when ``lines`` take the place the drawing shown now has: a layout would change nothing.

        The body is as tall as its lines, or as its pane when they are fewer (min-height in app.tcss), and
        as wide as the pane. Static lays the whole screen out again at each update (and the tables'
        scrollbars and the other table repaint after it); most rows of a column of disks show a detail
        as tall as the last one's, or one that fits the pane as the last did (issue 17, scrolling).
        """
        shown = self.content
        if not isinstance(shown, Drawn) or shown.width != width or self._layout_required:
            return False
        width_now, height = self.size
        if width_now != width:
            return False
        if len(shown.lines) == len(lines) == height:
            return True
        # Taller than its lines, the body is as tall as its pane: lines that fit it leave it so.
        return len(shown.lines) < height and len(lines) <= height

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._drawn_width:
            self._draw()
