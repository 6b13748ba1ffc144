"""Snapshots of the benchmark screen at 80×24: choosing a preset, and a finished weakest-link run.

The finished run uses the canned runner of test_bench_screen (fio cannot run on a captured tree), so
every figure, chart point and stored run ID is the same on every machine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from mdtui.bench import session
from mdtui.ui.app import MdtuiApp
from mdtui.ui.bench.screen import BenchScreen

from .conftest import THEME_DIRS
from .test_bench_screen import CannedRunner, open_bench, wait_until

SnapCompare = Callable[..., bool]


@pytest.fixture
def tree_app(tree_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> MdtuiApp:
    monkeypatch.chdir(tree_root.parent)
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "results.db"))
    monkeypatch.setattr(session, "run_step", CannedRunner())
    return MdtuiApp(tree_root.name, privileged=True, theme_dirs=THEME_DIRS, tree_stands_for_live=True)


def test_bench_setup_80x24(snap_compare: SnapCompare, tree_app: MdtuiApp) -> None:
    async def open_on_md0(pilot: Pilot[None]) -> None:
        await open_bench(pilot, "arrays")

    assert snap_compare(tree_app, terminal_size=(80, 24), run_before=open_on_md0)


def test_bench_weakest_link_result_80x24(snap_compare: SnapCompare, tree_app: MdtuiApp) -> None:
    async def run_to_the_end(pilot: Pilot[None]) -> None:
        screen = await open_bench(pilot, "arrays")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(screen, BenchScreen) and screen.state == "ended")
        await pilot.pause()

    assert snap_compare(tree_app, terminal_size=(80, 24), run_before=run_to_the_end)
