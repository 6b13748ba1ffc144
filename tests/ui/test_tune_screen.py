"""Pilot test of the Tune screen (k on an array) against the captured tree: knobs listed, detail follows."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from textual.widgets import DataTable, Static

from mdtui.model.inventory import Inventory
from mdtui.ui.app import MdtuiApp
from mdtui.ui.tune.screen import TuneScreen

from .conftest import plain, settle

MakeApp = Callable[..., MdtuiApp]


async def test_u_on_an_array_opens_its_knobs(make_app: MakeApp, tree_inventory: Inventory) -> None:
    parity = next(a for a in tree_inventory.arrays if a.level in ("raid5", "raid6"))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("tab")  # the Arrays pane
        while app.screen.selected_array() is not None and app.screen.selected_array().name != parity.name:
            await pilot.press("down")
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, TuneScreen)
        table = app.screen.query_one("#tune-table", DataTable)
        names = [table.get_row_at(i)[0] for i in range(table.row_count)]
        assert names[0] == "stripe_cache_size" and "member:scheduler" in names, names
        body = plain(app.screen.query_one("#tune-body", Static).content)
        assert f"stripe_cache_size on {parity.name}" in body and "memory now" in body, body
        assert f"--knob stripe_cache_size --values 256,4096 --target {parity.name}" in body, body
        # The text names what s sweeps, the same values as the command (it said 256,1024,4096 while s swept two).
        assert "s sweeps 256, 4096: 10 s of 1 MiB sequential writes each" in body and "1024" not in body, body
        await pilot.press("down")
        assert "group_thread_cnt" in plain(app.screen.query_one("#tune-body", Static).content)
        await pilot.press("escape")
        assert not isinstance(app.screen, TuneScreen)


async def test_s_asks_for_the_array_before_a_sweep_and_escape_runs_nothing(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    from mdtui.ui.dialogs.confirm import ConfirmScreen

    parity = next(a for a in tree_inventory.arrays if a.level in ("raid5", "raid6"))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(TuneScreen(str(app.screen.root), parity.name))
        await settle(pilot)
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.phrase == parity.dev_path
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, TuneScreen) and not app.screen.sweeping
        assert not app.screen.query_one("#tune-status", Static).has_class("-shown")


async def test_a_applies_the_suggestion_with_the_cli_plan_and_typed_confirmation(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    from mdtui.ui.dialogs.confirm import ConfirmScreen

    parity = next(a for a in tree_inventory.arrays if a.level in ("raid5", "raid6"))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.push_screen(TuneScreen(str(app.screen.root), parity.name))
        await settle(pilot)
        tune = app.screen
        assert isinstance(tune, TuneScreen)
        body = plain(tune.query_one("#tune-body", Static).content)
        assert "mdtui tune --apply" not in body and "a applies stripe_cache_size=" in body
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        # The CLI's plan (live value → new value, the udev rule's diff) and its typed phrase, the array's name.
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == parity.name
        text = plain(dialog.query_one("#confirm-text", Static).content, width=400)
        assert f"{parity.name} stripe_cache_size: " in text and "→ 4096 now (memory 64.0 MiB)" in text
        assert "ATTR{md/stripe_cache_size}" in text or "stripe_cache_size" in text.split("through:")[1]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is tune


async def test_apply_is_refused_on_a_captured_tree(make_app: MakeApp, tree_inventory: Inventory) -> None:
    from mdtui.ui.dialogs.confirm import ConfirmScreen

    parity = next(a for a in tree_inventory.arrays if a.level in ("raid5", "raid6"))
    app = make_app(tree_stands_for_live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.push_screen(TuneScreen(str(app.screen.root), parity.name))
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, TuneScreen) and not isinstance(app.screen, ConfirmScreen)
        assert any(n.title == "A captured tree is read-only" for n in app._notifications)


async def test_typed_confirmation_applies_now_and_in_the_rule(
    make_app: MakeApp, tree_root: Path, tmp_path: Path, tree_inventory: Inventory
) -> None:
    from textual.widgets import Input

    from mdtui.ui.dialogs.confirm import ConfirmScreen

    # A copy of the captured tree standing for a live host: the knob file and the rule file are written in it.
    root = tmp_path / "tree"
    shutil.copytree(tree_root, root, symlinks=True)
    parity = next(a for a in tree_inventory.arrays if a.level in ("raid5", "raid6"))
    knob_file = root / "sys" / "block" / parity.name / "md" / "stripe_cache_size"
    before = knob_file.read_text().strip()
    app = make_app(root=root)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.push_screen(TuneScreen(str(root), parity.name))
        await settle(pilot)
        tune = app.screen
        assert isinstance(tune, TuneScreen)
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await pilot.press(*"md9", "enter")  # the wrong name changes nothing
        assert app.screen is dialog and knob_file.read_text().strip() == before
        dialog.query_one("#confirm-input", Input).value = parity.name
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        # The tree has no rules.d: the rule cannot be written, so the live value is put back.
        status = plain(tune.query_one("#tune-status", Static).content, width=400)
        assert "stripe_cache_size not applied: cannot write" in status, status
        assert f"stripe_cache_size is back to {before}" in status, status
        assert knob_file.read_text().strip() == before
        (root / "etc/udev/rules.d").mkdir(parents=True)
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        dialog.query_one("#confirm-input", Input).value = parity.name
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = plain(tune.query_one("#tune-status", Static).content, width=400)
        assert f"{parity.name} stripe_cache_size reads 4096" in status, status
    assert knob_file.read_text().strip() == "4096"
    rules = (root / "etc/udev/rules.d/90-mdtui-tune.rules").read_text()
    assert "stripe_cache_size" in rules and '"4096"' in rules


async def test_the_rule_column_says_none_or_dash_and_the_detail_says_why(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    """Issue 44: the Rule column was empty on every row without saying why."""
    parity = next(a for a in tree_inventory.arrays if a.level in ("raid5", "raid6"))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(TuneScreen(str(app.screen.root), parity.name))
        await settle(pilot)
        table = app.screen.query_one("#tune-table", DataTable)
        rules = {str(table.get_row_at(i)[0]) + " " + str(table.get_row_at(i)[1]): table.get_row_at(i)[4]
                 for i in range(table.row_count)}  # fmt: skip
        assert rules[f"stripe_cache_size {parity.name}"] == "none", rules
        assert all(value == "-" for key, value in rules.items() if key.startswith("member:")), rules
        body = plain(app.screen.query_one("#tune-body", Static).content)
        assert "rule none: no udev rule keeps it, so a reboot brings back the kernel's value" in body, body
