"""Time charts drawn as braille text: y labels, the series' dots and the time axis, row by row.

Pure Python (no Textual, no Rich): the dashboard's chart widgets turn these rows into strips. A braille
cell holds 2 x 4 dots, so a chart of W x H cells plots on a 2W x 4H grid; consecutive known values are
joined by straight lines and an unknown one (None, NaN, infinity) leaves a gap, never a drop to zero.
This replaces plotext, which built a whole figure per draw, printed it as ANSI text and decoded that
back into segments (most of the dashboard's CPU at one redraw a second).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

BRAILLE_BLANK = 0x2800
# The bit of the dot at (row 0-3, column 0-1) of a cell, as Unicode numbers braille dots 1-8.
DOT_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
CELL_TEXT = (" ", *(chr(BRAILLE_BLANK + bits) for bits in range(1, 256)))  # a cell's text by its dots
# SPAN_BITS[column][first][last]: the bits of dot rows first..last (0-3) of one column of a cell.
SPAN_BITS = tuple(
    tuple(
        tuple(sum(DOT_BITS[row][column] for row in range(first, last + 1)) for last in range(4)) for first in range(4)
    )
    for column in range(2)
)
AXIS = None  # the key of runs that are axes, ticks and labels rather than a series
MIN_X_TICK_CELLS = 14  # columns between time labels at least: "-120s" and room around it
X_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400)

# How a legend draws each series: solid, then dashed, alternately (draw() dashes every other series).
LINE_MARKS = ("━", "╍")

# A row of the chart: runs of text, each with AXIS or the index of the series drawn in it.
Run = tuple[str, int | None]
Row = tuple[Run, ...]


def known(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def nice_ticks(top: float, most: int) -> list[float]:
    """Round y ticks from 0 to at least top: steps of 1, 2 or 5 × 10^k, at most `most` of them."""
    if not math.isfinite(top) or top <= 0:
        return [0.0, 1.0]
    most = max(2, most)
    magnitude = 10 ** math.floor(math.log10(top / most))
    step = magnitude
    for factor in (1, 2, 5, 10, 20, 50):
        step = factor * magnitude
        if math.ceil(top / step) + 1 <= most:
            break
    return [step * index for index in range(math.ceil(top / step) + 1)]


def tick_label(value: float) -> str:
    """A y label in few cells: 0.05, 2.5, 750, 8k, 12k, 1.5M (plain :g would print 8e+03 or 1e+06)."""
    value = float(f"{value:.3g}")  # rounded first, so 999,999 is 1M rather than 1e+03k
    magnitude = abs(value)
    if magnitude >= 1e15:
        return f"{value:.0e}"
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"


def time_label(seconds_ago: float) -> str:
    if seconds_ago == 0:
        return "now"
    if seconds_ago % 3600 == 0 and seconds_ago >= 7200:
        return f"-{seconds_ago / 3600:g}h"
    if seconds_ago % 60 == 0 and seconds_ago >= 600:
        return f"-{seconds_ago / 60:g}m"
    return f"-{seconds_ago:g}s"


class Canvas:
    """width x height braille cells; each cell takes the colour of the last series that set a dot in it."""

    def __init__(self, width: int, height: int) -> None:
        self.width = max(0, width)
        self.height = max(0, height)
        self.bits = [0] * (self.width * self.height)
        self.owner = [-1] * (self.width * self.height)

    @property
    def dots_across(self) -> int:
        return self.width * 2

    @property
    def dots_down(self) -> int:
        return self.height * 4

    def dot(self, x: int, y: int, series: int) -> None:
        self.trace([(x, y)], series)

    def trace(self, points: Iterable[tuple[int, int] | None], series: int, dashed: bool = False) -> None:
        """Dots joined by lines, left to right; None breaks the line. Off-canvas dots are dropped.

        Each dot column between two points gets the rows the line moves through since the column
        before it, so the line is one dot thick where flat and unbroken where steep. This runs for
        every point of every chart each tick: first the rows each column gets, then the cells' bits.
        """
        spans: list[tuple[int, int, int]] = []  # (dot column, first row, last row)
        add = spans.append
        px = py = 0
        joined = False  # whether the point before this one is on the line (not after a gap)
        for point in points:
            if point is None:
                joined = False
                continue
            x, y = point
            if joined and x == px + 1:  # the commonest step: the next column
                add((x, py + 1, y) if y > py else (x, y, py - 1) if y < py else (x, y, y))
            elif joined and x > px:
                run, rise, previous = x - px, y - py, py
                for column in range(px + 1, x + 1):
                    row = py + round(rise * (column - px) / run)
                    add(
                        (column, previous + 1, row)
                        if row > previous
                        else (column, row, previous - 1)
                        if row < previous
                        else (column, row, row)
                    )
                    previous = row
            else:  # a line starts, or a point on the same column: the rows between it and the last one
                low, high = (min(py, y), max(py, y)) if joined and x == px else (y, y)
                add((x, low, high))
            px, py, joined = x, y, True
        if dashed:
            # Flat stretches in every other pair of cells are left out, so the line reads as dashed without
            # colour; a column where the line moves is always drawn, so no rise or spike is lost.
            spans = [span for span in spans if span[1] != span[2] or not (span[0] >> 2) & 1]
        self._fill(spans, series)

    def _fill(self, spans: list[tuple[int, int, int]], series: int) -> None:
        width, bottom = self.width, self.height * 4 - 1
        across = width * 2
        bits, owner, span_bits = self.bits, self.owner, SPAN_BITS
        for column, low, high in spans:
            if column < 0 or column >= across:
                continue
            if low < 0:
                low = 0
            if high > bottom:
                high = bottom
            if low > high:
                continue
            masks = span_bits[column & 1]
            first, last = low >> 2, high >> 2
            cell = first * width + (column >> 1)
            if first == last:
                bits[cell] |= masks[low & 3][high & 3]
                owner[cell] = series
                continue
            for cell_row in range(first, last + 1):
                bits[cell] |= masks[low & 3 if cell_row == first else 0][high & 3 if cell_row == last else 3]
                owner[cell] = series
                cell += width

    def row(self, y: int) -> list[Run]:
        """Cell row y as runs of text, each coloured by one series (or AXIS for the blanks before the first dot).

        Empty cells are spaces, not blank braille. Spaces between and after dots go with the run before
        them: a space shows no colour, and fewer runs make fewer segments to compare, style and paint.
        """
        width = self.width
        start = y * width
        cells = self.bits[start : start + width]
        if not any(cells):
            return [(" " * width, AXIS)] if width else []
        text = "".join(map(CELL_TEXT.__getitem__, cells))
        dotted = [index for index, cell in enumerate(cells) if cell]
        owner = self.owner
        runs: list[Run] = [(text[: dotted[0]], AXIS)] if dotted[0] else []
        begin, current = dotted[0], owner[start + dotted[0]]
        for index in dotted:
            series = owner[start + index]
            if series != current:
                runs.append((text[begin:index], current))
                begin, current = index, series
        runs.append((text[begin:], current))
        return runs


def points(
    canvas: Canvas, seconds_ago: Sequence[float], values: Sequence[float | None], window_s: float, top: float
) -> list[tuple[int, int] | None]:
    """Where plot() puts a series' values on the canvas's dot grid, None for an unknown value."""
    if canvas.width == 0 or canvas.height == 0 or window_s <= 0 or top <= 0 or not math.isfinite(top):
        return []
    across = (canvas.dots_across - 1) / window_s
    down = canvas.dots_down - 1
    scale = down / top
    found: list[tuple[int, int] | None] = []
    for age, value in zip(seconds_ago, values, strict=True):
        if value is None or not math.isfinite(value) or not math.isfinite(age):
            found.append(None)
            continue
        height = min(max(value * scale, 0), down)
        found.append((round((age + window_s) * across), down - round(height)))
    return found


def plot(
    canvas: Canvas,
    seconds_ago: Sequence[float],
    values: Sequence[float | None],
    window_s: float,
    top: float,
    series: int,
    dashed: bool = False,
) -> None:
    """Draw one series: seconds_ago in [-window_s, 0] across, 0..top down; values above top sit on the top row."""
    canvas.trace(points(canvas, seconds_ago, values, window_s, top), series, dashed)


def elapsed_label(seconds: float) -> str:
    """A label of time into a run: 0s, 45s, 2m, 1.5h."""
    if seconds >= 7200 and seconds % 1800 == 0:
        return f"{seconds / 3600:g}h"
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"


def elapsed_ticks(window_s: float, columns: int) -> list[float]:
    """Seconds ago of labels at round times into a run that started window_s ago (0s, 10s, 20s...)."""
    if window_s <= 0 or columns <= 0:
        return [0.0]
    wanted = window_s * MIN_X_TICK_CELLS / columns
    step = next((float(s) for s in X_STEPS_S if s >= wanted), window_s)
    return [step * index - window_s for index in range(int(window_s // step) + 1)]


def x_ticks(window_s: float, columns: int) -> list[float]:
    """Seconds ago of each time label, oldest first, ending at 0: a round step that leaves room for each."""
    if window_s <= 0 or columns <= 0:
        return [0.0]
    wanted = window_s * MIN_X_TICK_CELLS / columns
    step = next((float(s) for s in X_STEPS_S if s >= wanted), window_s)
    count = int(window_s // step)
    return [-step * index for index in range(count, -1, -1)]


@dataclass(frozen=True, slots=True)
class ChartLayout:
    """Where things go in a chart of a given size: the y labels' width, plot size, rows of the x axis."""

    gutter: int  # cells of y labels left of the axis
    plot_width: int
    plot_height: int
    x_axis: bool  # the axis line with its ticks below the plot
    x_labels: bool  # the time labels below that


def layout(width: int, height: int, labels: Sequence[str]) -> ChartLayout:
    gutter = max((len(label) for label in labels), default=0)
    x_axis = height >= 3
    x_labels = height >= 4
    plot_height = max(0, height - x_axis - x_labels)
    return ChartLayout(gutter, max(0, width - gutter - 1), plot_height, x_axis, x_labels)


def y_scale(top: float, plot_height: int) -> list[float]:
    """The y ticks for data up to top on plot_height rows: a tick every other row at most."""
    return nice_ticks(top if known(top) else 0.0, plot_height // 2 + 1)


def draw(
    seconds_ago: Sequence[float],
    lines: Sequence[Sequence[float | None]],
    width: int,
    height: int,
    window_s: float,
    top: float,
    elapsed: bool = False,
) -> list[Row]:
    """The chart as `height` rows of `width` cells: y labels and axis, the lines' dots, the time axis.

    top: the largest value to fit (the y axis runs to the round tick at or above it). Series are drawn in
    order, so where two share a cell the later one's colour shows. elapsed: the window is a whole run, so
    the time axis reads seconds into it (0s, 10s...) instead of seconds before now.
    """
    if width <= 0 or height <= 0:
        return []
    # The y ticks depend on the plot's height, which depends on whether the x axis fits: not on the labels.
    plot_height = max(0, height - (height >= 3) - (height >= 4))
    ticks = y_scale(top, plot_height)
    labels = [tick_label(tick) for tick in ticks]
    shape = layout(width, height, labels)
    if shape.plot_width <= 0:  # too narrow for the labels: the plot alone
        shape = ChartLayout(0, max(0, width - 1), plot_height, shape.x_axis, shape.x_labels)
        labels = [""] * len(ticks)
    canvas = Canvas(shape.plot_width, shape.plot_height)
    for index, values in enumerate(lines):
        # A line the same as a later one is hidden under it (min, mean and max of cores running alike).
        if not any(values == later for later in lines[index + 1 :]):
            # Every other series dashed (LINE_MARKS in legends), so two lines differ without colour too.
            plot(canvas, seconds_ago, values, window_s, ticks[-1], index, dashed=bool(index % 2))
    # Tick rows: where each tick's value falls (0 on the bottom dot row, the top tick on the top one).
    label_at: dict[int, str] = {}
    down = canvas.dots_down - 1
    if down > 0:
        for tick, tick_text in zip(ticks, labels, strict=True):
            row = (down - round(tick / ticks[-1] * down)) >> 2
            label_at.setdefault(row, tick_text)
    rows: list[Row] = []
    for y in range(shape.plot_height):
        label = label_at.get(y)
        axis = (label.rjust(shape.gutter) + "┤") if label is not None else (" " * shape.gutter + "│")
        rows.append(_merge([(axis, AXIS), *canvas.row(y)]))
    if shape.x_axis or shape.x_labels:
        axis_row, label_row = _time_axis(shape, window_s, elapsed)
        if shape.x_axis:
            rows.append(((axis_row, AXIS),))
        if shape.x_labels:
            rows.append(((label_row, AXIS),))
    return rows


@lru_cache(maxsize=16)
def _time_axis(shape: ChartLayout, window_s: float, elapsed: bool = False) -> tuple[str, str]:
    """The axis line with a ┬ at each time tick, and the labels centred under the ticks."""
    columns = shape.plot_width
    width = shape.gutter + 1 + columns
    axis = ["─"] * columns
    labels = [" "] * width
    if columns and window_s > 0:
        across = columns * 2 - 1
        taken = -1  # the last label's end: a label that would touch it is left out
        ticks = elapsed_ticks(window_s, columns) if elapsed else x_ticks(window_s, columns)
        for tick in ticks:
            column = round((tick + window_s) / window_s * across) >> 1
            axis[column] = "┬"
            text = elapsed_label(tick + window_s) if elapsed else time_label(-tick)
            start = min(width - len(text), max(0, shape.gutter + 1 + column - len(text) // 2))
            if start <= taken:
                continue
            labels[start : start + len(text)] = text
            taken = start + len(text)
    return " " * shape.gutter + "└" + "".join(axis), "".join(labels)


def _merge(runs: list[Run]) -> Row:
    """Adjacent runs with the same key joined, so a row is as few segments as it can be."""
    merged: list[Run] = []
    for text, key in runs:
        if merged and merged[-1][1] == key:
            merged[-1] = (merged[-1][0] + text, key)
        else:
            merged.append((text, key))
    return tuple(merged)


def plain(rows: Sequence[Row]) -> list[str]:
    """The rows as plain text lines (tests, and a look at a chart without a terminal)."""
    return ["".join(text for text, _ in row) for row in rows]
