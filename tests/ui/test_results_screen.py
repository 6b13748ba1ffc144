"""Pilot tests of the results history and compare screens against a real database filled through the store."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, RadioButton, Static

from mdtui.store.cells import format_ratio
from mdtui.store.compare import compare, normalise
from mdtui.store.errors import UnknownRunError
from mdtui.store.export import export_comparison, export_normalised, export_runs
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore
from mdtui.ui.app import MdtuiApp
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.inventory.screen import InventoryScreen
from mdtui.ui.results import base as results_base
from mdtui.ui.results.compare import CompareScreen
from mdtui.ui.results.dialogs import DevicePickerScreen, ExportScreen, TextPromptScreen
from mdtui.ui.results.screen import ResultsScreen
from mdtui.ui.results.widgets import HistoryTable

from .conftest import THEME_DIRS, TREE_ROOT, plain, settle
from .results_data import CONTEXT, FINDING_5, START, fill, utc_clock


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    with utc_clock():
        yield


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Exports go to $XDG_DATA_HOME/mdtui/exports, never the current directory: both are the test's own.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "results.db"


def exports(tmp_path: Path) -> Path:
    return tmp_path / "mdtui" / "exports"


@pytest.fixture
def ids(db: Path) -> dict[str, int]:
    return fill(db)


def make_app(db: Path) -> MdtuiApp:
    return MdtuiApp(str(TREE_ROOT), privileged=True, theme_dirs=THEME_DIRS, db_path=db)


async def open_history(pilot: Pilot[None]) -> ResultsScreen:
    await settle(pilot)
    await pilot.press("h")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ResultsScreen)
    return screen


def history(app: MdtuiApp) -> HistoryTable:
    return app.screen.query_one("#history", HistoryTable)


def shown_ids(app: MdtuiApp) -> list[int]:
    table = history(app)
    return [int(str(table.coordinate_to_cell_key((row, 0)).row_key.value)) for row in range(table.row_count)]


def row_text(app: MdtuiApp, run_id: int) -> str:
    return " ".join(cell.plain for cell in history(app).get_row(str(run_id)))


def static_text(app: MdtuiApp, selector: str) -> str:
    return plain(app.screen.query_one(selector, Static).content)


async def select(pilot: Pilot[None], run_id: int) -> None:
    """Move the cursor to ``run_id`` with the arrow keys, as a user would."""
    table = history(pilot.app)  # type: ignore[arg-type]
    target = shown_ids(pilot.app).index(run_id)  # type: ignore[arg-type]
    step = "down" if target > table.cursor_row else "up"
    await pilot.press(*[step] * abs(target - table.cursor_row))
    assert table.selected_id == run_id


async def mark(pilot: Pilot[None], *run_ids: int, baseline: int) -> None:
    for run_id in run_ids:
        await select(pilot, run_id)
        await pilot.press("b" if run_id == baseline else "space")


def stored(db: Path) -> ResultsStore:
    return ResultsStore(db, create=False)


# -- history ------------------------------------------------------------------------------------


async def test_history_lists_every_run_newest_first(db: Path, ids: dict[str, int]) -> None:
    with stored(db) as store:
        expected = store.list_runs()
    app = make_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await open_history(pilot)
        assert shown_ids(app) == [run.id for run in expected]
        crashed = row_text(app, ids["crashed"])
        assert "interrupted" in crashed and "weakest_link" in crashed
        assert "raid5 512K" in row_text(app, ids["raid5 512K"])
        assert "4,211.0" in row_text(app, ids["raid0 x4"])
        assert "12 runs" in static_text(app, "#results-status")
        assert app.screen.sub_title.endswith("results.db")  # relative to the current directory


async def test_80_columns_keep_the_essentials_and_the_detail_line_has_the_rest(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        table = history(app)
        shown = [str(column.key.value) for column in table.columns.values()]
        # When and Preset stay; the status is a sign and the geometry moves to the line under the table.
        assert {"id", "when", "state", "preset", "target", "rw", "label"} <= set(shown)
        assert sum(column.get_render_width(table) for column in table.columns.values()) <= 80
        await select(pilot, ids["raid0 x4"])
        detail = static_text(app, "#results-detail")
        assert "2024-05-02 09:07" in detail and "disk_mark" in detail and "bs=1M" in detail
        assert "complete" in detail and "/dev/md0 raid0 256K" in detail
        assert "✓" in row_text(app, ids["raid0 x4"]) and "!" in row_text(app, ids["crashed"])
        assert "W 4,211.0" in row_text(app, ids["raid0 x4"])


async def test_filter_narrows_as_you_type(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await open_history(pilot)
        await pilot.press("slash")
        assert app.screen.query_one("#results-filter", Input).has_focus
        await pilot.press(*"raid5")
        raid5 = {ids["raid5 x4"], ids["raid5 4K"], ids["raid5 512K"], ids["raid5 2M"]}
        assert set(shown_ids(app)) == raid5
        assert "4 of 12 runs" in static_text(app, "#results-status")
        await pilot.press(" ", *"target:md1")
        assert set(shown_ids(app)) == {ids["raid5 4K"], ids["raid5 512K"], ids["raid5 2M"]}
        app.screen.query_one("#results-filter", Input).value = "status:interrupted"
        await pilot.pause()
        assert shown_ids(app) == [ids["crashed"]]
        app.screen.query_one("#results-filter", Input).value = "preset:offset"
        await pilot.pause()
        assert set(shown_ids(app)) == {ids["raw hdd"], ids["raid5 4K"], ids["raid5 512K"], ids["raid5 2M"]}
        await pilot.press("escape")  # clears the filter and goes back to the table, does not leave the screen
        assert history(app).has_focus and isinstance(app.screen, ResultsScreen)
        assert app.screen.query_one("#results-filter", Input).value == ""
        assert len(shown_ids(app)) == 12


async def test_escape_clears_an_active_filter_before_it_leaves(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_history(pilot)
        await pilot.press("slash", *"raid5", "enter")  # Enter keeps the filter and returns to the table
        assert history(app).has_focus and len(shown_ids(app)) == 4
        await pilot.press("escape")
        assert app.screen is screen, "Esc with a filter active must clear it, not leave"
        assert app.screen.query_one("#results-filter", Input).value == ""
        assert len(shown_ids(app)) == 12
        assert any("Filter cleared" in str(n.message) for n in app._notifications)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ResultsScreen)


async def test_labels_cut_to_a_narrow_column_stay_apart(db: Path, ids: dict[str, int]) -> None:
    # Issue 44: at 80 columns the 8-cell Label column cropped "numjobs 1" and "numjobs 2" to the same "numjobs ".
    with ResultsStore(db) as store:
        made = [
            store.add_run(
                RunSetup("custom", {"rw": "randread", "numjobs": jobs}, "/dev/md0", {}, dict(CONTEXT), label=label),
                status=RunStatus.COMPLETE,
                started_at=START,
                ended_at=START,
                metrics=Metrics(read_bw_bytes_per_s=jobs * 1e8),
            )
            for jobs, label in ((1, "numjobs 1"), (2, "numjobs 2"))
        ]
    app = make_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        table = history(app)
        label = [str(key.value) for key in table.columns].index("label")
        width = table.ordered_columns[label].width
        assert width < len("numjobs 1"), "the column is narrower than the labels: this is what the test is about"
        # What is drawn: the cell as the column crops it.
        drawn = [plain(table.get_row(str(run_id))[label]).rstrip("\n")[:width] for run_id in made]
        assert drawn[0] != drawn[1], drawn
        assert drawn[0].startswith("…") and drawn[0].endswith(" 1") and drawn[1].endswith(" 2"), drawn


async def test_a_filter_that_matches_nothing_says_so(db: Path, ids: dict[str, int]) -> None:
    # Issue 44: an empty table and "0 of 12 runs" were all a filter matching nothing showed.
    app = make_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        await pilot.press("slash", *"nvme9")
        await pilot.pause()
        assert shown_ids(app) == []
        assert "no run of 12 matches the filter" in static_text(app, "#results-status")
        detail = static_text(app, "#results-detail")
        assert "No run matches “nvme9”." in detail and "Esc clears the filter" in detail
        await pilot.press("escape")  # the filter line: clear it
        await pilot.pause()
        assert len(shown_ids(app)) == 12 and "No run matches" not in static_text(app, "#results-detail")


async def test_enter_shows_everything_stored_about_a_run(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_history(pilot)
        await select(pilot, ids["raid10 x4"])
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        text = plain(app.screen.query_one("#detail-full-body", Static).content)
        assert "Run #5 raid10 x4" in text and "layout near=2" in text and "S003" in text
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, InventoryScreen)


# -- mark, baseline, compare --------------------------------------------------------------------


async def test_marks_and_baseline_show_in_the_table_and_status(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_history(pilot)
        await mark(pilot, ids["raid0 x4"], ids["single SAS SSD"], baseline=ids["single SAS SSD"])
        assert screen.marked == [ids["raid0 x4"], ids["single SAS SSD"]]
        assert screen.baseline == ids["single SAS SSD"]
        assert row_text(app, ids["raid0 x4"]).startswith("●")
        assert row_text(app, ids["single SAS SSD"]).startswith("B")
        status = static_text(app, "#results-status")
        assert f"baseline #{ids['single SAS SSD']}" in status and "c compares" in status
        # Space on the baseline unmarks it, and it is no longer the baseline.
        await select(pilot, ids["single SAS SSD"])
        await pilot.press("space")
        assert screen.marked == [ids["raid0 x4"]] and screen.baseline is None


async def test_compare_needs_two_marked_runs(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        assert any("Mark at least two runs" in n.message for n in app._notifications)


async def test_compare_shows_what_changed_above_the_core_ratios(db: Path, ids: dict[str, int]) -> None:
    single, raid0, raid5 = ids["single SAS SSD"], ids["raid0 x4"], ids["raid5 x4"]
    with stored(db) as store:
        expected = compare(store.get_run(single), store.get_runs([raid0, raid5]))
    app = make_app(db)
    async with app.run_test(size=(160, 60)) as pilot:
        await open_history(pilot)
        await mark(pilot, raid5, raid0, single, baseline=single)
        await pilot.press("c")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        text = static_text(app, "#compare-content")
        assert text.index("What changed") < text.index("level") < text.index("Write MB/s")
        for row in expected.rows:
            for ratio, verdict in zip(row.ratios, row.verdicts, strict=True):
                assert format_ratio(ratio, verdict) in text
        # Finding 4 (docs/findings.md): RAID0 wrote 4211 MB/s against 1123 for one disk, RAID5 985.
        assert "3.75× better" in text and "0.88× worse" in text
        assert "raid0" in text and "raid5" in text and "/dev/sdb" in text
        assert screen.sub_title.endswith("Write MB/s")
        await pilot.press("m")
        assert screen.sub_title.endswith(expected.rows[1].metric.label)
        await pilot.press("M")
        assert screen.sub_title.endswith("Write MB/s")
        await pilot.press("escape")
        assert isinstance(app.screen, ResultsScreen)


async def test_marked_from_the_top_the_older_run_is_before_and_the_baseline(db: Path, ids: dict[str, int]) -> None:
    # Issue 44: Space marks and moves down a list that is newest first, so the first run marked was the newest,
    # and it became the baseline: the older run (one disk) read as the change ("0.27× worse"), before as after.
    single, raid0 = ids["single SAS SSD"], ids["raid0 x4"]  # made in that order
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_history(pilot)
        await select(pilot, raid0)
        await pilot.press("space", "space")  # raid0, then the run under it: the older single disk
        assert screen.marked == [raid0, single]
        assert screen.baseline_id() == single
        assert row_text(app, single).startswith("B") and row_text(app, raid0).startswith("●")
        assert f"baseline #{single} (oldest)" in static_text(app, "#results-status")
        await pilot.press("c")
        await settle(pilot)
        compared = app.screen
        assert isinstance(compared, CompareScreen) and compared.baseline_id == single
        text = static_text(app, "#compare-content")
        lines = [line.split() for line in text.splitlines()[:2]]
        assert lines[0][0] == "before" and f"#{single}" in lines[0] and "baseline" in lines[0]
        assert lines[1][0] == "after" and f"#{raid0}" in lines[1]
        assert "baseline (the oldest)" in text
        assert "3.75× better" in text  # RAID0 after one disk: the change made it faster
        await pilot.press("escape")
        # b makes the newer run the baseline: said so, and the older run is the one "before" it.
        await select(pilot, raid0)
        await pilot.press("b", "c")
        await settle(pilot)
        text = static_text(app, "#compare-content")
        lines = [line.split() for line in text.splitlines()[:2]]
        assert lines[0][0] == "before" and f"#{single}" in lines[0] and "baseline" not in lines[0]
        assert lines[1][0] == "after" and f"#{raid0}" in lines[1] and "baseline (chosen with b)" in text
        assert "0.27× worse" in text


async def test_normalised_view_divides_by_the_picked_device_run_and_data_disks(db: Path, ids: dict[str, int]) -> None:
    sweep = [ids["raid5 4K"], ids["raid5 512K"], ids["raid5 2M"]]
    with stored(db) as store:
        expected = normalise(store.get_runs(sweep), store.get_run(ids["raw hdd"]))
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await mark(pilot, *sweep, baseline=sweep[0])
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("v")  # no device run yet: asks for one
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, DevicePickerScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, CompareScreen) and not app.screen.normalised
        await pilot.press("v")
        await pilot.pause()
        # Runs on a raw device come first, so the raw HDD is the suggestion.
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.normalised
        assert screen.device_run is not None and screen.device_run.id == ids["raw hdd"]
        text = static_text(app, "#compare-content")
        assert "Normalised" in text and "209.7 MB/s" in text
        for row, (_chunk, fraction) in zip(expected.rows, FINDING_5, strict=True):
            assert row.normalised is not None
            assert f"{row.normalised:.2f}" == f"{fraction:.2f}"
            assert f"{row.normalised:.2f}" in text
        assert "Data disks" in text
        # e exports what is shown: the normalised table, as the core writes it.
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        written = exports(Path.cwd()) / f"mdtui-normalised-{'-'.join(map(str, sorted(sweep)))}.md"
        assert written.read_text() == export_normalised(expected, "md")
        await pilot.press("v")
        assert not screen.normalised and "What changed" in static_text(app, "#compare-content")


# -- edits --------------------------------------------------------------------------------------


async def test_label_and_note_edits_persist_in_the_database(db: Path, ids: dict[str, int]) -> None:
    run_id = ids["fio-randrw"]
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await select(pilot, run_id)
        await pilot.press("l")
        assert isinstance(app.screen, TextPromptScreen)
        await pilot.press(*"pc randrw", "enter")
        await settle(pilot)
        await pilot.press("n")
        await pilot.press(*"loop file", "enter")
        await settle(pilot)
        with stored(db) as store:
            run = store.get_run(run_id)
        assert (run.label, run.note) == ("pc randrw", "loop file")
        assert "pc randrw" in row_text(app, run_id) or "… randrw" in row_text(app, run_id)  # cut to its column
        assert "loop file" in static_text(app, "#results-detail")
        # Escape leaves the label as it was.
        await pilot.press("l", "x", "escape")
        await settle(pilot)
        with stored(db) as store:
            assert store.get_run(run_id).label == "pc randrw"


async def test_a_label_edit_leaves_every_column_at_its_width(db: Path, ids: dict[str, int]) -> None:
    # Issue 44: after h, l, Ctrl+U, x, Enter the table showed When as "11-2" and MB/s as "R 4,". The reload
    # refilled the table and a line was drawn before DataTable measured the new rows once idle; the measure
    # left the table as wide as before, so nothing drew it again. Each column now has its width when added.
    app = make_app(db)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await open_history(pilot)
        table = history(app)
        settled = table.column_widths()
        await pilot.press("l", "ctrl+u", "x", "enter")
        await settle(pilot)
        assert "x" in row_text(app, shown_ids(app)[0])
        assert table.column_widths() == settled
        # What a line drawn before the table is idle sees: the widths it will keep, not the headings'.
        table.show(screen.shown_runs(), screen.marked, screen.baseline, screen.palette())
        assert table.column_widths() == settled
        when = list(table.columns).index(next(key for key in table.columns if key.value == "when"))
        assert table.ordered_columns[when].get_render_width(table) >= len("2024-05-02 09:07")


async def test_a_locked_database_is_a_message_not_a_traceback(
    db: Path, ids: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results_base, "BUSY_TIMEOUT_S", 0.2)
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            await pilot.press("l", *"changed", "enter")
            await settle(pilot)
            banner = app.screen.query_one(".results-banner", Static)
            assert banner.has_class("-shown")
            assert "locked by another process" in plain(banner.content)
            assert "Press r to retry" in plain(banner.content)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        await pilot.press("r")
        await settle(pilot)
        assert not app.screen.query_one(".results-banner", Static).has_class("-shown")


# -- export -------------------------------------------------------------------------------------


async def test_export_of_marked_runs_writes_the_core_markdown(db: Path, ids: dict[str, int], tmp_path: Path) -> None:
    chosen = [ids["single SAS SSD"], ids["raid0 x4"]]
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await mark(pilot, *chosen, baseline=chosen[0])
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        written = exports(tmp_path) / f"mdtui-runs-{chosen[0]}-{chosen[1]}.md"
        assert dialog.query_one("#export-path", Input).value == str(written)
        await pilot.press("enter")
        await settle(pilot)
        assert not (tmp_path / written.name).exists()
        with stored(db) as store:
            assert written.read_text() == export_runs(store.get_runs(sorted(chosen)), "md")
        assert str(written) in static_text(app, "#results-status")
        assert any(str(written) in n.message for n in app._notifications)
        # A second export to the same file asks before replacing it.
        written.write_text("keep me")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert "exists" in plain(app.screen.query_one("#export-note", Static).content)
        assert written.read_text() == "keep me"
        await pilot.press("enter")
        await settle(pilot)
        assert written.read_text().startswith("| Run")


async def test_export_format_follows_the_choice(db: Path, ids: dict[str, int], tmp_path: Path) -> None:
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        app.screen.query_one("#results-filter", Input).value = "target:md1"
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        json_button = next(b for b in dialog.query(RadioButton) if b.name == "json")
        json_button.value = True
        await pilot.pause()
        path_input = dialog.query_one("#export-path", Input)
        assert path_input.value.endswith(".json")
        path_input.focus()
        await pilot.press("enter")
        await settle(pilot)
        sweep = sorted([ids["raid5 4K"], ids["raid5 512K"], ids["raid5 2M"]])
        written = exports(tmp_path) / f"mdtui-runs-{'-'.join(map(str, sweep))}.json"
        assert '"format": "mdtui-results"' in written.read_text()


async def test_export_of_a_comparison(db: Path, ids: dict[str, int], tmp_path: Path) -> None:
    single, raid10 = ids["single SAS SSD"], ids["raid10 x4"]
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await mark(pilot, raid10, single, baseline=single)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        written = exports(tmp_path) / f"mdtui-compare-{single}-vs-{raid10}.md"
        with stored(db) as store:
            assert written.read_text() == export_comparison(
                compare(store.get_run(single), [store.get_run(raid10)]), "md"
            )
        assert "1.47× better" in written.read_text()


async def test_export_to_a_missing_directory_is_refused_in_the_dialog(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = "no/such/dir/out.md"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        # The note wraps the (long, temporary) path to the dialog's width: read it as words.
        assert "does not exist" in " ".join(plain(app.screen.query_one("#export-note", Static).content).split())


# -- delete -------------------------------------------------------------------------------------


async def test_delete_asks_first_and_deletes_only_when_confirmed(db: Path, ids: dict[str, int]) -> None:
    run_id = ids["raid6 x4"]
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        await select(pilot, run_id)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "raid6 x4" in plain(app.screen.query_one("#confirm-text", Static).content)
        await pilot.press("escape")
        await settle(pilot)
        with stored(db) as store:
            assert store.get_run(run_id).label == "raid6 x4"
        await pilot.press("d")
        await pilot.pause()
        await pilot.press(*f"#{run_id}", "enter")
        await settle(pilot)
        with stored(db) as store, pytest.raises(UnknownRunError):
            store.get_run(run_id)
        assert run_id not in shown_ids(app) and len(shown_ids(app)) == 11
        assert any(f"Run #{run_id} deleted" in n.message for n in app._notifications)


async def test_deleting_a_run_keeps_the_other_marks(db: Path, ids: dict[str, int]) -> None:
    # Issue 44: deleting one run cleared every mark.
    single, raid0, raid6 = ids["single SAS SSD"], ids["raid0 x4"], ids["raid6 x4"]
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_history(pilot)
        await mark(pilot, raid0, single, baseline=single)
        await select(pilot, raid6)
        await pilot.press("space")
        assert sorted(screen.marked) == sorted([raid0, single, raid6])
        await select(pilot, raid6)  # space moved on
        await pilot.press("d")
        await pilot.pause()
        await pilot.press(*f"#{raid6}", "enter")
        await settle(pilot)
        assert raid6 not in shown_ids(app)
        assert sorted(screen.marked) == sorted([raid0, single]) and screen.baseline == single
        assert row_text(app, raid0).startswith("●") and row_text(app, single).startswith("B")
        assert f"marked #{single} #{raid0}" in static_text(app, "#results-status")


# -- the database itself ------------------------------------------------------------------------


async def test_a_corrupt_database_shows_a_clear_message_and_is_left_alone(db: Path) -> None:
    content = os.urandom(4096)
    db.write_bytes(content)
    app = make_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_history(pilot)
        banner = screen.query_one(".results-banner", Static)
        assert banner.has_class("-shown")
        text = " ".join(plain(banner.content).split())
        assert "is not an SQLite database" in text and "--db. Press r to retry." in text
        assert "cannot read" in screen.sub_title
        assert history(app).row_count == 0
    assert db.read_bytes() == content


async def test_no_database_yet_says_so_and_creates_nothing(db: Path) -> None:
    app = make_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        assert "No runs yet" in static_text(app, "#results-status")
        assert "mdtui results import" in static_text(app, "#results-status")
    assert not db.exists()


def test_the_app_finds_the_database_as_the_cli_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "from-env.db"))
    assert MdtuiApp(str(TREE_ROOT)).db_path == tmp_path / "from-env.db"
    assert MdtuiApp(str(TREE_ROOT), db_path=tmp_path / "given.db").db_path == tmp_path / "given.db"
    monkeypatch.delenv("MDTUI_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert MdtuiApp(str(TREE_ROOT)).db_path == tmp_path / "xdg" / "mdtui" / "results.db"


async def test_a_run_finished_while_the_screen_is_open_appears_on_reload(db: Path, ids: dict[str, int]) -> None:
    app = make_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_history(pilot)
        with stored(db) as store:
            new = store.add_run(
                RunSetup("custom", {"rw": "randread"}, "/dev/md9", {}, dict(CONTEXT), label="added later"),
                status=RunStatus.CANCELLED,
                started_at=START,
                ended_at=None,
                metrics=Metrics(read_iops=1000.0),
            )
        assert new not in shown_ids(app)
        await pilot.press("r")
        await settle(pilot)
        assert new in shown_ids(app) and "cancelled" in row_text(app, new)
