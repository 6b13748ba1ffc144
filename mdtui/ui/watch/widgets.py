"""The watch dashboard's widgets: braille time charts and text panes that repaint only what changed.

Both use Textual's line API. A chart is drawn by mdtui.ui.watch.chart into rows of text runs once per
new data or size; a text pane splits its rich Text into lines. Each row becomes a strip the first time
Textual asks for it, and an update repaints only the rows that differ from what is on screen (a flat
line, the axes, a member whose figures held still), with no layout pass unless the height changes.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from itertools import pairwise

from rich.cells import cell_len
from rich.color import Color as RichColor
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual.color import Color
from textual.events import MouseScrollDown, MouseScrollUp, Resize
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from mdtui.sample.dashboard import DEFAULT_WINDOW_S, FrequencySeries
from mdtui.sample.series import Series
from mdtui.ui.watch.chart import Row, draw, nice_ticks

# nice_ticks: the bench screen's charts take their y axis from here.
__all__ = ["FrequencyChart", "MembersPane", "RateChart", "TextLines", "TimeChart", "nice_ticks"]

Rgb = tuple[int, int, int]


class TimeChart(Widget):
    """Lines over the last window_s seconds; show() draws new data, render_line hands out the rows."""

    DEFAULT_CSS = """
    TimeChart {
        height: 1fr;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.window_s = DEFAULT_WINDOW_S
        self.elapsed = False  # the time axis in seconds into a run (the bench chart), not before now
        self.colours: tuple[Rgb, ...] = ((74, 159, 224), (224, 168, 74))
        self._seconds_ago: Sequence[float] = ()
        self._lines: Sequence[Sequence[float | None]] = ()
        self._top = 0.0
        self._rows: list[Row] = []
        self._drawn_for: tuple[int, int, float] | None = None  # (width, height, window) of _rows
        self._strips: dict[int, Strip] = {}
        # The widget's style and each series' style on it, made once (not per line: rich_style walks the DOM).
        self._base: Style | None = None
        self._series_styles: tuple[Style, ...] = ()

    def set_colours(self, *names: str) -> None:
        """Line colours from theme variables ("primary", "accent"...); the screen calls it on every theme change,
        after the new CSS is in place, so the strips are made again with the theme's background too."""
        variables = self.app.theme_variables
        self.colours = tuple(Color.parse(variables.get(name, "#808080")).rgb for name in names)
        self._restyle()

    @property
    def rows(self) -> list[Row]:
        """The chart as last drawn: rows of (text, series index or None for axes and labels)."""
        return self._rows

    def plot(self, seconds_ago: Sequence[float], lines: Sequence[Sequence[float | None]], top: float) -> None:
        """New data: redraw and repaint the rows that differ from what is on screen."""
        self._seconds_ago, self._lines, self._top = seconds_ago, lines, top
        self._redraw()

    def _redraw(self) -> None:
        width, height = self.size
        if not self.display or width <= 0 or height <= 0:
            # Hidden or not laid out yet: drawn when shown (on_resize), nothing to repaint now.
            self._drawn_for = None
            return
        rows = draw(self._seconds_ago, self._lines, width, height, self.window_s, self._top, self.elapsed)
        shape = (width, height, self.window_s)
        if shape != self._drawn_for:
            self._rows, self._drawn_for = rows, shape
            self._strips.clear()
            self.refresh()
            return
        old = self._rows
        changed = [y for y, row in enumerate(rows) if y >= len(old) or old[y] != row]
        self._rows = rows
        for y in changed:
            self._strips.pop(y, None)
        if changed:
            # Only the cells that differ are painted and written to the terminal (most of a row is the same).
            self.refresh(*(_changed_cells(y, _chart_row_keys(old[y]), _chart_row_keys(rows[y])) for y in changed))

    def on_resize(self, _event: Resize) -> None:
        self._redraw()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._restyle()

    def _restyle(self) -> None:
        """Styles changed (theme, CSS, colours): every strip is made again on the next paint."""
        self._base = None
        self._strips.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        strip = self._strips.get(y)
        if strip is None:
            strip = self._strips[y] = self._make_strip(y)
        return strip

    def _make_strip(self, y: int) -> Strip:
        base = self._base
        if base is None:
            base = self._base = self.rich_style
            self._series_styles = tuple(base + Style(color=RichColor.from_rgb(*rgb)) for rgb in self.colours)
        width = self.size.width
        if y >= len(self._rows):
            return Strip.blank(width, base)
        styles = self._series_styles
        segments = [Segment(text, base if key is None else styles[key % len(styles)]) for text, key in self._rows[y]]
        return Strip(segments).adjust_cell_length(width, base)


def _chart_row_keys(row: Row) -> tuple[str, str]:
    """A chart row's text and, cell for cell, which series colours it (its cells are one column each)."""
    return "".join(text for text, _ in row), "".join(
        chr(65 + (key if key is not None else -1)) * len(text) for text, key in row
    )


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters a and b share (a binary search of slice comparisons, done in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _changed_cells(y: int, old: tuple[str, str], new: tuple[str, str]) -> Region:
    """Row y's cells from the first that differs to the last, in text or in colour keys (one cell a character)."""
    start, end = len(new[0]), 0
    for before, after in zip(old, new, strict=True):
        if before == after:
            continue
        # Lines are padded to the pane's width: compare them as drawn, so an old tail is cleared.
        before, after = before.ljust(len(after)), after.ljust(len(before))
        prefix = _common_prefix(before, after)
        suffix = _common_prefix(before[prefix:][::-1], after[prefix:][::-1])
        start = min(start, prefix)
        end = max(end, len(after) - suffix, len(before) - suffix)
    return Region(start, y, max(1, end - start), 1)


def _scaled(values: Sequence[float | None], scale: float) -> list[float | None]:
    return [None if v is None else v * scale for v in values]  # NaN and infinity stay so: the chart skips them


def _top(lines: Sequence[Sequence[float | None]]) -> float:
    tops = [max(filter(math.isfinite, [v for v in values if v is not None]), default=0.0) for values in lines]
    return max(tops, default=0.0)


class RateChart(TimeChart):
    """Read and write of the watched target over the window, in MB/s or in IOPS."""

    def show(self, series: Series, iops: bool) -> None:
        reads = series.read_iops if iops else series.read_bytes_per_s
        writes = series.write_iops if iops else series.write_bytes_per_s
        scale = 1.0 if iops else 1e-6
        lines = (_scaled(reads, scale), _scaled(writes, scale))
        self.plot(series.seconds_ago, lines, _top(lines))


class FrequencyChart(TimeChart):
    """Each core's frequency in GHz over the window (min/mean/max across cores on big hosts)."""

    def show(self, series: FrequencySeries, max_ghz: float | None) -> None:
        lines = tuple(_scaled(values, 1e-3) for _label, values in series.lines)
        self.plot(series.seconds_ago, lines, max_ghz or _top(lines))


# A line of a text pane: its characters, its spans (start, end, style) within it, and the text's own style.
TextRow = tuple[str, tuple[tuple[int, int, str | Style], ...], str | Style]


def text_rows(text: Text) -> list[TextRow]:
    """The text's lines with the spans that fall in each, without making a Text per line (Text.split does,
    and each new Text scans its characters for control codes: most of a pane's update cost)."""
    lines = text.plain.split("\n")
    starts = []
    position = 0
    for line in lines:
        starts.append(position)
        position += len(line) + 1
    spans: list[list[tuple[int, int, str | Style]]] = [[] for _ in lines]
    for span in text.spans:
        if span.end <= span.start:
            continue
        index = max(0, bisect_right(starts, span.start) - 1)
        while index < len(lines) and starts[index] < span.end:
            begin = starts[index]
            low, high = max(span.start - begin, 0), min(span.end - begin, len(lines[index]))
            if high > low:
                spans[index].append((low, high, span.style))
            index += 1
    return [(line, tuple(found), text.style) for line, found in zip(lines, spans, strict=True)]


def _row_text(row: TextRow) -> Text:
    line, spans, style = row
    return Text(line, style=style, spans=[Span(start, end, span_style) for start, end, span_style in spans])


def row_segments(row: TextRow, console: Console, base: Style) -> list[Segment]:
    """A row as segments on the widget's style, styled as rich renders a Text (spans over the text's style)."""
    line, spans, style = row
    get = console.get_style
    own = base + get(style, default=Style.null()) if style else base
    if not spans:
        return [Segment(line, own)] if line else []
    cuts = sorted({0, len(line), *(start for start, _, _ in spans), *(end for _, end, _ in spans)})
    segments = []
    for start, end in pairwise(cuts):
        over = [get(kind, default=Style.null()) for low, high, kind in spans if low <= start and high >= end]
        segments.append(Segment(line[start:end], own + Style.combine(over) if over else own))
    return segments


class TextLines(Widget):
    """A rich Text shown line by line: update() repaints the lines that changed, lays out only on a new height.

    A Static turns its whole text into content, wraps and formats it on every update; the dashboard
    updates its panes every tick with most lines the same. wrap=False cuts long lines with an ellipsis.
    """

    DEFAULT_CSS = """
    TextLines {
        height: auto;
    }
    """

    def __init__(
        self, text: Text | None = None, *, wrap: bool = True, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._text = text if text is not None else Text()
        self.wrap = wrap
        self._width = -1  # the width _rows were laid out at
        self._rows: list[TextRow] = []
        self._strips: dict[int, Strip] = {}
        self._base: Style | None = None

    @property
    def text(self) -> Text:
        """What the pane shows."""
        return self._text

    @property
    def lines(self) -> list[str]:
        """The lines on screen, as laid out at the pane's width (wrapped, or cut with an ellipsis)."""
        return [line for line, _, _ in self._rows]

    def update(self, text: Text) -> None:
        self._text = text
        width = self.size.width
        if width <= 0:
            self.refresh(layout=True)
            return
        rows = self._layout(text, width)
        old = self._rows
        self._rows, self._width = rows, width
        if len(rows) != len(old):
            self._strips.clear()
            self.refresh(layout=True)
            return
        changed = [y for y, row in enumerate(rows) if row != old[y]]
        for y in changed:
            self._strips.pop(y, None)
        regions = []
        for y in changed:
            before, after = old[y], rows[y]
            if before[1:] != after[1:] or len(before[0]) != cell_len(before[0]) or len(after[0]) != cell_len(after[0]):
                regions.append(Region(0, y, width, 1))  # new styles, or wide characters: the whole line
            else:
                regions.append(_changed_cells(y, (before[0], ""), (after[0], "")))
        if regions:
            self.refresh(*regions)

    def _layout(self, text: Text, width: int) -> list[TextRow]:
        rows: list[TextRow] = []
        for row in text_rows(text):
            if len(row[0]) <= width and cell_len(row[0]) <= width:
                rows.append(row)
            elif self.wrap:
                rows.extend(text_rows(Text("\n").join(_row_text(row).wrap(self.app.console, width))))
            else:
                cut = _row_text(row)
                cut.truncate(width, overflow="ellipsis")
                rows.extend(text_rows(cut))
        return rows

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width <= 0:
            return 0
        return len(self._layout(self._text, width))

    def on_resize(self, _event: Resize) -> None:
        self._relayout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._strips.clear()

    def _relayout(self) -> None:
        width = self.size.width
        if width != self._width:
            self._width = width
            self._rows = self._layout(self._text, width) if width > 0 else []
            self._strips.clear()
            self.refresh()

    def render_line(self, y: int) -> Strip:
        if self.size.width != self._width:
            self._relayout()
        strip = self._strips.get(y)
        if strip is None:
            strip = self._strips[y] = self._make_strip(y)
        return strip

    def _make_strip(self, y: int) -> Strip:
        base = self._base
        if base is None:
            base = self._base = self.rich_style
        width = self.size.width
        if y >= len(self._rows):
            return Strip.blank(width, base)
        return Strip(row_segments(self._rows[y], self.app.console, base)).adjust_cell_length(width, base)


class MembersPane(TextLines):
    """The watch screen's member table: focusable (Tab reaches it; it has focus from the start) so the keys
    that scroll and sort it are the screen's while it shows; the mouse wheel scrolls it too."""

    can_focus = True
    # Rows the wheel moves per notch, as a terminal scrolls three lines.
    WHEEL_ROWS = 3

    async def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        await self.run_action(f"screen.scroll_members({self.WHEEL_ROWS})")

    async def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        await self.run_action(f"screen.scroll_members({-self.WHEEL_ROWS})")
