"""The theme picked is remembered in the user's config (written without following links, checked when read)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mdtui.ui.app import MdtuiApp
from mdtui.ui.themes import repo_themes_dir, save_theme, saved_theme

THEME_DIRS = (repo_themes_dir(),)


def make(tree: Path, config: Path) -> MdtuiApp:
    return MdtuiApp(str(tree), privileged=True, theme_dirs=THEME_DIRS, config_path=config)


async def test_theme_is_remembered_across_restarts(tree_root: Path, tmp_path: Path) -> None:
    config = tmp_path / "mdtui" / "config.json"
    app = make(tree_root, config)
    async with app.run_test() as pilot:
        assert app.theme == "mdtui-dark"
        app.theme = "textual-light"
        await pilot.pause()
    assert json.loads(config.read_text())["theme"] == "textual-light"
    assert os.stat(config).st_mode & 0o077 == 0
    again = make(tree_root, config)
    assert again.theme == "textual-light"


def test_bad_config_is_ignored_with_one_line(tree_root: Path, tmp_path: Path) -> None:
    config = tmp_path / "mdtui" / "config.json"
    config.parent.mkdir(mode=0o700)
    config.write_text("{not json")
    app = make(tree_root, config)
    assert app.theme == "mdtui-dark"
    assert app._theme_problems == (f"{config} is not JSON; ignored",)
    config.write_text(json.dumps({"theme": "../../etc/passwd"}))
    assert saved_theme(config)[0] is None and "not a theme name" in (saved_theme(config)[1] or "")
    config.write_text(json.dumps({"theme": "no-such-theme"}))
    assert make(tree_root, config).theme == "mdtui-dark"


def test_config_through_a_link_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"theme": "textual-light"}))
    directory = tmp_path / "mdtui"
    directory.mkdir(mode=0o700)
    (directory / "config.json").symlink_to(elsewhere)
    name, problem = saved_theme(directory / "config.json")
    assert name is None and problem is not None and "symbolic link" in problem
    # Writing replaces the link itself (rename in the directory), never the file it points at.
    assert save_theme(directory / "config.json", "mdtui-dark") is None
    assert json.loads(elsewhere.read_text())["theme"] == "textual-light"
    assert not (directory / "config.json").is_symlink()
