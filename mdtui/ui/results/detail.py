"""A stored run as a person reads it: what `mdtui results show` prints (store.describe), and a chart of its
samples."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from mdtui.bench.predicted import prediction_lines
from mdtui.format import plural
from mdtui.store.describe import describe_run
from mdtui.store.records import METRICS_BY_NAME, RunRecord, SamplePoint
from mdtui.ui.common.render import Palette
from mdtui.ui.results.render import WidthAware
from mdtui.ui.watch.chart import draw

# Sampled series the chart draws, in this order, when a run has them (the store's metric names).
CHARTED = ("read_bw_bytes_per_s", "write_bw_bytes_per_s", "read_iops", "write_iops")
CHART_ROWS = 6  # four of dots, the time axis and its labels


# Each charted figure in the unit its label names (store.cells.format_metric's units).
_DISPLAY_SCALE = {"bytes/s": 1e-6, "ns": 1e-3}


def series_chart(samples: Sequence[SamplePoint], name: str, width: int, style: str) -> Text:
    """One sampled series drawn as the live dashboard draws its lines (ui.watch.chart, its whole-run time axis:
    0s to the step's end), in the unit its label names, under a title naming it and its sample count."""
    metric = METRICS_BY_NAME[name]
    scale = _DISPLAY_SCALE.get(metric.unit, 1.0)
    points = [(p.t_s, v * scale) for p in samples if isinstance(v := p.values.get(name), (int, float))]
    points = [(t_s, value) for t_s, value in points if math.isfinite(t_s) and math.isfinite(value)]
    end = max((t_s for t_s, _ in points), default=0.0)
    top = max((value for _, value in points), default=0.0)
    text = Text()
    text.append(f"{metric.label}", style="bold")
    text.append(f" over the step's time, {plural(len(samples), 'sample')}", style="dim")
    rows = draw([t_s - end for t_s, _ in points], [[v for _, v in points]], width, CHART_ROWS, end, top, elapsed=True)
    for row in rows:
        text.append("\n")
        for run, series in row:
            text.append(run, style=style if series is not None else "")
    return text


def samples_chart(run: RunRecord, palette: Palette) -> RenderableType:
    """A chart per sampled series the run has; a sentence when none was stored."""
    names = [name for name in CHARTED if any(name in point.values for point in run.samples)]
    if not names:
        return Text("No samples stored for this run: nothing to chart.", style=palette.muted)
    styles = (palette.good, palette.warning, palette.good, palette.warning)

    def build(width: int) -> RenderableType:
        charts: list[RenderableType] = []
        for name, style in zip(names, styles, strict=False):
            charts += [series_chart(run.samples, name, width, style), Text("")]
        return Group(*charts[:-1])

    return WidthAware(build)


# describe_run's field lines: two spaces, the name in ten cells, a space, then the value.
_VALUE_COLUMN = 13


def _hanging(line: str, width: int) -> str:
    """One line of describe_run wrapped to ``width``, its continuation under its value (a field's, or the text
    after its own indent), never at the left edge under the field names."""
    indent = len(line) - len(line.lstrip(" "))
    if indent == 2 and len(line) > _VALUE_COLUMN and line[_VALUE_COLUMN - 1] == " " and line[_VALUE_COLUMN] != " ":
        indent = _VALUE_COLUMN
    if len(line) <= width or width <= indent + 8:
        return line
    return "\n".join(textwrap.wrap(line, width, subsequent_indent=" " * indent, break_on_hyphens=False))


def run_detail(run: RunRecord, palette: Palette) -> RenderableType:
    """Everything stored about a run, as `mdtui results show` prints it, then its samples as charts."""
    text = describe_run(run, prediction_lines(run))
    described = WidthAware(lambda width: Text("\n".join(_hanging(line, width) for line in text.splitlines())))
    return Group(described, Text(""), samples_chart(run, palette))
