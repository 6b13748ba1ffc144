"""Growing an array from the inventory (e): the form asks what to change, the plan the CLI prints is shown with
the array's name to type, refusals are named, and only the planned argv runs. The captured tree stands for a
live host in a copy (tmp_path) whose md0 has finished its resync; mdadm is faked, nothing reaches a device."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Input, Select
from trees import idle_copy

from mdtui.command import CommandResult
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.ui.app import MdtuiApp
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.inventory.grow import GrowForm

from .conftest import plain
from .test_lifecycle import handled, open_array

MakeApp = Callable[..., MdtuiApp]


@pytest.fixture
def idle_host(tree_root: Path, tmp_path: Path) -> Path:
    """The tree with md0's resync finished, standing for a live host."""
    return idle_copy(tmp_path / "host", tree_root)


async def plan_from_form(pilot: Any, change: str, *, disk: str | None = None, value: str | None = None) -> None:
    await pilot.press("e")
    await pilot.pause()
    form = pilot.app.screen
    assert isinstance(form, GrowForm)
    form.query_one("#grow-change", Select).value = change
    await pilot.pause()
    if disk is not None:
        form.query_one("#grow-disk", Select).value = disk
    if value is not None:
        form.query_one("#grow-value", Input).value = value
    form.query_one("#grow-plan", Button).press()
    await handled(pilot)


async def test_grow_shows_the_plan_and_runs_only_its_argv(
    make_app: MakeApp, idle_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inventory = scan(idle_host, privileged=True)
    md0 = inventory.array("md0")
    assert md0 is not None and md0.sync is None
    free = next(d for d in inventory.disks if not d.in_use and (d.size_bytes or 0) >= (md0.component_bytes or 0))
    ran: list[tuple[str, ...]] = []

    def fake_run(argv: list[str], **kw: object) -> CommandResult:
        ran.append(tuple(argv))
        return CommandResult(tuple(argv), 0, "", "", 0.1)

    monkeypatch.setattr("mdtui.actionlog.run_command", fake_run)
    monkeypatch.setattr("mdtui.keep.grow.recheck", lambda plan, system: None)  # the copy has no devices to probe
    app = make_app(idle_host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, inventory, "md0")
        await plan_from_form(pilot, "add", disk=free.name)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == "md0"
        text = plain(dialog._body)
        assert "mdadm --grow /dev/md0 --raid-devices=5" in text and "capacity:" in text and "time:" in text
        assert f"writes {free.name}" in text
        planned = [line.split(". ", 1)[1].strip() for line in text.splitlines() if ". mdadm" in line]
        await pilot.press(*free.name, "enter")  # the disk's name is not the array's: nothing runs
        assert ran == [] and app.screen is dialog
        dialog.query_one("#confirm-input").value = ""  # type: ignore[attr-defined]
        await pilot.press(*"md0", "enter")
        await handled(pilot)
    assert [" ".join(argv) for argv in ran] == planned


@pytest.mark.parametrize(
    ("array", "change", "value", "words"),
    [
        ("md2", "level", "5", "cannot reshape a raid10 with a far layout"),  # raid10 far-2
        ("md1", "size-max", None, "md1 is degraded"),
    ],
)
async def test_grow_refusals_are_named(
    make_app: MakeApp, tree_inventory: Inventory, idle_host: Path, array: str, change: str, value: str | None,
    words: str,
) -> None:  # fmt: skip
    app = make_app(idle_host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, array)
        await plan_from_form(pilot, change, value=value)
        refusal = app.screen
        assert isinstance(refusal, DetailScreen) and words in plain(refusal._body)


async def test_on_a_captured_tree_grow_shows_the_plan_the_cli_prints_and_runs_nothing(
    make_app: MakeApp, idle_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As persist, scrub and repair do on a tree (issue 44): e opens the form and shows the plan `mdtui grow
    --dry-run` prints on the same tree, instead of only "read-only"."""
    import contextlib
    import io

    from mdtui.cli.main import main

    ran: list[object] = []
    monkeypatch.setattr("mdtui.actionlog.run_command", lambda *args, **kw: ran.append(args))
    inventory = scan(idle_host)
    md0 = inventory.array("md0")
    assert md0 is not None and md0.sync is None
    free = next(d for d in inventory.disks if not d.in_use and (d.size_bytes or 0) >= (md0.component_bytes or 0))
    app = make_app(idle_host, tree_stands_for_live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, inventory, "md0")
        await plan_from_form(pilot, "add", disk=free.name)
        dialog = app.screen
        assert isinstance(dialog, DetailScreen) and dialog._title.endswith("(the plan)"), dialog
        shown = " ".join(plain(dialog._body).split())
    assert ran == []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--root", str(idle_host), "grow", "md0", "--add", free.name, "--dry-run"]) == 0
    argv = [" ".join(line.split()) for line in out.getvalue().splitlines() if "mdadm " in line]
    assert argv and all(line in shown for line in argv), (argv, shown)
