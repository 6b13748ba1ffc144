"""What the inventory does for a quick first screen and smooth scrolling (issue 17), tested for what it shows."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets._footer import FooterKey

from mdtui.ui.app import MdtuiApp
from mdtui.ui.inventory.widgets import SteadyFooter

from .conftest import settle

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
