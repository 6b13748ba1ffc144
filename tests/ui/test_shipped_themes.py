"""The themes ship inside the package: found through importlib.resources, not beside a checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

import mdtui
from mdtui.ui.themes import DEFAULT_THEME, default_theme_dirs, load_themes, shipped_themes_dir


def test_the_shipped_themes_live_in_the_package() -> None:
    # An installed wheel has no checkout around it: a directory outside the package is not shipped.
    package = Path(mdtui.__file__).resolve().parent
    shipped = Path(str(shipped_themes_dir())).resolve()
    assert shipped.is_relative_to(package)
    names = {theme.name for theme in load_themes([shipped_themes_dir()]).themes}
    assert {DEFAULT_THEME, "mdtui-light"} <= names


def test_a_user_theme_still_overrides_the_shipped_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    mine = tmp_path / "mdtui" / "themes"
    mine.mkdir(parents=True)
    (mine / f"{DEFAULT_THEME}.tcss").write_text("$primary: #123456;\n")
    loaded = load_themes(default_theme_dirs())
    themes = {theme.name: theme for theme in loaded.themes}
    assert themes[DEFAULT_THEME].primary == "#123456" and "mdtui-light" in themes and loaded.problems == ()
