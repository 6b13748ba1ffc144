"""Pilot tests of the inventory screen against a captured tree: selection, detail, help, rescan, failures."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.segment import Segment
from textual.color import Color
from textual.coordinate import Coordinate
from textual.filter import Monochrome
from textual.message import Message
from textual.widgets import Static
from textual.widgets.data_table import ColumnKey

from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.model.inventory import Inventory
from mdtui.model.link import Link, LinkKind
from mdtui.ui.app import MdtuiApp
from mdtui.ui.common.messages import InventoryScanned
from mdtui.ui.common.table import sort_key
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.help.screen import HelpScreen
from mdtui.ui.inventory import screen as inventory_screen
from mdtui.ui.inventory.widgets import ArrayTable, DetailBody, DiskTable

from .conftest import plain, settle

MakeApp = Callable[..., MdtuiApp]


def detail_text(app: MdtuiApp) -> str:
    return plain(app.screen.query_one("#detail-body", DetailBody).source)


def banner_text(app: MdtuiApp) -> str:
    banner = app.screen.query_one("#banner", Static)
    return plain(banner.content) if banner.has_class("-shown") else ""


async def test_opens_on_inventory_with_first_disk_in_detail(make_app: MakeApp, tree_inventory: Inventory) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        disks = app.screen.query_one("#disks", DiskTable)
        arrays = app.screen.query_one("#arrays", ArrayTable)
        assert disks.has_focus
        assert disks.row_count == len(tree_inventory.disks)
        assert arrays.row_count == len(tree_inventory.arrays)
        first = tree_inventory.disks[0]
        assert f"{first.name}  {first.dev_path}" in detail_text(app)


async def test_arrow_keys_move_the_detail_to_the_next_disk(make_app: MakeApp, tree_inventory: Inventory) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("down")
        second = tree_inventory.disks[1]
        assert f"{second.name}  {second.dev_path}" in detail_text(app)
        await pilot.press("up")
        assert tree_inventory.disks[0].dev_path in detail_text(app)


async def test_in_use_disk_shows_every_reason(make_app: MakeApp, tree_inventory: Inventory) -> None:
    index, disk = next((i, d) for i, d in enumerate(tree_inventory.disks) if d.in_use)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*["down"] * index)
        text = detail_text(app)
        assert disk.dev_path in text
        for reason in disk.in_use:
            assert str(reason) in text
        assert disk.in_use[0].kind.value in plain(app.screen.query_one("#disks", DiskTable).get_row(disk.name)[-1])


async def test_tab_switches_to_arrays_and_shows_sync_progress(make_app: MakeApp, tree_inventory: Inventory) -> None:
    index, array = next((i, a) for i, a in enumerate(tree_inventory.arrays) if a.sync and a.sync.eta_seconds)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        assert app.screen.query_one("#arrays", ArrayTable).has_focus
        assert f"{tree_inventory.arrays[0].name}  {tree_inventory.arrays[0].dev_path}" in detail_text(app)
        await pilot.press(*["down"] * index)
        text = detail_text(app)
        assert array.dev_path in text
        assert "MB/s" in text and "ETA" in text
        for member in array.members:
            assert member.name in text
        # Back to the disks: the detail follows the disk table again.
        await pilot.press("shift+tab")
        assert tree_inventory.disks[0].dev_path in detail_text(app)


async def test_help_opens_and_closes(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        await pilot.press("question_mark")
        assert not isinstance(app.screen, HelpScreen)


async def test_enter_opens_full_detail_and_escape_closes(make_app: MakeApp, tree_inventory: Inventory) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        body = app.screen.query_one("#detail-full-body", Static)
        assert tree_inventory.disks[0].dev_path in plain(body.content)
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)


async def test_rescan_posts_a_new_inventory_and_keeps_the_selection(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    scanned: list[Message] = []
    app = make_app()
    async with app.run_test(size=(80, 24), message_hook=scanned.append) as pilot:
        await settle(pilot)
        await pilot.press("down", "down")
        selected = tree_inventory.disks[2]
        assert selected.dev_path in detail_text(app)
        before = sum(isinstance(m, InventoryScanned) for m in scanned)
        await pilot.press("r")
        await settle(pilot)
        assert sum(isinstance(m, InventoryScanned) for m in scanned) == before + 1
        assert app.screen.query_one("#disks", DiskTable).selected_key == selected.name
        assert selected.dev_path in detail_text(app)


@pytest.mark.parametrize("rescan", ["same", "one-gone", "selected-moves"])
async def test_a_rescan_of_a_sorted_table_keeps_the_selected_disk_and_the_order(
    make_app: MakeApp, tree_inventory: Inventory, monkeypatch: pytest.MonkeyPatch, rescan: str
) -> None:
    # Sorted by model, the selected disk is not at its scan-order row. A rescan finds the same disks (cells
    # updated in place), one disk fewer (the table rebuilt), or the selected disk's model changed so that it
    # sorts first: updated in place, the table kept the old order, the disk no longer where its model sorts.
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        disks = app.screen.query_one("#disks", DiskTable)
        disks.sort_by(ColumnKey("ident"))
        await settle(pilot)
        scan_order = [disk.name for disk in tree_inventory.disks]
        shown = [str(disks.coordinate_to_cell_key((row, 0)).row_key.value) for row in range(disks.row_count)]
        row = [i for i, name in enumerate(shown) if scan_order.index(name) != i][-1]
        disks.move_cursor(row=row)
        await settle(pilot)
        chosen = shown[row]
        assert disks.selected_key == chosen
        found = tree_inventory
        if rescan == "one-gone":
            gone = next(d.name for d in reversed(tree_inventory.disks) if d.name != chosen)
            found = dataclasses.replace(found, disks=tuple(d for d in found.disks if d.name != gone))
        elif rescan == "selected-moves":
            found = dataclasses.replace(
                found,
                disks=tuple(dataclasses.replace(d, model="A") if d.name == chosen else d for d in found.disks),
            )
        monkeypatch.setattr(inventory_screen, "scan", lambda root, *, privileged=None: found)
        await pilot.press("r")
        await settle(pilot)
        await settle(pilot)
        assert disks.selected_key == chosen
        assert f"{chosen}  /dev/{chosen}" in detail_text(app)
        column = [disks.get_cell_at(Coordinate(row, 5)) for row in range(disks.row_count)]
        assert [sort_key(cell) for cell in column] == sorted(sort_key(cell) for cell in column)


async def test_the_kept_line_wraps_under_its_text_at_80_columns(make_app: MakeApp, tree_inventory: Inventory) -> None:
    # The captured tree's four "not captured" facts are longer than an 80-column pane: the line wraps, and its
    # continuation starts under the text after "Kept", never at the pane's left edge.
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        body = app.screen.query_one("#detail-body", DetailBody)
        lines = ["".join(segment.text for segment in line).rstrip() for line in body.content.lines]
        kept = next(i for i, line in enumerate(lines) if line.startswith("Kept"))
        indent = len(lines[kept]) - len(lines[kept][len("Kept") :].lstrip())
        assert lines[kept + 1].startswith(" " * indent) and lines[kept + 1][indent] != " "
        assert "metrics: not captured" in lines[kept + 1]


async def test_missing_root_is_a_message_not_a_traceback(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app(tmp_path / "no-such-tree")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "does not exist" in banner_text(app)
        assert "does not exist" in detail_text(app)
        assert "scan failed" in str(app.screen.sub_title)


async def test_a_failing_scan_is_shown_and_the_app_keeps_running(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_scan(root: str, *, privileged: bool | None = None) -> Inventory:
        raise RuntimeError("sysfs went away")

    monkeypatch.setattr(inventory_screen, "scan", broken_scan)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "RuntimeError: sysfs went away" in banner_text(app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)


async def test_no_md_driver_is_announced(make_app: MakeApp, tmp_path: Path) -> None:
    (tmp_path / "sys" / "block").mkdir(parents=True)
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "No md driver" in banner_text(app)
        assert app.screen.query_one("#arrays", ArrayTable).border_title == "Arrays: no md driver"


NVME_SLOW = Disk(
    name="nvme3n1",
    dev_path="/dev/nvme3n1",
    transport=Transport.NVME,
    size_bytes=1_000_204_886_016,
    by_id_path="/dev/disk/by-id/nvme-Example_Pro_1TB_S5GXNF0R000001",
    model="Example Pro 1TB NVMe with a very long marketing model name",
    serial="S5GXNF0R000001",
    wwn="eui.0025385b71b0a2f1",
    logical_sector_bytes=512,
    physical_sector_bytes=512,
    rotational=False,
    driver="nvme",
    link=Link(LinkKind.PCIE, current_rate=2.5, max_rate=8.0, current_width=4, max_width=4),
)
SATA_MEMBER = Disk(
    name="sdb",
    dev_path="/dev/sdb",
    transport=Transport.SATA,
    size_bytes=4_000_787_030_016,
    model="Example HDD 4TB",
    serial="WD-0000001",
    rotational=True,
    link=Link(LinkKind.SATA, current_rate=6.0, max_rate=6.0),
    in_use=(InUseReason(InUseKind.MD_MEMBER, "active member of md0"),),
)
READ_ONLY_NOTE = "Read-only mode (not root): md superblocks cannot be checked. Run as root for the full picture."
CRAFTED = Inventory(disks=(NVME_SLOW, SATA_MEMBER), arrays=(), privileged=False, udev=True, notes=(READ_ONLY_NOTE,))


@pytest.fixture
def crafted_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inventory_screen, "scan", lambda root, *, privileged=None: CRAFTED)


@pytest.mark.usefixtures("crafted_scan")
async def test_downgraded_link_is_flagged_with_its_finding(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#disks", DiskTable)
        assert "⚠" in plain(table.get_row("nvme3n1")[4])
        text = detail_text(app)
        assert NVME_SLOW.link is not None
        finding = NVME_SLOW.link.finding()
        assert finding and finding in text
        assert "1,000 MB/s" in text  # Gen1 x4 = 4 × 250 MB/s usable
        assert NVME_SLOW.by_id_path in text and NVME_SLOW.wwn in text


@pytest.mark.usefixtures("crafted_scan")
async def test_read_only_banner_uses_the_inventory_notes(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert READ_ONLY_NOTE in banner_text(app).replace("\n", " ").replace("  ", " ")
        assert "read-only" in str(app.screen.sub_title)
        await pilot.press("n")
        assert banner_text(app) == ""
        await pilot.press("n")
        assert "Read-only mode" in banner_text(app)


@pytest.mark.usefixtures("crafted_scan")
@pytest.mark.parametrize("width", [80, 100, 160])
async def test_state_column_always_fits_and_model_is_cut_instead(make_app: MakeApp, width: int) -> None:
    app = make_app()
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#disks", DiskTable)
        used = sum(column.get_render_width(table) for column in table.columns.values())
        assert used <= table.size.width
        assert plain(table.get_row("sdb")[-1]).strip() == "md-member"
        ident = plain(table.get_row("nvme3n1")[5]).strip()
        # The model gives way; the serial, where disks of a batch differ, stays whole (issue 42).
        assert ident.startswith("Exa") and ident.endswith(" / S5GXNF0R000001")
        if width == 80:
            assert "… / " in ident


@pytest.mark.parametrize(("width", "height", "disk_rows"), [(80, 24, 7), (60, 15, 3)])
async def test_small_terminals_show_disks_and_no_blank_rows_under_the_arrays(
    make_app: MakeApp, tree_inventory: Inventory, width: int, height: int, disk_rows: int
) -> None:
    # Issue 44: at 80x24 the disks had half the height (5 of 11 shown) above blank rows under 3 arrays; at 60x15
    # the detail's 8 rows left the disks none, and State scrolled off to the side.
    app = make_app()
    async with app.run_test(size=(width, height)) as pilot:
        await settle(pilot)
        disks = app.screen.query_one("#disks", DiskTable)
        arrays = app.screen.query_one("#arrays", ArrayTable)
        assert arrays.size.height <= 1 + len(tree_inventory.arrays)  # the header and its rows: no blank ones
        assert disks.size.height - 1 >= disk_rows  # the header, then as many disks
        for table in (disks, arrays):
            used = sum(column.get_render_width(table) for column in table.columns.values())
            assert used <= table.size.width, f"#{table.id} scrolls sideways"
            assert "state" in [str(key.value) for key in table.columns]


async def test_under_no_color_a_degraded_array_is_marked_and_never_dimmer(
    make_app: MakeApp, tree_inventory: Inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 44: under NO_COLOR Textual draws colours as greys, and the degraded array's red state read as the
    # dimmest row. Its state is marked (✗, bold) and drawn no darker than a healthy array's.
    monkeypatch.setenv("NO_COLOR", "1")
    degraded = next(a for a in tree_inventory.arrays if a.degraded)
    healthy = next(a for a in tree_inventory.arrays if not a.degraded and a.sync is None)
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.no_color
        table = app.screen.query_one("#arrays", ArrayTable)
        names = [str(table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value) for row in range(table.row_count)]

        def state_segment(name: str) -> Segment:
            line = Monochrome().apply(list(table.render_line(1 + names.index(name))), Color(0, 0, 0))
            return next(segment for segment in line if tree_inventory.array(name).state_text in segment.text)  # type: ignore[union-attr]

        bad, good = state_segment(degraded.name), state_segment(healthy.name)
        assert bad.text.strip().startswith("✗") and bad.style is not None and bad.style.bold
        assert good.style is not None and bad.style.color is not None and good.style.color is not None
        assert bad.style.color.triplet >= good.style.color.triplet  # type: ignore[operator]


async def test_link_sorts_by_the_bandwidth_it_carries(make_app: MakeApp, tree_inventory: Inventory) -> None:
    # Issue 44: "Gen1 x1" (250 MB/s) sorted after "12 Gbit" (1,200 MB/s): its words were sorted, not its speed.
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#disks", DiskTable)
        table.focus()
        for _ in range(table.get_column_index("link") + 1):  # s sorts by the next column: Disk, Bus, ... Link
            await pilot.press("s")
        await pilot.pause()
        assert table.sort_column == ColumnKey("link")
        order = [str(table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value) for row in range(table.row_count)]
        speeds = [
            disk.link.bandwidth_bytes_per_s if disk.link else None
            for disk in (tree_inventory.disk(name) for name in order)
            if disk is not None
        ]
        known = [speed for speed in speeds if speed is not None]
        assert known == sorted(known) and speeds[len(known) :] == [None] * (len(speeds) - len(known)), speeds
        labels = [plain(table.get_row(name)[table.get_column_index("link")]).strip() for name in order]
        assert labels.index("Gen1 x1") < labels.index("12 Gbit"), labels


async def test_a_captured_tree_says_read_only_in_every_header(make_app: MakeApp, tmp_path: Path) -> None:
    # Issue 44: under --root DIR nothing said the app would not act until an action was refused.
    from mdtui.ui.results.screen import ResultsScreen

    app = make_app(tree_stands_for_live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)

        def header() -> str:
            return str(app.screen.query_one("HeaderTitle").render())

        assert header().startswith(" READ-ONLY tree  mdtui — ")
        app.push_screen(ResultsScreen(tmp_path / "results.db"))
        await settle(pilot)
        assert header().startswith(" READ-ONLY tree  mdtui — results")
    standing_in = make_app()  # the tests' trees that stand for a live host, as / does: no badge
    async with standing_in.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "READ-ONLY" not in str(standing_in.screen.query_one("HeaderTitle").render())
