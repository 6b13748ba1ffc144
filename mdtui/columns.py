"""Plain-text tables the CLI prints, fitted to a width as `ls` and `ps` fit the terminal: columns that matter
least are left out first, flexible ones are cut with an ellipsis, and nothing is fitted when there is no width
(a pipe, `--wide`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

ELLIPSIS = "…"
GAP = 2  # spaces between columns


def cut_end(text: str, width: int) -> str:
    """``text`` in ``width`` characters, its end replaced by an ellipsis when cut."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + ELLIPSIS if width > 0 else ""


def cut_start(text: str, width: int) -> str:
    """``text`` in ``width`` characters keeping its end, where runs' labels and devices' names differ."""
    if len(text) <= width:
        return text
    return ELLIPSIS + text[len(text) - width + 1 :] if width > 1 else ELLIPSIS[:width]


@dataclass(frozen=True)
class Column:
    """One column: its title and cells; ``right`` aligned or not; ``drop`` is its place in the order columns are
    left out in (lower first; None: always shown); ``least`` makes it flexible: cut (by ``cut``) down to that
    width first; ``short`` are shorter cells, used where cutting is not enough, before any column is left out
    (a link's short form, a date without its year)."""

    title: str
    cells: Sequence[str]
    right: bool = False
    drop: int | None = None
    least: int | None = None
    cut: Callable[[str, int], str] = cut_end
    short: Sequence[str] | None = field(default=None)


@dataclass(frozen=True)
class Fitted:
    lines: list[str]
    left_out: list[str]  # titles of the columns not shown
    cut: bool  # a cell was cut or shortened
    overflow: bool = False  # even so, a line was cut at the width


def _need(title: str, cells: Sequence[str]) -> int:
    return max([len(title), *(len(cell) for cell in cells)])


def fit_columns(columns: Sequence[Column], width: int | None) -> Fitted:
    """The table as lines no longer than ``width`` (None: as wide as its cells)."""
    shown = list(columns)
    short = {id(column): False for column in columns}
    left_out: list[str] = []
    widths: dict[int, int] = {}
    while True:
        widths = {id(c): _need(c.title, c.short if short[id(c)] and c.short else c.cells) for c in shown}
        if width is None:
            break
        total = sum(widths.values()) + GAP * (len(shown) - 1)
        if total <= width:
            break
        # The flexible columns cut down to their least; else a column's shorter cells (a link's "Gen1 x4", a
        # state's first reason), one column at a time; else a column left out; and again with what that freed.
        flexible = [c for c in shown if c.least is not None]
        over = total - width
        for column in reversed(flexible):  # the last flexible column gives first
            give = min(over, widths[id(column)] - max(column.least or 0, len(column.title)))
            if give > 0:
                widths[id(column)] -= give
                over -= give
        if over <= 0:
            break
        longer = [c for c in shown if c.short is not None and not short[id(c)]]
        if longer:
            short[id(longer[0])] = True
            continue
        droppable = sorted((c for c in shown if c.drop is not None), key=lambda c: c.drop or 0)
        if not droppable:
            break  # as narrow as it goes: lines are cut at the width below
        shown.remove(droppable[0])
        left_out.append(droppable[0].title)
    was_cut = any(short.values())
    overflow = False
    rows = max((len(c.cells) for c in columns), default=0)
    lines = []
    for row in range(-1, rows):
        parts = []
        for column in shown:
            column_width = widths[id(column)]
            if row < 0:
                text = column.title
            else:
                cells = column.short if short[id(column)] and column.short else column.cells
                text = cells[row]
            if len(text) > column_width:
                text = column.cut(text, column_width)
                was_cut = was_cut or row >= 0
            parts.append(text.rjust(column_width) if column.right else text.ljust(column_width))
        line = (" " * GAP).join(parts).rstrip()
        if width is not None and len(line) > width:
            line = cut_end(line, width)
            overflow = True
        lines.append(line)
    return Fitted(lines, left_out, was_cut or overflow, overflow)


def fit_layouts(layouts: Sequence[Sequence[Column]], width: int | None) -> Fitted:
    """The first of ``layouts`` (widest first) that fits ``width``, else the last; ``left_out`` names the first
    layout's columns the one chosen does not show."""
    chosen = fit_columns(layouts[0], width)
    if width is not None:
        for columns in layouts:
            chosen = fit_columns(columns, width)
            if not chosen.overflow and not chosen.left_out:
                break
        titles = {column.title for column in columns}
        left = [column.title for column in layouts[0] if column.title not in titles]
        chosen = Fitted(chosen.lines, left + chosen.left_out, chosen.cut or bool(left), chosen.overflow)
    return chosen


def fitted_note(width: int | None) -> str:
    """The line under a table that was fitted: what was done, and how to see it all."""
    return f"(fitted to {width} columns: --wide shows every column whole)"
