"""Pilot tests of the benchmark screen on the captured real-links tree.

fio cannot run against a captured tree (its devices are not this host's), so the process runner
(mdtui.bench.session.run_step) is replaced by one that streams canned Progress and returns canned fio
documents read by the real fio parser. Everything else is the real core: the plan, the write checks,
the re-check scan of the tree, the sampler, the results store (a temporary database).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, DataTable, Input, OptionList, Select, Static

from mdtui.bench import session
from mdtui.execute.argv import job_argv
from mdtui.execute.fio import document_stats
from mdtui.execute.presets import Step
from mdtui.model.inventory import Inventory
from mdtui.model.job import JobResult, JobSpec, JobStatus, Progress
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore
from mdtui.ui.app import MdtuiApp
from mdtui.ui.bench.screen import BenchScreen
from mdtui.ui.bench.widgets import BenchChart
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.watch.chart import plain as chart_plain
from mdtui.ui.watch.widgets import TimeChart

from .conftest import plain, settle

MakeApp = Callable[..., MdtuiApp]
MB = 1_000_000
REPORTS = 3  # canned status reports per job, one "second" apart


def rate_of(spec: JobSpec) -> float:
    """Canned speeds: nvme3n1 is the slow member, the arrays read 4 × its speed."""
    if "nvme3n1" in spec.target:
        return 20 * MB
    if "/dev/md" in spec.target:
        return 80 * MB
    return 1000 * MB


def canned_result(spec: JobSpec, seconds: float, status: JobStatus) -> JobResult:
    rate = rate_of(spec)
    io_bytes = int(rate * seconds)
    direction = {
        "io_bytes": io_bytes,
        "bw_bytes": int(rate),
        "iops": rate / spec.block_size_bytes,
        "runtime": int(seconds * 1000),
        "total_ios": io_bytes // spec.block_size_bytes,
        "clat_ns": {"N": 1, "mean": 1000.0, "max": 2000.0},
    }
    empty = {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0, "clat_ns": {"N": 0}}
    job = {"jobname": spec.name, "error": 0, "usr_cpu": 1.0, "sys_cpu": 2.0}
    job |= {"read": empty, "write": direction} if spec.writes else {"read": direction, "write": empty}
    document = {"fio version": "fio-3.33", "jobs": [job]}
    total, jobs = document_stats(document)
    return JobResult(spec, status, tuple(job_argv(spec)), 0, seconds, total, jobs, raw=json.dumps(document))


class CannedRunner:
    """Streams REPORTS progress reports per job, then canned figures; a set cancel ends it early."""

    def __init__(self, pause_s: float = 0.01, hold: bool = False) -> None:
        self.pause_s = pause_s
        self.hold = hold  # keep reporting until cancelled
        self.steps: list[Step] = []
        self.started = asyncio.Event()

    async def __call__(
        self, step: Step, on_progress: Any = None, *, cancel: Any = None, timeout_s: Any = None, **_: Any
    ):
        self.steps.append(step)
        second = 0
        while second < REPORTS or self.hold:
            if cancel is not None and cancel.is_set():
                return tuple(canned_result(spec, float(second), JobStatus.CANCELLED) for spec in step.jobs)
            second += 1
            for spec in step.jobs:
                rate = rate_of(spec)
                read, write = (0.0, rate) if spec.writes else (rate, 0.0)
                iops = rate / spec.block_size_bytes
                progress = Progress(float(second), int(read * second), int(write * second), read, write, iops, 0.0)
                on_progress(spec, progress)
            await asyncio.sleep(self.pause_s)
        return tuple(canned_result(spec, float(REPORTS), JobStatus.COMPLETE) for spec in step.jobs)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "results.db"
    monkeypatch.setenv("MDTUI_DB", str(path))
    return path


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, db: Path) -> CannedRunner:
    canned = CannedRunner()
    monkeypatch.setattr(session, "run_step", canned)
    return canned


async def open_bench(pilot: Pilot[None], pane: str = "disks", row: int = 0) -> BenchScreen:
    await settle(pilot)
    if pane == "arrays":
        await pilot.press("tab")
    await pilot.press(*["down"] * row, "b")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, BenchScreen)
    return screen


async def wait_until(pilot: Pilot[None], condition: Callable[[], bool], timeout_s: float = 20) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the benchmark screen"
        await pilot.pause(0.05)


async def choose_preset(pilot: Pilot[None], screen: BenchScreen, key: str) -> None:
    presets = screen.query_one("#bench-presets", OptionList)
    presets.highlighted = next(i for i in range(presets.option_count) if presets.get_option_at_index(i).id == key)
    await pilot.pause()


def text_of(screen: BenchScreen, selector: str) -> str:
    return plain(screen.query_one(selector, Static).content, width=400)


async def test_preset_doc_and_plan_follow_the_choice(make_app: MakeApp, tree_inventory: Inventory) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot, "arrays")
        assert screen.target == "/dev/md0"
        # Figures printed as the result table prints them (rate_mb_s: thousands separated).
        assert "read 3,322 MB/s" in text_of(screen, "#bench-doc-body")
        assert "832 × 4 = 3,328" in text_of(screen, "#bench-doc-body")
        plan = text_of(screen, "#bench-plan")
        assert "weakest-link on /dev/md0 (raid6, 4 members), quick: 6 steps, about 30 s" in plan
        assert "read-only" in plan and "running a resync" in plan
        await choose_preset(pilot, screen, "custom")
        assert screen.has_class("-custom") and screen.query_one("#bs", Input).display
        assert "Any single fio job" in text_of(screen, "#bench-doc-body")
        screen.query_one("#bench-quick", Checkbox).value = False
        await pilot.pause()
        assert "custom on /dev/md0 (raid6, 4 members): 1 step, about 30 s" in text_of(screen, "#bench-plan")
        screen.query_one("#iodepth", Input).value = "zero"
        await pilot.pause()
        assert "iodepth must be a whole number" in text_of(screen, "#bench-plan")
        await pilot.press("escape")
        assert not isinstance(app.screen, BenchScreen)


async def test_weakest_link_run_streams_progress_and_shows_the_report(
    make_app: MakeApp, runner: CannedRunner, db: Path
) -> None:
    app = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_bench(pilot, "arrays")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "ended")
        chart = screen.query_one("#bench-chart", BenchChart)
        # One point a second per step: the four jobs of the all-at-once step report as one.
        assert len(chart.points) == REPORTS * 6
        assert [p[0] for p in chart.points] == sorted(p[0] for p in chart.points)
        assert max(p[1] for p in chart.points) == 4 * 1000 * MB - 980 * MB
        table = screen.query_one("#bench-table", DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert [row[1] for row in rows] == [*(f"nvme{i}n1 alone" for i in range(4)), "all members at once", "array md0"]
        assert rows[3][2] == "20 MB/s" and rows[5][2] == "80 MB/s" and all(r[-1] == "ok" for r in rows)
        findings = text_of(screen, "#bench-findings")
        assert "Slowest member: /dev/nvme3n1 at 20 MB/s alone" in findings and "holds the array back" in findings
        assert "✓ Finished: 6 of 6 steps · stored as runs #1–#6" in text_of(screen, "#bench-status")
    assert len(runner.steps) == 6
    with ResultsStore(db) as store:
        runs = store.list_runs()
    assert len(runs) == 6 and {run.status for run in runs} == {RunStatus.COMPLETE}
    assert runs[0].params["step"] == "array md0" and runs[0].metrics.read_bw_bytes_per_s == 80 * MB


async def test_a_write_needs_the_typed_target(make_app: MakeApp, runner: CannedRunner, db: Path) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot)
        screen.query_one("#bench-target", Select).value = "/dev/nvme4n1"
        await choose_preset(pilot, screen, "custom")
        screen.query_one("#rw", Select).value = "randwrite"
        await pilot.pause()
        assert "WRITES to /dev/nvme4n1" in text_of(screen, "#bench-plan")
        await pilot.press("ctrl+s")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.phrase == "/dev/nvme4n1"
        assert "--rw=randwrite" in plain(dialog.query_one("#confirm-text", Static).content, width=400)
        await pilot.press(*"/dev/nvme3n1", "enter")
        assert app.screen is dialog and runner.steps == []
        dialog.query_one("#confirm-input", Input).value = "/dev/nvme4n1"
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.state == "ended")
        assert "✓ Finished: 1 of 1 step · stored" in text_of(screen, "#bench-status")
    assert [spec.target for spec in runner.steps[0].jobs] == ["/dev/nvme4n1"]
    with ResultsStore(db) as store:
        (run,) = store.list_runs()
    assert run.metrics.write_bw_bytes_per_s == 1000 * MB and run.params["rw"] == "randwrite"


async def test_a_write_on_a_mounted_disk_is_refused(make_app: MakeApp, runner: CannedRunner, db: Path) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot)
        screen.query_one("#bench-target", Select).value = "/dev/sda"
        await choose_preset(pilot, screen, "disk-mark")
        assert "✖ sda is in use: mounted: mounted at /mnt/data" in text_of(screen, "#bench-plan")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen and screen.state == "setup"
        (note,) = app._notifications
        assert note.title == "Will not write to /dev/sda" and "mounted at /mnt/data" in note.message
    assert runner.steps == [] and not db.exists()


@pytest.fixture
def holding(monkeypatch: pytest.MonkeyPatch, db: Path) -> CannedRunner:
    """A runner that keeps reporting until the run is cancelled."""
    held = CannedRunner(pause_s=0.02, hold=True)
    monkeypatch.setattr(session, "run_step", held)
    return held


async def start_and_wait(pilot: Pilot[None], screen: BenchScreen, points: int) -> None:
    """Start the chosen run and wait for its first ``points`` chart points."""
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: len(screen.query_one("#bench-chart", BenchChart).points) >= points)


async def test_cancel_keeps_the_partial_result(make_app: MakeApp, holding: CannedRunner, db: Path) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot, "arrays")
        await start_and_wait(pilot, screen, 3)
        assert screen.state == "running"
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.state == "ended")
        assert "■ Cancelled after 1 of 6 steps" in text_of(screen, "#bench-status")
        table = screen.query_one("#bench-table", DataTable)
        assert table.get_row_at(0)[-1] == "cancelled" and table.get_row_at(1)[-1] == "not run"
    assert len(holding.steps) == 1
    with ResultsStore(db) as store:
        (run,) = store.list_runs()
    assert run.status is RunStatus.CANCELLED and run.metrics.read_bw_bytes_per_s == 1000 * MB


async def test_no_target_to_offer_leaves_the_target_blank(make_app: MakeApp, tree_root: Path) -> None:
    # A host with no disk and no array: the screen opens with nothing chosen, and says so instead of a plan.
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        empty = Inventory(disks=(), arrays=(), privileged=True, udev=True)
        await app.push_screen(BenchScreen(str(tree_root), empty))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BenchScreen)
        assert screen.target is None
        assert screen.query_one("#bench-target", Select).value is Select.NULL
        assert "no target: pick an array or a disk" in text_of(screen, "#bench-plan")


def offered(screen: BenchScreen) -> dict[str, tuple[str, bool]]:
    """Each preset's prompt as shown and whether it is disabled."""
    presets = screen.query_one("#bench-presets", OptionList)
    options = (presets.get_option_at_index(i) for i in range(presets.option_count))
    return {o.id or "": (plain(o.prompt, width=400).strip(), o.disabled) for o in options}


async def test_b_on_a_disk_picks_a_preset_that_works_on_a_disk(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot)  # loop0, a free disk
        assert screen.target == "/dev/loop0"
        assert screen.preset_key == "disk-mark" and screen.plan is not None and screen.plan_error is None
        shown = offered(screen)
        # The array presets are offered on arrays only, and say so in words (readable without colour).
        assert shown["weakest-link"] == ("Find the weakest link (arrays only)", True)
        assert shown["parity-cost"] == ("Parity CPU cost (arrays only)", True)
        assert shown["disk-mark"] == ("Disk-mark matrix", False)
        # Choosing an array offers them again; back on a disk, the array preset chosen moves to one that plans.
        screen.query_one("#bench-target", Select).value = "/dev/md0"
        await pilot.pause()
        assert offered(screen)["weakest-link"] == ("Find the weakest link", False)
        await choose_preset(pilot, screen, "parity-cost")
        assert screen.preset_key == "parity-cost"
        screen.query_one("#bench-target", Select).value = "/dev/sda"  # mounted: disk-mark would be refused
        await pilot.pause()
        assert screen.preset_key not in ("weakest-link", "parity-cost")
        assert screen.plan is not None and not screen.plan.refusals and not screen.plan.writes


async def test_weakest_link_members_field(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot, "arrays")
        field = screen.query_one("#bench-members", Input)
        assert screen.has_class("-members") and field.display
        assert field.value == "nvme0n1 nvme1n1 nvme2n1 nvme3n1"
        assert screen.request().members == ()  # the array's own members: the CLI's default
        field.value = "nvme0n1 nvme3n1"
        await pilot.pause()
        assert screen.request().members == ("nvme0n1", "nvme3n1")
        # Each of the two alone, both at once, then the array.
        assert "4 steps" in text_of(screen, "#bench-plan")
        await choose_preset(pilot, screen, "disk-mark")
        assert not screen.has_class("-members")


async def test_custom_text_says_what_this_run_does(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot)
        screen.query_one("#bench-target", Select).value = "/dev/nvme4n1"
        await choose_preset(pilot, screen, "custom")
        doc = text_of(screen, "#bench-doc-body")
        assert "This run only reads /dev/nvme4n1 (rw=read)" in doc
        assert "Read-only" not in doc and "verwrites" not in doc
        screen.query_one("#rw", Select).value = "randwrite"
        await pilot.pause()
        doc = text_of(screen, "#bench-doc-body")
        assert "This run overwrites /dev/nvme4n1 (rw=randwrite)" in doc
        assert "Read-only" not in doc and "only reads" not in doc


async def test_opened_again_the_preset_list_has_focus_and_arrows_move(
    make_app: MakeApp, runner: CannedRunner, db: Path
) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot, "arrays")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "ended")
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, BenchScreen)
        await pilot.press("b")
        await pilot.pause()
        again = app.screen
        assert isinstance(again, BenchScreen) and again is not screen
        assert isinstance(app.focused, OptionList) and app.focused.id == "bench-presets"
        before = again.preset_key
        await pilot.press("down")
        await pilot.pause()
        assert again.preset_key != before


async def test_chart_time_axis_reads_seconds_into_the_run(make_app: MakeApp, runner: CannedRunner, db: Path) -> None:
    app = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_bench(pilot, "arrays")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "ended")
        await pilot.pause()
        for chart in screen.query_one("#bench-chart", BenchChart).query(TimeChart):
            axis = chart_plain(chart.rows)[-1].split()
            assert axis[0] == "0s" and all(label.endswith("s") for label in axis) and "now" not in axis
        titles = [chart.border_title for chart in screen.query_one("#bench-chart", BenchChart).query(TimeChart)]
        assert titles == ["MB/s (throughput)", "IOPS (requests/s)"]


async def test_a_cancelled_run_keeps_its_bar_where_it_stopped(make_app: MakeApp, holding: CannedRunner) -> None:
    """Issue 44: a cancelled one-step run drew its bar at 100 %; a step cut short leaves the bar where it was."""
    from textual.widgets import ProgressBar

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot, "arrays")
        await choose_preset(pilot, screen, "custom")  # one step, reads, 10 canned seconds in quick mode
        holding.pause_s = 0.3  # its reports come slower than its end, so x comes first
        await start_and_wait(pilot, screen, 2)
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.state == "ended")
        assert "■ Cancelled after 1 of 1 step" in text_of(screen, "#bench-status")
        bar = screen.query_one("#bench-bar", ProgressBar)
        assert bar.percentage is not None and bar.percentage < 1.0, bar.percentage


async def test_after_a_run_the_chart_keeps_the_room_the_result_does_not_need(
    make_app: MakeApp, runner: CannedRunner, db: Path
) -> None:
    """Issue 44: after a run the chart shrank to 4 plot rows above 10-18 blank ones (200×50). The result takes
    its own height (at most half), the chart the rest."""
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await open_bench(pilot, "arrays")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "ended")
        await pilot.pause()
        chart = screen.query_one("#bench-chart", BenchChart)
        result = screen.query_one("#bench-result")
        assert result.region.height <= result.virtual_size.height, "blank rows under the result"
        assert chart.region.height >= 30 and chart.region.width == screen.region.width
        assert chart.region.bottom == result.region.y


async def test_the_bench_screen_targets_a_file_as_the_cli_does(
    make_app: MakeApp, runner: CannedRunner, db: Path, tmp_path: Path
) -> None:
    """Issue 44: `mdtui bench --target FILE` worked, the screen offered only arrays and disks."""
    data = tmp_path / "fio.dat"
    data.write_bytes(b"\0" * (1 << 20))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot)
        select = screen.query_one("#bench-target", Select)
        select.value = "other: a path"
        await pilot.pause()
        assert screen.has_class("-path") and screen.query_one("#bench-path", Input).has_focus
        assert "no target: pick an array or a disk, or type a path" in text_of(screen, "#bench-plan")
        await pilot.press(*str(data))
        await pilot.pause()
        assert screen.target == str(data)
        await choose_preset(pilot, screen, "custom")
        plan = text_of(screen, "#bench-plan")
        assert f"custom on {data} (file)" in plan and "read-only" in plan, plan
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state == "ended")
        assert "✓ Finished: 1 of 1 step" in text_of(screen, "#bench-status")
    assert [spec.target for step in runner.steps for spec in step.jobs] == [str(data)]
    with ResultsStore(db) as store:
        (run,) = store.list_runs()
    assert run.target == str(data)


async def test_a_benchmark_left_in_the_background_is_named_by_what_it_runs(
    make_app: MakeApp, holding: CannedRunner
) -> None:
    """Issue 44: the palette's way back showed an internal id ("background-BenchScreen-140006049559184")."""
    from mdtui.ui.common.palette import mdtui_commands

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_bench(pilot, "arrays")
        await start_and_wait(pilot, screen, 1)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.click("#background")
        await pilot.pause()
        (back,) = [command for command in mdtui_commands(app) if command.name.startswith("Back to")]
        assert back.name == "Back to a benchmark (running in the background)"
        assert back.help == "weakest-link on /dev/md0" and "background-" not in back.help
        back.run()
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.state == "ended")
