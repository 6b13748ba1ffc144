"""Charts for the watch dashboard: a target's rates and per-core CPU frequency over time (textual-plotext)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from textual.app import RenderResult
from textual.color import Color
from textual_plotext import PlotextPlot

from mdtui.sample.dashboard import DEFAULT_WINDOW_S, FrequencySeries, Series

Rgb = tuple[int, int, int]


def segments(xs: Sequence[float], ys: Sequence[float | None]) -> list[tuple[list[float], list[float]]]:
    """Runs of known values: a tick without a rate is a gap in the line, never a drop to zero."""
    runs: list[tuple[list[float], list[float]]] = []
    current: tuple[list[float], list[float]] | None = None
    for x, y in zip(xs, ys, strict=True):
        if y is None:
            current = None
            continue
        if current is None:
            current = ([], [])
            runs.append(current)
        current[0].append(x)
        current[1].append(y)
    return runs


def thin(
    xs: Sequence[float], ys: Sequence[float | None], points: int
) -> tuple[Sequence[float], Sequence[float | None]]:
    """Every k-th point when there are more than the chart has dots across (braille: 2 per cell).

    Plotting costs grow with points; at 0.25 s over two minutes there are 480 for a 70-cell chart.
    The newest point is always kept so the line reaches "now".
    """
    if points <= 0 or len(xs) <= points:
        return xs, ys
    step = -(-len(xs) // points)
    start = (len(xs) - 1) % step
    return xs[start::step], ys[start::step]


def nice_ticks(top: float, most: int) -> list[float]:
    """Round y ticks from 0 to at least top: steps of 1, 2 or 5 × 10^k, at most `most` of them."""
    if top <= 0:
        return [0.0, 1.0]
    most = max(2, most)
    magnitude = 10 ** math.floor(math.log10(top / most))
    for factor in (1, 2, 5, 10, 20, 50):
        step = factor * magnitude
        if math.ceil(top / step) + 1 <= most:
            break
    return [step * index for index in range(math.ceil(top / step) + 1)]


class _TimeChart(PlotextPlot):
    """A time chart that redraws only when given new data (plotext builds a whole figure per render)."""

    DEFAULT_CSS = """
    _TimeChart {
        height: 1fr;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.window_s = DEFAULT_WINDOW_S
        self.colours: tuple[Rgb, ...] = ((74, 159, 224), (224, 168, 74))
        self._top = 0.0

    def set_colours(self, *names: str) -> None:
        """Line colours from theme variables ("primary", "accent"...), so a theme change recolours the lines."""
        variables = self.app.theme_variables
        self.colours = tuple(Color.parse(variables.get(name, "#808080")).rgb for name in names)

    def _begin(self, top: float) -> int:
        """Clear the data for a redraw up to `top`; returns how many points a line may have."""
        self._top = top
        self.plt.clear_data()
        return max(0, (self.size.width - 8) * 2)

    def render(self) -> RenderResult:
        # Axes follow the size at drawing time: a resize between data and drawing keeps round ticks.
        plt = self.plt
        plt.xlim(-self.window_s, 0)
        # A tick every other row at most: the plot area is the height less the frame and the x labels.
        ticks = nice_ticks(self._top, max(2, (self.size.height - 3) // 2 + 1))
        plt.ylim(0, ticks[-1])
        plt.yticks(ticks, [f"{tick:g}" for tick in ticks])
        plt.grid(False, False)
        return super().render()

    def _line(self, xs: Sequence[float], ys: Sequence[float | None], colour: Rgb, points: int) -> None:
        xs, ys = thin(xs, ys, points)
        for run_x, run_y in segments(xs, ys):
            self.plt.plot(run_x, run_y, marker="braille", color=colour)


class RateChart(_TimeChart):
    """Read and write of the watched target over the window, in MB/s or in IOPS."""

    def show(self, series: Series, iops: bool) -> None:
        reads = series.read_iops if iops else series.read_bytes_per_s
        writes = series.write_iops if iops else series.write_bytes_per_s
        scale = 1.0 if iops else 1e-6
        reads = tuple(None if v is None else v * scale for v in reads)
        writes = tuple(None if v is None else v * scale for v in writes)
        top = max((v for v in (*reads, *writes) if v is not None), default=0.0)
        points = self._begin(top)
        self._line(series.seconds_ago, reads, self.colours[0], points)
        self._line(series.seconds_ago, writes, self.colours[1 % len(self.colours)], points)
        self.refresh()


class FrequencyChart(_TimeChart):
    """Each core's frequency in GHz over the window (min/mean/max across cores on big hosts)."""

    def show(self, series: FrequencySeries, max_ghz: float | None) -> None:
        lines = [(label, tuple(None if v is None else v / 1000 for v in values)) for label, values in series.lines]
        top = max_ghz or max((v for _, values in lines for v in values if v is not None), default=0.0)
        points = self._begin(top)
        for index, (_label, values) in enumerate(lines):
            self._line(series.seconds_ago, values, self.colours[index % len(self.colours)], points)
        self.refresh()
