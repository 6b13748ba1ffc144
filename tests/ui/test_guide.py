"""Pilot tests of the guided flow: every step skippable, nothing destructive without a typed confirmation.

The tree is a copy of the real-links capture with two changes: loop0 made as large as nvme4n1 (so the two
free disks can form an array) and a writable copy of the cpufreq tree in tests/fixtures/procfs (powersave on
two CPUs; the lab capture has no cpufreq). mdadm cannot run on a captured tree, so execute_create is replaced
by a recorder; the benchmark runner is a recorder that stores real runs in a temporary ResultsStore.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import RadioButton, RadioSet, SelectionList, Static

from mdtui.advise import guide as guide_core
from mdtui.advise.guide import GuideState, should_show_guide
from mdtui.execute import mdadm
from mdtui.execute.mdadm import CreateOutcome
from mdtui.plan.create import CreatePlan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore
from mdtui.ui.app import MdtuiApp
from mdtui.ui.common.toggles import MarkRadioButton
from mdtui.ui.create.resync import ResyncScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.guide import screen as guide_screen
from mdtui.ui.guide import steps as guide_steps
from mdtui.ui.guide.screen import GuideScreen
from mdtui.ui.guide.steps import GuideCreateScreen
from mdtui.ui.inventory.screen import InventoryScreen

from .conftest import REPO, THEME_DIRS, plain, settle

DEVICE = "/dev/md3"  # md0-md2 exist in the tree


@pytest.fixture
def tree(tmp_path: Path, procfs_testdata: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(REPO / "tests" / "fixtures" / "trees" / "real-links", root, symlinks=True)
    (root / "sys" / "devices" / "virtual" / "block" / "loop0" / "size").write_text("2097152\n")
    cpu = root / "sys" / "devices" / "system" / "cpu"
    shutil.copytree(procfs_testdata / "sys" / "devices" / "system" / "cpu", cpu)
    for path in [cpu, *cpu.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def governors(root: Path) -> tuple[str, str]:
    cpu = root / "sys" / "devices" / "system" / "cpu"
    return (
        (cpu / "cpufreq" / "policy0" / "scaling_governor").read_text().strip(),
        (cpu / "cpu1" / "cpufreq" / "scaling_governor").read_text().strip(),
    )


@dataclass
class Recorder:
    """What ran: creates, and benchmark calls with the writes they were allowed and the governors then."""

    tree: Path
    db_path: Path
    creates: list[CreatePlan] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)

    def create(
        self, plan: CreatePlan, *, confirmed: str | None, root: SystemRoot | None = None, **_: Any
    ) -> CreateOutcome:
        assert confirmed == plan.confirmation
        self.creates.append(plan)
        return CreateOutcome(plan.request.device, None, (), None)

    def factory(self, store: ResultsStore, allow_writes_to: Collection[str], cancel: Any) -> Any:
        def run_preset(preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
            self.runs.append(
                {
                    "preset": preset_key,
                    "target": target,
                    "quick": quick,
                    "label": label,
                    "options": options,
                    "allow_writes_to": tuple(allow_writes_to),
                    "governors": governors(self.tree),
                }
            )
            moment = datetime(2026, 5, 1, tzinfo=UTC)
            return [
                store.add_run(
                    RunSetup(preset=preset_key, target=target, label=label, params={"step": "read"}),
                    status=RunStatus.COMPLETE,
                    started_at=moment,
                    ended_at=moment,
                    metrics=Metrics(read_bw_bytes_per_s=500e6 + 1e6 * len(self.runs)),
                )
            ]

        return run_preset


@pytest.fixture
def recorder(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Recorder:
    monkeypatch.setenv("MDTUI_STATE_DIR", str(tmp_path / "state"))
    rec = Recorder(tree, tmp_path / "results.db")
    monkeypatch.setattr(mdadm, "execute_create", rec.create)
    monkeypatch.setattr(guide_screen, "default_runner_factory", lambda root, privileged: rec.factory)
    return rec


def make_app(recorder: Recorder, **kwargs: Any) -> MdtuiApp:
    return MdtuiApp(
        str(recorder.tree),
        privileged=True,
        theme_dirs=THEME_DIRS,
        db_path=recorder.db_path,
        tree_stands_for_live=True,
        **kwargs,
    )


def text_of(pilot: Pilot[None], selector: str) -> str:
    return plain(pilot.app.screen.query_one(selector, Static).content, width=400)


async def open_guide(pilot: Pilot[None]) -> GuideScreen:
    await settle(pilot)
    await pilot.press("g")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, GuideScreen)
    return screen


async def pick_disks(pilot: Pilot[None], screen: GuideScreen, workload_index: int) -> None:
    await pilot.press(*(["down"] * workload_index), "space", "n")
    await pilot.pause()
    assert screen.step_key == "disks"
    await pilot.press("space", "down", "space")
    assert screen.query_one("#disk-list", SelectionList).selected == ["loop0", "nvme4n1"]
    await pilot.press("n")
    await settle(pilot)
    assert screen.step_key == "links"


async def type_and_enter(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*text, "enter")
    await settle(pilot)


async def test_full_flow_runs_nothing_destructive_without_confirmation(recorder: Recorder) -> None:
    app = make_app(recorder)
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await open_guide(pilot)
        await pick_disks(pilot, screen, workload_index=1)  # database
        assert screen.state.workload is not None and screen.state.workload.key == "database"
        links = text_of(pilot, "#links-body")
        assert "Checked loop0, nvme4n1 as a raid10 for database" in links
        assert "CPU governor is powersave on 2 of 2 cores" in links
        assert "669/605" in links  # the why cites finding 2's numbers (docs/findings.md)

        # Plan: the create screen opens with the draft; cancelling the confirmation creates nothing.
        await pilot.press("n", "n")
        await settle(pilot)
        create = app.screen
        assert isinstance(create, GuideCreateScreen)
        assert (create.form.members, create.form.level, create.form.chunk_kib) == (("loop0", "nvme4n1"), "raid10", 64)
        assert create.result.plan is not None
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert recorder.creates == []
        await pilot.press("ctrl+s")
        await settle(pilot)
        await type_and_enter(pilot, DEVICE)
        assert [plan.request.device for plan in recorder.creates] == [DEVICE]
        assert isinstance(app.screen, ResyncScreen)  # the new array's resync is shown before any run
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and screen.step_key == "weakest-link"
        assert recorder.runs == []

        # The weakest-link run is read-only: it starts on Next, with no writes allowed.
        await pilot.press("n")
        await settle(pilot)
        assert [(r["preset"], r["target"], r["quick"], r["allow_writes_to"]) for r in recorder.runs] == [
            ("weakest-link", DEVICE, True, ())
        ]
        assert "guide: weakest link: read 501 MB/s" in text_of(pilot, "#weakest-body")

        # The experiment suggested by the powersave finding writes: nothing runs until the device is typed.
        await pilot.press("n")
        await settle(pilot)
        assert screen.step_key == "experiment" and screen.experiment_key == "governor-ab"
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert len(recorder.runs) == 1
        assert "Not confirmed: nothing ran." in text_of(pilot, "#guide-status")
        await pilot.press("n")
        await settle(pilot)
        await type_and_enter(pilot, DEVICE)
        ab = recorder.runs[1:]
        assert [r["label"] for r in ab] == ["before: powersave", "after: performance"]
        assert [r["governors"] for r in ab] == [("powersave", "powersave"), ("performance", "performance")]
        assert all(r["allow_writes_to"] == (DEVICE,) for r in ab)
        assert governors(recorder.tree) == ("powersave", "powersave")  # restored

        await pilot.press("n")
        await settle(pilot)
        summary = text_of(pilot, "#summary-body")
        assert "Purpose: Database" in summary
        assert f"Created: {DEVICE}, raid10 on 2 members, chunk 64 KiB" in summary
        assert "Experiment: CPU governor A/B" in summary
        assert "Stored runs: #1, #2, #3" in summary
        results: list[GuideState | None] = []
        screen.dismiss = results.append  # type: ignore[method-assign]
        await pilot.press("n")
        assert results and results[0] is not None and results[0].device == DEVICE
    assert not should_show_guide(recorder.db_path)


async def test_skipping_every_step_runs_nothing(recorder: Recorder) -> None:
    app = make_app(recorder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_guide(pilot)
        for _ in range(6):
            await pilot.press("s")
            await settle(pilot)
        assert screen.step_key == "summary"
        summary = text_of(pilot, "#summary-body")
        assert "Created: nothing" in summary
        assert "Skipped: Purpose, Disks, Links, Plan & create, Weakest link, Experiment" in summary
        await pilot.press("s")  # the summary cannot be skipped
        assert screen.step_key == "summary"
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, InventoryScreen)
    assert recorder.creates == [] and recorder.runs == []


async def test_read_only_sweep_needs_no_confirmation(recorder: Recorder) -> None:
    app = make_app(recorder)
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await open_guide(pilot)
        await pick_disks(pilot, screen, workload_index=3)  # scratch
        await pilot.press("n", "n")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await type_and_enter(pilot, DEVICE)
        await pilot.press("escape")  # the resync view
        await settle(pilot)
        await pilot.press("s")  # skip the weakest-link run
        await settle(pilot)
        assert screen.step_key == "experiment"
        radio = screen.query_one("#experiment-choice", RadioSet)
        assert all(isinstance(b, MarkRadioButton) for b in radio.query(RadioButton))  # readable without colour
        radio.focus()
        await pilot.press("up", "enter")  # the parallelism sweep
        await settle(pilot)
        assert screen.experiment_key == "parallelism-sweep"
        await pilot.press("n")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert [r["options"]["numjobs"] for r in recorder.runs] == [1, 4, 16, 64]
        assert all(r["allow_writes_to"] == () and r["preset"] == "custom" for r in recorder.runs)
        assert "numjobs 64" in text_of(pilot, "#experiment-body")


async def test_guide_opens_by_itself_only_when_asked(recorder: Recorder) -> None:
    app = make_app(recorder, show_guide=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, GuideScreen)
        assert should_show_guide(recorder.db_path)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, InventoryScreen)
    # Closed once: the flag is set, so a first-run check no longer opens it.
    assert not should_show_guide(recorder.db_path)
    plain_app = make_app(recorder)
    async with plain_app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(plain_app.screen, InventoryScreen)


def test_findings_sharing_an_explanation_give_it_once() -> None:
    from mdtui.advise.findings import Finding, Severity
    from mdtui.ui.common.render import Palette

    shared = "A stripe runs at its slowest member."
    findings = [
        Finding("slow-member:md6", Severity.CRITICAL, "sdan limits md6", (), shared, "Check sdan's cable."),
        Finding("slow-member:md7", Severity.CRITICAL, "nvme15n1 limits md7", (), shared, "Reseat nvme15n1."),
        Finding("degraded:md2", Severity.CRITICAL, "md2 is degraded", (), "No redundancy left.", "Add a disk."),
    ]
    text = plain(guide_steps.findings_renderable(findings, Palette()))
    assert text.count(shared) == 1 and 'Why: as for "sdan limits md6" above' in text
    assert "Why: No redundancy left." in text and "Do: Reseat nvme15n1." in text


def test_every_step_has_its_own_widget_named_in_order() -> None:
    """Each step of the guide is drawn and advanced by the widget STEP_WIDGETS names for it, no name built
    at run time (a step renamed or added without its widget fails here, not when the user reaches it)."""
    assert tuple(guide_steps.STEP_WIDGETS) == tuple(key for key, _ in guide_core.STEPS)
    assert all(issubclass(step, guide_steps.GuideStep) for step in guide_steps.STEP_WIDGETS.values())
    source = Path(guide_screen.__file__).read_text() + Path(guide_steps.__file__).read_text()
    assert "getattr(" not in source


async def test_steps_passed_over_without_an_array_are_not_ticked(recorder: Recorder) -> None:
    """Issue 44: with no array created, Next on the weakest-link and experiment steps ran nothing, yet the step
    line ticked them (✓5 ✓6). A step is ticked only when the guide did what it is for (core.step_done)."""
    app = make_app(recorder)
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await open_guide(pilot)
        await pick_disks(pilot, screen, workload_index=0)
        await pilot.press("n")  # links read: on to the plan
        await settle(pilot)
        await pilot.press("s")  # no array
        await settle(pilot)
        assert screen.step_key == "weakest-link"
        await pilot.press("n")  # nothing to measure
        await settle(pilot)
        assert screen.step_key == "experiment"
        await pilot.press("n")  # nothing to run on
        await settle(pilot)
        assert screen.step_key == "summary"
        line = text_of(pilot, "#guide-steps")
        assert "✓1" in line and "✓2" in line and "✓3" in line, line
        assert "–4" in line and "–5" in line and "–6" in line, line
        assert "✓4" not in line and "✓5" not in line and "✓6" not in line, line
    assert recorder.creates == [] and recorder.runs == []


def test_the_steps_ask_the_screen_by_message_and_do_not_import_it() -> None:
    """steps.py and screen.py were one class over two files (a step set the screen's state and called its
    workers): the steps now read a GuideView and post messages, and only the screen imports the steps."""
    import ast

    tree = ast.parse(Path(guide_steps.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "mdtui.ui.guide.screen" not in imported
    source = Path(guide_steps.__file__).read_text()
    assert ".guide." not in source and "self.guide" not in source and "guide.state =" not in source
