"""The detail pane keeps its place when the cursor moves (issue 17, scrolling): a detail of another height
that still fits the pane lays nothing out again, and the pane shows the row the cursor rests on."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import DataTable

from mdtui.model.inventory import Inventory
from mdtui.ui.app import MdtuiApp
from mdtui.ui.inventory.screen import InventoryScreen
from mdtui.ui.inventory.widgets import DetailBody, Drawn

from .conftest import plain, settle

MakeApp = Callable[..., MdtuiApp]


def detail_pane_text(app: MdtuiApp) -> str:
    body = app.screen.query_one("#detail-body", DetailBody)
    assert isinstance(body.content, Drawn)
    return "\n".join("".join(segment.text for segment in line).rstrip() for line in body.content.lines)


async def test_a_detail_of_another_height_that_fits_lays_nothing_out(
    make_app: MakeApp, tree_inventory: Inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    layouts: list[int] = []
    refresh_layout = InventoryScreen._refresh_layout

    def counted(screen: InventoryScreen, *args: object, **kwargs: object) -> None:
        layouts.append(1)
        refresh_layout(screen, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(InventoryScreen, "_refresh_layout", counted)
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InventoryScreen)
        body = screen.query_one("#detail-body", DetailBody)
        pane = screen.query_one("#detail")
        size = body.size
        heights = set()
        for index, disk in enumerate(tree_inventory.disks):
            if index:
                layouts.clear()
                await pilot.press("down")
                await pilot.pause()
                await pilot.pause()
                assert not layouts, f"moving to {disk.name} laid the screen out"
            assert screen.query_one("#disks", DataTable).cursor_row == index
            assert isinstance(body.content, Drawn)
            lines = len(body.content.lines)
            assert lines <= size.height  # every disk's detail fits the wide layout's pane
            heights.add(lines)
            # What the pane shows is the disk under the cursor, under its title, at the same size.
            assert body.size == size
            assert [line.rstrip() for line in plain(body.source).splitlines()] == detail_pane_text(app).splitlines()
            assert disk.dev_path in detail_pane_text(app)
            assert pane.border_title == f"Disk {disk.name}"
        assert len(heights) > 1, "the captured tree's disks should show details of different heights"


async def test_a_detail_taller_than_its_pane_is_as_tall_as_its_lines(make_app: MakeApp) -> None:
    """At 80x24 the pane is shorter than a disk's detail: the body grows to its lines and the pane scrolls."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        body = app.screen.query_one("#detail-body", DetailBody)
        pane = app.screen.query_one("#detail")
        assert isinstance(body.content, Drawn)
        assert body.size.height == len(body.content.lines) > pane.scrollable_content_region.height
        assert pane.max_scroll_y == len(body.content.lines) - pane.scrollable_content_region.height
