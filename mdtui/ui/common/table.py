"""The table every screen uses: drawn again at its columns' widths once sized, moved, sorted and filtered
the way btop, htop and lazygit users expect.

Keys (none shown in the footer; the help screen lists them): Home/End first and last row (G last too),
j/k down and up (as the arrows and PgUp/PgDn), and on a table whose rows are keyed (``can_reorder``):
s sorts by the next column, S reverses, a click on a header sorts by it, / filters the rows as you
type, Escape clears the filter. A screen binds none of these for anything else (a key means one thing
on a screen: tests/ui/test_keymap.py); a screen's own filter on / or its Escape (back) comes first.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from typing import Any, ClassVar, TypeVar

from rich.text import Text
from textual import on
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, Input
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowKey

from mdtui.ui.common.render import SortedText

CellT = TypeVar("CellT")

SORT_UP = " ▲"
SORT_DOWN = " ▼"

_UNITS = {"": 1.0, "b": 1.0}
for _power, _letter in enumerate("kmgtp", start=1):
    _UNITS[_letter] = _UNITS[_letter + "b"] = 1000.0**_power
    _UNITS[_letter + "ib"] = 1024.0**_power
_NUMBER = re.compile(r"^\s*([-+]?\d[\d,]*(?:\.\d+)?)\s*([kmgtp]?i?b?)\b", re.IGNORECASE)


def cell_text(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def sort_key(cell: object) -> tuple[int, float, str]:
    """Numbers (with their unit: '500 GiB' before '1.8 TiB') before words; an empty or '-' cell last; a cell
    that carries its figure (SortedText: a link's bandwidth) by that figure."""
    if isinstance(cell, SortedText):
        if cell.sort_value is None:
            return (2, 0.0, "")
        return (0, float(cell.sort_value), cell.plain.lower())
    if isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return (0, float(cell), "")
    text = cell_text(cell).strip()
    if text in ("", "-", "?", "—", "unknown"):
        return (2, 0.0, "")
    match = _NUMBER.match(text)
    if match is not None and match.group(2).lower() in _UNITS:
        return (0, float(match.group(1).replace(",", "")) * _UNITS[match.group(2).lower()], text.lower())
    return (1, 0.0, text.lower())


def _binds(node: object, key: str) -> bool:
    """Whether ``node``'s class (or one it inherits from) binds ``key`` to an action it enables now.

    Only a screen's own filter on / and its Escape meet the table's keys (tests/ui/test_keymap.py); a
    screen's key that is off for now leaves the key to the table."""
    check = getattr(node, "check_action", None)
    for cls in type(node).__mro__:
        for binding in cls.__dict__.get("BINDINGS", ()):
            keys, action = (binding.key, binding.action) if isinstance(binding, Binding) else binding[:2]
            if key not in (part.strip() for part in keys.split(",")):
                continue
            if check is None:
                return True
            try:
                enabled = check(action.split("(", 1)[0], ())
            except Exception:  # a screen's check that needs its parameters: count the key as the screen's
                return True
            if enabled is not False:
                return True
    return False


_REORDER_KEYS = frozenset({"s", "S", "slash"})


class TableFilter(Input):
    """The filter line a table opens above itself (/): rows that contain every word typed stay."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "clear", "Clear filter", show=False)]

    def __init__(self, table: SizedTable[Any]) -> None:
        super().__init__(
            placeholder="filter: words a row must contain · Enter keeps · Esc clears", classes="table-filter"
        )
        self.table = table

    def action_clear(self) -> None:
        self.table.clear_filter()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        self.table.set_filter(event.value)

    @on(Input.Submitted)
    def _keep(self, event: Input.Submitted) -> None:
        event.stop()
        self.table.focus()


class SizedTable(DataTable[CellT]):
    """A DataTable that draws its rows again when a column's width changed since it last drew a line,
    and moves, sorts and filters as described in the module.

    DataTable sizes the rows added since it was last idle, and may have drawn them before that at
    their columns' old widths (the headings' widths in a table just filled). What it drew is kept by
    what changes the drawing but not by the widths: when a column's width changes while the table's
    size stays the same, rows drawn first could stay on screen cut to the old widths. Each line drawn
    checks the widths first; a change drops everything drawn (as a change of style drops it).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first", "First row", show=False),
        Binding("end", "last", "Last row", show=False),
        # Not g: the app's guide has it on every screen.
        Binding("G", "key('G')", "Last row", show=False),
        Binding("j", "key('j')", "Down", show=False),
        Binding("k", "key('k')", "Up", show=False),
        Binding("s", "key('s')", "Sort", show=False),
        Binding("S", "key('S')", "Reverse sort", show=False),
        Binding("slash", "key('slash')", "Filter", key_display="/", show=False),
        Binding("escape", "clear_filter_key", "Clear filter", show=False),
    ]

    # Sorting and filtering move rows: only a table whose screen finds its rows by key (not by the
    # cursor's row number) allows them.
    can_reorder: ClassVar[bool] = False

    _drawn_widths: tuple[int, ...] = ()  # each column's width (padding included) when a line was last drawn
    _sort_column: ColumnKey | None = None
    _sort_reverse = False
    _resort_pending = False
    _filter_words: tuple[str, ...] = ()
    # Rows the filter hides, in the order they were added: key -> (cells, height, label).
    _hidden: dict[RowKey, tuple[list[Any], int | None, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._hidden = {}
        self._added: dict[RowKey, int] = {}  # the order the screen added the rows in
        super().__init__(*args, **kwargs)

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

    # -- moving -------------------------------------------------------------------------------------

    def action_first(self) -> None:
        if self.row_count:
            self.move_cursor(row=0, animate=False, scroll=True)

    def action_last(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1, animate=False, scroll=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Disabled, a binding is passed over (for the key and in the footer): the screen's own use of the
        # key, and its own Escape when no filter is on, show and work as without the table.
        if action == "key" and parameters:
            key = str(parameters[0])
            if key in _REORDER_KEYS and not self.can_reorder:
                return False
            if any(_binds(node, key) for node in self.ancestors):
                return False
        if action == "clear_filter_key":
            return bool(self._filter_words)
        return super().check_action(action, parameters)

    def action_key(self, key: str) -> None:
        """A letter key: the screen's own binding of it comes first (SkipAction passes the key on)."""
        if any(_binds(node, key) for node in self.ancestors):
            raise SkipAction()
        if key == "G":
            self.action_last()
        elif key == "j":
            self.action_cursor_down()
        elif key == "k":
            self.action_cursor_up()
        elif not self.can_reorder:
            raise SkipAction()
        elif key == "s":
            self.sort_next()
        elif key == "S":
            self.sort_reverse()
        elif key == "slash":
            self.open_filter()

    # -- sorting ------------------------------------------------------------------------------------

    @property
    def sort_column(self) -> ColumnKey | None:
        return self._sort_column

    def sort_next(self) -> None:
        """Sort by the next column (no sort after the last)."""
        keys = [column.key for column in self.ordered_columns]
        if not keys:
            return
        if self._sort_column is None or self._sort_column not in keys:
            self.sort_by(keys[0], reverse=False)
        else:
            index = keys.index(self._sort_column) + 1
            if index < len(keys):
                self.sort_by(keys[index], reverse=False)
            else:
                self.sort_by(None)

    def sort_reverse(self) -> None:
        if self._sort_column is None:
            self.sort_next()
            return
        self.sort_by(self._sort_column, reverse=not self._sort_reverse)

    def sort_by(self, column: ColumnKey | None, *, reverse: bool = False) -> None:
        """Sort by ``column`` (None: as the screen added them), the cursor staying on its row."""
        self._sort_column, self._sort_reverse = column, reverse
        self._apply_sort()

    def _apply_sort(self) -> None:
        self._resort_pending = False
        self._mark_header()
        if self._sort_column is None or self._sort_column not in self.columns or not self.row_count:
            return
        keep = self._cursor_key()
        self.sort(self._sort_column, key=sort_key, reverse=self._sort_reverse)
        self._restore_cursor(keep)

    def _mark_header(self) -> None:
        for key, column in self.columns.items():
            label = column.label
            plain = label.plain.removesuffix(SORT_UP).removesuffix(SORT_DOWN)
            if key == self._sort_column:
                plain += SORT_DOWN if self._sort_reverse else SORT_UP
            if plain != label.plain:
                column.label = Text(plain, style=label.style)
        self.refresh()

    @on(DataTable.HeaderSelected)
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        if not self.can_reorder:
            return
        event.stop()
        same = event.column_key == self._sort_column
        self.sort_by(event.column_key, reverse=same and not self._sort_reverse)

    def _cursor_key(self) -> RowKey | None:
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except CellDoesNotExist:
            return None

    def _restore_cursor(self, keep: RowKey | None) -> None:
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep), animate=False, scroll=True)

    # -- filtering ----------------------------------------------------------------------------------

    @property
    def filter_text(self) -> str:
        return " ".join(self._filter_words)

    def open_filter(self) -> None:
        try:
            line = self.screen.query_one(f"#{self._filter_id}", TableFilter)
        except NoMatches:
            line = TableFilter(self)
            line.id = self._filter_id
            parent = self.parent
            assert isinstance(parent, Widget)
            parent.mount(line, before=self)
        line.focus()

    @property
    def _filter_id(self) -> str:
        return f"{self.id or 'table'}-filter"

    def set_filter(self, text: str) -> None:
        """Show only the rows that contain every word of ``text`` (case ignored); '' shows them all."""
        words = tuple(text.lower().split())
        if words == self._filter_words:
            return
        self._filter_words = words
        keep = self._cursor_key()
        rows = self._all_rows()
        self._hidden = {}
        super().clear()
        for key, (cells, height, label) in rows.items():
            if self._matches(cells):
                super().add_row(*cells, height=height, key=key.value, label=label)
            else:
                self._hidden[key] = (cells, height, label)
        self._apply_sort()
        self._restore_cursor(keep)
        self.border_subtitle = f"filter: {self.filter_text}" if words else None

    def clear_filter(self) -> None:
        self.set_filter("")
        with contextlib.suppress(NoMatches):
            self.screen.query_one(f"#{self._filter_id}", TableFilter).remove()
        self.focus()

    def action_clear_filter_key(self) -> None:
        if not self._filter_words:
            raise SkipAction()  # no filter: Escape is the screen's (back)
        self.clear_filter()

    def _matches(self, cells: Iterable[object]) -> bool:
        line = " ".join(cell_text(cell) for cell in cells).lower()
        return all(word in line for word in self._filter_words)

    def _all_rows(self) -> dict[RowKey, tuple[list[Any], int | None, Any]]:
        """Every row, shown or hidden, in the order the screen added them."""
        rows: dict[RowKey, tuple[list[Any], int | None, Any]] = {
            key: (self.get_row(key), row.height, row.label) for key, row in self.rows.items()
        }
        rows.update(self._hidden)
        last = len(self._added)
        return dict(sorted(rows.items(), key=lambda item: self._added.get(item[0], last)))

    # -- the screen's own changes, while a filter or a sort is on ------------------------------------

    def add_row(self, *cells: CellT, height: int | None = 1, key: str | None = None, label: Any = None) -> RowKey:
        if self._filter_words and not self._matches(cells):
            row_key = RowKey(key)
            self._hidden[row_key] = (list(cells), height, label)
        else:
            row_key = super().add_row(*cells, height=height, key=key, label=label)
        self._added.setdefault(row_key, len(self._added))
        if row_key in self._hidden:
            return row_key
        if self._sort_column is not None and not self._resort_pending:
            self._resort_pending = True
            self.call_after_refresh(self._apply_sort)
        return row_key

    def update_cell(
        self, row_key: RowKey | str, column_key: ColumnKey | str, value: CellT, *, update_width: bool = False
    ) -> None:
        hidden = self._hidden
        key = row_key if isinstance(row_key, RowKey) else RowKey(row_key)
        if key in hidden:
            cells = hidden[key][0]
            index = [column.key for column in self.ordered_columns].index(
                column_key if isinstance(column_key, ColumnKey) else ColumnKey(column_key)
            )
            cells[index] = value
            return
        super().update_cell(row_key, column_key, value, update_width=update_width)

    def remove_row(self, row_key: RowKey | str) -> None:
        key = row_key if isinstance(row_key, RowKey) else RowKey(row_key)
        self._added.pop(key, None)
        if key in self._hidden:
            del self._hidden[key]
            return
        super().remove_row(row_key)

    def clear(self, columns: bool = False) -> SizedTable[CellT]:
        self._hidden = {}
        self._added = {}
        super().clear(columns=columns)
        return self
