"""Pilot tests of create, confirm, resync and teardown: nothing runs unless the typed target matches."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Checkbox, Input, ProgressBar, Select, Static

from mdtui.errors import CommandError, MdtuiError, SafetyError
from mdtui.execute import mdadm
from mdtui.execute.mdadm import CreateOutcome
from mdtui.model.array import MdArray, SyncStatus
from mdtui.model.inventory import Inventory
from mdtui.plan.create import CreatePlan
from mdtui.plan.destroy import DestroyPlan
from mdtui.plan.levels import level_from_name
from mdtui.probe.root import SystemRoot
from mdtui.ui.app import MdtuiApp
from mdtui.ui.common.member_picker import MemberPicker
from mdtui.ui.create import resync
from mdtui.ui.create.resync import RESYNC_WARNING, ResyncScreen
from mdtui.ui.create.screen import CreateScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.inventory import screen as inventory_screen
from mdtui.ui.inventory.screen import InventoryScreen

from .conftest import plain, settle
from .create_inventory import BUSY_SATA, EXISTING, FREE_INVENTORY, FREE_NVME, UNKNOWN_SATA

MakeApp = Callable[..., MdtuiApp]


@dataclass
class Recorder:
    """Stands in for a core function that would run mdadm; remembers every call."""

    result: Any = None
    error: BaseException | None = None
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        if self.error is not None:
            raise self.error
        return self.result


@pytest.fixture
def execute_create(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()

    def outcome(plan: CreatePlan, **kwargs: Any) -> CreateOutcome:
        recorder.calls.append(((plan,), kwargs))
        if recorder.error is not None:
            raise recorder.error
        return CreateOutcome(plan.request.device, "0a1b2c3d:00000000:00000000:00000001", (), None)

    monkeypatch.setattr(mdadm, "execute_create", outcome)
    return recorder


@pytest.fixture
def follow_sync(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    """A resync that reports 40% once and then ends."""
    recorder = Recorder()

    def follow(device: str, **kwargs: Any) -> MdArray:
        recorder.calls.append(((device,), kwargs))
        name = device.rsplit("/", 1)[-1]
        running = SyncStatus("resync", "running", 400, 1000, 1_500_000_000, 90.0)
        kwargs["on_update"](MdArray(name=name, state="active", level="raid5", sync=running))
        done = MdArray(name=name, state="clean", level="raid5")
        kwargs["on_update"](done)
        return done

    monkeypatch.setattr(mdadm, "follow_sync", follow)
    return recorder


@pytest.fixture
def free_disks(monkeypatch: pytest.MonkeyPatch) -> Inventory:
    """The app reads the captured tree's root, but the scan returns free NVMe disks."""
    monkeypatch.setattr(inventory_screen, "scan", lambda root, *, privileged=None: FREE_INVENTORY)
    return FREE_INVENTORY


def create_screen(app: MdtuiApp) -> CreateScreen:
    screen = app.screen
    assert isinstance(screen, CreateScreen)
    return screen


def preview_text(app: MdtuiApp) -> str:
    return plain(app.screen.query_one("#preview-body", Static).content, width=400)


async def open_create(pilot: Pilot[None], members: int = 0) -> CreateScreen:
    await settle(pilot)
    await pilot.press("c")
    await pilot.pause()
    screen = create_screen(pilot.app)  # type: ignore[arg-type]
    keys: list[str] = []
    for index in range(members):
        keys += ["down"] * bool(index) + ["space"]
    await pilot.press(*keys)
    await pilot.pause()
    return screen


async def choose(pilot: Pilot[None], select_id: str, value: str) -> None:
    pilot.app.screen.query_one(f"#{select_id}", Select).value = value
    for _ in range(3):
        await pilot.pause()


async def open_confirm(pilot: Pilot[None]) -> ConfirmScreen:
    await pilot.press("ctrl+s")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ConfirmScreen)
    return pilot.app.screen


# -- the form --------------------------------------------------------------------------------------


async def test_tree_disks_in_use_are_greyed_with_their_reason(
    make_app: MakeApp, tree_inventory: Inventory
) -> None:
    app = make_app()
    free = [d for d in tree_inventory.disks if d.available]
    assert 0 < len(free) < len(tree_inventory.disks)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot)
        picker = screen.query_one("#members", MemberPicker)
        assert picker.option_count == len(tree_inventory.disks)
        for index, disk in enumerate(tree_inventory.disks):
            option = picker.get_option_at_index(index)
            assert option.disabled is (not disk.available), disk.name
            if not disk.available:
                reason = disk.in_use[0].kind.value if disk.in_use else "unknown"
                assert reason in plain(option.prompt, width=400)
        # Two free disks are too few for raid5: the preview says so and Create stays shut.
        assert "needs at least" in preview_text(app)
        assert screen.query_one("#create", Button).disabled
        await pilot.press("ctrl+s")
        assert app.screen is screen


@pytest.mark.usefixtures("free_disks")
async def test_only_free_disks_can_be_picked(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=len(FREE_NVME))
        assert screen.form.members == tuple(d.name for d in FREE_NVME)
        # The cursor skips busy rows: End lands on the last free disk, so space toggles it, not sda.
        await pilot.press("end", "space")
        await pilot.pause()
        assert screen.form.members == tuple(d.name for d in FREE_NVME[:-1])
        picker = screen.query_one("#members", MemberPicker)
        busy = {picker.get_option_at_index(i).id: picker.get_option_at_index(i) for i in range(picker.option_count)}
        assert busy[BUSY_SATA.name].disabled and busy[UNKNOWN_SATA.name].disabled
        # Busy rows wrap rather than cut the reason; read them as one line.
        assert "md-member: active member of md0 (+1 more)" in " ".join(plain(busy[BUSY_SATA.name].prompt).split())
        assert "unknown: signatures not checked" in " ".join(plain(busy[UNKNOWN_SATA.name].prompt).split())


@pytest.mark.usefixtures("free_disks")
async def test_create_flow_up_to_the_confirmation(make_app: MakeApp, execute_create: Recorder) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        assert screen.form.device == "/dev/md1"  # md0 exists in the inventory
        plan = screen.result.plan
        assert plan is not None and plan.level.name == "raid5"
        text = preview_text(app)
        assert shlex.join(plan.argv) in text
        assert "usable capacity" in text and "fault tolerance" in text and "what it will do" in text
        assert "small writes" in text and "mkfs.ext4" in text and "⚠" in text

        dialog = await open_confirm(pilot)
        body = plain(dialog.query_one("#confirm-text", Static).content, width=400)
        assert shlex.join(plan.argv) in body
        for disk in FREE_NVME[:3]:
            assert disk.by_id_path and disk.by_id_path in body
            assert f"serial {disk.serial}" in body
        assert FREE_NVME[3].by_id_path not in body
        assert dialog.query_one("#confirm-go", Button).disabled
        assert execute_create.calls == []


@pytest.mark.usefixtures("free_disks")
async def test_preview_follows_the_level(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        assert "Plan: raid5 on 3" in preview_text(app)
        assert screen.query_one("#build", Checkbox).disabled  # raid5 cannot --build

        # The keyboard way: raid5 → two up → raid1.
        screen.query_one("#level", Select).focus()
        await pilot.press("enter", "up", "up", "enter")
        for _ in range(3):
            await pilot.pause()
        assert screen.form.level == "raid1"
        assert "Plan: raid1 on 3" in preview_text(app)
        assert "--chunk" not in preview_text(app)
        assert screen.query_one("#chunk", Select).disabled
        assert screen.query_one("#layout", Select).disabled

        await choose(pilot, "level", "raid10")
        layouts = [value for _, value in screen.query_one("#layout", Select)._options]
        assert tuple(layouts) == level_from_name("raid10").layouts(3)
        assert not screen.query_one("#chunk", Select).disabled
        assert "Plan: raid10 on 3" in preview_text(app)

        await choose(pilot, "level", "raid0")
        assert not screen.query_one("#build", Checkbox).disabled
        assert screen.query_one("#bitmap", Select).disabled
        assert screen.query_one("#assume-clean", Checkbox).disabled
        screen.query_one("#build", Checkbox).value = True
        await pilot.pause()
        await pilot.pause()
        assert screen.result.plan is not None and screen.result.plan.argv[1] == "--build"
        assert screen.query_one("#metadata", Select).disabled
        assert screen.query_one("#name", Input).disabled

        await choose(pilot, "chunk", "64")
        assert "--chunk=64K" in preview_text(app)


@pytest.mark.usefixtures("free_disks")
async def test_invalid_choices_list_the_problems(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        await choose(pilot, "level", "raid6")
        text = preview_text(app)
        assert "Cannot create yet" in text and "raid6 needs at least 4 members; 3 given" in text
        assert screen.query_one("#create", Button).disabled

        await choose(pilot, "level", "raid5")
        device = screen.query_one("#device", Input)
        device.value = "/dev/sdz"
        await pilot.pause()
        assert "is not an md device path" in preview_text(app)
        assert screen.query_one("#create", Button).disabled
        await pilot.press("ctrl+s")
        assert app.screen is screen

        device.value = "/dev/md7"
        screen.query_one("#name", Input).value = "no spaces allowed"
        await pilot.pause()
        assert "array name 'no spaces allowed'" in preview_text(app)


@pytest.mark.usefixtures("free_disks")
async def test_spares_only_where_the_level_can_rebuild(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        await pilot.press("down", "s")
        await pilot.pause()
        assert screen.form.spares == (FREE_NVME[3].name,)
        assert "--spare-devices=1" in preview_text(app)
        await choose(pilot, "level", "raid0")
        assert "--spare-devices" not in preview_text(app)
        await pilot.press("down", "s")
        await pilot.pause()
        assert screen.form.spares == (FREE_NVME[3].name,)  # unchanged: raid0 takes no spare


# -- confirmation ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("free_disks")
async def test_cancel_at_the_confirmation_runs_nothing(make_app: MakeApp, execute_create: Recorder) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        await open_confirm(pilot)
        await pilot.press(*"/dev/md1")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen

        dialog = await open_confirm(pilot)
        await pilot.press(*"/dev/md1")
        await pilot.click(dialog.query_one("#confirm-cancel", Button))
        await pilot.pause()
        assert app.screen is screen

        await pilot.press("escape")
        await pilot.app.workers.wait_for_complete()
        assert isinstance(app.screen, InventoryScreen)
        assert execute_create.calls == []


@pytest.mark.usefixtures("free_disks")
async def test_wrong_typed_name_keeps_create_disabled(make_app: MakeApp, execute_create: Recorder) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_create(pilot, members=3)
        dialog = await open_confirm(pilot)
        go = dialog.query_one("#confirm-go", Button)
        for typed in ("/dev/md", "md1", "/dev/md10", "/DEV/MD1"):
            dialog.query_one("#confirm-input", Input).value = typed
            await pilot.pause()
            assert go.disabled, typed
        await pilot.press("enter")
        await pilot.click(go)
        await pilot.app.workers.wait_for_complete()
        assert app.screen is dialog
        assert execute_create.calls == []


@pytest.mark.usefixtures("free_disks", "follow_sync")
async def test_right_typed_name_runs_exactly_the_plan_confirmed(
    make_app: MakeApp, execute_create: Recorder, tree_root: Path
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        plan = screen.result.plan
        dialog = await open_confirm(pilot)
        await pilot.press(*"/dev/md1")
        go = dialog.query_one("#confirm-go", Button)
        assert not go.disabled
        await pilot.click(go)
        await settle(pilot)
        assert len(execute_create.calls) == 1
        (called_plan,), kwargs = execute_create.calls[0]
        assert called_plan is plan
        assert kwargs["confirmed"] == "/dev/md1"  # what was typed, for execute_create to check against the plan
        assert isinstance(kwargs["root"], SystemRoot) and kwargs["root"].path("/") == tree_root
        assert isinstance(app.screen, ResyncScreen)


@pytest.mark.usefixtures("free_disks")
@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (SafetyError("refusing to create the array:\n  - nvme1n1 is now in use"), "refusing to create the array"),
        (CommandError(["mdadm", "--create"], 1, "mdadm: busy\n"), "mdadm exited with code 1: mdadm: busy"),
        (MdtuiError("mdadm is not installed"), "mdadm is not installed"),
        (RuntimeError("boom"), "Creating /dev/md1 failed: RuntimeError: boom"),
    ],
)
async def test_create_errors_are_shown_not_raised(
    make_app: MakeApp, execute_create: Recorder, error: Exception, shown: str
) -> None:
    execute_create.error = error
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_create(pilot, members=3)
        await open_confirm(pilot)
        await pilot.press(*"/dev/md1", "enter")
        await settle(pilot)
        assert app.screen is screen
        banner = screen.query_one("#create-banner", Static)
        assert banner.has_class("-error") and shown in plain(banner.content, width=400)
        assert not screen.busy and not screen.query_one("#create", Button).disabled
        assert len(execute_create.calls) == 1


# -- resync ----------------------------------------------------------------------------------------


class FakeBoost:
    """Stands in for tune.boost.SyncBoost, which writes md's speed knobs (covered on a writable tree in
    tests/unit/test_boost.py and on real md in the lab): remembers what the screen applied and put back."""

    made: list[FakeBoost] = []

    def __init__(self, root: SystemRoot, plan: Any) -> None:
        self.plan = plan
        self.applied = False
        self.restored = False
        FakeBoost.made.append(self)

    def apply(self) -> list[str]:
        self.applied = True
        return [f"sync_speed_max {self.plan.kib_s} (local)", f"sync_speed_min {self.plan.kib_s} (local)"]

    def restore(self) -> list[Any]:
        self.restored = True
        return []


@pytest.mark.usefixtures("free_disks")
async def test_resync_view_follows_progress_and_boosts_after_saying_the_cost(
    make_app: MakeApp, execute_create: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    updates: list[str] = []
    FakeBoost.made.clear()
    monkeypatch.setattr(resync, "SyncBoost", FakeBoost)
    md1 = MdArray(name="md1", state="active", level="raid5", uuid="0a1b2c3d:00000000:00000000:00000001")
    monkeypatch.setattr(mdadm, "find_array", lambda root, device: md1)
    release: list[bool] = []

    def follow(device: str, **kwargs: Any) -> MdArray:
        running = SyncStatus("resync", "running", 400, 1000, 1_500_000_000, 90.0)
        kwargs["on_update"](MdArray(name="md1", state="active", level="raid5", sync=running))
        updates.append(device)
        while not release:  # hold the resync "running" until the test has boosted it
            time.sleep(0.01)
        done = MdArray(name="md1", state="clean", level="raid5")
        kwargs["on_update"](done)
        return done

    monkeypatch.setattr(mdadm, "follow_sync", follow)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_create(pilot, members=3)
        await open_confirm(pilot)
        await pilot.press(*"/dev/md1", "enter")
        for _ in range(50):
            await pilot.pause(0.02)
            if updates and isinstance(app.screen, ResyncScreen):
                break
        screen = app.screen
        assert isinstance(screen, ResyncScreen)
        await pilot.pause(0.05)
        stats = plain(screen.query_one("#resync-stats", Static).content, width=400)
        assert "40.0%" in stats and "1,500 MB/s" in stats and "ETA 1m30s" in stats
        assert "bound:" in stats
        assert screen.query_one("#resync-bar", ProgressBar).progress == pytest.approx(40.0)
        warning = plain(screen.query_one("#resync-warning", Static).content, width=400)
        assert "benchmarks" in warning and "mislead" in warning and warning.strip() == RESYNC_WARNING
        await pilot.press("f")
        for _ in range(50):
            await pilot.pause(0.02)
            if isinstance(app.screen, ConfirmScreen):
                break
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        body = plain(dialog.query_one("#confirm-text", Static).content, width=400)
        # The cost comes first, then what it sets and how it is undone.
        assert body.index("cost:") < body.index("sets md1 sync_speed_min and sync_speed_max")
        assert "undone" in body and "next mdtui start" in body
        await pilot.press(*"md1", "enter")
        for _ in range(50):
            await pilot.pause(0.02)
            if screen.full_speed:
                break
        assert FakeBoost.made and FakeBoost.made[0].applied
        release.append(True)
        await settle(pilot)
        for _ in range(50):
            await pilot.pause(0.02)
            if FakeBoost.made[0].restored:
                break
        assert "Resync finished" in plain(screen.query_one("#resync-warning", Static).content, width=400)
        # The boost is put back once the resync it was for has ended.
        assert FakeBoost.made[0].restored and not screen.full_speed
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, InventoryScreen)


@pytest.mark.usefixtures("free_disks", "follow_sync")
async def test_no_resync_for_raid0(make_app: MakeApp, execute_create: Recorder) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_create(pilot, members=2)
        await choose(pilot, "level", "raid0")
        await open_confirm(pilot)
        await pilot.press(*"/dev/md1", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResyncScreen)
        assert "No resync: raid0 has no redundancy" in plain(screen.query_one("#resync-warning", Static).content)


# -- teardown --------------------------------------------------------------------------------------


@pytest.fixture
def teardown_checks(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    checks = {"mounted": False, "ours": True}
    monkeypatch.setattr(mdadm, "is_mounted", lambda root, array: checks["mounted"])
    monkeypatch.setattr(mdadm, "created_by_mdtui", lambda array, registry=None: checks["ours"])
    return checks


async def start_teardown(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("tab")
    await pilot.press("x")
    await settle(pilot)


@pytest.mark.usefixtures("free_disks")
@pytest.mark.parametrize(("mounted", "ours", "reason"), [(True, True, "is mounted"), (False, False, "not created")])
async def test_teardown_refusals_are_messages(
    make_app: MakeApp,
    teardown_checks: dict[str, bool],
    monkeypatch: pytest.MonkeyPatch,
    mounted: bool,
    ours: bool,
    reason: str,
) -> None:
    teardown_checks.update(mounted=mounted, ours=ours)
    destroy = Recorder()
    monkeypatch.setattr(mdadm, "execute_destroy", destroy)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await start_teardown(pilot)
        assert isinstance(app.screen, DetailScreen)
        assert reason in plain(app.screen.query_one("#detail-full-body", Static).content, width=400)
        assert destroy.calls == []


@pytest.mark.usefixtures("free_disks", "teardown_checks")
async def test_teardown_needs_the_typed_device(make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    destroy = Recorder(result=())
    monkeypatch.setattr(mdadm, "execute_destroy", destroy)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await start_teardown(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        body = plain(dialog.query_one("#confirm-text", Static).content, width=400)
        assert "mdadm --stop /dev/md0" in body and BUSY_SATA.by_id_path in body
        await pilot.press(*"/dev/md", "enter")
        assert app.screen is dialog and dialog.query_one("#confirm-go", Button).disabled
        await pilot.press("escape")
        await settle(pilot)
        assert destroy.calls == []

        await pilot.press("x")
        await settle(pilot)
        await pilot.press(*EXISTING.dev_path, "enter")
        await settle(pilot)
        assert len(destroy.calls) == 1
        (plan,), kwargs = destroy.calls[0]
        assert isinstance(plan, DestroyPlan) and plan.array == EXISTING.dev_path
        assert kwargs["confirmed"] == EXISTING.dev_path


@pytest.mark.usefixtures("free_disks", "teardown_checks")
async def test_teardown_failure_is_a_notification(make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mdadm, "execute_destroy", Recorder(error=CommandError(["mdadm", "--stop"], 1, "busy\n")))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await start_teardown(pilot)
        await pilot.press(*EXISTING.dev_path, "enter")
        await settle(pilot)
        assert isinstance(app.screen, InventoryScreen)
        assert any("mdadm exited with code 1: busy" in n.message for n in app._notifications)


@pytest.mark.usefixtures("free_disks")
async def test_teardown_is_offered_only_on_an_array(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.check_action("teardown", ()) is False
        await pilot.press("tab")
        await pilot.pause()
        assert screen.check_action("teardown", ()) is True
