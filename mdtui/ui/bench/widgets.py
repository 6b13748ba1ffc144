"""The benchmark screen's chart: throughput (MB/s) and IOPS over the run, side by side.

Drawn by the watch dashboard's braille charts (mdtui.ui.watch.chart through TimeChart), so the app has
one chart stack. The run so far fills each chart's width from its start (0s) to its latest report, the
x axis in seconds into the run; each quantity has its own chart, named in its title, so the two y axes
are told apart by their words, not by colour.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal

from mdtui.ui.watch.widgets import TimeChart

WAITING = "waiting for the first report"


class BenchChart(Horizontal):
    """Every progress report of a run as one point; redrawn only when a point arrives."""

    DEFAULT_CSS = """
    BenchChart {
        height: 1fr;
        min-height: 6;
    }
    BenchChart > TimeChart {
        border: round $panel;
        border-title-color: $text-muted;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.points: list[tuple[float, float, float]] = []  # (seconds into the run, bytes/s, IOPS)

    def compose(self) -> ComposeResult:
        for kind in ("bench-rate", "bench-iops"):
            chart = TimeChart(classes=kind)
            chart.elapsed = True
            yield chart

    def on_mount(self) -> None:
        self._apply_theme()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._apply_theme())
        self._draw()

    def clear_points(self) -> None:
        self.points = []
        self._draw()

    def add(self, seconds: float, bytes_per_s: float, iops: float) -> None:
        self.points.append((seconds, bytes_per_s, iops))
        self._draw()

    def _charts(self) -> tuple[TimeChart, TimeChart]:
        return self.query_one(".bench-rate", TimeChart), self.query_one(".bench-iops", TimeChart)

    def _apply_theme(self) -> None:
        # Line colours from the theme, so they follow a theme change like the rest of the screen.
        rate, iops = self._charts()
        rate.set_colours("primary")
        iops.set_colours("accent")

    def _draw(self) -> None:
        if not self.is_mounted:
            return
        rate, iops = self._charts()
        if not self.points:
            rate.border_title, iops.border_title = f"MB/s · {WAITING}", "IOPS"
            for chart in (rate, iops):
                chart.border_subtitle = ""
                chart.plot((), (), 0.0)
            return
        rate.border_title, iops.border_title = "MB/s (throughput)", "IOPS (requests/s)"
        for chart in (rate, iops):
            chart.border_subtitle = "time into the run"
        last = self.points[-1][0]
        seconds_ago = [point[0] - last for point in self.points]
        window_s = max(last, 1.0)
        rates = [point[1] / 1e6 for point in self.points]
        counts = [point[2] for point in self.points]
        for chart, values in ((rate, rates), (iops, counts)):
            chart.window_s = window_s
            chart.plot(seconds_ago, (values,), max(values))
