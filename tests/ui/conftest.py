"""Fixtures for the UI tests: one captured system tree, and apps that read it instead of this machine."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console, RenderableType
from textual.pilot import Pilot

from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.ui.app import MdtuiApp
from mdtui.ui.themes import repo_themes_dir

REPO = Path(__file__).resolve().parents[2]

# The one captured tree every UI test reads: the lab capture with real-hardware link values (see its README).
TREE_ROOT = REPO / "tests" / "fixtures" / "trees" / "real-links"

# Only the shipped themes, so a developer's ~/.config/mdtui/themes cannot change a snapshot.
THEME_DIRS = (repo_themes_dir(),)


@pytest.fixture(scope="session")
def tree_root() -> Path:
    assert TREE_ROOT.is_dir(), f"{TREE_ROOT} is missing"
    return TREE_ROOT


@pytest.fixture(scope="session")
def tree_inventory(tree_root: Path) -> Inventory:
    """What the core finds in the tree: tests derive expectations from it, not from hard-coded names."""
    return scan(tree_root, privileged=True)


@pytest.fixture
def make_app(tree_root: Path) -> Callable[..., MdtuiApp]:
    def make(
        root: str | Path | None = None, privileged: bool | None = True, tree_stands_for_live: bool = True
    ) -> MdtuiApp:
        # The trees stand for a live host (runners and mdadm are faked in the tests that act), unless a test
        # checks that a captured tree is refused as the real app does.
        return MdtuiApp(
            str(root if root is not None else tree_root),
            privileged=privileged,
            theme_dirs=THEME_DIRS,
            tree_stands_for_live=tree_stands_for_live,
        )

    return make


def plain(renderable: RenderableType | object, width: int = 200) -> str:
    """A renderable as plain text, wide enough that nothing wraps."""
    console = Console(width=width, color_system=None, file=io.StringIO())
    console.print(renderable)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


async def settle(pilot: Pilot[None]) -> None:
    """Wait until every scan worker has finished and its message has been handled."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
    # Tables lay their columns out on a later refresh; on a loaded machine a fixed number of message
    # rounds or a fixed delay sometimes let a snapshot catch headers before their widths. Wait until
    # the rendered screen stops changing instead (bounded: a screen that never settles fails its test).
    await pilot.app.animator.wait_until_complete()
    await pilot.pause(0.2)
    previous = pilot.app.export_screenshot()
    for _ in range(50):
        await pilot.pause(0.05)
        current = pilot.app.export_screenshot()
        if current == previous:
            return
        previous = current
