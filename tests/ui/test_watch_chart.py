"""The watch dashboard's braille charts (mdtui.ui.watch.chart) and its line-API widgets, cell by cell."""

from __future__ import annotations

import math
import random
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.color import Color

from mdtui.ui.watch.chart import (
    BRAILLE_BLANK,
    Canvas,
    draw,
    nice_ticks,
    plain,
    plot,
    tick_label,
    time_label,
    x_ticks,
)
from mdtui.ui.watch.screen import WatchScreen
from mdtui.ui.watch.widgets import RateChart, TextLines, _changed_cells, text_rows

from .test_watch_screen import feed, watch_app
from .watch_tree import WatchTree


def braille(*dots: tuple[int, int]) -> str:
    """The braille character with these (column 0-1, row 0-3) dots, built from Unicode's own dot numbering."""
    numbers = {(0, 0): 1, (0, 1): 2, (0, 2): 3, (1, 0): 4, (1, 1): 5, (1, 2): 6, (0, 3): 7, (1, 3): 8}
    return chr(BRAILLE_BLANK + sum(1 << (numbers[dot] - 1) for dot in dots))


def canvas_text(canvas: Canvas) -> list[str]:
    return ["".join(text for text, _ in canvas.row(y)) for y in range(canvas.height)]


# -- the canvas -------------------------------------------------------------------------------------


def test_a_flat_line_on_the_bottom_dot_row() -> None:
    canvas = Canvas(2, 1)
    canvas.trace([(0, 3), (1, 3), (2, 3), (3, 3)], 0)
    assert canvas_text(canvas) == [braille((0, 3), (1, 3)) * 2]
    assert canvas.row(0) == [("⣀⣀", 0)]


def test_a_rising_line_is_one_dot_per_column_and_unbroken_when_steep() -> None:
    canvas = Canvas(2, 1)
    canvas.trace([(0, 3), (3, 0)], 0)  # one row per column
    assert canvas_text(canvas) == [braille((0, 3), (1, 2)) + braille((0, 1), (1, 0))]
    steep = Canvas(1, 2)
    steep.trace([(0, 7), (1, 0)], 0)  # seven rows in one column step: the second column fills them all
    assert canvas_text(steep) == [braille((1, 0), (1, 1), (1, 2), (1, 3)), braille((0, 3), (1, 0), (1, 1), (1, 2))]


def test_a_gap_breaks_the_line_and_dots_off_the_canvas_are_dropped() -> None:
    canvas = Canvas(3, 1)
    canvas.trace([(0, 0), (1, 0), None, (4, 0), (5, 0), (9, 0), (5, -7)], 1)
    # Nothing joins x=1 to x=4; the line towards x=9 stops at the edge, the one to y=-7 at the top.
    assert canvas_text(canvas) == [braille((0, 0), (1, 0)) + " " + braille((0, 0), (1, 0))]
    assert canvas.row(0) == [(canvas_text(canvas)[0], 1)]  # the space between goes with the series' run


def test_where_lines_cross_the_later_one_colours_the_cell() -> None:
    canvas = Canvas(1, 1)
    canvas.trace([(0, 0), (1, 0)], 0)
    canvas.trace([(0, 3), (1, 3)], 1)
    assert canvas.row(0) == [(braille((0, 0), (1, 0), (0, 3), (1, 3)), 1)]


# -- the whole chart --------------------------------------------------------------------------------


def test_chart_rows_have_the_exact_width_at_every_size() -> None:
    ages = [float(age) for age in range(-60, 1)]
    values = [float(abs(age)) for age in ages]
    for width, height in ((80, 10), (200, 40), (30, 4), (12, 3), (5, 2), (1, 1)):
        rows = draw(ages, [values], width, height, 120.0, max(values))
        assert len(rows) == height, (width, height)
        assert all(len(line) == width for line in plain(rows)), (width, height, plain(rows))
    assert draw(ages, [values], 0, 10, 120.0, 60.0) == []


def test_a_known_series_lands_on_its_ticks() -> None:
    # 6 plot rows (24 dots): ticks 0..30 by 10 (a tick every other row at most), 30 on dot row 0, 20 on
    # dot row 8 (cell row 2), 10 on 15 (3), 0 on 23 (5); 10 s of data over a 10 s window on 21 columns.
    ages = [float(age) for age in range(-10, 1)]
    rows = plain(draw(ages, [[30.0] * 11], 24, 8, 10.0, 30.0))
    assert [line[:3] for line in rows[:6]] == ["30┤", "  │", "20┤", "10┤", "  │", " 0┤"]
    assert rows[0][3:] == "⠉" * 21  # the top value on the top dot row, from the first column to the last
    assert rows[6] == "  └┬" + "─" * 19 + "┬"
    assert rows[7].split() == ["-10s", "now"]
    zero = plain(draw(ages, [[0.0] * 11], 24, 8, 10.0, 30.0))
    assert zero[5][3:] == "⣀" * 21  # zero on the bottom dot row
    between = plain(draw(ages, [[25.0] * 11], 24, 8, 10.0, 30.0))  # dot row 23 - round(25/30*23) = 4
    assert between[1][3:] == "⠉" * 21 and between[0][3:] == " " * 21


def test_only_the_window_is_drawn_and_the_newest_point_reaches_now() -> None:
    rows = plain(draw([-200.0, -1.0, 0.0], [[5.0, 5.0, 5.0]], 43, 5, 120.0, 5.0))
    plot = [line[2:] for line in rows[:3]]  # after "5┤"
    assert plot[0].rstrip().endswith("⠉") and len(plot[0].rstrip()) == len(plot[0])
    assert plot[0].lstrip().startswith("⠉")  # the line from -200 s enters at the left edge
    assert all(cell == "⠉" for cell in plot[0])


def test_unknown_values_leave_gaps_not_zeros() -> None:
    ages = [-3.0, -2.0, -1.0, 0.0]
    for unknown in (None, math.nan, math.inf, -math.inf):
        rows = draw(ages, [[4.0, unknown, unknown, 4.0]], 12, 6, 3.0, 4.0)
        dots = "".join(plain(rows[:4]))
        bottom = plain(rows)[3]
        assert "⣀" not in bottom and "⡀" not in bottom, unknown  # nothing drawn at zero
        assert sum(1 for cell in dots if cell != " " and ord(cell) >= BRAILLE_BLANK) == 2, (unknown, plain(rows))


def test_single_point_empty_and_constant_series() -> None:
    single = plain(draw([0.0], [[2.0]], 20, 6, 120.0, 2.0))
    assert sum(ord(cell) >= BRAILLE_BLANK for line in single for cell in line) == 1
    assert single[0][-1] != " "  # now: the last column
    empty = plain(draw([], [], 20, 6, 120.0, 0.0))
    assert not any(ord(cell) >= BRAILLE_BLANK for line in empty for cell in line)
    assert empty[0].startswith("1┤") and empty[3].startswith("0┤")  # an axis from 0 to 1 all the same
    flat = draw([-2.0, -1.0, 0.0], [[7.0, 7.0, 7.0]], 20, 10, 120.0, 7.0)
    drawn = [y for y, row in enumerate(flat) if any(key == 0 for _, key in row)]
    assert len(drawn) == 1  # one row, a flat line


def test_huge_values_and_values_above_the_top() -> None:
    rows = plain(draw([-1.0, 0.0], [[4e15, 4e15]], 30, 6, 120.0, 4e15))
    assert rows[0].startswith("4e+15┤")
    over = plain(draw([-1.0, 0.0], [[10.0, 1e300]], 30, 6, 1.0, 10.0))
    assert over[0] == "10┤" + "⠉" * 27  # clamped to the top dot row, not lost
    assert nice_ticks(math.inf, 5) == [0.0, 1.0] and nice_ticks(0.0, 5) == [0.0, 1.0]


def test_labels() -> None:
    assert [tick_label(v) for v in (0, 0.05, 0.15000000000000002, 750, 1500, 8000, 12000, 999_999, 2.5e9)] == [
        "0",
        "0.05",
        "0.15",
        "750",
        "1.5k",
        "8k",
        "12k",
        "1M",
        "2.5G",
    ]
    assert [time_label(s) for s in (0, 30, 600, 7200)] == ["now", "-30s", "-10m", "-2h"]
    assert x_ticks(120.0, 73) == [-120.0, -90.0, -60.0, -30.0, 0.0]
    assert x_ticks(120.0, 20) == [-120.0, 0.0]


def test_a_resize_redraws_at_the_new_size() -> None:
    ages = [float(age) for age in range(-120, 1)]
    values = [float(age % 7) for age in range(121)]
    narrow, wide = draw(ages, [values], 40, 8, 120.0, 6.0), draw(ages, [values], 120, 20, 120.0, 6.0)
    assert {len(line) for line in plain(narrow)} == {40} and {len(line) for line in plain(wide)} == {120}
    assert len(wide) == 20 and plain(wide)[-1].split()[0] == "-120s"


# -- the widgets ------------------------------------------------------------------------------------


def test_text_rows_split_spans_by_line() -> None:
    text = Text("ab\ncd\nef", style="dim")
    text.stylize("bold", 1, 4)  # b, the newline, c
    assert text_rows(text) == [("ab", ((1, 2, "bold"),), "dim"), ("cd", ((0, 1, "bold"),), "dim"), ("ef", (), "dim")]


def test_a_changed_row_repaints_from_its_first_changed_cell_to_its_last() -> None:
    region = _changed_cells(3, ("nvme0n1    100   0.2", ""), ("nvme0n1     99   0.2", ""))
    assert (region.x, region.y, region.width, region.height) == (11, 3, 3, 1)  # "100" -> " 99"
    shorter = _changed_cells(0, ("busy 100%", ""), ("busy 9%", ""))
    assert (shorter.x, shorter.width) == (5, 4)  # to the end of the longer text: the old cells are cleared
    recoloured = _changed_cells(0, ("⠉⠉⠉⠉", "AAAA"), ("⠉⠉⠉⠉", "AABA"))
    assert (recoloured.x, recoloured.width) == (2, 1)  # same dots, another series' colour


class Panes(App[None]):
    def compose(self) -> ComposeResult:
        yield TextLines(wrap=False, id="table")
        yield TextLines(id="wrapped")


async def test_text_lines_repaint_only_changed_lines_and_style_like_rich() -> None:
    app = Panes()
    async with app.run_test(size=(20, 10)) as pilot:
        table = app.query_one("#table", TextLines)
        table.update(Text("one\ntwo\nthree"))
        await pilot.pause()
        first = [table.render_line(y) for y in range(3)]
        table.update(Text.assemble("one\n", ("TWO", "bold red"), "\nthree"))
        second = [table.render_line(y) for y in range(3)]
        assert second[0] is first[0] and second[2] is first[2]  # kept, not made again
        assert second[1] is not first[1]
        styled = [segment for segment in second[1] if segment.text == "TWO"]
        assert styled and styled[0].style is not None and styled[0].style.bold
        assert styled[0].style.color is not None and styled[0].style.color.name == "red"
        # Long lines: cut with an ellipsis, or wrapped (taller), as the pane was made.
        table.update(Text("x" * 30))
        assert table.lines == ["x" * 19 + "…"]
        wrapped = app.query_one("#wrapped", TextLines)
        wrapped.update(Text("word " * 8))
        await pilot.pause()
        assert len(wrapped.lines) == 2 and wrapped.size.height == 2
        # A style on the whole text (a failure message) shows even without spans.
        table.update(Text("failed", style="red"))
        segment = next(iter(table.render_line(0)))
        assert segment.style is not None and segment.style.color is not None and segment.style.color.name == "red"


async def test_chart_lines_follow_the_theme(tmp_path: Path) -> None:
    async with watch_app().run_test(size=(160, 48)) as pilot:
        screen = await feed(pilot, WatchTree(tmp_path), ticks=5)
        assert isinstance(screen, WatchScreen)
        chart = screen.query_one("#rate-chart", RateChart)

        def read_colour() -> Style:
            for y, row in enumerate(chart.rows):
                for x, (_, key) in enumerate(row):
                    if key == 0:
                        segments = list(chart.render_line(y))
                        assert segments[x].style is not None
                        return segments[x].style
            raise AssertionError("no read line drawn")

        def primary() -> tuple[int, int, int]:
            return Color.parse(pilot.app.theme_variables["primary"]).rgb

        before = read_colour()
        assert before.color is not None and before.color.triplet == primary()
        pilot.app.theme = "mdtui-light"
        await pilot.pause()
        await pilot.pause()
        after = read_colour()
        assert after.color is not None and after.color.triplet == primary() and after != before
        assert after.bgcolor != before.bgcolor  # the background too, not only the line


def test_plot_draws_any_series_inside_its_canvas() -> None:
    """Gaps, NaN, infinities, negative, huge, out-of-order and repeated times: plot() draws inside the
    canvas without raising, only in the series' colour, and a series with no finite point draws nothing."""
    rng = random.Random(17)
    specials = (None, math.nan, math.inf, -math.inf, -5.0, 1e300, 0.0)
    for case in range(300):
        width, height = rng.randint(1, 90), rng.randint(1, 30)
        window = rng.choice((10.0, 60.0, 120.0, 7.3))
        count = rng.randint(0, 160)
        ages = sorted(rng.uniform(-1.5 * window, 0.0) for _ in range(count))
        if case % 5 == 0:  # ticks a second apart with jitter, as the sampler makes them
            ages = [-(count - 1 - index) + rng.uniform(-0.01, 0.01) for index in range(count)]
        if case % 7 == 0 and count > 3:  # out of order and repeated times too
            ages[1], ages[2] = ages[2], ages[1]
            ages[3] = ages[2]
        top = rng.choice((1.0, 37.5, 1e6))
        values = [
            rng.choice(specials) if rng.random() < 0.1 else rng.uniform(-0.1 * top, 1.3 * top) for _ in range(count)
        ]
        canvas = Canvas(width, height)
        plot(canvas, ages, values, window, top, case % 3)
        assert len(canvas.bits) == len(canvas.owner) == width * height, case
        assert all(0 <= bits <= 0xFF for bits in canvas.bits), case
        assert {owner for owner, bits in zip(canvas.owner, canvas.bits, strict=True) if bits} <= {case % 3}, case
        drawable = any(
            value is not None and math.isfinite(value) and math.isfinite(age) and -window <= age <= 0
            for age, value in zip(ages, values, strict=True)
        )
        assert any(canvas.bits) == drawable, case


def test_the_second_series_is_dashed_so_lines_differ_without_colour() -> None:
    # Read at the top, write at the bottom, both flat over the whole window: read solid, write in dashes.
    ages = [float(age) for age in range(-30, 1)]
    rows = draw(ages, ([10.0] * len(ages), [0.0] * len(ages)), 40, 8, 30.0, 10.0)
    read_row = next(row for row in rows if any(key == 0 for _, key in row))
    write_row = next(row for row in rows if any(key == 1 for _, key in row))
    read_cells = "".join(text for text, key in read_row if key == 0).rstrip()
    write_cells = "".join(text for text, key in write_row if key == 1).rstrip()
    assert " " not in read_cells.strip()
    assert "  " in write_cells.strip()  # gaps of two cells between dashes
    # A write spike is never dropped into a gap: a column where the line moves is always drawn.
    spike = [0.0] * len(ages)
    for index in range(len(ages)):
        spiked = spike.copy()
        spiked[index] = 10.0
        canvas = Canvas(36, 2)
        plot(canvas, ages, spiked, 30.0, 10.0, 1, dashed=True)
        assert canvas.row(0) != [(" " * 36, None)], index
