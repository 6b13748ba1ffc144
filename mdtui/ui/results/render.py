"""Turns stored runs into the history table's cells and summaries, and the history's filter; comparisons and
normalised sweeps are drawn by ui/results/compare_render. No widgets here."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text

from mdtui.format import duration
from mdtui.store.cells import UNSTEADY_MARK, format_metric, read_write_text, steady_words, total_iops
from mdtui.store.describe import MISSING, step_text
from mdtui.store.records import METRICS_BY_NAME, RunRecord, RunStatus, Steadiness
from mdtui.ui.common.render import Palette

MARKED = "●"
BASELINE = "B"

# -- history table -----------------------------------------------------------------------------

HISTORY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("mark", " "),
    ("id", "ID"),
    ("when", "When"),
    ("status", "Status"),
    ("state", "St"),  # the status as one sign, for narrow terminals
    ("preset", "Preset"),
    ("step", "Step"),
    ("target", "Target"),
    ("geometry", "Level/chunk"),
    ("read", "Read MB/s"),
    ("write", "Write MB/s"),
    ("iops", "IOPS"),
    ("rw", "MB/s"),  # read and write in one column, for narrow terminals
    ("label", "Label"),
)
RIGHT_ALIGNED = frozenset({"id", "read", "write", "iops", "rw"})
_ALL = ("mark", "id", "when", "status", "preset", "step", "target", "geometry", "read", "write", "iops", "label")
_NARROW = ("mark", "id", "when", "state", "preset", "step", "target", "geometry", "rw", "label")
# The label goes before the step where runs have steps: bench labels every step "<preset> <target>" unless told
# otherwise, which Preset and Target already say, while the step is what tells a preset's rows apart. The
# highlighted run's label stays in the line under the table (its title). Without steps, the label stays.
STEP_OVER_LABEL = tuple(key for key in _NARROW if key not in ("geometry", "label"))
# Layouts from widest to narrowest, each with whether the year is dropped: the table shows the first
# that fits. What a narrow layout leaves out is in the line under the table for the highlighted run.
# When and Preset stay longest: which run is which is read from them; the status shrinks to a sign first.
HISTORY_LAYOUTS: tuple[tuple[bool, tuple[str, ...]], ...] = (
    (False, _ALL),
    (True, _ALL),
    (True, tuple(key for key in _ALL if key != "iops")),
    (True, ("mark", "id", "when", "status", "preset", "step", "target", "geometry", "rw", "label")),
    (True, _NARROW),
    (True, tuple(key for key in _NARROW if key != "geometry")),
    (True, STEP_OVER_LABEL),
    (True, tuple(key for key in _NARROW if key not in ("geometry", "step"))),
    (True, ("mark", "id", "state", "target", "rw", "label")),
)
# Columns that take what the others leave, in the order they get it, each never narrower than its minimum;
# a narrower target is shortened in the middle (shorten_middle), the others end in an ellipsis.
FLEX_COLUMNS: tuple[tuple[str, int], ...] = (("target", 10), ("step", 8), ("label", 8))


def chunk_text(chunk_bytes: object) -> str:
    """mdadm's spelling of a chunk: 4K, 512K, 2M."""
    if not isinstance(chunk_bytes, (int, float)) or isinstance(chunk_bytes, bool) or chunk_bytes <= 0:
        return ""
    kib = int(chunk_bytes) // 1024
    return f"{kib // 1024}M" if kib >= 1024 and kib % 1024 == 0 else f"{kib}K"


def geometry_text(run: RunRecord) -> str:
    """ "raid5 512K", "raid1", or "-" for a run on a raw device or a file."""
    level = str(run.array.get("level") or "")
    chunk = chunk_text(run.array.get("chunk_bytes"))
    text = " ".join(part for part in (level, chunk) if part)
    return text or MISSING


def when_text(moment: datetime, short: bool = False) -> str:
    """Local time, as the CLI's list shows it; ``short`` drops the year for narrow terminals."""
    return moment.astimezone().strftime("%m-%d %H:%M" if short else "%Y-%m-%d %H:%M")


def shorten_middle(text: str, width: int) -> str:
    """``text`` in ``width`` cells, cut in the middle so a path keeps its start and its file name.

    "/var/lib/mdtui/loops/target.bin" in 20 cells is "/var/…/target.bin"; a name longer than the width
    keeps its end, where devices and files differ.
    """
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    _head, sep, name = text.rpartition("/")
    keep = width - 1  # cells left beside the ellipsis
    if sep and len(name) + 1 < keep:
        start = keep - len(name) - 1
        return text[:start] + "…/" + name
    return "…" + text[-keep:]


# Parameters a run records about its place in a preset, shown as the step column, not as fio options.
_STEP_PARAMS = frozenset({"step", "step_index", "steps", "quick"})


def params_text(run: RunRecord) -> str:
    """fio options as key=value, nested job lists left to the detail view; a quick run says "quick"."""
    options = [
        f"{key}={value}"
        for key, value in run.params.items()
        if key not in _STEP_PARAMS and not isinstance(value, (list, dict))
    ]
    if run.params.get("quick") is True:
        options.append("quick")
    return " ".join(options)


def run_summary(run: RunRecord, palette: Palette) -> Text:
    """Two lines about the highlighted run: what the narrow table leaves out, then its note, error or options."""
    step = step_text(run)
    geometry = geometry_text(run)
    # Right after the title: a narrow terminal cuts the rest, and this changes what every figure means.
    unsteady = run.steadiness is Steadiness.NOT_REACHED
    text = Text.assemble(
        (run.title, "bold"),
        (f"  {UNSTEADY_MARK} not steady: {steady_words(run)}" if unsteady else "", f"bold {palette.warning}"),
        "  ",
        (run.status.value, status_style(run.status, palette)),
        f" · {when_text(run.started_at)}",
        f" ({duration(run.duration_s)})" if run.duration_s is not None else "",
        f" · {run.preset}",
        f" · step {step}" if step != MISSING else "",
        f" · {run.target}" if run.target else "",
        f" {geometry}" if geometry != MISSING else "",
    )
    text.append("\n")
    # Two lines fit under the table: the note or error when there is one, else the options.
    if run.error:
        text.append(run.error, style=palette.error)
    elif run.note:
        text.append(run.note, style=palette.muted)
    else:
        text.append(params_text(run) or "no options recorded", style=palette.muted)
        text.append(" · no note (n adds one)", style=palette.muted)
    return text


def status_style(status: RunStatus, palette: Palette) -> str:
    return {
        RunStatus.COMPLETE: palette.good,
        RunStatus.FAILED: palette.error,
        RunStatus.INTERRUPTED: palette.warning,
        RunStatus.RUNNING: f"bold {palette.warning}",
        RunStatus.CANCELLED: palette.muted,
    }[status]


def mark_cell(*, marked: bool, baseline: bool) -> Text:
    """B for the baseline, ● for another marked run."""
    return Text(BASELINE, style="bold reverse") if baseline else Text(MARKED if marked else " ", style="bold")


def history_cells(
    run: RunRecord, palette: Palette, *, marked: bool, baseline: bool, short_time: bool = False
) -> dict[str, Text]:
    """One history row, keyed by HISTORY_COLUMNS key."""
    bandwidth = METRICS_BY_NAME["read_bw_bytes_per_s"]
    iops = METRICS_BY_NAME["read_iops"]
    # A figure still moving at its step's ceiling is marked where it is shown; the summary line says why.
    unsteady = run.steadiness is Steadiness.NOT_REACHED

    def figure(text: str) -> Text:
        if unsteady and text != MISSING:
            return Text.assemble(text, (UNSTEADY_MARK, f"bold {palette.warning}"), justify="right")
        return Text(text, justify="right")

    return {
        "mark": mark_cell(marked=marked, baseline=baseline),
        "id": Text(str(run.id), justify="right"),
        "when": Text(when_text(run.started_at, short_time)),
        "status": Text(run.status.value, style=status_style(run.status, palette)),
        "state": Text(run.status.sign, style=status_style(run.status, palette), justify="center"),
        "preset": Text(run.preset),
        "step": Text(step_text(run)),
        "target": Text(run.target or MISSING),
        "geometry": Text(geometry_text(run)),
        "read": figure(format_metric(bandwidth, run.metrics.read_bw_bytes_per_s)),
        "write": figure(format_metric(bandwidth, run.metrics.write_bw_bytes_per_s)),
        "iops": figure(format_metric(iops, total_iops(run))),
        "rw": figure(read_write_text(run)),
        "label": Text(run.label, style="bold") if run.label else Text(""),
    }


# -- filtering ---------------------------------------------------------------------------------

FILTER_FIELDS = ("target", "preset", "step", "label", "status", "level")
# What a word without a field looks in: every text column of the table (the step too: "seq write" finds a preset's
# sequential-write steps).
FILTER_WORDS_IN = ("target", "preset", "step", "label")


@dataclass(frozen=True)
class RunFilter:
    """Words that must each appear in a run's target, preset, step or label; ``field:word`` looks in one field."""

    words: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.words and not self.fields


def parse_filter(text: str) -> RunFilter:
    words: list[str] = []
    fields: list[tuple[str, str]] = []
    for token in text.lower().split():
        name, sep, value = token.partition(":")
        if sep and name in FILTER_FIELDS:
            if value:
                fields.append((name, value))
        else:
            words.append(token)
    return RunFilter(tuple(words), tuple(fields))


def _field(run: RunRecord, name: str) -> str:
    if name == "level":
        return str(run.array.get("level") or "")
    if name == "status":
        return run.status.value
    if name == "step":
        return step_text(run)
    value: str = getattr(run, name)
    return value


def run_matches(run: RunRecord, run_filter: RunFilter) -> bool:
    """Case-insensitive substring match of every word and every field:word."""
    searched = " ".join(_field(run, name) for name in FILTER_WORDS_IN).lower()
    if any(word not in searched for word in run_filter.words):
        return False
    return all(value in _field(run, name).lower() for name, value in run_filter.fields)


def filter_runs(runs: Iterable[RunRecord], text: str) -> list[RunRecord]:
    run_filter = parse_filter(text)
    return [run for run in runs if run_filter.empty or run_matches(run, run_filter)]


# -- places ------------------------------------------------------------------------------------


def display_path(path: Path) -> str:
    """A path as short as it can be said: relative to the current directory, else from ~, else absolute."""
    absolute = Path(os.path.abspath(path))
    cwd = Path.cwd()
    # Relative to / says nothing shorter than the absolute path.
    if cwd != Path(cwd.anchor) and absolute.is_relative_to(cwd):
        return str(absolute.relative_to(cwd))
    home = Path.home()
    if absolute.is_relative_to(home) and home != Path(home.anchor):
        return "~/" + str(absolute.relative_to(home))
    return str(absolute)


# -- drawn to its width -----------------------------------------------------------------------


class WidthAware:
    """A renderable built for the width it is drawn at, so a table can choose its columns to fit."""

    def __init__(self, build: Callable[[int], RenderableType]) -> None:
        self.build = build

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(options.max_width)
