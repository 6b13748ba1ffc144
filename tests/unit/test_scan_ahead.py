"""The inventory's launch: its first scan begun first (probe.inventory.ScanAhead: the steps of scan_in_steps, no
others), and the garbage collector paused until the first screen is drawn (cli.launch.pause_collector)."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdtui import __main__ as launch
from mdtui.cli.launch import pause_collector
from mdtui.errors import ProbeError
from mdtui.model.inventory import Inventory
from mdtui.probe import inventory as core_inventory
from mdtui.probe.inventory import FIRST_DISKS, ScanAhead, scan, scan_in_steps, screenful

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


@pytest.mark.parametrize("first", [None, 4, 64])
def test_its_steps_are_those_of_scan_in_steps(first: int | None) -> None:
    ahead = ScanAhead(TREE, privileged=True, first=first)
    assert list(ahead.steps()) == list(scan_in_steps(TREE, privileged=True, first=first))


def test_the_first_step_shown_early_is_not_given_again() -> None:
    ahead = ScanAhead(TREE, privileged=True, first=4)
    assert ahead.wait(30)
    expected = list(scan_in_steps(TREE, privileged=True, first=4))
    assert len(expected) == 2
    assert ahead.ready() == expected[0]
    assert list(ahead.steps()) == expected[1:]
    assert expected[-1] == (scan(TREE, privileged=True), ())


def test_the_first_step_is_probed_in_its_own_thread_and_ready_never_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    probed_in: list[str] = []
    real = core_inventory.scan_in_steps

    def held(root: str, *, privileged: bool | None = None, first: int | None = None) -> Iterator[
        tuple[Inventory, tuple[str, ...]]
    ]:
        probed_in.append(threading.current_thread().name)
        assert release.wait(30)
        yield from real(root, privileged=privileged, first=first)

    monkeypatch.setattr(core_inventory, "scan_in_steps", held)
    ahead = ScanAhead(TREE, privileged=True, first=4)
    assert not ahead.wait(0.05)
    assert ahead.ready() is None  # still probing: nothing to show, and no wait
    release.set()
    assert list(ahead.steps()) == list(real(TREE, privileged=True, first=4))  # ready() took nothing
    assert probed_in == ["mdtui-first-scan"]


def test_a_failing_scan_raises_its_error_where_the_steps_are_taken(tmp_path: Path) -> None:
    ahead = ScanAhead(tmp_path, first=4)
    assert ahead.wait(30)
    assert ahead.ready() is None
    with pytest.raises(ProbeError, match="neither / nor a captured tree"):
        next(ahead.steps())


@pytest.mark.parametrize(("height", "first"), [(10, FIRST_DISKS), (48, FIRST_DISKS), (50, 25), (120, 60)])
def test_a_screenful_covers_half_the_terminal_and_at_least_the_minimum(height: int, first: int) -> None:
    assert screenful(height) == first


def test_the_inventory_launch_hands_the_app_a_scan_begun_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from mdtui.ui import app

    given: dict[str, object] = {}
    collecting: list[bool] = []

    def run_app(**kwargs: object) -> int:
        given.update(kwargs)
        collecting.append(gc.isenabled())
        return 0

    monkeypatch.setattr(app, "run_app", run_app)
    monkeypatch.setattr(launch.shutil, "get_terminal_size", lambda: os.terminal_size((160, 60)))
    assert gc.isenabled()
    try:
        assert launch.main(["--root", str(TREE)]) == 0
    finally:
        gc.unfreeze()
    ahead, drawn = given["scan_ahead"], given["first_screen_drawn"]
    assert given["root"] == str(TREE)
    assert isinstance(ahead, ScanAhead)
    # A captured tree is read as root would read it (privileged None), a screenful of disks first.
    assert list(ahead.steps()) == list(scan_in_steps(TREE, privileged=True, first=screenful(60)))
    # The collector waits for the first screen, and the app is given what restarts it.
    assert collecting == [False]
    assert callable(drawn)
    drawn()
    assert gc.isenabled()


def test_the_collector_paused_for_the_launch_restarts_once() -> None:
    assert gc.isenabled()
    restart = pause_collector()
    try:
        assert not gc.isenabled()
        restart()
        assert gc.isenabled()
        gc.disable()  # someone else's pause: a second call does not undo it
        restart()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nothing_is_paused_or_restarted_when_the_collector_is_off() -> None:
    gc.disable()
    try:
        restart = pause_collector()
        restart()
        assert not gc.isenabled()
    finally:
        gc.enable()
