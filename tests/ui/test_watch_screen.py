"""Pilot tests of the watch dashboard fed with snapshots from a Sampler over a synthetic tree advanced tick by tick."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.style import Style
from textual.pilot import Pilot

from mdtui.model.snapshot import Snapshot
from mdtui.probe.root import SystemRoot
from mdtui.sample.dashboard import WholeDisks
from mdtui.sample.sampler import Sampler
from mdtui.sample.series import ALL_DISKS, PastSnapshot
from mdtui.ui.app import MdtuiApp
from mdtui.ui.common.render import palette_from_variables
from mdtui.ui.inventory.screen import InventoryScreen
from mdtui.ui.watch.render import NO_CPUFREQ, members_table
from mdtui.ui.watch.screen import SnapshotTaken, WatchScreen
from mdtui.ui.watch.widgets import FrequencyChart, RateChart, TextLines

from .conftest import THEME_DIRS, settle
from .watch_tree import MEMBERS, WatchTree, show_snapshots

MakeApp = Callable[..., MdtuiApp]


def watch_app(
    root: str = "synthetic", array: str | None = None, *, live: bool = False, interval: float = 1.0
) -> MdtuiApp:
    """The app opened on the dashboard alone, as `mdtui watch` does; live=False: fed by the test, no clock."""
    screen = lambda: WatchScreen(root, array, interval, live=live)  # noqa: E731
    return MdtuiApp(root, privileged=True, theme_dirs=THEME_DIRS, start_screen=screen)


async def feed(pilot: Pilot[None], tree: WatchTree, ticks: int = 5) -> WatchScreen:
    """Sample the tree ticks times and hand the screen the history, as the worker does."""
    snapshots = tree.snapshots(ticks)
    disks = WholeDisks(SystemRoot(tree.root)).names(d.name for d in snapshots[-1].devices)
    return await show_snapshots(pilot, snapshots, disks)


def text(screen: WatchScreen, widget_id: str) -> str:
    return screen.query_one(widget_id, TextLines).text.plain + "\n"


async def test_array_rates_and_members_from_the_sampler(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path)
    async with watch_app().run_test(size=(160, 48)) as pilot:
        screen = await feed(pilot, tree)
        summary = text(screen, "#watch-summary")
        assert "md0 raid0 · 4 members · active" in summary
        # 400 MB/s of 1 MB reads.
        assert "read 400 MB/s 400 IOPS" in summary
        members = text(screen, "#watch-members")
        rows = {line.split()[0]: line.split() for line in members.splitlines() if line.startswith("nvme")}
        for slot, name in enumerate(MEMBERS):
            # Name, role (the slot), 100 MB/s read, no writes, 100 reads/s, 0 writes/s, 40% busy.
            assert rows[name][:7] == [name, str(slot), "100", "0.0", "100", "0", "40%"]
        assert "⚠" not in members  # evenly loaded members: nobody stands out
        assert screen.query_one("#watch-members").border_title == (
            "Members · busiest first · members/array read 1.00× (raid0: 1.00×)"
        )
        assert screen.view is not None and screen.view.series.read_bytes_per_s[-1] == 400_000_000.0
        assert screen.query_one("#rate-chart", RateChart).display
        assert screen.query_one("#iops-chart", RateChart).display


async def test_slow_member_is_highlighted(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path)
    tree.busy_percent["nvme2n1"] = 100.0
    tree.await_ms["nvme2n1"] = 9.0
    async with watch_app().run_test(size=(80, 24)) as pilot:
        screen = await feed(pilot, tree)
        members = text(screen, "#watch-members")
        assert "⚠ nvme2n1" in members
        assert "nvme2n1: busy 100% vs 40% for its peers" in members
        assert "⚠ nvme0n1" not in members
        assert screen.view is not None
        palette = palette_from_variables(pilot.app.get_css_variables())
        table = members_table(screen.view, palette, wide=False)
        offset = 0
        for line in table.plain.split("\n")[: 1 + len(MEMBERS)]:
            # The slow member's row is in bold warning colour; its peers' rows carry no style at all.
            style = table.get_style_at_offset(pilot.app.console, offset)
            if "nvme2n1" in line:
                assert style == Style.parse(f"bold {palette.warning}"), line
            elif line.split()[0].startswith("nvme"):
                assert not style, line
            offset += len(line) + 1


async def test_slower_member_by_time_per_request(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path)
    tree.await_ms["nvme1n1"] = 7.5  # equally busy, but each read takes 3.75 times as long
    async with watch_app().run_test(size=(160, 48)) as pilot:
        screen = await feed(pilot, tree)
        assert "nvme1n1: slow 7.5 ms per request vs 2.0 ms for its peers" in text(screen, "#watch-members")


async def test_no_cpufreq_says_not_available(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path, cpufreq=False)
    for size in ((80, 24), (160, 48)):
        async with watch_app().run_test(size=size) as pilot:
            screen = await feed(pilot, tree, ticks=2)
            cpu = text(screen, "#cpu-text")
            assert NO_CPUFREQ in cpu
            assert "GHz" not in cpu and "0 MHz" not in cpu
            assert "CPU 30% busy · iowait 10% · 2 cores" in cpu
            assert not screen.query_one("#freq-chart", FrequencyChart).display


async def test_cpufreq_governor_pstate_epp_and_frequencies(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path, level="raid6")
    async with watch_app().run_test(size=(80, 24)) as pilot:
        screen = await feed(pilot, tree, ticks=3)
        cpu = text(screen, "#cpu-text")
        # The driver is named once when it is the pstate driver itself; narrow: the warning without the why.
        assert "Governor powersave · intel_pstate active · EPP balance_power  ⚠ powersave\n" in cpu
        # Short terminal: no frequency chart, so the current GHz per core is in the text (tick 3: +150 MHz).
        assert "GHz cpu0 2.55 cpu1 3.25 (max 4.20)" in cpu
        assert "2 cores · md0_raid6 10%" in cpu  # narrow: md threads join the load line
        assert not screen.query_one("#freq-chart", FrequencyChart).display
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        await pilot.pause()
        assert screen.query_one("#freq-chart", FrequencyChart).display
        cpu = text(screen, "#cpu-text")
        assert "GHz cpu0" not in cpu  # the chart shows them now
        assert "md threads: md0_raid6 10%" in cpu
        assert "powersave can cost md" in cpu


async def test_keys_cycle_targets_toggle_iops_and_pause(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path)
    async with watch_app().run_test(size=(80, 24)) as pilot:
        screen = await feed(pilot, tree)
        assert screen.target == "md0"
        assert not screen.query_one("#iops-chart", RateChart).display
        await pilot.press("i")
        assert screen.query_one("#iops-chart", RateChart).display
        assert not screen.query_one("#rate-chart", RateChart).display
        await pilot.press("a")
        assert screen.target == ALL_DISKS
        # The four NVMe disks read; vda sat idle this interval and md0 is stacked on the disks.
        assert "all disks · 4 with I/O" in text(screen, "#watch-summary")
        await pilot.press("a")
        assert screen.target == "md0"
        await pilot.press("p")
        before = text(screen, "#watch-summary")
        assert "paused" in before
        tree.array_bytes_per_s = 800_000_000
        await feed(pilot, tree, ticks=2)
        assert text(screen, "#watch-summary") == before  # paused: the display holds still
        await pilot.press("p")
        assert "read 800 MB/s" in text(screen, "#watch-summary")


async def test_escape_exits_when_started_alone(tmp_path: Path) -> None:
    app = watch_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await feed(pilot, WatchTree(tmp_path), ticks=1)
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_w_on_the_inventory_opens_the_dashboard_for_the_selected_array(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        inventory = app.screen
        assert isinstance(inventory, InventoryScreen) and inventory.inventory is not None
        await pilot.press("tab", "down")
        expected = inventory.inventory.arrays[1].name
        await pilot.press("w")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WatchScreen) and screen.wanted == expected
        # The live worker samples the captured tree (static counters) and shows the array.
        for _ in range(50):
            if screen.view is not None:
                break
            await asyncio.sleep(0.05)
        assert screen.view is not None and screen.target == expected
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is inventory


async def test_live_worker_samples_a_tree_in_a_thread(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path)
    app = watch_app(str(tmp_path), "/dev/md0", live=True, interval=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        for _ in range(100):
            tree.advance()
            await asyncio.sleep(0.05)
            if screen.view is not None and screen.view.total is not None and screen.view.total.read_bytes_per_s:
                break
        assert screen.view is not None and screen.view.name == "md0"
        # Rates come from the sampler's own clock here; the counters advance 400 MB per tick written.
        assert screen.view.total is not None and screen.view.total.read_bytes_per_s
        assert len(screen.view.series.seconds_ago) >= 2
        await pilot.press("escape")
    worker_states = [w.is_finished for w in app.workers]
    assert all(worker_states)


async def test_the_sampler_keeps_only_the_charts_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    WatchTree(tmp_path)
    lengths: list[int] = []
    original = Sampler.__init__

    def recording(self: Sampler, *args: object, **kwargs: object) -> None:
        lengths.append(int(kwargs.get("history_length", -1)))  # type: ignore[call-overload]
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Sampler, "__init__", recording)
    screen = WatchScreen(str(tmp_path), "md0", 0.1, window_s=0.3)
    app = MdtuiApp(str(tmp_path), privileged=True, theme_dirs=THEME_DIRS, start_screen=lambda: screen)
    windows: list[tuple[Snapshot, ...]] = []
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(300):
            if screen._snapshots and (not windows or windows[-1] is not screen._snapshots):
                windows.append(screen._snapshots)
            if len(windows) >= 8:
                break
            await asyncio.sleep(0.03)
        await pilot.press("escape")
    # The sampler keeps no history of its own; the screen keeps the window, 0.3 s at 0.1 s and two
    # to spare (not the sampler's default of 600), the ticks before the latest as PastSnapshots.
    assert lengths == [1]
    assert max(len(window) for window in windows) == 5
    for window in windows:
        assert all(isinstance(s, PastSnapshot) for s in window[:-1]) and not isinstance(window[-1], PastSnapshot)
        assert window[-1].devices and [s.timestamp for s in window] == sorted(s.timestamp for s in window)


def test_newer_snapshot_message_replaces_a_queued_one() -> None:
    older, newer = SnapshotTaken((), frozenset()), SnapshotTaken((), frozenset())
    assert newer.can_replace(older)


async def test_a_failing_sampler_is_a_message_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Sampler, now: float | None = None) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Sampler, "sample", broken)
    app = watch_app(str(tmp_path), live=True, interval=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert text(screen, "#watch-summary").startswith("✖ Sampling failed: OSError: [Errno 5] Input/output error")
        assert app.is_running


async def test_a_slow_redraw_neither_slows_sampling_nor_queues_stale_ticks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    WatchTree(tmp_path)
    seen: list[int] = []  # history length at each redraw
    original = WatchScreen._redraw

    def slow_redraw(self: WatchScreen, charts_due: bool = True) -> None:
        if self._snapshots:
            seen.append(len(self._snapshots))
            time.sleep(0.3)  # holds the UI thread, as a slow terminal or a huge chart would
        original(self, charts_due)

    monkeypatch.setattr(WatchScreen, "_redraw", slow_redraw)
    app = watch_app(str(tmp_path), live=True, interval=0.1)
    async with app.run_test(size=(80, 24)):
        # Until the history holds 12 samples (1.2 s at the worker's pace; a loaded machine may take longer,
        # so wait by count, not by the clock), at most 10 s.
        deadline = time.monotonic() + 10.0
        while not (seen and max(seen) >= 12) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        running = list(seen)  # the redraws while the app ran (its shutdown is not the claim)
    # The worker kept its pace while the UI managed a redraw per 0.3 s at best, and every redraw showed
    # the newest history, not a backlog.
    assert running and max(running) >= 12, running
    # Redraws for a new snapshot (a repeat is a redraw for another reason, such as a resize) skipped the
    # snapshots that came while the last one drew: stale ones were dropped, not queued (a queue would redraw
    # 1, 2, 3, ...). Counted as steps between redraws, so a loaded machine's slower sampling still counts.
    distinct = sorted(set(running))
    steps = [b - a for a, b in itertools.pairwise(distinct)]
    assert steps and sum(step > 1 for step in steps) * 2 >= len(steps), running
    assert seen == sorted(seen), seen  # never an older history after a newer one


# raid6 mid-resync as /proc/mdstat shows it (the shape of the lab's md0 in the real-links capture).
RESYNC_MDSTAT = (
    "Personalities : [raid6] [raid5] [raid4]\n"
    "md0 : active raid6 nvme3n1[3] nvme2n1[2] nvme1n1[1] nvme0n1[0]\n"
    "      2093056 blocks super 1.2 level 6, 512k chunk, algorithm 2 [4/4] [UUUU]\n"
    "      [=====>...............]  resync = 25.0% (261632/1046528) finish=6.0min speed=2200K/sec\n"
    "\nunused devices: <none>\n"
)


async def test_resync_is_a_bar_with_percent_speed_and_eta(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path, level="raid6")
    (tmp_path / "proc" / "mdstat").write_text(RESYNC_MDSTAT)
    for size in ((80, 24), (200, 50)):
        async with watch_app().run_test(size=size) as pilot:
            screen = await feed(pilot, tree, ticks=2)
            lines = text(screen, "#watch-summary").splitlines()
            (line,) = [line for line in lines if "resync" in line]
            # A bar drawn in characters (a quarter filled, the rest a visible track), readable without colour.
            assert "█" in line and "░" in line and line.index("█") < line.index("░")
            assert "25.0%" in line and "2.3 MB/s" in line and "ETA 6m00s" in line


async def test_charts_use_the_height_they_are_given(tmp_path: Path) -> None:
    for cpufreq in (False, True):
        tree = WatchTree(tmp_path / str(cpufreq), cpufreq=cpufreq)
        async with watch_app().run_test(size=(200, 50)) as pilot:
            screen = await feed(pilot, tree, ticks=2)
            await pilot.pause()
            rate = screen.query_one("#rate-chart", RateChart)
            # 50 rows less the header, summary, members, CPU pane and footer: well over half for the charts.
            assert rate.size.height >= 15, (cpufreq, rate.size)
            assert len(rate.rows) == rate.size.height


async def test_with_io_counts_only_devices_that_did_io_in_the_last_interval(tmp_path: Path) -> None:
    tree = WatchTree(tmp_path, array_bytes_per_s=0)
    async with watch_app().run_test(size=(80, 24)) as pilot:
        await feed(pilot, tree)
        await pilot.press("a")
        screen = pilot.app.screen
        assert isinstance(screen, WatchScreen) and screen.target == ALL_DISKS
        assert "all disks · 0 with I/O" in text(screen, "#watch-summary")
