"""The results history table: one row per stored run, keyed by run ID, fitted to the terminal's width."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.widgets.data_table import CellDoesNotExist

from mdtui.store.records import RunRecord
from mdtui.ui.common.render import Palette
from mdtui.ui.common.table import SizedTable
from mdtui.ui.results.render import HISTORY_COLUMNS, HISTORY_LAYOUTS, RIGHT_ALIGNED, history_cells, mark_cell

# The label column shrinks to what the other columns leave, but not below this.
LABEL_MIN = 8


class HistoryTable(SizedTable[Text]):
    """Stored runs, newest first; a reload keeps the cursor on the same run."""

    can_reorder = True  # rows are found by key: sorting and filtering (ui.common.table) keep them right

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._runs: tuple[RunRecord, ...] = ()
        self._marked: frozenset[int] = frozenset()
        self._baseline: int | None = None
        self._palette = Palette()
        self._layout: tuple[tuple[str, ...], bool, int | None] | None = None
        self._cell_cache: dict[bool, list[dict[str, Text]]] = {}

    @property
    def selected_id(self) -> int | None:
        if not self.row_count:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except CellDoesNotExist:  # the cursor can point past a table that just shrank
            return None
        return int(key) if key is not None else None

    @property
    def shown_ids(self) -> list[int]:
        return [run.id for run in self._runs]

    def show(self, runs: Sequence[RunRecord], marked: Collection[int], baseline: int | None, palette: Palette) -> None:
        self._runs = tuple(runs)
        self._marked = frozenset(marked)
        self._baseline = baseline
        self._palette = palette
        self._cell_cache.clear()
        self._redraw()

    def set_marks(self, marked: Collection[int], baseline: int | None) -> None:
        """Redraw only the mark cells that changed: marking must stay instant with thousands of runs."""
        before = {
            run_id: (run_id in self._marked, run_id == self._baseline) for run_id in (*self._marked, self._baseline)
        }
        self._marked = frozenset(marked)
        self._baseline = baseline
        after = {run_id: (run_id in self._marked, run_id == self._baseline) for run_id in (*self._marked, baseline)}
        row_of = {run.id: index for index, run in enumerate(self._runs)}
        for run_id in set(before) | set(after):
            if run_id is None or run_id not in row_of or before.get(run_id) == after.get(run_id):
                continue
            is_marked, is_baseline = after.get(run_id, (False, False))
            cell = mark_cell(marked=is_marked, baseline=is_baseline)
            for cells in self._cell_cache.values():
                cells[row_of[run_id]]["mark"] = cell
            if "mark" in self._layout_columns():
                self.update_cell(str(run_id), "mark", cell)

    def _layout_columns(self) -> tuple[str, ...]:
        return self._layout[0] if self._layout else ()

    def _refit(self) -> None:
        if self._fit() != self._layout:
            self._redraw()

    def on_resize(self, event: events.Resize) -> None:
        self._refit()

    def _cells(self, short_time: bool) -> list[dict[str, Text]]:
        # Cached per show(): fitting tries several layouts on every resize and a filter redraws per key.
        if short_time not in self._cell_cache:
            self._cell_cache[short_time] = [
                history_cells(
                    run,
                    self._palette,
                    marked=run.id in self._marked,
                    baseline=run.id == self._baseline,
                    short_time=short_time,
                )
                for run in self._runs
            ]
        return self._cell_cache[short_time]

    def _fit(self) -> tuple[tuple[str, ...], bool, int | None]:
        """Columns shown, whether the year is dropped, and the label's width (None: as wide as it needs)."""
        if not self.size.width:
            return HISTORY_LAYOUTS[0][1], HISTORY_LAYOUTS[0][0], None
        pad = 2 * self.cell_padding
        available = self.size.width - self.styles.scrollbar_size_vertical
        titles = dict(HISTORY_COLUMNS)
        widths: dict[bool, dict[str, int]] = {}
        for short_time, shown in HISTORY_LAYOUTS:
            if short_time not in widths:
                rows = self._cells(short_time)
                widths[short_time] = {
                    key: max([cell_len(title), *(row[key].cell_len for row in rows)]) for key, title in titles.items()
                }
            need = widths[short_time]
            fixed = sum(need[key] + pad for key in shown if key != "label")
            if fixed + min(need["label"], LABEL_MIN) + pad <= available:
                label_room = available - fixed - pad
                return shown, short_time, None if label_room >= need["label"] else label_room
        return HISTORY_LAYOUTS[-1][1], True, LABEL_MIN

    def _redraw(self) -> None:
        self._layout = self._fit()
        shown, short_time, label_width = self._layout
        keep = self.selected_id
        self.clear(columns=True)
        titles = dict(HISTORY_COLUMNS)
        for key in shown:
            title = Text(titles[key], justify="right" if key in RIGHT_ALIGNED else "left")
            self.add_column(title, key=key, width=label_width if key == "label" else None)
        for run, cells in zip(self._runs, self._cells(short_time), strict=True):
            self.add_row(*(cells[key] for key in shown), key=str(run.id))
        ids = [run.id for run in self._runs]
        if keep in ids:
            self.move_cursor(row=ids.index(keep), animate=False, scroll=True)
