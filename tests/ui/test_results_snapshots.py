"""Snapshots of the results history and compare views at 80×24 (over SSH) and 160×48.

The database is made fresh in the test's directory through the store (fixed timestamps and IDs), the
clock is UTC, and the working directory is the database's, so the path shows as "results.db".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from mdtui.ui.app import MdtuiApp

from .conftest import THEME_DIRS, TREE_ROOT, settle
from .results_data import fill, utc_clock
from .test_results_screen import mark

SnapCompare = Callable[..., bool]


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    with utc_clock():
        yield


@pytest.fixture
def ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    monkeypatch.chdir(tmp_path)
    return fill(tmp_path / "results.db")


@pytest.fixture
def app(ids: dict[str, int]) -> MdtuiApp:
    return MdtuiApp(str(TREE_ROOT), privileged=True, theme_dirs=THEME_DIRS, db_path="results.db")


async def open_history(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("h")
    await settle(pilot)


def comparing(ids: dict[str, int]) -> Callable[[Pilot[None]], object]:
    """Finding 4 (docs/findings.md): one SAS SSD as the baseline against RAID0, RAID10 and RAID5 of four."""

    async def run_before(pilot: Pilot[None]) -> None:
        await open_history(pilot)
        baseline = ids["single SAS SSD"]
        await mark(pilot, ids["raid5 x4"], ids["raid10 x4"], ids["raid0 x4"], baseline, baseline=baseline)
        await pilot.press("c")
        await settle(pilot)

    return run_before


def test_history_80x24(snap_compare: SnapCompare, app: MdtuiApp) -> None:
    assert snap_compare(app, terminal_size=(80, 24), run_before=open_history)


def test_history_160x48(snap_compare: SnapCompare, app: MdtuiApp, ids: dict[str, int]) -> None:
    async def marked(pilot: Pilot[None]) -> None:
        await open_history(pilot)
        await mark(pilot, ids["raid5 2M"], ids["raid5 4K"], baseline=ids["raid5 4K"])

    assert snap_compare(app, terminal_size=(160, 48), run_before=marked)


def test_compare_80x24(snap_compare: SnapCompare, app: MdtuiApp, ids: dict[str, int]) -> None:
    assert snap_compare(app, terminal_size=(80, 24), run_before=comparing(ids))


def test_compare_160x48(snap_compare: SnapCompare, app: MdtuiApp, ids: dict[str, int]) -> None:
    assert snap_compare(app, terminal_size=(160, 48), run_before=comparing(ids))


def test_normalised_sweep_80x24(snap_compare: SnapCompare, app: MdtuiApp, ids: dict[str, int]) -> None:
    """Finding 5 (docs/findings.md): RAID5 chunk sweep ÷ (raw HDD × 2 data disks)."""

    async def normalised(pilot: Pilot[None]) -> None:
        await open_history(pilot)
        sweep = [ids["raid5 4K"], ids["raid5 512K"], ids["raid5 2M"]]
        await mark(pilot, *sweep, baseline=sweep[0])
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("v")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=normalised)
