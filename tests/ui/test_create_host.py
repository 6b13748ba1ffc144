"""Pilot tests of the create form against what the host offers: mixed disk sizes and the md driver."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import Button, Checkbox, Static

from mdtui.model.inventory import Inventory
from mdtui.ui.app import MdtuiApp
from mdtui.ui.create import form as cf
from mdtui.ui.create.screen import CreateScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.inventory import screen as inventory_screen

from .conftest import plain, settle
from .create_inventory import FREE_INVENTORY, FREE_NVME

MakeApp = Callable[..., MdtuiApp]

# A 1 TB NVMe beside two 8 GB ones: raid5 would leave most of the big disk unused.
SMALL = tuple(replace(disk, size_bytes=8_000_000_000) for disk in FREE_NVME[1:3])
MIXED_INVENTORY = replace(FREE_INVENTORY, disks=(FREE_NVME[0], *SMALL, *FREE_INVENTORY.disks[5:]))


def use_inventory(monkeypatch: pytest.MonkeyPatch, inventory: Inventory) -> None:
    monkeypatch.setattr(inventory_screen, "scan", lambda root, *, privileged=None: inventory)


def preview_text(app: MdtuiApp) -> str:
    return " ".join(plain(app.screen.query_one("#preview-body", Static).content, width=400).split())


async def open_create(pilot, members: int) -> CreateScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    await pilot.press("c")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CreateScreen)
    keys: list[str] = []
    for index in range(members):
        keys += ["down"] * bool(index) + ["space"]
    await pilot.press(*keys)
    await pilot.pause()
    return screen


def tree_copy(tree_root: Path, tmp_path: Path, mdstat: str | None) -> Path:
    """The captured tree with /proc/mdstat replaced by ``mdstat``, or removed (a host without the md driver)."""
    root = tmp_path / "tree"
    shutil.copytree(tree_root, root, symlinks=True)
    target = root / "proc" / "mdstat"
    if mdstat is None:
        target.unlink()
    else:
        target.write_text(mdstat)
    return root


async def test_mixed_sizes_are_refused_until_the_form_allows_them(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_inventory(monkeypatch, MIXED_INVENTORY)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        text = preview_text(app)
        # The problem names the control that lifts it, not the CLI's words.
        assert "would go unused" in text and f"tick “{cf.MIXED_SIZES_LABEL}”" in text
        assert screen.query_one("#create", Button).disabled
        mixed = screen.query_one("#mixed-sizes", Checkbox)
        assert str(mixed.label) == cf.MIXED_SIZES_LABEL and not mixed.disabled
        mixed.value = True
        await pilot.pause()
        await pilot.pause()
        assert screen.form.allow_mixed_sizes
        assert screen.result.plan is not None and screen.result.plan.request.allow_mixed_sizes
        assert not screen.query_one("#create", Button).disabled


async def test_linear_has_no_mixed_sizes_to_allow(make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    use_inventory(monkeypatch, MIXED_INVENTORY)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=2)
        screen.query_one("#mixed-sizes", Checkbox).value = True
        await pilot.pause()
        screen.form = replace(screen.form, level="linear")
        screen._sync_widgets()
        await pilot.pause()
        # linear uses every member whole: the box is shut and the request carries no such allowance.
        assert screen.query_one("#mixed-sizes", Checkbox).disabled
        assert screen.result.plan is not None and not screen.result.plan.request.allow_mixed_sizes


async def test_no_md_driver_is_said_before_any_confirmation(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, tree_root: Path, tmp_path: Path
) -> None:
    use_inventory(monkeypatch, FREE_INVENTORY)
    root = tree_copy(tree_root, tmp_path, None)
    app = make_app(root=root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        assert screen.result.plan is not None  # the plan itself is fine: the host is what cannot run it
        text = preview_text(app)
        assert text.startswith("✖ No md driver") and "modprobe md_mod" in text
        assert "Plan: raid5 on 3" in text
        assert screen.query_one("#create", Button).disabled
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)

        # Loaded meanwhile (modprobe in another terminal): the next change sees it.
        (root / "proc" / "mdstat").write_text("Personalities : [raid6] [raid5] [raid4]\nunused devices: <none>\n")
        await pilot.press("space", "space")  # one member off and on again: a change, the same plan
        await pilot.pause()
        assert "No md driver" not in preview_text(app)
        assert not screen.query_one("#create", Button).disabled


async def test_a_level_without_its_personality_gets_a_note_not_a_refusal(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, tree_root: Path, tmp_path: Path
) -> None:
    use_inventory(monkeypatch, FREE_INVENTORY)
    root = tree_copy(tree_root, tmp_path, "Personalities : [raid1]\nunused devices: <none>\n")
    app = make_app(root=root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        text = preview_text(app)
        assert "no raid5 personality loaded" in text and "modprobe raid456" in text
        assert not screen.query_one("#create", Button).disabled


def test_driver_check_per_level() -> None:
    form = cf.CreateForm(device="/dev/md0", level="raid10")
    assert cf.check_driver(("raid10",), form) == cf.DriverCheck()
    assert "module raid10" in (cf.check_driver((), form).note or "")
    assert cf.check_driver(None, form).problem is not None


async def test_checkbox_state_reads_without_colour(make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    # With NO_COLOR, Textual's checkbox shows ▐X▌ on and off alike (and its radio button ▐●▌): here the mark says it.
    use_inventory(monkeypatch, FREE_INVENTORY)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        for box in screen.query(Checkbox):
            assert box.render().plain.startswith("[ ] "), box.id
        box = screen.query_one("#assume-clean", Checkbox)
        box.focus()
        await pilot.press("space")
        await pilot.pause()
        assert box.value and box.render().plain.strip() == "[x] Assume clean"
        assert screen.form.assume_clean
