"""The results history table: one row per stored run, keyed by run ID, fitted to the terminal's width."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.widgets.data_table import CellDoesNotExist

from mdtui.store.records import RunRecord
from mdtui.ui.common.render import Palette, truncate
from mdtui.ui.common.table import SizedTable
from mdtui.ui.results.render import (
    FLEX_COLUMNS,
    HISTORY_COLUMNS,
    HISTORY_LAYOUTS,
    MISSING,
    RIGHT_ALIGNED,
    STEP_OVER_LABEL,
    history_cells,
    mark_cell,
    shorten_middle,
)

# How a flexible column's cell is cut to its width, marked with an ellipsis (DataTable would crop it unmarked).
# A path keeps its file name and a label its end, where runs differ: "numjobs 1" and "numjobs 2" in 8 cells
# read "…mjobs 1" and "…mjobs 2" (cropped, both were "numjobs "); a step keeps its start, the step's number.
CUTS: dict[str, Callable[[str, int], str]] = {"target": shorten_middle, "label": shorten_middle, "step": truncate}

# A layout: the columns shown, whether the year is dropped, and the width of each column shown (a flexible
# one may be narrower than its cells).
Layout = tuple[tuple[str, ...], bool, dict[str, int]]


class HistoryTable(SizedTable[Text]):
    """Stored runs, newest first; a reload keeps the cursor on the same run."""

    can_reorder = True  # rows are found by key: sorting and filtering (ui.common.table) keep them right

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._runs: tuple[RunRecord, ...] = ()
        self._marked: frozenset[int] = frozenset()
        self._baseline: int | None = None
        self._palette = Palette()
        self._layout: Layout | None = None
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

    def _fit(self) -> Layout:
        """The widest layout that fits; the flexible columns share what the others leave."""
        widths: dict[bool, dict[str, int]] = {}

        def needs(short_time: bool) -> dict[str, int]:
            if short_time not in widths:
                rows = self._cells(short_time)
                widths[short_time] = {
                    key: max([cell_len(title), *(row[key].cell_len for row in rows)]) for key, title in HISTORY_COLUMNS
                }
            return widths[short_time]

        if not self.size.width:
            short_time, shown = HISTORY_LAYOUTS[0]
            return shown, short_time, {key: needs(short_time)[key] for key in shown}
        pad = 2 * self.cell_padding
        available = self.size.width - self.styles.scrollbar_size_vertical
        has_steps = any(row["step"].plain != MISSING for row in self._cells(True))
        for short_time, shown in HISTORY_LAYOUTS:
            if shown == STEP_OVER_LABEL and not has_steps:
                continue
            need = needs(short_time)
            flex = [(key, least) for key, least in FLEX_COLUMNS if key in shown]
            fixed = sum(need[key] + pad for key in shown if key not in dict(flex))
            room = available - fixed - pad * len(flex)
            given = {key: min(need[key], least) for key, least in flex}
            if sum(given.values()) > room:
                continue
            spare = room - sum(given.values())
            for key, _least in flex:
                more = min(spare, need[key] - given[key])
                given[key] += more
                spare -= more
            return shown, short_time, {key: given.get(key, need[key]) for key in shown}
        shown = HISTORY_LAYOUTS[-1][1]
        least = dict(FLEX_COLUMNS)
        return shown, True, {key: least.get(key, needs(True)[key]) for key in shown}

    def _redraw(self) -> None:
        self._layout = self._fit()
        shown, short_time, column_widths = self._layout
        keep = self.selected_id
        self.clear(columns=True)
        titles = dict(HISTORY_COLUMNS)
        # Every column gets its width now, not when DataTable measures its rows once idle: a line drawn
        # before then (a reload after a label edit) was drawn at the headings' widths, and nothing drew it
        # again when the measure came, as the table's width had not changed ("11-2", "R 4,").
        for key in shown:
            title = Text(titles[key], justify="right" if key in RIGHT_ALIGNED else "left")
            self.add_column(title, key=key, width=column_widths[key])
        for run, cells in zip(self._runs, self._cells(short_time), strict=True):
            row = [cells[key] for key in shown]
            for key, cut in CUTS.items():
                if key in shown and cells[key].cell_len > column_widths[key]:
                    cell = cells[key]
                    row[shown.index(key)] = Text(cut(cell.plain, column_widths[key]), style=cell.style)
            self.add_row(*row, key=str(run.id))
        ids = [run.id for run in self._runs]
        if keep in ids:
            self.move_cursor(row=ids.index(keep), animate=False, scroll=True)
