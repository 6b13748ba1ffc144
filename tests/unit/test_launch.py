"""The app's launches parse as the full parser parses them, without the CLI verbs, and load only the first screen."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mdtui.cli.launch import app_launch_args
from mdtui.cli.main import build_parser

LAUNCHES = (
    [],
    ["--root", "/tmp/tree"],
    ["--root=/tmp/tree"],
    ["watch"],
    ["watch", "md0"],
    ["--root", "/tmp/tree", "watch", "/dev/md1", "--interval", "0.25"],
)
NOT_LAUNCHES = (
    ["scan"],
    ["--root", "/tmp/tree", "scan", "--json"],
    ["watch", "--json"],
    ["watch", "--js"],  # an abbreviation the full parser takes for --json
    ["watch", "--help"],
    ["--version"],
    ["--ro", "/tmp/tree"],
)
# Modules the first screen does not need: every CLI verb, the screens and dialogs opened from the
# inventory, the results store, the boot/monitor rows of an array's detail, and the start-up checks
# that only the live system runs (knobs and arrays a killed run left behind, the first-run guide).
NOT_AT_LAUNCH = (
    "mdtui.cli.main",
    "mdtui.cli.bench",
    "mdtui.cli.advise",
    "mdtui.ui.bench.screen",
    "mdtui.ui.create.screen",
    "mdtui.ui.watch.screen",
    "mdtui.ui.help.screen",
    "mdtui.ui.guide.screen",
    "mdtui.ui.results.screen",
    "mdtui.ui.dialogs.detail",
    "mdtui.ui.dialogs.confirm",
    "mdtui.store.runs",
    "sqlite3",
    "mdtui.keep.summary",
    "mdtui.tune.journal",
    "mdtui.execute.leftovers",
    "mdtui.advise.guide",
    "mdtui.probe.smart",
)


@pytest.mark.parametrize("argv", LAUNCHES, ids=" ".join)
def test_a_launch_parses_as_the_full_parser_parses_it(argv: list[str]) -> None:
    assert vars(app_launch_args(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", NOT_LAUNCHES, ids=" ".join)
def test_anything_else_is_left_to_the_full_parser(argv: list[str]) -> None:
    assert app_launch_args(argv) is None


def test_the_inventory_launch_loads_no_verb_and_no_other_screen() -> None:
    code = (
        "import sys\n"
        "import mdtui.__main__, mdtui.ui.app, mdtui.ui.inventory.screen\n"
        "from mdtui.cli.launch import app_launch_args\n"
        "app_launch_args(['--root', '/tmp/tree'])\n"
        f"print(' '.join(name for name in {NOT_AT_LAUNCH!r} if name in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == "", f"loaded at launch: {result.stdout.strip()}"
