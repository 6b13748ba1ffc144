"""Keeping an array from the inventory (mdtui.ui.inventory.lifecycle): the lifecycle line and keys in the array's
detail, each action's plan shown before anything runs, the typed confirmations, and every action refused on a
captured tree. The tree stands for a live host in a copy (tmp_path), with mdadm's answers faked; nothing here
reaches the machine's devices."""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Select, Static

from mdtui.cli.main import main
from mdtui.model.inventory import Inventory
from mdtui.ui.app import MdtuiApp
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.inventory.array_detail import ArrayDetailScreen
from mdtui.ui.inventory.lifecycle_forms import AlertsForm, RepairForm, ScrubForm
from mdtui.ui.inventory.screen import InventoryScreen
from mdtui.ui.inventory.widgets import DetailBody

from .conftest import plain, settle

MakeApp = Callable[..., MdtuiApp]
BRIEF = "ARRAY /dev/md2 metadata=1.2 name=lab:2 UUID=0a1b2c3d:4e5f6a7b:8c9d0e1f:2a3b4c5d"


@pytest.fixture
def host(tree_root: Path, tmp_path: Path) -> Path:
    """A copy of the captured tree with a Debian /etc, standing for a live host whose files a test may change."""
    root = tmp_path / "host"
    shutil.copytree(tree_root, root, symlinks=True)
    (root / "etc/mdadm").mkdir(parents=True)
    (root / "etc/os-release").write_text("ID=debian\n")
    (root / "etc/mdadm/mdadm.conf").write_text("HOMEHOST <system>\n")
    return root


async def open_array(pilot: Any, inventory: Inventory, name: str) -> None:
    await settle(pilot)
    await pilot.press("tab", *["down"] * [a.name for a in inventory.arrays].index(name))


async def handled(pilot: Any) -> None:
    """The planning worker has run and its result reached the screen."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def body(screen: Any) -> str:
    return plain(screen._body)


async def test_the_array_detail_shows_the_lifecycle_line_and_its_keys(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await open_array(pilot, tree_inventory, "md1")
        text = plain(app.screen.query_one("#detail-body", DetailBody).source)
        # The captured tree holds no /etc, no processes and no /var: said, not guessed.
        assert "Kept" in text and "? persisted: not captured · ? monitoring: not captured" in text
        assert "a alerts · p persist · v scrub · f repair · e grow · x tear down" in text
        footer = {key for key, b in app.screen.active_bindings.items() if b.binding.show}
        assert {"a", "p", "v", "f", "e"} <= footer
        await pilot.press("shift+tab")  # on the disks pane there is no array to act on
        footer = {key for key, b in app.screen.active_bindings.items() if b.binding.show}
        assert not {"a", "p", "v", "f", "e"} & footer


async def test_the_keys_the_array_detail_lists_work_inside_it(
    make_app: MakeApp, tree_inventory: Inventory, host: Path
) -> None:
    # Issue 44: Enter on an array showed "Keys a alerts · p persist · s scrub · f repair · x tear down", and none
    # of them did anything there. Each now closes the detail and acts on the array, as on the inventory.
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, "md2")
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, ArrayDetailScreen)
        assert "v scrub" in plain(detail.query_one("#detail-full-body", Static).content)
        await pilot.press("v")
        await handled(pilot)
        assert isinstance(app.screen, ScrubForm) and "md2" in plain(app.screen.query_one("#scrub-plan", Static).content)
        await pilot.press("escape")
        await pilot.press("enter", "a")
        await handled(pilot)
        assert isinstance(app.screen, AlertsForm)
        await pilot.press("escape")
        assert isinstance(app.screen, InventoryScreen)


async def test_alerts_are_refused_on_a_captured_tree(
    make_app: MakeApp, tree_inventory: Inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    app = make_app(tree_stands_for_live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_array(pilot, tree_inventory, "md2")
        screen = app.screen
        monkeypatch.setattr(screen, "notify", lambda message, **kw: said.append(message))
        await pilot.press("a")
        await handled(pilot)
        assert app.screen is screen  # no form, no plan
        assert len(said) == 1 and "read-only" in said[0] and "without --root" in said[0]


@pytest.mark.parametrize("key", ["p", "v", "f"])
async def test_persist_scrub_and_repair_show_their_plan_on_a_captured_tree_and_run_nothing(
    make_app: MakeApp, tree_inventory: Inventory, key: str, monkeypatch: pytest.MonkeyPatch, tree_root: Path
) -> None:
    """Issue 44: they said only "read-only" where the CLI's --dry-run shows the plan; now the plan, as it prints."""
    ran: list[object] = []
    for name in ("mdtui.actionlog.run_command", "mdtui.keep.persist.refresh_initramfs", "mdtui.keep.scrub.start_scrub"):
        monkeypatch.setattr(name, lambda *args, **kw: ran.append(args))
    md1 = tree_inventory.array("md1")
    assert md1 is not None
    spare = next(d for d in tree_inventory.disks if not d.in_use and (d.size_bytes or 0) >= (md1.size_bytes or 0))
    app = make_app(tree_stands_for_live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        if key == "f":
            await open_array(pilot, tree_inventory, "md1")
            await pick(pilot, "add", disk=spare.name)
            cli = ["repair", "md1", "--add", spare.name, "--dry-run"]
        else:
            await open_array(pilot, tree_inventory, "md2")
            await pilot.press(key)
            await handled(pilot)
            if key == "v":
                app.screen.query_one("#scrub-check", Button).press()
                await handled(pilot)
            cli = ["persist", "md2", "--dry-run"] if key == "p" else ["scrub", "md2", "--dry-run"]
        dialog = app.screen
        assert isinstance(dialog, DetailScreen) and dialog._title.endswith("(the plan)"), dialog
        shown = body(dialog)
        assert "A captured tree is read-only: this is the plan" in shown and "Nothing runs." in shown
    assert ran == []
    # The same plan the CLI's --dry-run prints on the same tree.
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--root", str(tree_root), *cli]) == 0
    plan = [line.strip() for line in out.getvalue().splitlines() if line.strip() and "scheduled" not in line
            and "no scheduled scrub" not in line]  # fmt: skip
    flat = " ".join(shown.split())
    assert all(line in flat for line in (" ".join(line.split()) for line in plan)), (plan, shown)


async def test_persist_shows_the_diff_then_asks_for_the_initramfs_separately(
    make_app: MakeApp, tree_inventory: Inventory, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mdtui.keep.persist.detail_brief", lambda device: BRIEF)
    # The copied tree stands for a live host, but its root is a directory: the plan asks its udev record.
    monkeypatch.setattr("mdtui.keep.persist.tree_brief", lambda system, array: BRIEF)
    ran: list[object] = []
    monkeypatch.setattr("mdtui.keep.persist.refresh_initramfs", lambda plan, **kw: ran.append(plan))
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, "md2")
        await pilot.press("p")
        await handled(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == "md2"
        assert f"+{BRIEF}" in body(dialog) and "update-initramfs -u" in body(dialog)
        # A wrong name leaves the button disabled; Escape writes nothing.
        await pilot.press(*"md1")
        assert dialog.query_one("#confirm-go", Button).disabled
        await pilot.press("escape")
        assert (host / "etc/mdadm/mdadm.conf").read_text() == "HOMEHOST <system>\n"
        await pilot.press("p")
        await handled(pilot)
        await pilot.press(*"md2", "enter")
        await handled(pilot)
        assert BRIEF in (host / "etc/mdadm/mdadm.conf").read_text()
        second = app.screen
        assert isinstance(second, ConfirmScreen) and "update-initramfs -u" in body(second)
        assert ran == []  # not before its own confirmation
        await pilot.press(*"md2", "enter")
        await handled(pilot)
        assert len(ran) == 1


async def test_alerts_refuse_an_address_that_would_add_words_to_mdadm_conf(
    make_app: MakeApp, tree_inventory: Inventory, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, "md2")
        monkeypatch.setattr(app, "notify", lambda message, **kw: said.append(message))
        await pilot.press("a")
        assert isinstance(app.screen, AlertsForm)
        # A space and a quote: mdadm would read `PROGRAM` as a second word of MAILADDR's line.
        await pilot.press(*'root"', "space", *"PROGRAM", "enter")
        await handled(pilot)
        assert isinstance(app.screen, InventoryScreen)
        assert said and "is not one mail address" in said[-1]
        await pilot.press("a", *"root", "enter")
        await handled(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == "alerts"
        text = body(dialog)
        assert "+MAILADDR root" in text and "mdadm --monitor --scan --daemonise" in text
        assert "neither MAILADDR nor PROGRAM" in text  # what is so now, above the diff
        await pilot.press("escape")
    assert (host / "etc/mdadm/mdadm.conf").read_text() == "HOMEHOST <system>\n"


async def test_alerts_write_the_conf_start_the_monitor_then_show_the_test_alert(
    make_app: MakeApp, tree_inventory: Inventory, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.command import CommandResult

    started: list[tuple[tuple[str, ...], ...]] = []
    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr("mdtui.keep.alerts.start_monitor", lambda plan, **kw: started.append(plan.start))

    def fake_mdadm(argv: list[str], **kw: object) -> CommandResult:
        ran.append(tuple(argv))
        return CommandResult(tuple(argv), 0, "", "", 0.1)

    monkeypatch.setattr("mdtui.keep.alerts.run_command", fake_mdadm)
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, "md2")
        await pilot.press("a", *"ops@example.org", "enter")
        await handled(pilot)
        assert started == [] and ran == []  # nothing before the typed confirmation
        await pilot.press(*"alerts", "enter")
        await handled(pilot)
        shown = app.screen
        assert isinstance(shown, DetailScreen)
        text = plain(shown._body)
        assert "wrote /etc/mdadm/mdadm.conf" in text
        assert "test alert: mdadm --monitor --scan --oneshot --test exited 0" in text
        assert "mail to ops@example.org could not leave: no sendmail here" in text  # the tree has no sendmail
    assert "MAILADDR ops@example.org" in (host / "etc/mdadm/mdadm.conf").read_text()
    assert started and ran == [("mdadm", "--monitor", "--scan", "--oneshot", "--test")]


async def test_scrub_starts_a_check_and_asks_before_a_repair(
    make_app: MakeApp, tree_inventory: Inventory, host: Path
) -> None:
    action = host / "sys/devices/virtual/block/md2/md/sync_action"
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, "md2")
        await pilot.press("v")
        form = app.screen
        assert isinstance(form, ScrubForm)
        assert "echo check > /sys/block/md2/md/sync_action" in plain(form.query_one("#scrub-plan", Static).content)
        form.query_one("#scrub-repair", Button).press()
        await handled(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == "md2"
        assert "echo repair > /sys/block/md2/md/sync_action" in body(dialog)
        await pilot.press("escape")
        assert action.read_text().strip() == "idle"
        await pilot.press("v")
        app.screen.query_one("#scrub-check", Button).press()
        await handled(pilot)
        assert action.read_text().strip() == "check"


async def test_scrub_of_a_busy_array_is_one_line(make_app: MakeApp, tree_inventory: Inventory, host: Path) -> None:
    busy = next(a for a in tree_inventory.arrays if a.sync is not None)
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, busy.name)
        said: list[str] = []
        app.notify = lambda message, **kw: said.append(message)  # type: ignore[method-assign]
        await pilot.press("v")
        assert isinstance(app.screen, InventoryScreen)
        assert said == [f"{busy.name} is busy (resync); wait for it to finish, or `mdtui watch {busy.name}`"]


async def pick(pilot: Any, action: str, member: str | None = None, disk: str | None = None) -> None:
    """Fill the repair form as a user would pick from its lists, then ask for the plan."""
    await pilot.press("f")
    form = pilot.app.screen
    assert isinstance(form, RepairForm)
    form.query_one("#repair-action", Select).value = action
    await pilot.pause()
    if member is not None:
        form.query_one("#repair-member", Select).value = member
    if disk is not None:
        form.query_one("#repair-disk", Select).value = disk
    form.query_one("#repair-plan", Button).press()
    await handled(pilot)


async def test_repair_plans_an_add_and_refuses_what_would_lose_data(
    make_app: MakeApp, tree_inventory: Inventory, host: Path
) -> None:
    md1 = tree_inventory.array("md1")
    assert md1 is not None and md1.degraded == 1
    free = [d for d in tree_inventory.disks if not d.in_use and d.size_bytes]
    small = next(d for d in free if d.size_bytes and d.size_bytes < md1.size_bytes)  # type: ignore[operator]
    big = next(d for d in free if d.size_bytes and d.size_bytes >= 2 * small.size_bytes)  # type: ignore[operator]
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, "md1")
        await pick(pilot, "add", disk=big.name)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == big.name  # the disk overwritten is typed
        assert "mdadm --manage /dev/md1 --add" in body(dialog) and "everything on it is overwritten" in body(dialog)
        await pilot.press("escape")
        # A disk smaller than md1's members (the tree's 256 MiB loop device) cannot take a member's place.
        await pick(pilot, "add", disk=small.name)
        refusal = app.screen
        assert isinstance(refusal, DetailScreen) and f"{small.name} holds" in plain(refusal._body)
        await pilot.press("escape")
        # md1 (raid1) runs on one member: failing it would lose the data.
        only = next(m.name for m in md1.members if not m.faulty)
        await pick(pilot, "fail", member=only)
        refusal = app.screen
        assert isinstance(refusal, DetailScreen)
        assert "would leave md1 (raid1) missing 2 members" in plain(refusal._body)


async def test_failing_a_member_names_its_drive_and_asks_for_the_serial_on_its_label(
    make_app: MakeApp, tree_inventory: Inventory, host: Path
) -> None:
    """Issue 42: before a member is failed, the drive is told apart (full serial, WWN, port, slot) and the typed
    confirmation is its serial, what the admin reads on the label before pulling it; the rebuild that must follow
    is predicted."""
    md0 = next(a for a in tree_inventory.arrays if a.level == "raid6")
    member = md0.members[1].name
    serial = tree_inventory.disk_of(member).serial  # type: ignore[union-attr]
    assert serial
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, md0.name)
        await pick(pilot, "fail", member=member)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == serial
        text = body(dialog)
        assert f"{member}: serial {serial}" in text and f"{member}: port" in text and f"{member}: slot" in text
        assert "then a rebuild onto a new disk: " in text


async def test_repair_runs_only_the_planned_argv_after_the_disk_is_typed(
    make_app: MakeApp, tree_inventory: Inventory, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.command import CommandResult

    ran: list[tuple[str, ...]] = []

    def fake_run(argv: list[str], **_: object) -> CommandResult:
        ran.append(tuple(argv))
        return CommandResult(tuple(argv), 0, "", "", 0.1)

    said: list[str] = []
    md1 = tree_inventory.array("md1")
    assert md1 is not None
    big = next(d for d in tree_inventory.disks if not d.in_use and (d.size_bytes or 0) >= (md1.size_bytes or 0))
    monkeypatch.setattr("mdtui.actionlog.run_command", fake_run)  # what the action log runs and records
    # The copy's /dev holds links, not device nodes: the by-id path resolves to the disk as udev's would.
    monkeypatch.setattr("mdtui.keep.repair.resolve_member", lambda system, path: big.name)
    app = make_app(host)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_array(pilot, tree_inventory, "md1")
        monkeypatch.setattr(app, "notify", lambda message, **kw: said.append(message))
        await pick(pilot, "add", disk=big.name)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        planned = next(line for line in body(dialog).splitlines() if "mdadm --manage" in line).split(". ", 1)[1]
        await pilot.press(*"md1", "enter")  # the array's name is not the disk written: nothing runs
        assert ran == [] and app.screen is dialog
        dialog.query_one("#confirm-input").value = ""  # type: ignore[attr-defined]
        await pilot.press(*big.name, "enter")
        await handled(pilot)
    assert [" ".join(argv) for argv in ran] == [planned.strip()], said
    assert any("add on /dev/md1: done" in line for line in said)
