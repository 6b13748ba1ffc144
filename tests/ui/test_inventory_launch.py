"""What the inventory does for a quick first screen and smooth scrolling (issue 17), tested for what it shows."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey

from mdtui.model.inventory import Inventory
from mdtui.probe import inventory as core_inventory
from mdtui.probe.inventory import ScanAhead, scan_in_steps, screenful
from mdtui.ui.app import MdtuiApp
from mdtui.ui.common.render import Palette, disk_cells
from mdtui.ui.inventory.screen import InventoryScreen
from mdtui.ui.inventory.widgets import PENDING, DetailBody, DiskTable, Drawn, InventoryTable, SteadyFooter
from mdtui.ui.themes import DEFAULT_THEME, repo_themes_dir

from .conftest import THEME_DIRS, plain, settle

MakeApp = Callable[..., MdtuiApp]


def footer_keys(app: MdtuiApp) -> list[FooterKey]:
    return list(app.screen.query_one(SteadyFooter).query(FooterKey))


async def test_the_footer_keeps_its_keys_when_a_refresh_changes_nothing(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        keys = footer_keys(app)
        assert "Rescan" in [key.description for key in keys]
        assert "Tear down" not in [key.description for key in keys]
        for _ in range(3):
            app.screen.refresh_bindings()
            await pilot.pause()
        assert footer_keys(app) == keys, "the same keys were rebuilt"
        # Focus on the arrays pane offers the teardown: the footer is rebuilt and shows it.
        await pilot.press("tab")
        await pilot.pause()
        shown = [key.description for key in footer_keys(app)]
        assert "Tear down" in shown
        await pilot.press("shift+tab")
        await pilot.pause()
        assert "Tear down" not in [key.description for key in footer_keys(app)]


FIRST = 4  # disks in the first step of the controlled scans below


class SteppedScan:
    """The core's scan_in_steps with FIRST disks first, held after the first step until released."""

    def __init__(self, fail_after_first: bool = False) -> None:
        self.first_posted = threading.Event()
        self.release = threading.Event()
        self.fail_after_first = fail_after_first
        self.calls: list[int | None] = []

    def __call__(
        self, root: str, *, privileged: bool | None = None, first: int | None = None
    ) -> Iterator[tuple[Inventory, tuple[str, ...]]]:
        self.calls.append(first)
        for inventory, pending in scan_in_steps(root, privileged=privileged, first=FIRST):
            if not pending:
                assert self.release.wait(30), "the test never released the scan"
                if self.fail_after_first:
                    raise OSError(5, "Input/output error", "/sys/block/sdx/size")
            yield inventory, pending
            if pending:
                self.first_posted.set()


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    for _ in range(400):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("the screen never got there")


def cells(table: DiskTable, key: str) -> list[str]:
    return [cell.plain for cell in table.get_row(key)]


async def test_the_first_scan_shows_the_first_disks_then_fills_in_the_rest(
    make_app: MakeApp, tree_inventory: Inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    stepped = SteppedScan()
    monkeypatch.setattr(core_inventory, "scan_in_steps", stepped)
    names = [disk.name for disk in tree_inventory.disks]
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:  # wide enough for every cell in full
        table = app.screen.query_one("#disks", DiskTable)
        await wait_for(pilot, lambda: table.row_count == len(names))
        # Every disk has its row and the title counts them all; the first ones are complete, the rest wait.
        assert [table.get_row_at(index)[0].plain for index in range(table.row_count)] == names
        assert table.border_title == f"Disks ({len(names)})"
        assert cells(table, names[0]) == [cell.plain for cell in disk_cells(tree_inventory.disks[0], Palette())]
        assert cells(table, names[-1]) == [names[-1], *[PENDING] * (len(table.columns) - 1)]
        assert "scanning" in str(app.screen.sub_title)
        # Keys work meanwhile: the cursor goes down to a disk not probed yet, whose detail says so.
        await pilot.press(*["down"] * FIRST)
        assert table.selected_key == names[FIRST]
        assert "probing" in detail_text(app)
        # Creating an array waits for the whole scan.
        await pilot.press("c")
        assert isinstance(app.screen, InventoryScreen)
        assert any("Still probing" in str(n.message) for n in app._notifications)
        stepped.release.set()
        await settle(pilot)
        # The rest arrived: every row as a whole scan shows it, the cursor still on the same disk.
        for disk in tree_inventory.disks:
            assert cells(table, disk.name) == [cell.plain for cell in disk_cells(disk, Palette())]
        assert table.selected_key == names[FIRST]
        assert tree_inventory.disks[FIRST].dev_path in detail_text(app)
        assert "scanning" not in str(app.screen.sub_title)
        # A rescan replaces what is shown in one step: no rows go back to waiting.
        await pilot.press("r")
        await settle(pilot)
        assert stepped.calls == [screenful(50), None]
        assert PENDING not in cells(table, names[-1])


async def test_a_failure_after_the_first_step_is_a_message_and_r_scans_again(
    make_app: MakeApp, tree_inventory: Inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    stepped = SteppedScan(fail_after_first=True)
    monkeypatch.setattr(core_inventory, "scan_in_steps", stepped)
    names = [disk.name for disk in tree_inventory.disks]
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.screen.query_one("#disks", DiskTable)
        await wait_for(pilot, stepped.first_posted.is_set)
        stepped.release.set()
        await settle(pilot)
        banner = app.screen.query_one("#banner", Static)
        assert "Input/output error" in plain(banner.content)
        assert "Traceback" not in plain(banner.content)
        assert "scan failed" in str(app.screen.sub_title)
        assert cells(table, names[-1]) == [names[-1], *[PENDING] * (len(table.columns) - 1)]
        # r scans again (the core's scan this time) and fills every row.
        monkeypatch.setattr(core_inventory, "scan_in_steps", scan_in_steps)
        await pilot.press("r")
        await settle(pilot)
        assert "Input/output error" not in plain(banner.content)
        assert all(PENDING not in cells(table, name) for name in names)


class TwoTables(App[None]):
    """The same rows in Textual's DataTable and in an InventoryTable (which sizes its columns itself)."""

    def __init__(self, rows: list[tuple[str, list[Text]]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield DataTable(id="textual")
        yield InventoryTable(id="ours")

    def on_mount(self) -> None:
        columns = [("name", "Disk", None), ("size", "Size", None), ("ident", "Model / serial", 12), ("x", "", None)]
        self.query_one("#ours", InventoryTable)._fill(columns, self.rows)
        theirs = self.query_one("#textual", DataTable)
        for key, label, width in columns:
            theirs.add_column(Text(label), key=key, width=width)
        for key, cells in self.rows:
            theirs.add_row(*cells, key=key)


async def test_the_tables_columns_are_as_wide_as_datatable_measures_them() -> None:
    rows = [
        (f"sd{index}", [Text(f"sd{index}", style="bold"), Text("1.8 TiB" * (index % 3), justify="right"),
                        Text("Example 4TB / WD-" + "0" * index), Text("日本語" * (index % 5))])
        for index in range(40)
    ]  # fmt: skip
    app = TwoTables(rows)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        theirs, ours = app.query_one("#textual", DataTable), app.query_one("#ours", InventoryTable)
        assert [column.content_width for column in ours.columns.values()] == [
            column.content_width for column in theirs.columns.values()
        ]
        assert [column.get_render_width(ours) for column in ours.columns.values()] == [
            column.get_render_width(theirs) for column in theirs.columns.values()
        ]
        assert ours.virtual_size == theirs.virtual_size
        assert ours.virtual_size.height == 41


async def test_the_table_draws_the_cursor_and_hover_rows_where_they_are_after_moves(make_app: MakeApp) -> None:
    """Lines are kept by whether the cursor is on their row: after moves and hovers the table looks as drawn anew."""
    moved, fresh = make_app(), make_app()
    async with moved.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = moved.screen.query_one("#disks", DiskTable)
        await pilot.hover("#disks", offset=(3, 4))
        await pilot.press("down", "down", "down", "up", "end", "home", "down", "down")
        await pilot.hover("#disks", offset=(3, 2))
        await pilot.press("down")
        await pilot.hover("#disks", offset=(3, 6))  # last, as below: a key hides the hover row until the mouse moves
        await settle(pilot)
        cursor, hover = table.cursor_coordinate.row, table.hover_coordinate.row
        assert cursor > 0 and hover > 0 and cursor != hover
        after_moves = moved.export_screenshot()
    async with fresh.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = fresh.screen.query_one("#disks", DiskTable)
        table.move_cursor(row=cursor)
        await pilot.hover("#disks", offset=(3, 6))
        await settle(pilot)
        assert (table.cursor_coordinate.row, table.hover_coordinate.row) == (cursor, hover)
        assert fresh.export_screenshot() == after_moves


async def test_the_detail_follows_a_burst_of_keys_to_the_last_row(make_app: MakeApp, tree_inventory: Inventory) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for _ in range(5):  # queued at once, as a held key's repeats pile up on a busy screen
            app.post_message(events.Key("down", None))
        await settle(pilot)
        assert app.screen.query_one("#disks", DiskTable).cursor_row == 5
        detail = detail_text(app)
        assert f"{tree_inventory.disks[5].name}  {tree_inventory.disks[5].dev_path}" in detail


async def test_rows_drawn_before_they_are_sized_are_drawn_again_at_their_widths() -> None:
    """A table fill draws its rows at their widths at once; rows DataTable sizes later (when idle), drawn
    before that, are drawn again at their widths even when the table ends as wide as it was (no resize)."""
    app = TwoTables([])
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        table = app.query_one("#ours", InventoryTable)
        row = ("nvme0n1", [Text("nvme0n1"), Text("QEMU NVMe Ctrl / NVME0")])
        whole = ["nvme0n1", "QEMU", "NVMe", "Ctrl", "/", "NVME0"]
        table._fill([("name", "Disk", None), ("ident", "Model", None)], [row])
        assert table.render_line(1).text.split() == whole
        await pilot.pause()
        table.clear(columns=True)
        table.add_column(Text("Disk"), key="name")
        table.add_column(Text("Model"), key="ident")
        table.add_row(*row[1], key=row[0])
        assert table.render_line(1).text.split() == ["nvme", "QEMU"]  # drawn before it is sized
        await pilot.pause()
        await pilot.pause()
        assert table.render_line(1).text.split() == whole


async def test_the_theme_is_the_apps_from_the_first_screen_and_a_bad_theme_file_is_said(
    tree_root: Path, tmp_path: Path
) -> None:
    """Themes are loaded before the app starts (its CSS is parsed once, in the theme's colours)."""
    (tmp_path / "mdtui-dark.tcss").write_text("$primary: #FF0000;\n$background: #102030;\n")
    (tmp_path / "broken.tcss").write_text("$primary: not-a-colour;\n")
    app = MdtuiApp(str(tree_root), privileged=True, theme_dirs=(repo_themes_dir(), tmp_path))
    assert app.theme == DEFAULT_THEME
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.styles.background.hex.upper() == "#102030"
        assert app.current_theme.primary.upper() == "#FF0000"
        assert any("broken.tcss" in str(notice.message) for notice in app._notifications)


async def test_the_detail_is_drawn_again_only_when_what_it_shows_changed(
    make_app: MakeApp, tree_inventory: Inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[object] = []
    show = DetailBody.show

    def counted(body: DetailBody, renderable: RenderableType) -> None:
        drawn.append(renderable)
        show(body, renderable)

    monkeypatch.setattr(DetailBody, "show", counted)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert len(drawn) == 1, "the first disk was drawn more than once at launch"
        await pilot.press("tab")  # to the arrays: drawn, then once more for each worker's answer (forecast, findings)
        await settle(pilot)
        assert len(drawn) == 4 and "Limit" in detail_text(app)
        await pilot.press("shift+tab")  # and back: drawn once
        await settle(pilot)
        assert len(drawn) == 5
        await pilot.press("down")
        await settle(pilot)
        assert len(drawn) == 6 and tree_inventory.disks[1].dev_path in detail_text(app)
        await pilot.press("r")  # a new scan of the same disks: drawn again from it, once
        await settle(pilot)
        assert len(drawn) == 7 and tree_inventory.disks[1].dev_path in detail_text(app)
        app.theme = "mdtui-light"
        await settle(pilot)
        assert len(drawn) == 8


async def test_the_detail_is_drawn_at_the_panes_width_and_again_when_it_changes(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    """The detail is drawn once per content and width: what it shows is the content, at the pane's width."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        body = app.screen.query_one("#detail-body", DetailBody)
        line = f"{tree_inventory.disks[0].name}  {tree_inventory.disks[0].dev_path}"
        assert isinstance(body.content, Drawn) and body.content.source is body.source
        narrow = body.size.width
        assert body.content.width == narrow and line in plain(body.content)
        await pilot.resize_terminal(140, 30)
        await settle(pilot)
        assert body.size.width > narrow
        assert body.content.width == body.size.width and line in plain(body.content)
        assert line in body.render_line(0).text


def detail_text(app: MdtuiApp) -> str:
    return plain(app.screen.query_one("#detail-body", DetailBody).source)


async def screen_after_launch(root: Path, tmp_path: Path, ahead: ScanAhead | None, size: tuple[int, int]) -> str:
    app = MdtuiApp(str(root), privileged=True, theme_dirs=THEME_DIRS, db_path=tmp_path / "r.db", scan_ahead=ahead)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InventoryScreen)
        assert not screen.scanning and not screen._pending
        return app.export_screenshot()


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_a_launch_with_its_scan_begun_first_shows_what_a_scan_by_the_screen_shows(
    tree_root: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    # privileged=None: as the launch scans (a captured tree reads as root would).
    ahead = ScanAhead(str(tree_root), first=screenful(size[1]))
    assert await screen_after_launch(tree_root, tmp_path, ahead, size) == await screen_after_launch(
        tree_root, tmp_path, None, size
    )


async def test_a_big_host_scanned_ahead_in_steps_ends_as_a_scan_by_the_screen_ends(
    tmp_path: Path, bigtree: ModuleType
) -> None:
    tree = bigtree.build(tmp_path / "tree", 64)
    steps = list(scan_in_steps(tree.base, first=FIRST))
    assert len(steps) == 2 and steps[0][1]  # the first step leaves disks to probe
    ahead = ScanAhead(tree.base, first=FIRST)
    assert await screen_after_launch(tree.base, tmp_path, ahead, (160, 48)) == await screen_after_launch(
        tree.base, tmp_path, None, (160, 48)
    )


async def test_the_first_step_of_a_scan_begun_first_is_shown_then_the_rest(tmp_path: Path, bigtree: ModuleType) -> None:
    tree = bigtree.build(tmp_path / "tree", 64)
    (early, pending), (whole, _) = scan_in_steps(tree.base, first=FIRST)
    ahead = ScanAhead(tree.base, first=FIRST)
    assert ahead.wait(30)
    app = MdtuiApp(str(tree.base), privileged=True, theme_dirs=THEME_DIRS, db_path=tmp_path / "r.db", scan_ahead=ahead)
    shown: list[tuple[int, int]] = []
    async with app.run_test(size=(300, 50)) as pilot:  # wide enough for every cell in full
        screen = app.screen
        assert isinstance(screen, InventoryScreen)
        table = screen.query_one("#disks", DiskTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        shown.append((len(screen._pending), table.row_count))
        assert cells(table, pending[-1]) == [pending[-1], *[PENDING] * 6]
        await settle(pilot)
        assert [cells(table, disk.name) for disk in whole.disks] == [
            [cell.plain for cell in disk_cells(disk, screen.palette())] for disk in whole.disks
        ]
    assert shown == [(len(pending), len(whole.disks))]
    assert early.disks == whole.disks[:FIRST]


async def test_a_scan_begun_first_that_fails_shows_the_failure_as_a_scan_by_the_screen_does(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    screens = []
    for ahead in (ScanAhead(str(empty), first=FIRST), None):
        app = MdtuiApp(str(empty), privileged=True, theme_dirs=THEME_DIRS, db_path=tmp_path / "r.db", scan_ahead=ahead)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, InventoryScreen)
            assert screen.scan_error is not None and "neither / nor a captured tree" in screen.scan_error
            screens.append(app.export_screenshot())
    assert screens[0] == screens[1]


async def test_the_launch_is_told_once_that_the_first_rows_are_drawn_before_the_rest_is_probed(
    tmp_path: Path, bigtree: ModuleType
) -> None:
    tree = bigtree.build(tmp_path / "tree", 64)
    ahead = ScanAhead(tree.base, first=FIRST)
    assert ahead.wait(30)
    told: list[tuple[int, int, bool]] = []

    def drawn() -> None:
        screen = app.screen
        assert isinstance(screen, InventoryScreen)
        told.append((screen.query_one("#disks", DiskTable).row_count, len(screen._pending), screen.scanning))

    app = MdtuiApp(
        str(tree.base), privileged=True, theme_dirs=THEME_DIRS, db_path=tmp_path / "r.db", scan_ahead=ahead,
        first_screen_drawn=drawn,
    )  # fmt: skip
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InventoryScreen) and not screen._pending and not screen.scanning
    assert told == [(64, 64 - FIRST, True)]


async def test_the_launch_is_told_once_even_when_the_scan_begun_first_fails(tmp_path: Path) -> None:
    told: list[int] = []
    app = MdtuiApp(
        str(tmp_path), privileged=True, theme_dirs=THEME_DIRS, db_path=tmp_path / "r.db",
        scan_ahead=ScanAhead(str(tmp_path), first=FIRST), first_screen_drawn=lambda: told.append(1),
    )  # fmt: skip
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InventoryScreen) and screen.scan_error is not None
    assert told == [1]


async def test_a_rescan_before_the_scan_begun_first_is_probed_replaces_it(
    tree_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real = core_inventory.scan_in_steps

    def held(
        root: str, *, privileged: bool | None = None, first: int | None = None
    ) -> Iterator[tuple[Inventory, tuple[str, ...]]]:
        assert release.wait(30), "the test never released the scan"
        yield from real(root, privileged=privileged, first=first)

    monkeypatch.setattr(core_inventory, "scan_in_steps", held)
    ahead = ScanAhead(str(tree_root), first=FIRST)  # held: not probed when the screen mounts
    monkeypatch.setattr(core_inventory, "scan_in_steps", real)
    told: list[int] = []
    app = MdtuiApp(
        str(tree_root), privileged=True, theme_dirs=THEME_DIRS, db_path=tmp_path / "r.db", scan_ahead=ahead,
        first_screen_drawn=lambda: told.append(1),
    )  # fmt: skip
    async with app.run_test(size=(200, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, InventoryScreen)
        await pilot.press("r")
        await wait_for(pilot, lambda: not screen.scanning)
        release.set()
        await settle(pilot)
        assert not screen.scanning and not screen._pending and screen.inventory is not None
        shown = app.export_screenshot()
    assert told == [1]
    assert shown == await screen_after_launch(tree_root, tmp_path, None, (200, 50))
