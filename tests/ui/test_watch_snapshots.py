"""Snapshots of the watch dashboard at 80x24 and 160x48, fed fixed snapshots (no clock, no live sampler)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from .test_watch_screen import feed, watch_app
from .watch_tree import WatchTree

SnapCompare = Callable[..., bool]


def slow_member_tree(root: Path, **options: object) -> WatchTree:
    """The weakest link (docs/findings.md, finding 1): one member saturated and slow while its peers idle along."""
    tree = WatchTree(root, **options)  # type: ignore[arg-type]
    tree.busy_percent["nvme3n1"] = 100.0
    tree.await_ms["nvme3n1"] = 8.0
    return tree


def fed(tree: WatchTree, ticks: int = 30) -> Callable[[Pilot[None]], object]:
    async def run_before(pilot: Pilot[None]) -> None:
        await feed(pilot, tree, ticks)

    return run_before


def test_watch_80x24_slow_member(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(watch_app(), terminal_size=(80, 24), run_before=fed(slow_member_tree(tmp_path)))


def test_watch_160x48_slow_member(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(watch_app(), terminal_size=(160, 48), run_before=fed(slow_member_tree(tmp_path)))


def test_watch_80x24_raid6_without_cpufreq(snap_compare: SnapCompare, tmp_path: Path) -> None:
    tree = WatchTree(tmp_path, level="raid6", cpufreq=False)
    assert snap_compare(watch_app(), terminal_size=(80, 24), run_before=fed(tree))
