"""Snapshot tests: the inventory as an admin sees it at 80×24 over SSH and on a wide terminal.

Every snapshot reads a captured tree (or a crafted inventory) as privileged, with only the shipped
themes, and names the root by a relative path so the checkout's location never shows.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from mdtui.model.inventory import Inventory
from mdtui.ui.app import MdtuiApp
from mdtui.ui.inventory import screen as inventory_screen

from .conftest import THEME_DIRS, settle
from .test_inventory_screen import CRAFTED

SnapCompare = Callable[..., bool]


@pytest.fixture
def tree_app(tree_root: Path, monkeypatch: pytest.MonkeyPatch) -> MdtuiApp:
    monkeypatch.chdir(tree_root.parent)
    return MdtuiApp(tree_root.name, privileged=True, theme_dirs=THEME_DIRS)


def test_inventory_80x24(snap_compare: SnapCompare, tree_app: MdtuiApp) -> None:
    assert snap_compare(tree_app, terminal_size=(80, 24), run_before=settle)


def test_inventory_160x48(snap_compare: SnapCompare, tree_app: MdtuiApp) -> None:
    assert snap_compare(tree_app, terminal_size=(160, 48), run_before=settle)


def test_inventory_160x48_array_with_sync(
    snap_compare: SnapCompare, tree_app: MdtuiApp, tree_inventory: Inventory
) -> None:
    index = next(i for i, a in enumerate(tree_inventory.arrays) if a.sync and a.sync.eta_seconds)

    async def select_syncing_array(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("tab", *["down"] * index)
        await pilot.pause()

    assert snap_compare(tree_app, terminal_size=(160, 48), run_before=select_syncing_array)


def test_help_80x24(snap_compare: SnapCompare, tree_app: MdtuiApp) -> None:
    async def open_help(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(tree_app, terminal_size=(80, 24), run_before=open_help)


def test_downgraded_link_read_only_80x24(
    snap_compare: SnapCompare, tree_app: MdtuiApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inventory_screen, "scan", lambda root, *, privileged=None: CRAFTED)
    assert snap_compare(tree_app, terminal_size=(80, 24), run_before=settle)
