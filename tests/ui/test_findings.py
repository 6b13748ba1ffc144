"""The findings in the app (issue 44): a findings view with each finding's evidence, why, what to do and its
experiment, reached from the palette (advise, findings, doctor, calibrate, experiment), the inventory's F and an
array's detail, which names its own findings and what limits it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.widgets import OptionList, Static

from mdtui.advise.about import about_array
from mdtui.advise.findings import short_title
from mdtui.advise.host import host_findings
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.ui.app import MdtuiApp
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.findings.screen import FindingsScreen
from mdtui.ui.inventory.screen import InventoryScreen

from .conftest import TREE_ROOT, plain, settle

MakeApp = Callable[..., MdtuiApp]
SMALL = (80, 24)


def findings_of_tree() -> tuple[Any, ...]:
    return host_findings(SystemRoot(str(TREE_ROOT)), db=None)


def list_lines(screen: FindingsScreen) -> list[str]:
    options = screen.query_one("#findings-list", OptionList)
    return [plain(options.get_option_at_index(i).prompt).strip() for i in range(options.option_count)]


def detail(screen: FindingsScreen) -> str:
    return plain(screen.query_one("#findings-body", Static).content)


async def open_findings_of(pilot: Any, inventory: Inventory, array: str) -> FindingsScreen:
    await settle(pilot)
    await pilot.press("tab", *["down"] * [a.name for a in inventory.arrays].index(array))
    await pilot.press("F")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, FindingsScreen)
    return screen


async def test_f_on_an_array_lists_its_findings_in_the_advisors_order_with_everything_about_each(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    md0 = tree_inventory.array("md0")
    assert md0 is not None
    expected = about_array(findings_of_tree(), md0)
    assert expected, "the captured tree has findings about md0"
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_findings_of(pilot, tree_inventory, "md0")
        lines = list_lines(screen)
        # Each line says its severity in words (nothing depends on colour), in the advisor's order.
        assert [line.split(maxsplit=2)[1] for line in lines] == [f.severity.value.upper() for f in expected]
        assert [line.split(maxsplit=2)[2] for line in lines] == [short_title(f) for f in expected]
        assert str(screen.query_one("#findings-list").border_title) == "Findings about md0"
        status = plain(screen.query_one("#findings-status", Static).content)
        assert status.startswith(f"{len(expected)} findings about md0") and "(a shows all)" in status, status
        # The first, in full: evidence, why, what to do, the experiment and the command that runs it.
        first = expected[0]
        text = detail(screen)
        assert first.title.split(":")[0] in text
        for label in ("Evidence", "Why", "What to do"):
            assert label in text, text
        assert str(first.evidence[0]) in text and first.what_to_do[:40] in " ".join(text.split())
        if first.experiment == "weakest-link":
            assert "Experiment" in text and "mdtui bench --preset weakest-link --target md0" in text, text
        # Down shows the next one; a shows the whole host's (the degraded md1 among them), a again md0's.
        await pilot.press("down")
        assert expected[1].title.split(":")[0] in detail(screen)
        await pilot.press("a")
        everything = findings_of_tree()
        assert len(list_lines(screen)) == len(everything) > len(expected)
        assert any("md1 is degraded" in line for line in list_lines(screen))
        await pilot.press("a")
        assert len(list_lines(screen)) == len(expected)
        await pilot.press("escape")
        assert isinstance(app.screen, InventoryScreen)


async def test_b_opens_the_bench_screen_with_the_findings_experiment(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    from mdtui.ui.bench.screen import BenchScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_findings_of(pilot, tree_inventory, "md0")
        weakest = next(i for i, f in enumerate(screen.shown) if f.experiment == "weakest-link")
        screen.query_one("#findings-list", OptionList).highlighted = weakest
        await pilot.pause()
        await pilot.press("b")
        await settle(pilot)
        bench = app.screen
        assert isinstance(bench, BenchScreen)
        presets = bench.query_one("#bench-presets", OptionList)
        assert presets.highlighted is not None
        assert "weakest link" in plain(presets.get_option_at_index(presets.highlighted).prompt).lower()


async def test_an_arrays_detail_names_its_findings_and_what_limits_it(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    everything = findings_of_tree()
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("tab")  # md0
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InventoryScreen)
        text = " ".join(plain(screen.query_one("#detail-body").content, width=300).split())
        md0 = tree_inventory.array("md0")
        assert md0 is not None
        own = about_array(everything, md0)
        limit = next(f for f in own if f.topic.value == "performance")
        assert f"Limit ⚠ {limit.title}" in text, text
        assert "Findings " in text and "(F shows them)" in text, text
        others = [f for f in own if f is not limit]
        assert short_title(others[0]) in text
        assert "F findings" in text  # the keys row names the key
        await pilot.press("down")  # md1: degraded, nothing about speed
        await settle(pilot)
        text = " ".join(plain(screen.query_one("#detail-body").content, width=300).split())
        assert "Limit nothing mdtui checks for limits its speed" in text, text
        assert "✖ md1 is degraded (1 missing)" in text and "1 critical" in text, text


@pytest.mark.parametrize(
    ("word", "opens"),
    [
        ("advise", "findings"),
        ("findings", "findings"),
        ("experiment", "findings"),
        ("doctor", "Doctor: what this host gives mdtui"),
        ("calibrate", "Calibrate: md's own ceilings"),
    ],
)
async def test_the_palette_knows_findings_doctor_calibrate_and_experiments(
    make_app: MakeApp, word: str, opens: str
) -> None:
    """Ctrl+P with any of these words said "No matches found" (issue 44)."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await pilot.press(*word)
        for _ in range(50):  # the palette searches in a worker
            await pilot.pause(0.05)
            if palette.query_one("CommandList", OptionList).option_count:
                break
        hits = palette.query_one("CommandList", OptionList)
        assert hits.option_count >= 1
        first = plain(hits.get_option_at_index(0).prompt).lower()
        assert word in first, first
        await pilot.press("enter")
        await settle(pilot)
        if opens == "findings":
            assert isinstance(app.screen, FindingsScreen)
            assert list_lines(app.screen)
        else:
            assert isinstance(app.screen, DetailScreen) and app.screen._title.startswith(opens)
            body = plain(app.screen._body)
            if word == "doctor":
                assert ("mdadm" in body and "need attention" in body) or "everything mdtui uses is here" in body
            else:
                # A captured tree: what predictions use, and why calibrate cannot run here.
                assert "md's ceilings" in body and "read-only" in body, body
