"""Snapshots of the create screen (three NVMe members, raid5) at 80×24 over SSH and on a wide terminal."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from mdtui.ui.app import MdtuiApp
from mdtui.ui.inventory import screen as inventory_screen

from .conftest import THEME_DIRS, settle
from .create_inventory import FREE_INVENTORY

SnapCompare = Callable[..., bool]


@pytest.fixture
def create_app(tree_root: Path, monkeypatch: pytest.MonkeyPatch) -> MdtuiApp:
    monkeypatch.chdir(tree_root.parent)
    monkeypatch.setattr(inventory_screen, "scan", lambda root, *, privileged=None: FREE_INVENTORY)
    return MdtuiApp(tree_root.name, privileged=True, theme_dirs=THEME_DIRS, tree_stands_for_live=True)


async def three_members(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("c")
    await pilot.pause()
    await pilot.press("space", "down", "space", "down", "space", "down", "s")
    await pilot.pause()
    await pilot.pause()


def test_create_80x24(snap_compare: SnapCompare, create_app: MdtuiApp) -> None:
    assert snap_compare(create_app, terminal_size=(80, 24), run_before=three_members)


def test_create_160x48(snap_compare: SnapCompare, create_app: MdtuiApp) -> None:
    assert snap_compare(create_app, terminal_size=(160, 48), run_before=three_members)


def test_confirm_80x24(snap_compare: SnapCompare, create_app: MdtuiApp) -> None:
    async def confirm(pilot: Pilot[None]) -> None:
        await three_members(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press(*"/dev/md")
        await pilot.pause()

    assert snap_compare(create_app, terminal_size=(80, 24), run_before=confirm)
