"""The shared table moves, sorts and filters as btop/htop/lazygit users expect; a screen's own key wins."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input

from mdtui.ui.common.table import SizedTable, sort_key

# Sizes as the inventory shows them: a string sort would put "1.8 TiB" before "500 GiB".
DISKS = [("sda", "1.8 TiB", "HDD"), ("nvme0n1", "500 GiB", "SSD"), ("sdb", "-", "HDD"), ("loop1", "64 MiB", "loop")]


class KeyedTable(SizedTable[object]):
    can_reorder = True


class ListScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("k", "knobs", "Knobs"),
        Binding("escape", "back", "Back"),
    ]
    knobs = 0
    backs = 0

    def compose(self) -> ComposeResult:
        yield KeyedTable(id="disks", cursor_type="row")

    def on_mount(self) -> None:
        table = self.query_one(KeyedTable)
        table.add_column("Disk", key="disk")
        table.add_column("Size", key="size")
        table.add_column("Type", key="type")
        for name, size, kind in DISKS:
            table.add_row(name, Text(size), kind, key=name)
        table.focus()

    def action_knobs(self) -> None:
        self.knobs += 1

    def action_back(self) -> None:
        self.backs += 1


class Keys(App[None]):
    def on_mount(self) -> None:
        self.push_screen(ListScreen())


def names(table: KeyedTable) -> list[str]:
    return [str(table.get_row_at(index)[0]) for index in range(table.row_count)]


def cursor_name(table: KeyedTable) -> str:
    return str(table.get_row_at(table.cursor_row)[0])


async def test_home_end_g_and_j_move_and_the_screens_k_wins() -> None:
    app = Keys()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, ListScreen)
        table = screen.query_one(KeyedTable)
        await pilot.press("end")
        assert table.cursor_row == 3
        await pilot.press("home")
        assert table.cursor_row == 0
        await pilot.press("G")
        assert table.cursor_row == 3
        await pilot.press("g")  # the app's guide everywhere in mdtui: not the table's
        assert table.cursor_row == 3
        await pilot.press("home", "j", "j")
        assert table.cursor_row == 2
        # A screen that binds k anyway keeps it (mdtui's screens do not: tests/ui/test_keymap.py).
        await pilot.press("k")
        assert table.cursor_row == 2 and screen.knobs == 1


async def test_s_sorts_by_column_with_units_and_s_reverses_shown_in_the_header() -> None:
    app = Keys()
    async with app.run_test() as pilot:
        table = app.screen.query_one(KeyedTable)
        await pilot.press("s")
        assert names(table) == ["loop1", "nvme0n1", "sda", "sdb"]
        assert str(table.columns[table.sort_column].label).endswith("▲")  # type: ignore[index]
        await pilot.press("s")  # next column: size, by bytes, the unknown size last
        assert names(table) == ["loop1", "nvme0n1", "sda", "sdb"]
        assert table.sort_column is not None and table.sort_column.value == "size"
        await pilot.press("S")
        assert names(table) == ["sdb", "sda", "nvme0n1", "loop1"]
        assert table.columns[table.sort_column].label.plain == "Size ▼"
        # A row added while sorted takes its place once drawn.
        table.add_row("sdc", Text("2 GiB"), "SSD", key="sdc")
        await pilot.pause()
        assert names(table) == ["sdb", "sda", "nvme0n1", "sdc", "loop1"]


def test_sort_key_reads_units() -> None:
    assert sort_key(Text("500 GiB")) < sort_key("1.8 TiB") < sort_key("-")
    assert sort_key("1,000 MB/s") > sort_key("999 MB/s")


async def test_slash_filters_escape_clears_then_leaves() -> None:
    app = Keys()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, ListScreen)
        table = screen.query_one(KeyedTable)
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"hdd")
        assert names(table) == ["sda", "sdb"]
        # The screen updates a row the filter hides: kept, and shown when the filter is cleared.
        table.update_cell("loop1", "size", Text("128 MiB"))
        await pilot.press("enter")
        assert app.focused is table and names(table) == ["sda", "sdb"]
        await pilot.press("escape")
        assert names(table) == ["sda", "nvme0n1", "sdb", "loop1"] and screen.backs == 0
        assert table.get_row("loop1")[1] == Text("128 MiB")
        await pilot.press("escape")
        assert screen.backs == 1


async def test_a_table_found_by_row_number_does_not_reorder() -> None:
    class Plain(App[None]):
        def compose(self) -> ComposeResult:
            yield SizedTable(id="t", cursor_type="row")

        def on_mount(self) -> None:
            table = self.query_one(SizedTable)
            table.add_column("A")
            for value in ("b", "a"):
                table.add_row(value)
            table.focus()

    app = Plain()
    async with app.run_test() as pilot:
        table = app.query_one(SizedTable)
        await pilot.press("s", "slash")
        assert [table.get_row_at(i)[0] for i in range(2)] == ["b", "a"]
        assert app.focused is table
        await pilot.press("G")
        assert table.cursor_row == 1


async def test_the_apps_g_stays_the_apps() -> None:
    class Guided(Keys):
        BINDINGS: ClassVar[list[BindingType]] = [Binding("g", "guide", "Guide")]
        guides = 0

        def action_guide(self) -> None:
            self.guides += 1

    app = Guided()
    async with app.run_test() as pilot:
        table = app.screen.query_one(KeyedTable)
        await pilot.press("end", "g")
        assert app.guides == 1 and table.cursor_row == 3


async def test_the_footer_shows_the_screens_own_escape_and_slash() -> None:
    class Own(Screen[None]):
        BINDINGS: ClassVar[list[BindingType]] = [
            Binding("slash", "own_filter", "Filter", key_display="/"),
            Binding("escape", "back", "Back"),
        ]

        def compose(self) -> ComposeResult:
            yield KeyedTable(id="t", cursor_type="row")

        def on_mount(self) -> None:
            self.query_one(KeyedTable).focus()

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(Own())

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        active = app.screen.active_bindings
        assert active["slash"].binding.action == "own_filter"
        assert active["escape"].binding.action == "back"


class OffForNowScreen(ListScreen):
    """A screen that binds s for something that is off for the row in hand (the inventory's scrub on a disk)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("s", "scrub", "Scrub")]
    scrubs = 0
    scrub_enabled = False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "scrub":
            return self.scrub_enabled
        return True

    def action_scrub(self) -> None:
        self.scrubs += 1


class OffForNow(App[None]):
    def on_mount(self) -> None:
        self.push_screen(OffForNowScreen())


async def test_a_screen_key_that_is_off_for_now_leaves_the_key_to_the_table() -> None:
    app = OffForNow()
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OffForNowScreen)
        table = screen.query_one(KeyedTable)
        await pilot.press("s")
        await pilot.pause()
        assert table.sort_column is not None and screen.scrubs == 0
        screen.scrub_enabled = True
        await pilot.press("s")
        await pilot.pause()
        assert screen.scrubs == 1
