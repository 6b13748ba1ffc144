"""The built wheel, installed into a fresh virtualenv, is the whole app: version, a scan, its own themes,
the man page, shell completion. Dependencies come from the wheel's metadata alone, so one the code
imports but pyproject forgets fails here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from mdtui import __version__

REPO = Path(__file__).resolve().parents[2]
TREE = REPO / "tests" / "fixtures" / "trees" / "real-links"

# Run inside the fresh venv: the app on the captured tree, with no user themes, must pick its own.
APP_CHECK = """
import asyncio, sys
from importlib.resources import files
from mdtui.ui.app import MdtuiApp
from mdtui.ui.themes import shipped_themes_dir

async def main():
    app = MdtuiApp(sys.argv[1], privileged=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        print(shipped_themes_dir())
        names = sorted(entry.name for entry in (files("mdtui") / "themes").iterdir())
        print(app.theme, app.current_theme.primary, names)

asyncio.run(main())
"""


def run(argv: Sequence[str | Path], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, env=env, timeout=timeout, check=False, cwd=env["HOME"]
    )
    assert result.returncode == 0, f"{argv}: {result.stderr[-2000:]}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    base = tmp_path_factory.mktemp("wheel")
    home = base / "home"
    home.mkdir()
    # No XDG_* or MDTUI_* of the developer's: a user theme or database must not decide the result.
    env = {key: value for key, value in os.environ.items() if not key.startswith(("XDG_", "MDTUI_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), PIP_DISABLE_PIP_VERSION_CHECK="1")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", base / "dist", REPO], env)
    (wheel,) = (base / "dist").glob("mdtui-*.whl")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", venv], env)
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", wheel], env)
    yield venv, env


def test_the_wheel_carries_themes_man_page_and_completions(installed: tuple[Path, dict[str, str]]) -> None:
    venv, _env = installed
    share = venv / "share"
    for path in (
        "man/man8/mdtui.8",
        "bash-completion/completions/mdtui",
        "zsh/site-functions/_mdtui",
        "fish/vendor_completions.d/mdtui.fish",
    ):
        assert (share / path).is_file(), path
    (wheel,) = Path(venv.parent / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"mdtui/themes/mdtui-dark.tcss", "mdtui/themes/mdtui-light.tcss"} <= set(names)
    assert not any(name.startswith(("tests/", "themes/")) for name in names)


def test_the_installed_command_runs(installed: tuple[Path, dict[str, str]]) -> None:
    venv, env = installed
    mdtui = venv / "bin" / "mdtui"
    assert run([mdtui, "--version"], env).stdout.strip() == f"mdtui {__version__}"
    scan = run([mdtui, "--root", TREE, "scan"], env).stdout
    assert "md0" in scan and "nvme0n1" in scan
    doctor = run([mdtui, "--root", TREE, "doctor", "--json"], env).stdout
    assert '"name": "md driver"' in doctor


def test_the_installed_app_uses_its_own_theme(installed: tuple[Path, dict[str, str]]) -> None:
    """The checkout's top-level themes/ ship as mdtui/themes: the installed app reads them from its own package
    (not from the checkout) and shows the shipped default's colours."""
    venv, env = installed
    where, shown = run([venv / "bin" / "python", "-c", APP_CHECK, TREE], env).stdout.strip().splitlines()[-2:]
    assert Path(where).is_relative_to(venv) and Path(where).name == "themes", where
    primary = re.search(r"^\$primary:\s*(#[0-9A-Fa-f]+)", (REPO / "themes" / "mdtui-dark.tcss").read_text(), re.M)
    assert primary is not None
    assert shown == f"mdtui-dark {primary.group(1).upper()} ['mdtui-dark.tcss', 'mdtui-light.tcss']", shown


def test_the_installed_command_completes(installed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    venv, env = installed
    answer = tmp_path / "answer"
    line = "mdtui doc"
    completing = {
        **env,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    run([venv / "bin" / "mdtui"], completing, timeout=60)
    assert answer.read_text().split() == ["doctor"]
