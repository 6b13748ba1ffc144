"""The core never loads Textual: import every core module in a fresh interpreter and look."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import mdtui

CORE_PACKAGES = ("model", "probe", "plan", "run", "sample", "store", "bench", "advise", "cli")
CORE_MODULES = ("mdtui.format", "mdtui.errors", "mdtui.safefile", "mdtui.command", "mdtui.numbers")


def core_modules() -> list[str]:
    names = list(CORE_MODULES)
    path = mdtui.__path__[0]
    for package in CORE_PACKAGES:
        names.append(f"mdtui.{package}")
        for info in pkgutil.walk_packages([f"{path}/{package}"], prefix=f"mdtui.{package}."):
            names.append(info.name)
    return names


def test_core_modules_do_not_load_textual() -> None:
    modules = core_modules()
    assert len(modules) > 10
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'textual_plotext', 'plotext')"
        " or m.startswith('mdtui.ui'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"core modules loaded UI modules: {result.stdout.strip()}"


def test_every_package_is_listed_for_setuptools() -> None:
    """pyproject lists packages by hand (discovery would walk the link cycles of the fixture trees)."""
    import tomllib
    from pathlib import Path

    root = Path(mdtui.__path__[0]).parent
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(root).parts) for init in (root / "mdtui").rglob("__init__.py")
    }
    assert found == listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
