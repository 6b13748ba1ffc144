"""The results screens as a user reads them: which step a run was, a file target's name, the run detail in words
with its samples charted, and comparisons whose figures show the change their ratio claims."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import DataTable, Input, RadioSet, Static
from textual.widgets.data_table import ColumnKey

from mdtui.store.records import Metrics, RunRecord, RunSetup, RunStatus, SamplePoint
from mdtui.store.runs import ResultsStore
from mdtui.ui.common.render import Palette
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.results.compare import CompareScreen
from mdtui.ui.results.detail import run_detail
from mdtui.ui.results.dialogs import ExportScreen
from mdtui.ui.results.render import shorten_middle

from .conftest import plain, settle
from .results_data import CONTEXT, START, utc_clock
from .test_results_screen import history, make_app, mark, open_history, row_text, select, static_text

# A disk-mark preset of five steps on a loop device backed by a file, as `mdtui bench` records it
# (params from execute.record.step_params plus the session's step_index, steps and quick).
FILE_TARGET = "/var/tmp/mdtui-bench-loops/target.bin"
STEPS = ("seq read 1M", "seq write 1M", "rand read 4K QD32", "rand write 4K QD32", "rand read 4K QD1")
# The disk-mark preset's ten step titles (execute.presets.DISK_MARK_TESTS, each read then write).
DISK_MARK_STEPS = tuple(
    f"{test} {direction}"
    for test in ("SEQ1MQ8T8", "SEQ1MQ8T1", "RND4KQ32T8", "RND4KQ32T1", "RND4KQ1T1")
    for direction in ("read", "write")
)
MEMBER_MATRIX_STEPS = (
    "sequential read SEQ1MQ8T8",
    "sequential write SEQ1MQ8T8",
    "random read RND4KQ32T8",
    "random write RND4KQ32T8",
    "Q1 read latency RND4KQ1T1",
)
LOOP_DEVICE = {"name": "loop1", "transport": "loop", "size_bytes": 1024**3, "rotational": False}


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    with utc_clock():
        yield


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "results.db"
    moment = START
    with ResultsStore(path) as store:
        for index, step in enumerate(STEPS, start=1):
            params = {"rw": "read", "bs": "1M", "step": step, "step_index": index, "steps": len(STEPS), "quick": True}
            context = {**CONTEXT, "devices": [LOOP_DEVICE]}
            samples = [SamplePoint(t, {"read_bw_bytes_per_s": (100 + 10 * t) * 1e6}) for t in range(1, 11)]
            store.add_run(
                RunSetup("disk_mark", params, FILE_TARGET, {}, context),
                status=RunStatus.COMPLETE,
                started_at=moment,
                ended_at=moment + timedelta(seconds=10),
                # CPU figures a sub-percent apart: 0.80 % and 0.83 % (the report's "0.8 vs 0.8, 1.04× worse").
                metrics=Metrics(read_bw_bytes_per_s=(200 + index) * 1e6, cpu_sys_pct=0.80 + 0.03 * (index - 1)),
                samples=samples,
            )
            moment += timedelta(minutes=1)
    return path


def test_shorten_middle_keeps_the_start_and_the_file_name() -> None:
    assert shorten_middle(FILE_TARGET, 100) == FILE_TARGET
    assert shorten_middle(FILE_TARGET, 20) == "/var/tmp…/target.bin"
    assert len(shorten_middle(FILE_TARGET, 20)) == 20
    assert shorten_middle("/dev/disk/by-id/a-very-long-name-of-a-disk", 12) == "…e-of-a-disk"
    assert shorten_middle("/dev/md0", 8) == "/dev/md0"


def assert_fits_80_with_the_step(table: DataTable[Any]) -> None:
    """The history table at 80 columns: when, preset, step, target and direction shown, all within the width."""
    shown = [str(column.key.value) for column in table.columns.values()]
    assert {"when", "preset", "step", "target", "rw"} <= set(shown)
    assert sum(column.get_render_width(table) for column in table.columns.values()) <= 80


async def test_80_columns_show_when_preset_and_step_and_the_file_name(db: Path) -> None:
    app = make_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        table = history(app)
        assert_fits_80_with_the_step(table)
        rows = [row_text(app, run_id) for run_id in range(1, 6)]
        # Each step tells itself apart; the same preset on the same target no longer reads alike.
        # Cut to the column with an ellipsis, the step's number first (all of it is in the line under the table).
        assert len(set(rows)) == 5 and "2/5 seq…" in rows[1]
        assert all("target.bin" in row and "/var" in row for row in rows)
        await select(pilot, 3)
        detail = static_text(app, "#results-detail")
        assert "complete" in detail and "step 3/5 rand read 4K QD32" in detail and FILE_TARGET in detail
        assert "quick" in detail and "True" not in detail and "step_index" not in detail


async def test_80_columns_keep_the_step_of_labelled_array_runs(tmp_path: Path) -> None:
    # A disk-mark session of ten steps on a RAID5 md0 after a member-matrix on one of its disks, labelled as
    # `mdtui bench` labels them by default ("<preset> <target>"): the table dropped Step, the column that tells
    # the rows apart, to keep the label, which says again what Preset and Target say.
    path = tmp_path / "results.db"
    array = {"level": "raid5", "raid_disks": 4, "chunk_bytes": 512 * 1024}
    moment = START
    sessions = (
        ("member-matrix", "/dev/sdb", {}, MEMBER_MATRIX_STEPS),
        ("disk-mark", "/dev/md0", array, DISK_MARK_STEPS),
    )
    with ResultsStore(path) as store:
        for preset, target, geometry, steps in sessions:
            for index, step in enumerate(steps, start=1):
                params = {"step": step, "step_index": index, "steps": len(steps)}
                store.add_run(
                    RunSetup(preset, params, target, geometry, dict(CONTEXT), label=f"{preset} {target}"),
                    status=RunStatus.COMPLETE,
                    started_at=moment,
                    ended_at=moment + timedelta(seconds=20),
                    metrics=Metrics(read_bw_bytes_per_s=1234.5e6),
                )
                moment += timedelta(seconds=25)
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        table = history(app)
        assert_fits_80_with_the_step(table)
        # The step reads as which test it was ("10/10 RND4KQ1T1", not "10/10 RN").
        assert table.columns[ColumnKey("step")].get_render_width(table) - 2 >= len("10/10 RND4KQ1T1")
        # The label left out is in the line under the table for the highlighted run.
        await select(pilot, 15)
        assert "#15 disk-mark /dev/md0" in static_text(app, "#results-detail")


async def test_a_wide_terminal_shows_the_whole_file_path(db: Path) -> None:
    app = make_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        await open_history(pilot)
        assert FILE_TARGET in row_text(app, 1)
        assert "complete" in row_text(app, 1)  # the status in words where there is room


async def test_run_detail_reads_as_words_and_charts_its_samples(db: Path) -> None:
    app = make_app(db)
    async with app.run_test(size=(100, 50)) as pilot:
        await open_history(pilot)
        await select(pilot, 2)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        text = " ".join(plain(app.screen.query_one("#detail-full-body", Static).content, width=96).split(" "))
        text = re.sub(r"\n +", " ", text)  # a long field wraps under its value
        assert "{'" not in text and "[{" not in text and "True" not in text and "False" not in text
        assert "devices loop1 (loop, 1.0 GiB, SSD)" in text and "quick=yes" in text
        # The stored samples, 110 to 200 MB/s over 10 s, drawn as the live dashboard draws its lines (one
        # renderer, ui.watch.chart): round y ticks in the label's unit, a time axis from 0s to the step's end.
        assert "Read MB/s over" in text and "step=2/5 seq write 1M" in text and "200┤" in text
        assert "└┬" in text and "0s" in text and "10s" in text
        assert any("\u2801" <= char <= "\u28ff" for char in text)  # braille dots


def test_a_long_field_of_the_run_detail_wraps_under_its_value() -> None:
    # A RAID5's Array field is longer than an 80-column dialog: it wrapped to the dialog's left edge, under
    # the field names, where "left-symmetric, members 4" read as a field of its own.
    array = {"level": "raid5", "raid_disks": 4, "chunk_bytes": 512 * 1024, "layout": "left-symmetric"}
    array["members"] = [{"name": f"sd{c}", "model": "KPM5XRUG1T92", "serial": f"S{c}"} for c in "bcde"]
    run = RunRecord(
        id=25,
        status=RunStatus.COMPLETE,
        started_at=START,
        ended_at=START + timedelta(seconds=20),
        preset="disk-mark",
        params={},
        target="/dev/md0",
        array=array,
        context={},
        metrics=Metrics(),
        label="disk-mark md0",
    )
    console = Console(width=76, color_system=None, record=True)
    console.print(run_detail(run, Palette()))
    lines = console.export_text().splitlines()
    field = next(i for i, line in enumerate(lines) if line.startswith("  Array "))
    assert "left-symmetric" not in lines[field]  # it does wrap at this width
    assert lines[field + 1].startswith(" " * 13) and "members 4" in lines[field + 1]
    assert all(len(line) <= 76 for line in lines)


async def test_compare_prints_enough_digits_for_its_ratio_and_names_noise(db: Path) -> None:
    app = make_app(db)
    async with app.run_test(size=(160, 60)) as pilot:
        await open_history(pilot)
        await mark(pilot, 2, 1, baseline=1)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        for _ in range(6):  # to the CPU sys % table, drawn as the chosen metric
            if app.screen.sub_title.endswith("CPU sys %"):
                break
            await pilot.press("m")
        text = static_text(app, "#compare-content")
        assert "0.80" in text and "0.83" in text and "1.04× worse" in text
        # 201 against 202 MB/s is half a percent: inside the band, said as noise rather than as a change.
        assert "1.00× within noise" in text


# -- export -------------------------------------------------------------------------------------


async def test_enter_on_the_format_exports_to_the_shown_full_path_and_never_follows_a_link(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    exports = tmp_path / "data" / "mdtui" / "exports"
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        written = exports / "mdtui-runs-1-to-5.md"
        assert dialog.query_one("#export-path", Input).value == str(written)
        assert f"writes {written}" in plain(dialog.query_one("#export-note", Static).content)
        # The format choice has focus: Enter there exports, as the dialog's border says.
        dialog.query_one("#export-format", RadioSet).focus()
        await pilot.press("right", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, ExportScreen), plain(app.screen.query_one("#export-note", Static).content)
        assert not app.screen.error
        assert sorted(p.name for p in exports.iterdir()) == ["mdtui-runs-1-to-5.csv"]
        csv = exports / "mdtui-runs-1-to-5.csv"
        assert csv.read_text().startswith("id,") or "," in csv.read_text().splitlines()[0]
        assert not list(Path.cwd().glob("mdtui-runs-*"))  # nothing landed in the current directory
        # A link where the file goes is replaced, never followed: what it points at is left alone.
        victim = tmp_path / "victim.txt"
        victim.write_text("keep me")
        csv.unlink()
        csv.symlink_to(victim)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-format", RadioSet).focus()
        await pilot.press("right", "enter")
        await pilot.pause()
        await pilot.press("enter")  # the file exists: a second Enter replaces it
        await settle(pilot)
        assert victim.read_text() == "keep me"
        assert not isinstance(app.screen, ExportScreen), plain(app.screen.query_one("#export-note", Static).content)
        assert not app.screen.error, app.screen.error
        assert not csv.is_symlink() and csv.read_text() != "keep me"
