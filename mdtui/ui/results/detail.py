"""A stored run as a person reads it: what `mdtui results show` prints (store.describe), and a chart of its
samples."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from mdtui.bench.predicted import prediction_lines
from mdtui.format import duration, plural
from mdtui.store.describe import describe_run
from mdtui.store.export import format_metric
from mdtui.store.records import METRICS_BY_NAME, RunRecord, SamplePoint
from mdtui.ui.common.render import Palette
from mdtui.ui.results.render import WidthAware

# Sampled series the chart draws, in this order, when a run has them (the store's metric names).
CHARTED = ("read_bw_bytes_per_s", "write_bw_bytes_per_s", "read_iops", "write_iops")
CHART_ROWS = 4
_LEVELS = " ▁▂▃▄▅▆▇█"


def _binned(samples: Sequence[SamplePoint], name: str, columns: int) -> tuple[list[float | None], float]:
    """The series ``name`` averaged into ``columns`` equal slices of the run's time, and the last sample's time."""
    points = [(p.t_s, v) for p in samples if isinstance(v := p.values.get(name), (int, float)) and math.isfinite(v)]
    end = max((t for t, _ in points), default=0.0)
    sums = [0.0] * columns
    counts = [0] * columns
    for t_s, value in points:
        index = min(columns - 1, int(t_s / end * columns)) if end > 0 else 0
        sums[index] += value
        counts[index] += 1
    binned: list[float | None] = []
    for index in range(columns):
        if counts[index]:
            binned.append(sums[index] / counts[index])
        else:
            # Fewer samples than columns: a slice between two samples holds the earlier one's figure.
            binned.append(binned[-1] if binned else None)
    return binned, end


def series_chart(samples: Sequence[SamplePoint], name: str, width: int, style: str) -> Text:
    """One sampled series as CHART_ROWS rows of eighth-blocks, its top figure and unit on the axis, time below."""
    metric = METRICS_BY_NAME[name]
    axis = 10
    columns = max(8, width - axis - 1)
    values, end = _binned(samples, name, columns)
    top = max((v for v in values if v is not None), default=0.0)
    text = Text()
    text.append(f"{metric.label}", style="bold")
    text.append(f" over the step's time, {plural(len(samples), 'sample')}\n", style="dim")
    for row in range(CHART_ROWS, 0, -1):
        label = format_metric(metric, top) if row == CHART_ROWS else ("0" if row == 1 else "")
        text.append(f"{label:>{axis}}│")
        cells = []
        for value in values:
            if value is None or top <= 0:
                cells.append(" ")
                continue
            eighths = round(value / top * CHART_ROWS * 8) - (row - 1) * 8
            cells.append(_LEVELS[max(0, min(8, eighths))])
        text.append("".join(cells), style=style)
        text.append("\n")
    right = f"{duration(end)}"
    text.append(f"{'':>{axis}}└{'0 s'.ljust(columns - len(right))}{right}")
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


def run_detail(run: RunRecord, palette: Palette) -> RenderableType:
    """Everything stored about a run, as `mdtui results show` prints it, then its samples as charts."""
    return Group(Text(describe_run(run, prediction_lines(run))), Text(""), samples_chart(run, palette))
