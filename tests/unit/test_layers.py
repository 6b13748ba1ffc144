"""The core never loads Textual: import every core module in a fresh interpreter and look."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import mdtui

ROOT = Path(mdtui.__path__[0]).parent
CORE_CONTRACT = "The core never imports Textual or the UI"


def core_sources() -> list[str]:
    """The core as the import contract names it (pyproject.toml), so a package added there is checked here."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    return next(c["source_modules"] for c in contracts if c["name"] == CORE_CONTRACT)


def core_modules() -> list[str]:
    names = []
    for source in core_sources():
        names.append(source)
        package = ROOT / source.replace(".", "/")
        if package.is_dir():
            names += [info.name for info in pkgutil.walk_packages([str(package)], prefix=f"{source}.")]
    return names


def test_the_core_is_every_package_but_the_ui() -> None:
    """Every package and top-level module of mdtui but ui and the entry point is in the contract."""
    sources = set(core_sources())
    everything = {f"mdtui.{info.name}" for info in pkgutil.iter_modules([str(ROOT / "mdtui")])}
    assert everything - sources == {"mdtui.ui", "mdtui.__main__"}, sorted(everything - sources)


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
    root = ROOT
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    mapped = setuptools.get("package-dir", {})
    found = {
        ".".join(init.parent.relative_to(root).parts) for init in (root / "mdtui").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    # The rest are data directories shipped as packages (the themes, read through importlib.resources), some
    # mapped from elsewhere in the checkout (package-dir: mdtui.themes is the top-level themes/).
    missing = [name for name in listed - found if not (root / mapped.get(name, name.replace(".", "/"))).is_dir()]
    assert not missing, f"listed in [tool.setuptools] packages but not in the checkout: {missing}"
