"""Help opens at the section of the screen it was opened from, and is searchable."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Input, Markdown

from mdtui.ui.app import MdtuiApp
from mdtui.ui.help.screen import HelpScreen, help_for, sections

from .conftest import settle

MakeApp = Callable[..., MdtuiApp]


def test_each_screen_opens_at_its_own_section() -> None:
    assert help_for("BenchScreen").startswith("## Benchmark")
    assert help_for("WatchScreen").startswith("## Watch")
    assert help_for("CompareScreen").startswith("## Results")
    assert help_for("TuneScreen").startswith("## Knobs")
    assert help_for("InventoryScreen").startswith("## Inventory")
    # What works everywhere comes second, and nothing is lost by the reordering.
    assert help_for("WatchScreen").split("\n## ")[1].startswith("Everywhere")
    assert sorted(help_for("BenchScreen").splitlines()) == sorted(help_for("InventoryScreen").splitlines())
    assert "Ctrl+P" in sections()["Everywhere"]


def test_search_keeps_the_lines_with_every_word_under_their_heading() -> None:
    found = help_for("InventoryScreen", "escape filter")
    assert "## Everywhere" in found
    assert all("escape" in line.lower() and "filter" in line.lower() for line in found.splitlines() if line[:1] == "-")
    assert help_for("InventoryScreen", "zebra-unicorn") == "Nothing in the help holds 'zebra-unicorn'."


async def test_help_from_a_screen_searches_as_you_type(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        assert help_screen.query_one("#help-box").border_title == "Help: Inventory"
        await pilot.press(*"palette")  # a letter starts the search
        search = help_screen.query_one("#help-search", Input)
        assert search.value == "palette"
        markdown = help_screen.query_one("#help-text", Markdown)
        assert "Ctrl+P" in markdown.source and "In-use rules" not in markdown.source
        await pilot.press("escape")  # clears the search first
        assert search.value == "" and isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
