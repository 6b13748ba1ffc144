"""Tables for disks and arrays: each redraws itself from immutable core objects it is given."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.widgets.data_table import CellDoesNotExist, ColumnKey

from mdtui.format import distinct_serials, ident_text
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.ui.common.render import ARRAY_COLUMNS, DISK_COLUMNS, Palette, array_cells, disk_cells, truncate
from mdtui.ui.common.table import SizedTable

_NOT_SPACE = re.compile(r"[^ ]")
_EMPTY_CELL = Text(no_wrap=True, end="")  # DataTable's _EMPTY_TEXT

# The model/serial column gives way first so the state column always stays on screen.
_IDENT_COLUMN = "ident"
_MIN_IDENT_WIDTH = 3
# Then these, in this order (their values are in the detail pane).
_OPTIONAL_DISK_COLUMNS = ("transport", "kind")


class SteadyFooter(Footer):
    """A Footer that recomposes only when the keys it would show changed.

    Textual's Footer rebuilds its key widgets on every bindings refresh (a focus change, a rescan),
    and each rebuild restyles a dozen widgets (five rebuilds of the same keys at launch). What it would
    show is compared first; the same keys keep the widgets.
    """

    def __init__(self, *, show_command_palette: bool = True) -> None:
        super().__init__(show_command_palette=show_command_palette)
        self._composed: tuple[object, ...] | None = None
        self._bindings_known = False  # Footer composes nothing until its screen told it its bindings

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_known = True
        super().bindings_changed(screen)

    def _keys(self) -> tuple[object, ...]:
        """What compose would show: each shown binding's key, label, action and state, in order."""
        if not self._bindings_known:
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
    can_reorder = True  # rows are found by key: sorting and filtering (ui.common.table) keep them right

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        # What the table shows: its columns, each row's cells, the row keys in order; and each row's cells
        # as _look sees them, worked out when a rescan compares them (not at each fill).
        self._shown: tuple[tuple[tuple[str, str, int | None], ...], dict[str, Sequence[Text]], list[str]] | None
        self._shown = None
        self._looks: dict[str, tuple[tuple[object, ...], ...]] = {}

    @property
    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except CellDoesNotExist:  # the cursor can point past a table that just shrank
            return None

    def _fill(self, columns: Sequence[tuple[str, str, int | None]], rows: Sequence[tuple[str, Sequence[Text]]]) -> None:
        if self._update_in_place(columns, rows):
            return
        keep = self.selected_key
        keys = [key for key, _ in rows]
        self._shown = (tuple(columns), dict(rows), keys)
        self._looks = {}
        self.clear(columns=True)
        # Every column sized now, as DataTable would size it once idle (its label's or its longest cell's
        # length): the first draw of the rows has their widths, and nothing is drawn again when idle.
        lengths = zip(*(map(_length, cells) for _, cells in rows), strict=False)
        longest = [max(lengths_of, default=0) for lengths_of in lengths]
        for index, (key, label, width) in enumerate(columns):
            fitted = max(cell_len(label), longest[index] if index < len(longest) else 0)
            self.add_column(Text(label), key=key, width=fitted if width is None else width)
        for key, cells in rows:
            self.add_row(*cells, key=key)
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
        resort = False
        for key, cells, new in changed:
            for (column, _, _), cell, was, now in zip(columns, cells, looks[key], new, strict=True):
                if was != now:
                    self.update_cell(key, column, cell)
                    resort = resort or ColumnKey(column) == self.sort_column
            looks[key] = new
            shown_cells[key] = cells
        if resort:
            # A changed cell in the sorted column moves its row; the cursor stays on its disk (by key).
            self._apply_sort()
        return True


def _length(cell: Text) -> int:
    """The cells a one-line cell takes, as DataTable measures it."""
    return cell_len(cell.plain)


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
        self._fitted: tuple[tuple[str, ...], int | None] | None = None  # (columns shown, model/serial width)
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
        if self._fit() != self._fitted:
            self._redraw()

    def _fit(self) -> tuple[tuple[str, ...], int | None]:
        """The columns shown and the cells left for model/serial once every other column has what it needs.

        Below the model's minimum, Bus and then Type are left to the detail pane, so that State (what the
        disk is used for) stays on screen without scrolling sideways: at 60 columns it was cut to "md-membe".
        """
        keys = tuple(key for key, _ in DISK_COLUMNS)
        if self.size.width == 0:
            return keys, None
        pad = 2 * self.cell_padding
        need = {
            key: max([cell_len(label), *(cell_len(cells[index].plain) for cells in self._cells)])
            for index, (key, label) in enumerate(DISK_COLUMNS)
        }
        available = self.size.width - self.styles.scrollbar_size_vertical

        def others(shown: Sequence[str]) -> int:
            return sum(need[key] + pad for key in shown if key != _IDENT_COLUMN) + pad

        shown = list(keys)
        for optional in _OPTIONAL_DISK_COLUMNS:
            if others(shown) + _MIN_IDENT_WIDTH > available:
                shown.remove(optional)
        budget = available - others(shown)
        return tuple(shown), max(_MIN_IDENT_WIDTH, min(need[_IDENT_COLUMN], budget))

    def _redraw(self) -> None:
        self._fitted = shown, width = self._fit()
        indexes = [index for index, (key, _) in enumerate(DISK_COLUMNS) if key in shown]
        columns = [(key, label, width if key == _IDENT_COLUMN else None) for key, label in DISK_COLUMNS if key in shown]
        names = [disk.name for disk in self._disks] + list(self._pending)
        # Serials are cut in the middle, only as far as keeps every disk of the table apart.
        serials = distinct_serials((d.serial for d in self._disks if d.serial), width) if width else {}
        disks: list[Disk | None] = [*self._disks, *([None] * len(self._pending))]
        rows = []
        for name, cells, disk in zip(names, self._cells, disks, strict=True):
            cut = _cut_ident(cells, width, disk, serials)
            rows.append((name, [cut[index] for index in indexes]))
        self._fill(columns, rows)


_IDENT_INDEX = [key for key, _ in DISK_COLUMNS].index(_IDENT_COLUMN)
PENDING = "…"


def pending_cells(name: str, palette: Palette) -> tuple[Text, ...]:
    """A disk the scan has not probed yet: its name, and "…" where its other cells will be (one Text for
    them all: nothing changes a cell once made)."""
    waiting = Text(PENDING, style=palette.muted)
    return (Text(name, style=palette.label), *(waiting for _ in DISK_COLUMNS[1:]))


def _cut_ident(
    cells: tuple[Text, ...], width: int | None, disk: Disk | None = None, serials: Mapping[str, str] | None = None
) -> tuple[Text, ...]:
    """The row's cells with model/serial fitted to ``width``: the model gives way first, the serial is cut in the
    middle only as ``serials`` says (distinct_serials), the other cells as they are."""
    ident = cells[_IDENT_INDEX]
    if width is None or cell_len(ident.plain) <= width:
        return cells
    if disk is not None and disk.serial:
        text = ident_text(disk.model, disk.serial, width, (serials or {}).get(disk.serial))
    else:
        text = truncate(ident.plain, width)
    cut = Text(text, style=ident.style, justify=ident.justify)
    return (*cells[:_IDENT_INDEX], cut, *cells[_IDENT_INDEX + 1 :])


class ArrayTable(InventoryTable):
    """Arrays; on a narrow terminal the geometry columns (layout, then chunk), then size and members, are left to
    the detail pane."""

    # Size and members follow on a terminal narrower than 70 columns: State and Sync say what is at stake.
    OPTIONAL_COLUMNS = ("layout", "chunk", "size", "members")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._arrays: tuple[MdArray, ...] = ()
        self._palette = Palette()
        # Not InventoryTable._shown (what the table holds, which a rescan compares to update in place).
        self._fitted: tuple[str, ...] | None = None

    def show(self, arrays: Sequence[MdArray], palette: Palette) -> None:
        self._arrays = tuple(arrays)
        self._palette = palette
        self._redraw()

    def on_resize(self, event: events.Resize) -> None:
        if self._columns_that_fit() != self._fitted:
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
        self._fitted = fitted = self._columns_that_fit()
        indexes = [index for index, (key, _) in enumerate(ARRAY_COLUMNS) if key in fitted]
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
    once to measure its height and once to show it (the most of a cursor move's time on a long table).
    It is drawn here once at the pane's width, and again only when that width changes (a
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
        as tall as the last one's, or one that fits the pane as the last did.
        """
        shown = self.content
        if not isinstance(shown, Drawn) or shown.width != width:
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
