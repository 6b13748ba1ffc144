"""Take the README's pictures of the app: SVG screenshots at 100x30, made by the app itself.

    .venv/bin/python scripts/screenshots.py [OUTDIR]     (default: docs/screenshots)

Each scene opens the app on the captured real-links tree (tests/fixtures/trees/real-links: four NVMe, one of
them on a downgraded link, a raid6 resyncing, a degraded raid1), drives it with keys as a user would, and
saves what the terminal shows. Nothing is run on this machine: a captured tree is read-only.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from mdtui.ui.app import MdtuiApp

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "tests" / "fixtures" / "trees" / "real-links"
SIZE = (100, 30)


async def _settle(pilot: Pilot[None]) -> None:
    for _ in range(20):
        await pilot.pause(0.05)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.2)


async def inventory(pilot: Pilot[None]) -> None:
    await _settle(pilot)


async def array_detail(pilot: Pilot[None]) -> None:
    await _settle(pilot)
    await pilot.press("tab")
    await _settle(pilot)


async def create_plan(pilot: Pilot[None]) -> None:
    """A mirror of the two free disks: the plan preview with its mdadm argv."""
    from textual.widgets import OptionList, Select

    await _settle(pilot)
    await pilot.press("c")
    await _settle(pilot)
    screen = pilot.app.screen
    screen.query_one("#level", Select).value = "raid6"
    await _settle(pilot)
    picker = screen.query_one(OptionList)
    free = [i for i in range(picker.option_count) if not picker.get_option_at_index(i).disabled]
    for index in free[:6]:
        picker.highlighted = index
        await pilot.press("space")
    await _settle(pilot)


async def knobs(pilot: Pilot[None]) -> None:
    await _settle(pilot)
    await pilot.press("tab", "k")
    await _settle(pilot)


async def bench(pilot: Pilot[None]) -> None:
    await _settle(pilot)
    await pilot.press("tab", "b")
    await _settle(pilot)


Scene = Callable[[Pilot[None]], Awaitable[None]]
# name -> (scene, tree): "big" is bench/bigtree.py's generated 48-disk host (free SAS disks to plan with).
SCENES: dict[str, tuple[Scene, str]] = {
    "inventory": (inventory, "real-links"),
    "array": (array_detail, "real-links"),
    "create": (create_plan, "big"),
    "knobs": (knobs, "real-links"),
    "bench": (bench, "real-links"),
}


async def take(name: str, scene: Scene, root: str, outdir: Path, db: Path) -> Path:
    app = MdtuiApp(root, privileged=True, db_path=db)  # run from the tree's parent: a short root
    async with app.run_test(size=SIZE) as pilot:
        await scene(pilot)
        path = outdir / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(outdir))
    return path


async def main(outdir: Path) -> None:
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    from bench.bigtree import build

    with tempfile.TemporaryDirectory() as scratch:
        build(Path(scratch) / "big-host", 48)
        for name, (scene, tree) in SCENES.items():
            os.chdir(TREE.parent if tree == "real-links" else scratch)
            root = TREE.name if tree == "real-links" else "big-host"
            path = await take(name, scene, root, outdir, Path(scratch) / "results.db")
            print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "screenshots"))
