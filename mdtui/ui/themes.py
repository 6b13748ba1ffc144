"""Themes the user can pick: `$variable: value;` files shipped with mdtui (the checkout's themes/, installed as
mdtui/themes) and in ~/.config/mdtui/themes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal, TypedDict, get_args

from textual.color import Color, ColorParseError
from textual.theme import Theme

from mdtui.state_dir import StateDir, UnsafeStateError, env_location, home_dir

DEFAULT_THEME = "mdtui-dark"
FALLBACK_THEME = "textual-dark"

# Theme fields a file may set; every other `$name` becomes a free theme variable. _ThemeColors names the
# same fields, so that mypy checks each against Theme's parameters.
_ColorField = Literal[
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
]
_COLOR_FIELDS: tuple[_ColorField, ...] = get_args(_ColorField)


class _ThemeColors(TypedDict, total=False):
    primary: str
    secondary: str
    warning: str
    error: str
    success: str
    accent: str
    foreground: str
    background: str
    surface: str
    panel: str
    boost: str


_DECLARATION = re.compile(r"^\s*\$([A-Za-z0-9_-]+)\s*:\s*(.+?)\s*;?\s*$")
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


@dataclass(frozen=True)
class ThemeLoad:
    themes: tuple[Theme, ...]
    problems: tuple[str, ...]  # one sentence per file that could not be used


def shipped_themes_dir() -> Traversable:
    """The shipped themes: package data ``mdtui/themes`` in an installed wheel, read through importlib.resources;
    in a checkout (an editable install, or the lab's PYTHONPATH) the top-level ``themes/`` that setuptools maps
    there (pyproject's package-dir), found beside the package only where a pyproject.toml says it is a checkout.
    """
    installed = files("mdtui") / "themes"
    if installed.is_dir():
        return installed
    checkout = Path(str(files("mdtui"))).parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "themes").is_dir():
        return checkout / "themes"
    return installed  # missing: load_themes skips it and the app falls back to Textual's own theme


# The tests' name for the shipped themes.
repo_themes_dir = shipped_themes_dir


def user_config_dir() -> Path:
    """$XDG_CONFIG_HOME/mdtui; under sudo only a root-owned $XDG_CONFIG_HOME, else root's own ~/.config."""
    try:
        config = env_location("XDG_CONFIG_HOME")
    except UnsafeStateError:
        config = None
    return Path(config or home_dir() / ".config") / "mdtui"


def user_themes_dir() -> Path:
    return user_config_dir() / "themes"


def user_config_path() -> Path:
    """Where the app's choices (the theme) are kept between runs."""
    return user_config_dir() / "config.json"


_THEME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_CONFIG_LIMIT = 64 << 10  # a few names; anything bigger is not ours


def _read_config(path: Path) -> dict[str, object]:
    """The config's JSON object; {} when there is none. Raises ValueError with a sentence when unusable."""
    try:
        data = StateDir(path.parent).read(path.name, limit=_CONFIG_LIMIT)
    except UnsafeStateError as exc:
        raise ValueError(str(exc)) from None
    if data is None:
        return {}
    try:
        config = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise ValueError(f"{path} is not JSON; ignored") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path} is not a JSON object; ignored")
    return config


def saved_theme(path: Path) -> tuple[str | None, str | None]:
    """(the theme the user last picked, or None; one sentence when the file could not be used, or None)."""
    try:
        config = _read_config(path)
    except ValueError as exc:
        return None, str(exc)
    name = config.get("theme")
    if name is None:
        return None, None
    if not isinstance(name, str) or not _THEME_NAME.match(name):
        return None, f"{path}: theme {str(name)[:40]!r} is not a theme name; ignored"
    return name, None


def save_theme(path: Path, name: str) -> str | None:
    """Remember ``name`` (other settings in the file are kept); a sentence when it could not be written."""
    try:
        config = _read_config(path)
    except ValueError:
        config = {}  # an unusable file is replaced by one that works
    config["theme"] = name
    try:
        StateDir(path.parent).write(path.name, (json.dumps(config, indent=2) + "\n").encode())
    except (UnsafeStateError, OSError) as exc:
        return f"The theme is not remembered: {exc}"
    return None


def default_theme_dirs() -> tuple[Traversable, ...]:
    """Shipped themes first, so a user file with the same name overrides a shipped one."""
    return (shipped_themes_dir(), user_themes_dir())


def parse_theme(text: str, name: str) -> Theme:
    """Build a Theme from `$field: value;` lines. Raises ValueError with a sentence on bad content."""
    values: dict[str, str] = {}
    for line in _COMMENT.sub("", text).splitlines():
        if not line.strip():
            continue
        match = _DECLARATION.match(line)
        if match is None:
            raise ValueError(f"cannot read line {line.strip()!r} (expected `$name: value;`)")
        values[match.group(1)] = match.group(2)
    name = values.pop("name", name)
    dark_text = values.pop("dark", "true").lower()
    if dark_text not in ("true", "false"):
        raise ValueError(f"$dark must be true or false, not {dark_text!r}")
    fields: _ThemeColors = {}
    for field in _COLOR_FIELDS:
        if field in values:
            color = values.pop(field)
            try:
                Color.parse(color)
            except ColorParseError as exc:
                raise ValueError(f"${field}: {exc}") from None
            fields[field] = color
    if "primary" not in fields:
        raise ValueError("$primary is required")
    return Theme(name=name, dark=dark_text == "true", variables=values, **fields)


def load_themes(dirs: Iterable[Traversable]) -> ThemeLoad:
    """Every *.tcss theme in ``dirs`` (directories or package resources); a later one overrides an earlier by name."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for directory in dirs:
        try:
            if not directory.is_dir():
                continue
            entries = sorted((entry for entry in directory.iterdir() if entry.name.endswith(".tcss")), key=_name)
        except OSError as exc:
            problems.append(f"Themes in {directory} skipped: {exc}")
            continue
        for path in entries:
            try:
                theme = parse_theme(path.read_text(encoding="utf-8"), path.name.removesuffix(".tcss"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                problems.append(f"Theme {path} skipped: {exc}")
                continue
            themes[theme.name] = theme
    return ThemeLoad(themes=tuple(themes.values()), problems=tuple(problems))


def _name(entry: Traversable) -> str:
    return entry.name


def pick_default(names: Sequence[str]) -> str:
    return DEFAULT_THEME if DEFAULT_THEME in names else FALLBACK_THEME
