"""The inventory detail of a loop disk names the file behind it; other disks have no such line."""

from __future__ import annotations

from collections.abc import Callable

from mdtui.model.disk import Transport
from mdtui.model.inventory import Inventory
from mdtui.ui.app import MdtuiApp
from mdtui.ui.inventory.widgets import DetailBody

from .conftest import plain, settle

MakeApp = Callable[..., MdtuiApp]


def detail_text(app: MdtuiApp) -> str:
    return plain(app.screen.query_one("#detail-body", DetailBody).source)


async def test_a_loop_disk_shows_its_backing_file(make_app: MakeApp, tree_inventory: Inventory) -> None:
    # The captured tree's loop0 is the lab's /tmp/loop0.img, and it sorts first.
    first, second = tree_inventory.disks[:2]
    assert first.transport is Transport.LOOP and second.transport is not Transport.LOOP
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = detail_text(app).splitlines()
        assert "File        /tmp/loop0.img" in lines
        await pilot.press("down")
        assert second.dev_path in detail_text(app) and "/tmp/loop0.img" not in detail_text(app)
