"""The compare screen: what changed between runs, each metric as ratios to the baseline with bars, normalised sweeps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from mdtui.store.compare import Comparison, NormalisedTable, compare, normalise
from mdtui.store.errors import CompareError
from mdtui.store.export import export_comparison, export_normalised
from mdtui.store.records import RunRecord
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.results.base import ComparisonReady, ResultsBase, StoreFailed, export_stem, open_store
from mdtui.ui.results.compare_render import comparison_renderable, normalised_renderable
from mdtui.ui.results.dialogs import (
    DevicePickerScreen,
)


class CompareScreen(ResultsBase):
    """A baseline against other runs: what changed, a table per metric with ratios, bars, a normalised view."""

    BINDINGS = [
        Binding("m", "metric(1)", "Next metric"),
        Binding("M", "metric(-1)", "Previous", key_display="M"),
        Binding("v", "normalised", "Normalised"),
        Binding("d", "device", "Device run"),
        Binding("e", "export", "Export"),
        Binding("escape", "back", "Back"),
        Binding("r", "reload", "Reload", show=False),
    ]

    def __init__(
        self,
        db_path: Path,
        baseline: int,
        candidates: Sequence[int],
        runs: Sequence[RunRecord],
        *,
        baseline_chosen: bool = False,
    ) -> None:
        super().__init__(db_path)
        self.baseline_id = baseline
        self.baseline_chosen = baseline_chosen  # picked with b, not the oldest run by default
        self.candidate_ids = tuple(candidates)
        self.known_runs = tuple(runs)  # offered as the device run of the normalised view
        self.comparison: Comparison | None = None
        self.metric_index = 0
        self.normalised = False
        self.device_run: RunRecord | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield Static(classes="results-banner")
        with VerticalScroll(id="compare-body"):
            yield Static(Text("Loading the runs…"), id="compare-content")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#compare-body", VerticalScroll).focus()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        self._update_title()
        self.action_reload()

    def action_reload(self) -> None:
        self.load_comparison()

    @work(thread=True, exclusive=True, exit_on_error=False, group="results-compare")
    def load_comparison(self) -> None:
        """Thread worker: read the runs and let the core compare them."""
        try:
            with open_store(self.db_path, self.busy_timeout_s) as store:
                baseline = store.get_run(self.baseline_id)
                candidates = store.get_runs(self.candidate_ids)
            comparison = compare(baseline, candidates)
        except Exception as exc:
            self.post_message(StoreFailed(failure_reason("Comparing the runs", exc)))
            return
        self.post_message(ComparisonReady(comparison))

    @on(ComparisonReady)
    def _ready(self, message: ComparisonReady) -> None:
        self.comparison = message.comparison
        self.show_error(None)
        self._redraw()

    def store_failed(self) -> None:
        if self.comparison is None:
            self.query_one("#compare-content", Static).update(Text("No comparison: see the message above."))

    # -- drawing ---------------------------------------------------------------------------------

    def chosen_metric(self) -> str | None:
        if self.comparison is None or not self.comparison.rows:
            return None
        return self.comparison.rows[self.metric_index % len(self.comparison.rows)].metric.name

    def normalised_table(self) -> NormalisedTable:
        """The compared runs ÷ (device run × data disks) for the chosen metric; CompareError when it cannot be."""
        metric = self.chosen_metric()
        if self.comparison is None or metric is None or self.device_run is None:
            raise CompareError("pick a device run first (d)")
        return normalise(self.comparison.runs, self.device_run, metric=metric)

    def _body(self) -> RenderableType:
        assert self.comparison is not None
        palette = self.palette()
        if not self.normalised:
            return comparison_renderable(
                self.comparison, self.metric_index, palette, baseline_chosen=self.baseline_chosen
            )
        try:
            return normalised_renderable(self.normalised_table(), palette)
        except CompareError as exc:
            return Text(f"Cannot normalise: {exc}", style=palette.error)

    def _redraw(self) -> None:
        self._update_title()
        if self.comparison is None:
            return
        self.query_one("#compare-content", Static).update(self._body())

    def _update_title(self) -> None:
        others = ", ".join(f"#{run_id}" for run_id in self.candidate_ids)
        view = "normalised" if self.normalised else "compare"
        rows = self.comparison.rows if self.comparison else ()
        label = next((row.metric.label for row in rows if row.metric.name == self.chosen_metric()), "")
        self.sub_title = " · ".join(part for part in (f"{view} {others} vs #{self.baseline_id}", label) if part)

    # -- keys ------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss()

    def action_metric(self, step: int) -> None:
        if self.comparison is None or not self.comparison.rows:
            return
        self.metric_index = (self.metric_index + step) % len(self.comparison.rows)
        self._redraw()

    def action_normalised(self) -> None:
        if self.normalised:
            self.normalised = False
            self._redraw()
        elif self.device_run is None:
            self.action_device()
        else:
            self.normalised = True
            self._redraw()

    def action_device(self) -> None:
        metric = self.chosen_metric()
        if metric is None:
            return
        suggested = self.device_run.id if self.device_run else None
        if suggested is None and self.comparison is not None and not self.comparison.baseline.array:
            suggested = self.comparison.baseline.id

        def picked(run_id: int | None) -> None:
            if run_id is None:
                return
            self.device_run = next((run for run in self.known_runs if run.id == run_id), None)
            self.normalised = self.device_run is not None
            self._redraw()

        self.app.push_screen(DevicePickerScreen(self.known_runs, metric, suggested), picked)

    def action_export(self) -> None:
        comparison = self.comparison
        if comparison is None:
            return
        ids = [comparison.baseline.id, *(run.id for run in comparison.candidates)]
        if self.normalised:
            try:
                table = self.normalised_table()
            except CompareError as exc:
                self.notify(str(exc), severity="warning")
                return
            self.ask_export(
                "Export the normalised table",
                export_stem("normalised", ids),
                lambda fmt: export_normalised(table, fmt),
                "the normalised table",
            )
            return
        stem = f"mdtui-compare-{comparison.baseline.id}-vs-" + "-".join(str(run.id) for run in comparison.candidates)
        self.ask_export("Export the comparison", stem, lambda fmt: export_comparison(comparison, fmt), "the comparison")
