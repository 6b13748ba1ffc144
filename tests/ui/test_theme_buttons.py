"""Every theme the app offers shows every button's text: the shipped themes and Textual's own, which `t` lists too.

Issue 44: under ansi-dark the confirmation's disabled "Delete run" button was drawn as `▊▔▔▔▎` (Textual gives a
disabled button in an ANSI theme a tall border, which took the compact button's one line), and a disabled
button's faded text was close to invisible in several themes.
"""

from __future__ import annotations

import ast

from rich.color import Color, ColorType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets import Button

from mdtui.ui.app import MdtuiApp
from mdtui.ui.dialogs.confirm import ConfirmScreen

from .conftest import REPO, THEME_DIRS, TREE_ROOT

# Contrast (WCAG's ratio of relative luminances) a button's text keeps against its face, enabled or disabled.
# WCAG asks 3:1 of a control's text; Textual's own catppuccin-latte draws its enabled warning button at 2.3:1,
# the lowest of any theme, and it reads. The disabled ones were as low as 1.3:1 before mdtui drew them itself.
LEGIBLE_CONTRAST = 2.2
# ANSI colours some terminal uses as its own background (black, white, bright white): text in them on the
# terminal's own background can vanish. The terminal's own text colour on its own background always reads.
ANSI_BACKGROUNDS = {0, 7, 15}
VARIANTS = ("default", "primary", "success", "warning", "error")


def test_every_button_mdtui_draws_is_compact_in_a_known_variant() -> None:
    """The matrix below covers what mdtui draws: one-line (compact) buttons of Textual's variants."""
    calls = []
    for path in sorted((REPO / "mdtui" / "ui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Button":
                keywords = {kw.arg: kw.value for kw in node.keywords}
                compact = keywords.get("compact")
                variant = keywords.get("variant")
                calls.append(f"{path.name}:{node.lineno}")
                assert isinstance(compact, ast.Constant) and compact.value is True, f"{path}:{node.lineno}"
                assert variant is None or (isinstance(variant, ast.Constant) and variant.value in VARIANTS)
    assert len(calls) >= 10, calls


class Buttons(Screen[None]):
    def compose(self) -> ComposeResult:
        for variant in VARIANTS:
            with Horizontal(classes="row"):
                yield Button(f"{variant} on", variant=variant, compact=True)  # type: ignore[arg-type]
                yield Button(f"{variant} off", variant=variant, compact=True, disabled=True)  # type: ignore[arg-type]

    DEFAULT_CSS = "Buttons Horizontal { height: 1; } Buttons Button { margin-right: 2; }"


def _luminance(color: Color) -> float:
    def channel(value: int) -> float:
        share = value / 255
        return share / 12.92 if share <= 0.03928 else ((share + 0.055) / 1.055) ** 2.4

    red, green, blue = color.get_truecolor()
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(text: Color, face: Color) -> float:
    lighter, darker = sorted((_luminance(text), _luminance(face)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def unreadable(button: Button, theme: str) -> str | None:
    """Why ``button``'s label cannot be read as drawn, or None."""
    lines = button.render_lines(Region(0, 0, button.size.width, button.size.height))
    label = str(button.label)
    drawn = "".join(segment.text for line in lines for segment in line)
    if label not in drawn:
        return f"{theme}: {label!r} drawn as {drawn!r}"
    for line in lines:
        for segment in line:
            style = segment.style
            if not segment.text.strip() or style is None or style.color is None or style.bgcolor is None:
                continue
            text, face = style.color, style.bgcolor
            if text.type is ColorType.TRUECOLOR and face.type is ColorType.TRUECOLOR:
                ratio = contrast(text, face)
                if ratio < LEGIBLE_CONTRAST:
                    return f"{theme}: {label!r} at {ratio:.1f}:1 ({text.name} on {face.name})"
            elif (text == face and not text.is_default) or (text.number in ANSI_BACKGROUNDS and face.is_default):
                return f"{theme}: {label!r} in {text.name} on {face.name}"
    return None


async def test_every_theme_shows_every_buttons_text() -> None:
    app = MdtuiApp(str(TREE_ROOT), privileged=True, theme_dirs=THEME_DIRS, start_screen=Buttons)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        themes = sorted(app.available_themes)
        assert {"mdtui-dark", "mdtui-light", "ansi-dark", "ansi-light", "textual-light"} <= set(themes)
        problems = []
        for theme in themes:
            app.theme = theme
            await pilot.pause()
            buttons = list(app.screen.query(Button))
            assert len(buttons) == 2 * len(VARIANTS)
            # Focused too: the first enabled button of each variant in turn.
            for button in buttons:
                if not button.disabled:
                    button.focus()
                    await pilot.pause()
                problems += [why for why in (unreadable(button, theme),) if why]
        assert not problems, "\n".join(problems)


async def test_the_delete_confirmation_shows_its_buttons_in_ansi_dark() -> None:
    app = MdtuiApp(str(TREE_ROOT), privileged=True, theme_dirs=THEME_DIRS)
    async with app.run_test(size=(80, 24)) as pilot:
        app.theme = "ansi-dark"
        app.push_screen(ConfirmScreen("Delete run #2", Text("This cannot be undone."), "#2", "Delete run"))
        await pilot.pause()
        go = app.screen.query_one("#confirm-go", Button)
        assert go.disabled and unreadable(go, app.theme) is None
        await pilot.press("#", "2")
        assert not go.disabled and unreadable(go, app.theme) is None
        assert unreadable(app.screen.query_one("#confirm-cancel", Button), app.theme) is None
