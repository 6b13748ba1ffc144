"""Radio buttons and checkboxes whose state reads without colour (NO_COLOR=1, a monochrome terminal)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import RadioButton, RadioSet

import mdtui.ui
from mdtui.ui.common.toggles import MarkCheckbox, MarkRadioButton, MarkSelectionList
from mdtui.ui.results.dialogs import ExportScreen


def glyph(button: RadioButton) -> str:
    return button.render().plain[:3]


class ExportApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(ExportScreen("Export", "mdtui-runs-1", "csv"))


async def test_export_formats_show_which_one_is_chosen_without_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = ExportApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        buttons = list(app.screen.query_one("#export-format", RadioSet).query(RadioButton))
        chosen = [glyph(b) for b in buttons if b.value]
        others = {glyph(b) for b in buttons if not b.value}
        assert chosen == ["(•)"] and others == {"( )"}, "Textual's ▐●▌ is the same for both states"
        await pilot.press("down", "enter")  # RadioSet moves its highlight, Enter presses; the glyphs follow
        await pilot.pause()
        assert [glyph(b) for b in buttons if b.value] == ["(•)"]
        assert sum(glyph(b) == "(•)" for b in buttons) == 1


class Toggles(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkCheckbox("on", True, id="box-on")
        yield MarkCheckbox("off", False, id="box-off")
        with RadioSet():
            yield MarkRadioButton("one", value=True, id="one")
            yield MarkRadioButton("two", id="two")


async def test_checkbox_and_radio_glyphs_follow_the_value() -> None:
    app = Toggles()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        assert glyph(app.query_one("#one", RadioButton)) == "(•)"
        assert glyph(app.query_one("#two", RadioButton)) == "( )"
        assert app.query_one("#box-on", MarkCheckbox).render().plain.startswith("[x]")
        assert app.query_one("#box-off", MarkCheckbox).render().plain.startswith("[ ]")
        app.query_one("#two", RadioButton).value = True
        await pilot.pause()
        assert glyph(app.query_one("#one", RadioButton)) == "( )"
        assert glyph(app.query_one("#two", RadioButton)) == "(•)"


class Disks(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkSelectionList(id="disks")

    def on_mount(self) -> None:
        self.query_one(MarkSelectionList).add_options([("sdb", "sdb", True), ("sdc", "sdc", False)])


async def test_a_selection_list_reads_ticked_and_not_without_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 44: the guide's disks were all drawn ▐X▌, picked or not; only the colour differed.
    monkeypatch.setenv("NO_COLOR", "1")
    app = Disks()
    async with app.run_test(size=(40, 6)) as pilot:
        await pilot.pause()
        disks = app.query_one(MarkSelectionList)
        rows = [disks.render_line(y).text for y in range(2)]
        assert rows[0].startswith("[x] sdb") and rows[1].startswith("[ ] sdc"), rows
        disks.focus()
        disks.highlighted = 1
        await pilot.press("space")
        assert disks.render_line(1).text.startswith("[x] sdc")


def test_mdtui_draws_no_toggle_that_reads_by_colour_alone() -> None:
    """Every checkbox, radio button and selection list mdtui makes is one of the marked ones above."""
    colour_only = {"Checkbox", "RadioButton", "SelectionList", "Switch"}
    made = []
    for path in sorted((Path(mdtui.ui.__file__).parent).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
                name = getattr(func, "id", None)
                if name in colour_only:
                    made.append(f"{path.name}:{node.lineno} {name}")
    assert not made, made


def test_every_screen_takes_its_palette_from_the_app_so_no_color_holds_everywhere() -> None:
    """Three screens passed the app's NO_COLOR to their palette and four did not (bench, guide, findings, watch
    still drew their state colours): render.app_palette is the one place a screen gets its palette."""
    package = Path(mdtui.ui.__file__).parent
    callers = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "palette_from_variables"
    }
    assert callers == {"common/render.py"}
