"""The themes live at the top of the checkout (themes/, the project's layout) and ship as package data
mdtui/themes (tests/unit/test_wheel_install.py proves the installed app uses those)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import mdtui
from mdtui.ui.themes import DEFAULT_THEME, default_theme_dirs, load_themes, shipped_themes_dir

REPO = Path(mdtui.__file__).resolve().parents[1]


def test_the_shipped_themes_are_the_checkout_s_top_level_themes() -> None:
    assert not (REPO / "mdtui" / "themes").exists(), "the themes belong in the top-level themes/"
    assert Path(str(shipped_themes_dir())).resolve() == REPO / "themes"
    names = {theme.name for theme in load_themes([shipped_themes_dir()]).themes}
    assert {DEFAULT_THEME, "mdtui-light"} <= names
    # Packaged from there: setuptools maps the package mdtui.themes to themes/ and ships its *.tcss.
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"]["mdtui.themes"] == "themes" and "mdtui.themes" in setuptools["packages"]
    assert setuptools["package-data"]["mdtui.themes"] == ["*.tcss"]


def test_a_user_theme_still_overrides_the_shipped_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    mine = tmp_path / "mdtui" / "themes"
    mine.mkdir(parents=True)
    (mine / f"{DEFAULT_THEME}.tcss").write_text("$primary: #123456;\n")
    loaded = load_themes(default_theme_dirs())
    themes = {theme.name: theme for theme in loaded.themes}
    assert themes[DEFAULT_THEME].primary == "#123456" and "mdtui-light" in themes and loaded.problems == ()
