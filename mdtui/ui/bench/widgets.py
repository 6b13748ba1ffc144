"""The benchmark screen's chart: throughput (MB/s, left axis) and IOPS (right axis) over the run's seconds."""

from __future__ import annotations

from textual.color import Color
from textual_plotext import PlotextPlot

from mdtui.ui.watch.widgets import nice_ticks

Rgb = tuple[int, int, int]


class BenchChart(PlotextPlot):
    """Every progress report of a run as one point; redrawn only when a point arrives."""

    DEFAULT_CSS = """
    BenchChart {
        height: 1fr;
        min-height: 6;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.points: list[tuple[float, float, float]] = []  # (seconds into the run, bytes/s, IOPS)

    def clear_points(self) -> None:
        self.points = []
        self._draw()

    def add(self, seconds: float, bytes_per_s: float, iops: float) -> None:
        self.points.append((seconds, bytes_per_s, iops))
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _colours(self) -> tuple[Rgb, Rgb]:
        # From the theme, so the lines follow a theme change like the rest of the screen.
        variables = self.app.theme_variables
        return (
            Color.parse(variables.get("primary", "#4a9fe0")).rgb,
            Color.parse(variables.get("accent", "#e0a84a")).rgb,
        )

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.grid(False, False)
        if not self.points:
            plt.title("waiting for the first report")
            self.refresh()
            return
        plt.title("")
        xs = [p[0] for p in self.points]
        rates = [p[1] / 1e6 for p in self.points]
        iops = [p[2] for p in self.points]
        rows = max(2, self.size.height - 4)
        rate_ticks = nice_ticks(max(rates), rows)
        iops_ticks = nice_ticks(max(iops), rows)
        plt.xlim(0, max(max(xs), 1.0))
        plt.ylim(0, rate_ticks[-1], yside="left")
        plt.yticks(rate_ticks, [f"{t:g}" for t in rate_ticks], yside="left")
        plt.ylim(0, iops_ticks[-1], yside="right")
        plt.yticks(iops_ticks, [f"{t:g}" for t in iops_ticks], yside="right")
        rate_colour, iops_colour = self._colours()
        plt.plot(xs, rates, marker="braille", color=rate_colour, label="MB/s", yside="left")
        plt.plot(xs, iops, marker="braille", color=iops_colour, label="IOPS", yside="right")
        self.refresh()
