"""The results history screen: stored runs newest first, filter, marks, baseline, edits, export and delete."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Input, Static

from mdtui.fleet.compare import fleet_of, fleet_tables, fleet_text
from mdtui.format import plural
from mdtui.store.compare import default_baseline, in_time_order
from mdtui.store.errors import StoreMissingError
from mdtui.store.export import export_runs
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.results.base import ExportWritten, ResultsBase, RunShown, RunsLoaded, StoreFailed, export_stem, open_store
from mdtui.ui.results.compare import CompareScreen
from mdtui.ui.results.detail import run_detail
from mdtui.ui.results.dialogs import (
    TextPromptScreen,
)
from mdtui.ui.results.render import (
    FILTER_WORDS_IN,
    display_path,
    filter_runs,
    run_summary,
)
from mdtui.ui.results.widgets import HistoryTable


class ResultsScreen(ResultsBase):
    """Every stored run, newest first: filter, mark, pick a baseline, compare, edit, export, delete."""

    BINDINGS = [
        Binding("space", "mark", "Mark"),
        Binding("b", "baseline", "Baseline"),
        Binding("c", "compare", "Compare"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("l", "label", "Label"),
        Binding("n", "note", "Note"),
        Binding("e", "export", "Export"),
        Binding("d", "delete", "Delete"),
        Binding("r", "reload", "Reload"),
        Binding("f", "fleet", "Fleet"),
        Binding("escape", "back", "Back"),
        Binding("u", "unmark", "Unmark all", show=False),
    ]

    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path)
        self.runs: tuple[RunRecord, ...] = ()
        self.missing = False
        # Not `loading`: that name is Textual's reactive that covers a widget with a spinner.
        self.fetching = True
        self.marked: list[int] = []  # in the order they were marked
        self.baseline: int | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield Static(classes="results-banner")
        yield Input(
            placeholder="/ filter: words, or target: preset: step: label: status: level:",
            id="results-filter",
            compact=True,
        )
        yield HistoryTable(id="history")
        yield Static(id="results-detail")
        yield Static(id="results-status")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#history").border_title = "Runs"
        self.query_one("#history", HistoryTable).focus()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        self._redraw()
        self.action_reload()

    # -- store work ------------------------------------------------------------------------------

    def action_reload(self) -> None:
        self.fetching = True
        self._update_titles()
        self.change_store(None)

    @work(thread=True, exit_on_error=False, group="results-store")
    def change_store(self, change: Callable[[ResultsStore], str] | None) -> None:
        """Thread worker: apply ``change`` (if any), then list the runs, and post what came of it."""
        try:
            with open_store(self.db_path, self.busy_timeout_s) as store:
                done = change(store) if change is not None else ""
                runs = tuple(store.list_runs())
        except StoreMissingError:
            self.post_message(RunsLoaded((), missing=True))
            return
        except Exception as exc:  # a damaged or locked database is a message in the screen
            self.post_message(StoreFailed(failure_reason(f"Reading {self.db_path}", exc)))
            return
        self.post_message(RunsLoaded(runs, done=done))

    @on(RunsLoaded)
    def _loaded(self, message: RunsLoaded) -> None:
        self.fetching = False
        self.runs = message.runs
        self.missing = message.missing
        ids = {run.id for run in self.runs}
        self.marked = [run_id for run_id in self.marked if run_id in ids]
        if self.baseline not in ids:
            self.baseline = None
        self.show_error(None)
        self._redraw()
        if message.done:
            self.notify(message.done)

    def store_failed(self) -> None:
        self.fetching = False
        self._redraw()

    # -- drawing ---------------------------------------------------------------------------------

    def shown_runs(self) -> list[RunRecord]:
        return filter_runs(self.runs, self.query_one("#results-filter", Input).value)

    def _redraw(self) -> None:
        table = self.query_one("#history", HistoryTable)
        shown = self.shown_runs()
        table.show(shown, self.marked, self.baseline_id(), self.palette())
        self._update_titles()
        self._update_status(shown)
        self._update_detail()

    def _update_detail(self) -> None:
        run = self.selected_run()
        detail = self.query_one("#results-detail", Static)
        if run is not None:
            detail.update(run_summary(run, self.palette()))
        elif self.runs and self.filter_text():
            words = ", ".join(FILTER_WORDS_IN)
            detail.update(
                Text.assemble(
                    (f"No run matches “{self.filter_text()}”.", "bold"),
                    f"\nWords look in {words}; Esc clears the filter.",
                )
            )
        else:
            detail.update(Text(""))

    def filter_text(self) -> str:
        return self.query_one("#results-filter", Input).value.strip()

    @on(DataTable.RowHighlighted, "#history")
    def _row_highlighted(self) -> None:
        self._update_detail()

    def _update_titles(self) -> None:
        where = display_path(self.db_path)
        if self.fetching:
            state = "loading…"
        elif self.error:
            state = "cannot read"
        elif self.missing:
            state = "no database yet"
        else:
            state = plural(len(self.runs), "run")
        self.sub_title = f"results · {state} · {where}"

    def _update_status(self, shown: Sequence[RunRecord]) -> None:
        status = self.query_one("#results-status", Static)
        palette = self.palette()
        text = Text()
        if self.missing:
            text.append(
                f"No runs yet: {display_path(self.db_path)} does not exist. Benchmarks record runs there; "
                "`mdtui results import FILE.json` adds fio output.",
                style=palette.muted,
            )
        elif not self.fetching and not self.error:
            filtered = len(shown) != len(self.runs)
            if self.runs and not shown:
                text.append(f"no run of {len(self.runs):,} matches the filter", style="bold")
            else:
                text.append(
                    f"{len(shown):,} of {plural(len(self.runs), 'run')}" if filtered else plural(len(self.runs), "run")
                )
            if self.marked:
                text.append(" · marked " + " ".join(f"#{run_id}" for run_id in sorted(self.marked)))
            baseline = self.baseline_id()
            if baseline is not None:
                text.append(f" · baseline #{baseline}", style="bold")
                if self.baseline is None:
                    text.append(" (oldest)", style=palette.muted)
            if len(self.marked) >= 2:
                text.append(" · c compares", style=palette.muted)
            elif shown:
                text.append(" · space marks runs to compare", style=palette.muted)
        if self.last_export is not None:
            text.append(f" · wrote {self.last_export}", style=palette.good)
        status.update(text)

    # -- selection -------------------------------------------------------------------------------

    def selected_run(self) -> RunRecord | None:
        run_id = self.query_one("#history", HistoryTable).selected_id
        return next((run for run in self.runs if run.id == run_id), None)

    def baseline_id(self) -> int | None:
        """The baseline chosen with b, else the oldest run marked (the core's default_baseline)."""
        if self.baseline is not None:
            return self.baseline
        marked = [run for run in self.runs if run.id in self.marked]
        return default_baseline(marked).id if marked else None

    @on(Input.Changed, "#results-filter")
    def _filter_changed(self) -> None:
        shown = self.shown_runs()
        # Most keystrokes keep the same rows; redrawing thousands of them per key would lag the typing.
        if [run.id for run in shown] == self.query_one("#history", HistoryTable).shown_ids:
            self._update_status(shown)
            if not shown:
                self._update_detail()  # what the filter found nothing for
            return
        self._redraw()

    @on(Input.Submitted, "#results-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#history", HistoryTable).focus()

    def action_filter(self) -> None:
        self.query_one("#results-filter", Input).focus()

    def action_back(self) -> None:
        """Esc undoes the filter first, like lazygit and htop; only Esc with nothing filtered leaves."""
        query = self.query_one("#results-filter", Input)
        if query.value:
            query.value = ""
            self.query_one("#history", HistoryTable).focus()
            self.notify("Filter cleared: every run shown. Esc again leaves.")
            return
        if query.has_focus:
            self.query_one("#history", HistoryTable).focus()
            return
        self.dismiss()

    def action_mark(self) -> None:
        run = self.selected_run()
        if run is None:
            return
        if run.id in self.marked:
            self.marked.remove(run.id)
            if self.baseline == run.id:
                self.baseline = None
        else:
            self.marked.append(run.id)
        self._marks_changed()
        # Like a file manager: space marks and moves on, so a sweep is marked with space space space.
        self.query_one("#history", HistoryTable).action_cursor_down()

    def action_unmark(self) -> None:
        self.marked = []
        self.baseline = None
        self._marks_changed()

    def action_baseline(self) -> None:
        run = self.selected_run()
        if run is None:
            return
        if self.baseline == run.id:
            self.baseline = None
        else:
            self.baseline = run.id
            if run.id not in self.marked:
                self.marked.append(run.id)
        self._marks_changed()

    def _marks_changed(self) -> None:
        self.query_one("#history", HistoryTable).set_marks(self.marked, self.baseline_id())
        self._update_status(self.shown_runs())

    @on(DataTable.RowSelected, "#history")
    def _row_selected(self) -> None:
        run = self.selected_run()
        if run is not None:
            self.load_run(run.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="results-show")
    def load_run(self, run_id: int) -> None:
        """Thread worker: one run with everything stored about it, for the detail view."""
        try:
            with open_store(self.db_path, self.busy_timeout_s) as store:
                run = store.get_run(run_id)
        except Exception as exc:
            self.post_message(StoreFailed(failure_reason(f"Reading run #{run_id}", exc)))
            return
        self.post_message(RunShown(run))

    @on(RunShown)
    def _run_shown(self, message: RunShown) -> None:
        self.app.push_screen(DetailScreen(f"Run {message.run.title}", run_detail(message.run, self.palette())))

    # -- compare ---------------------------------------------------------------------------------

    def action_compare(self) -> None:
        baseline = self.baseline_id()
        if baseline is None or len(self.marked) < 2:
            self.notify(
                "Mark at least two runs with space; b makes the highlighted one the baseline.", severity="warning"
            )
            return
        marked = [run for run in self.runs if run.id in self.marked and run.id != baseline]
        candidates = [run.id for run in in_time_order(marked)]
        chosen = self.baseline is not None
        self.app.push_screen(CompareScreen(self.db_path, baseline, candidates, self.runs, baseline_chosen=chosen))

    # -- fleet -----------------------------------------------------------------------------------

    def action_fleet(self) -> None:
        """The highlighted run's fleet: each host's figure per step, its ratio to the median, the slowest named."""
        run = self.selected_run()
        fleet_id = fleet_of(run) if run is not None else None
        if fleet_id is None:
            self.notify("Highlight a run of a fleet (mdtui bench --host ...) to compare its hosts.", severity="warning")
            return
        text = fleet_text(fleet_tables(self.runs, fleet_id))
        export = f"\nexport: mdtui results fleet {fleet_id} --format md|csv|json -o FILE"
        self.app.push_screen(DetailScreen(f"Fleet {fleet_id}", Text(text + export)))

    # -- edits -----------------------------------------------------------------------------------

    def action_label(self) -> None:
        self._edit("label", "a short name shown in tables and comparisons")

    def action_note(self) -> None:
        self._edit("note", "free text kept with the run (what you changed, what you saw)")

    def _edit(self, field: str, hint: str) -> None:
        run = self.selected_run()
        if run is None:
            return
        run_id = run.id

        def save(text: str | None) -> None:
            if text is None or text == getattr(run, field):
                return

            def change(store: ResultsStore) -> str:
                (store.set_label if field == "label" else store.set_note)(run_id, text)
                return f"Run #{run_id}: {field} {'set' if text else 'cleared'}."

            self.change_store(change)

        self.app.push_screen(
            TextPromptScreen(f"{field.capitalize()} of run #{run_id}", getattr(run, field), hint), save
        )

    def action_delete(self) -> None:
        run = self.selected_run()
        if run is None:
            return
        palette = self.palette()
        body = Text.assemble(
            ("Delete this run with its figures and samples from ", palette.muted),
            (display_path(self.db_path), "bold"),
            (":\n\n", palette.muted),
            (f"{run.title}\n", "bold"),
            f"  {run.status.value} · {run.preset} · {run.target or '-'}\n",
            (f"  {run.note}\n" if run.note else "", palette.muted),
            ("\nThis cannot be undone; export it first (e) to keep a copy.", palette.warning),
        )
        run_id = run.id

        def confirmed(typed: str | None) -> None:
            if not typed:
                return

            def change(store: ResultsStore) -> str:
                store.delete_run(run_id)
                return f"Run #{run_id} deleted."

            self.change_store(change)

        self.app.push_screen(ConfirmScreen(f"Delete run #{run_id}", body, f"#{run_id}", "Delete"), confirmed)

    # -- export ----------------------------------------------------------------------------------

    def action_export(self) -> None:
        if self.marked:
            ids = sorted(self.marked)
            what = f"{len(ids)} marked run{'s' if len(ids) != 1 else ''}"
        else:
            ids = sorted(run.id for run in self.shown_runs())
            what = f"{len(ids)} shown run{'s' if len(ids) != 1 else ''}"
        if not ids:
            self.notify("No runs to export.", severity="warning")
            return
        db_path, busy = self.db_path, self.busy_timeout_s

        def render(fmt: str) -> str:
            # Reads again (in the worker) so the export has samples, which the listing leaves out.
            with open_store(db_path, busy) as store:
                return export_runs(store.get_runs(ids), fmt)

        self.ask_export(f"Export {what}", export_stem("runs", ids), render, what)

    def exported(self, message: ExportWritten) -> None:
        self._update_status(self.shown_runs())
