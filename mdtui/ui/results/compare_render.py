"""Turns comparisons and normalised sweeps into tables and bar charts: what changed between runs, each metric as
ratios to the baseline with bars; no widgets here."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from rich.columns import Columns
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from mdtui.store.cells import UNSTEADY_MARK, format_metric, format_ratio, format_setting, unit_text
from mdtui.store.compare import (
    Comparison,
    ConfigDifference,
    MetricRow,
    NormalisedTable,
    Verdict,
    in_time_order,
    time_roles,
)
from mdtui.store.describe import MISSING
from mdtui.store.records import MetricInfo, RunRecord, Steadiness
from mdtui.ui.common.render import Palette
from mdtui.ui.results.render import WidthAware, when_text

_EIGHTHS = " ▏▎▍▌▋▊▉"


BAR_MIN_WIDTH = 6


def bar_text(value: float | None, maximum: float, width: int, style: str = "") -> Text:
    """A horizontal bar ``value / maximum`` of ``width`` cells, in eighths of a cell."""
    if value is None or maximum <= 0 or width <= 0 or not math.isfinite(value):
        return Text(" " * max(width, 0))
    eighths = round(max(0.0, min(value / maximum, 1.0)) * width * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (_EIGHTHS[part] if part else "")
    return Text(bar.ljust(width), style=style)


class BarCell:
    """One bar that fills the width its table column is given, so a table of figures doubles as a chart."""

    def __init__(self, value: float | None, maximum: float, style: str = "") -> None:
        self.value = value
        self.maximum = maximum
        self.style = style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(BAR_MIN_WIDTH, options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield bar_text(self.value, self.maximum, options.max_width, self.style)


def _largest(values: Iterable[float | None]) -> float:
    return max((v for v in values if v is not None and math.isfinite(v)), default=0.0)


def verdict_style(verdict: Verdict, palette: Palette) -> str:
    if verdict is Verdict.BETTER:
        return f"bold {palette.good}"
    if verdict is Verdict.WORSE:
        return f"bold {palette.error}"
    return palette.muted if verdict is Verdict.UNKNOWN else ""


def _table(*, expand: bool = False, title: Text | None = None) -> Table:
    return Table(
        title=title,
        title_justify="left",
        box=None,
        padding=(0, 1),
        show_edge=False,
        header_style="bold",
        expand=expand,
    )


def _title_column(table: Table, header: str = "Run") -> None:
    table.add_column(header, no_wrap=True, overflow="ellipsis", max_width=20)


def setting_name(key: str) -> str:
    """A dotted setting as a table row names it: "array.chunk_bytes" → "chunk", "params.bs" → "bs"."""
    name = key.split(".", 1)[-1]
    return name.removesuffix("_bytes").replace("_", " ")


def shown_differences(differences: Sequence[ConfigDifference]) -> list[ConfigDifference]:
    """The differences worth a row on screen: member serials only when nothing else tells the runs apart.

    Serials differ whenever other disks were used, which the member count, models and links already
    say; when they are all that differs (a drive moved, finding 1 in docs/findings.md) they are the story.
    """
    others = [d for d in differences if d.key != "array.member_serials"]
    return others or list(differences)


def differences_table(differences: Sequence[ConfigDifference], runs: Sequence[RunRecord]) -> RenderableType:
    """What changed between the runs: one row per setting that differs, one column per run."""
    if not differences:
        return Text("No recorded setting differs between these runs.")
    shown = shown_differences(differences)
    names = [setting_name(d.key) for d in shown]
    values = [[format_setting(d.key, value) for value in d.values] for d in shown]

    def build(width: int) -> Table:
        # The setting's name is never cut; the runs share what is left, each cut with an ellipsis.
        name_width = max(len(name) for name in names)
        share = max(6, (width - name_width - 1) // len(runs) - 1)
        table = _table()
        table.add_column("Setting", no_wrap=True, style="bold", min_width=name_width)
        for run in runs:
            title = Text(run.title, no_wrap=True, overflow="ellipsis")
            table.add_column(title, no_wrap=True, overflow="ellipsis", max_width=min(share, 24))
        for name, row in zip(names, values, strict=True):
            table.add_row(name, *row)
        return table

    return WidthAware(build)


# How format_metric scales each unit, and the decimals it prints.
_SCALE = {"bytes/s": (1e6, 1), "IOPS": (1.0, 0), "ns": (1e3, 1)}


MORE_DIGITS = 3


def distinct_figures(metric: MetricInfo, values: Sequence[float | None]) -> list[str]:
    """The figures as format_metric prints them, with more decimals while two that differ would print alike.

    0.80 against 0.83 is a 1.04× change; printed as 0.8 and 0.8 the ratio would contradict its figures.
    """
    scale, decimals = _SCALE.get(metric.unit, (1.0, 1))
    known = [v for v in values if v is not None and math.isfinite(v)]
    for extra in range(MORE_DIGITS + 1):
        places = decimals + extra
        printed = {f"{v / scale:,.{places}f}" for v in known}
        if len(printed) == len(set(known)):
            break
    return [MISSING if v is None else f"{v / scale:,.{places}f}" if extra else format_metric(metric, v) for v in values]


def ratio_text(ratio: float | None, verdict: Verdict) -> str:
    """The ratio with its verdict; inside the tolerance it says so, as no change is claimed there."""
    text = format_ratio(ratio, verdict)
    return f"{text} within noise" if verdict is Verdict.SAME else text


def metric_table(comparison: Comparison, row: MetricRow, palette: Palette, *, chart: bool = False) -> Table:
    """One metric: each run's figure and its ratio to the baseline, coloured by the metric's direction.

    With ``chart`` the table gets a bar per run and takes the full width: the compared metric's chart.
    """
    base = comparison.baseline
    direction = "higher is better" if row.metric.higher_is_better else "lower is better"
    title = Text.assemble((row.metric.label, "bold"), (f"  {direction}", "dim"))
    table = _table(expand=chart, title=title)
    _title_column(table)
    table.add_column(unit_text(row.metric), justify="right", no_wrap=True)
    table.add_column(f"vs #{base.id}", justify="right", no_wrap=True)
    largest = _largest((row.baseline, *row.values))
    if chart:
        table.add_column("", ratio=1, no_wrap=True)
    base_figure, *figures = distinct_figures(row.metric, (row.baseline, *row.values))
    cells: list[RenderableType] = [base.title, base_figure, Text("baseline", style="dim")]
    table.add_row(*cells, *([BarCell(row.baseline, largest, palette.muted)] if chart else []))
    for run, value, printed, ratio, verdict in zip(
        comparison.candidates, row.values, figures, row.ratios, row.verdicts, strict=True
    ):
        style = verdict_style(verdict, palette)
        figure = Text(printed, style=style)
        shown = ratio_text(ratio, verdict)
        if shown != "-" and Steadiness.NOT_REACHED in (base.steadiness, run.steadiness):
            shown += f" {UNSTEADY_MARK}"
        cells = [run.title, figure, Text(shown, style=style)]
        table.add_row(*cells, *([BarCell(value, largest, style)] if chart else []))
    return table


def runs_renderable(comparison: Comparison, palette: Palette, *, baseline_chosen: bool = False) -> RenderableType:
    """Which run is before and which after, oldest first, and which is the baseline (chosen with b, or the
    oldest by default): a ratio is only read right knowing which way round it is."""
    roles = dict(
        zip((run.id for run in comparison.runs), time_roles(comparison.baseline, comparison.candidates), strict=True)
    )
    table = _table()
    table.add_column("", no_wrap=True)
    _title_column(table)
    table.add_column("", no_wrap=True)
    table.add_column("", overflow="fold")
    table.show_header = False
    base = comparison.baseline
    for run in in_time_order(comparison.runs):
        role = roles[run.id]
        if run is base:
            why = "chosen with b" if baseline_chosen else "the oldest"
            note = Text.assemble(("baseline", "bold"), f" ({why})")
            shown = Text(role if role != "between" else "baseline", style="bold")
        else:
            note = Text("")
            shown = Text(role)
        table.add_row(shown, Text(run.title, style="bold" if run is base else ""), when_text(run.started_at), note)
    return table


def comparison_renderable(
    comparison: Comparison, metric_index: int, palette: Palette, *, baseline_chosen: bool = False
) -> RenderableType:
    """Which run is before and after, what changed, the compared metric as a table with bars, then a table per
    other metric."""
    base = comparison.baseline
    tolerance = f"{comparison.tolerance * 100:g}%"
    parts: list[RenderableType] = [
        runs_renderable(comparison, palette, baseline_chosen=baseline_chosen),
        Text(f"ratio = run ÷ baseline; within ±{tolerance} is noise, not a change", style=palette.muted),
        Text(""),
        Text("What changed", style="bold underline"),
        differences_table(comparison.differences, comparison.runs),
        Text(""),
    ]
    if not comparison.rows:
        parts.append(Text("None of these runs measured anything to compare.", style=palette.warning))
        return Group(*parts)
    index = metric_index % len(comparison.rows)
    chosen = comparison.rows[index]
    parts += [
        Text(f"Metric {index + 1} of {len(comparison.rows)} (m: next)", style="dim"),
        metric_table(comparison, chosen, palette, chart=True),
    ]
    unsteady = [run.title for run in comparison.runs if run.steadiness is Steadiness.NOT_REACHED]
    # Said only when a ratio shown carries the mark (an unsteady write beside a read has no ratio to mark).
    marked = any(
        format_ratio(ratio, verdict) != "-" and Steadiness.NOT_REACHED in (base.steadiness, run.steadiness)
        for row in comparison.rows
        for run, ratio, verdict in zip(comparison.candidates, row.ratios, row.verdicts, strict=True)
    )
    if marked:
        parts.append(
            Text(
                f"{UNSTEADY_MARK} involves a figure still moving when its step hit the time ceiling "
                f"({', '.join(unsteady)} not steady): not a ratio of sustained figures.",
                style=palette.warning,
            )
        )
    others = [metric_table(comparison, row, palette) for row in comparison.rows if row is not chosen]
    if others:
        parts += [Text(""), Columns(others, padding=(1, 3))]
    return Group(*parts)


def normalised_renderable(table: NormalisedTable, palette: Palette) -> RenderableType:
    """Finding 5's view (docs/findings.md): each run ÷ (device speed × data disks), bars on a scale with 1.00."""
    metric: MetricInfo = table.metric
    speed = f"{format_metric(metric, table.device_speed)} {unit_text(metric)}"
    source = f" (run {table.device_run.title})" if table.device_run else ""
    intro = Text.assemble(
        ("Normalised ", "bold"),
        f"{metric.label} ÷ (device {speed}{source} × data disks); 1.00 = every data disk at the device's speed",
    )
    # 1.00 stays on the scale: bars are read against "every disk at full speed", not only the best run.
    scale = max(1.0, _largest(row.normalised for row in table.rows))
    titles = [row.run.title for row in table.rows]
    figures = [
        [
            f"{row.data_disks:g}",
            format_metric(metric, row.value),
            MISSING if row.normalised is None else f"{row.normalised:.2f}",
        ]
        for row in table.rows
    ]
    settings = [
        (setting_name(d.key), [format_setting(d.key, value) for value in d.values])
        for d in shown_differences(table.differences)
    ]
    headers = ["Data disks", unit_text(metric), "Norm."]

    def build(width: int) -> Table:
        # Run, figures and a bar come first; settings that tell the rows apart get what room is left.
        def need(header: str, cells: Sequence[str], limit: int = 99) -> int:
            return min(limit, max(len(header), *(len(cell) for cell in cells))) + 2  # with its padding

        used = need("", titles, 20) + sum(need(h, [f[i] for f in figures]) for i, h in enumerate(headers))
        used += BAR_MIN_WIDTH + 2
        grid = _table(expand=True)
        _title_column(grid)
        for name, cells in settings:
            cost = need(name, cells, 16)
            if used + cost > width:
                break
            used += cost
            grid.add_column(name, no_wrap=True, overflow="ellipsis", max_width=16)
        columns = len(grid.columns) - 1
        for header in headers:
            grid.add_column(header, justify="right", no_wrap=True)
        grid.add_column(f"0 … {scale:.2f}", ratio=1, no_wrap=True)
        for position, row in enumerate(table.rows):
            values = [cells[position] for _, cells in settings[:columns]]
            grid.add_row(titles[position], *values, *figures[position], BarCell(row.normalised, scale, palette.good))
        return grid

    return Group(intro, Text(""), WidthAware(build))
