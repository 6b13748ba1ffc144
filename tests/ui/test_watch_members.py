"""The watch screen's member table at 80x24 (issue 44): busiest first, scrolled by the arrows, PgDn, Home/End and
the wheel, sorted by s/S, with the array's standouts always in view; on the 256-disk host from bench/bigtree."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from textual.events import MouseScrollDown

from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.snapshot import CpuState, DeviceRates, Snapshot
from mdtui.probe.root import SystemRoot
from mdtui.sample.dashboard import WholeDisks
from mdtui.sample.sampler import Sampler
from mdtui.ui.watch.screen import WatchScreen
from mdtui.ui.watch.widgets import MembersPane, TextLines

from .test_watch_screen import watch_app
from .watch_tree import show_snapshots

SMALL = (80, 24)


def pane(screen: WatchScreen) -> tuple[str, list[str]]:
    """The members pane's title and its lines."""
    widget = screen.query_one("#watch-members", TextLines)
    return str(widget.border_title), widget.text.plain.splitlines()


def load(rates: DeviceRates) -> tuple[float, float]:
    """Busy %, then bytes moved: what busiest first orders by."""
    return rates.utilisation_percent or 0.0, (rates.read_bytes_per_s or 0.0) + (rates.write_bytes_per_s or 0.0)


def names(lines: list[str]) -> list[str]:
    return [line.split()[0] if not line.startswith("⚠") else line.split()[1] for line in lines[1:] if line[:1] != "…"]


# -- the 256-disk host -------------------------------------------------------------------------------------------


def big_host(bigtree: ModuleType, tmp_path: Path) -> tuple[str, tuple[Snapshot, ...], frozenset[str]]:
    tree = bigtree.build(tmp_path / "big", 256)
    root = SystemRoot(tree.base)
    with Sampler(root) as sampler:
        tree.advance(20)
        sampler.sample(now=20.0)
        tree.advance(21)
        latest = sampler.sample(now=21.0)
        snapshots = (*sampler.history.snapshots()[:-1], latest)
    return str(tree.base), snapshots, WholeDisks(root).names(d.name for d in latest.devices)


async def test_all_disks_of_a_256_disk_host_busiest_first_and_every_one_reachable(
    bigtree: ModuleType, tmp_path: Path
) -> None:
    root, snapshots, disks = big_host(bigtree, tmp_path)
    async with watch_app(root, "disks").run_test(size=SMALL) as pilot:
        screen = await show_snapshots(pilot, snapshots, disks)
        for _ in range(12):  # to the all-disks view (after every array)
            if screen.target == "disks":
                break
            await pilot.press("a")
        assert screen.target == "disks" and screen.view is not None
        title, lines = pane(screen)
        shown = names(lines)
        # Busiest first: the first rows are the most utilised, then the most bytes moved (it was sorted by name).
        busy = {m.name: load(m.rates) for m in screen.view.members if m.rates is not None}
        assert busy[shown[0]] == max(busy.values()), (shown, title)
        assert [busy[name] for name in shown] == sorted((busy[name] for name in shown), reverse=True)
        assert title.startswith(f"Disks 1-{len(shown)} of 256 · busiest first"), title
        assert lines[-1].startswith(f"… {256 - len(shown)} more below") and "PgDn" in lines[-1], lines
        # Tab reaches the table (it has the focus from the start), PgDn and the arrows move it.
        await pilot.press("tab")
        assert isinstance(screen.focused, MembersPane)
        await pilot.press("pagedown")
        title, lines = pane(screen)
        after = names(lines)
        assert after[0] == shown[-1] and after[1] not in shown, (shown, after)  # one row of the last page kept
        await pilot.press("down")
        assert names(pane(screen)[1])[0] == after[1]
        await pilot.press("end")
        title, lines = pane(screen)
        assert title.startswith(f"Disks {256 - len(shown) + 1}-256 of 256"), title
        seen = set(shown)
        await pilot.press("home")
        while True:  # every disk can be reached, page by page
            seen |= set(names(pane(screen)[1]))
            if "more below" not in pane(screen)[1][-1]:
                break
            await pilot.press("pagedown")
        assert seen == {m.name for m in screen.view.members} and len(seen) == 256
        # s: the next order, from the top; S reverses it.
        await pilot.press("s")
        title, lines = pane(screen)
        assert "most read first" in title and title.startswith("Disks 1-"), title
        await pilot.press("S")
        assert "most read first, reversed" in pane(screen)[0]


# -- an array whose one member stands out --------------------------------------------------------------------


def rates(name: str, busy: float, mb: float, read_ms: float = 2.0) -> DeviceRates:
    return DeviceRates(name, mb * 1e6, 0.0, None, mb, 0.0, busy, 0.5, read_ms, None)


def wide_array(slow: str) -> tuple[Snapshot, ...]:
    """md0, raid0 over 12 members: sdl takes 40 ms per read (a standout) but is the least busy and reads least."""
    members = [f"sd{chr(ord('a') + n)}" for n in range(12)]
    devices = [rates(name, 40.0 + n, 100.0 + n, 40.0 if name == slow else 2.0) for n, name in enumerate(members)]
    devices[members.index(slow)] = rates(slow, 20.0, 50.0, 40.0)
    total = DeviceRates("md0", sum(d.read_bytes_per_s or 0 for d in devices), 0.0, None, 1000.0, 0.0, None, None)
    slots = tuple(ArrayMember(name, n, ("in_sync",)) for n, name in enumerate(members))
    array = MdArray("md0", "active", "raid0", slots, raid_disks=12)
    cpu = CpuState(False, (), 10.0, 1.0)
    return (Snapshot(1.0, 1.0, (*devices, total), cpu, (array,), ()),)


async def test_the_standout_stays_in_view_whatever_the_scroll_and_sort() -> None:
    async with watch_app("synthetic", "md0").run_test(size=SMALL) as pilot:
        screen = await show_snapshots(pilot, wide_array("sdl"), frozenset())
        assert screen.view is not None and [m.name for m in screen.view.members if m.standout] == ["sdl"]
        title, lines = pane(screen)
        shown = names(lines)
        assert shown[0] == "sdl" and lines[1].startswith("⚠ sdl"), lines  # pinned on top
        assert shown[1] == "sdk", shown  # then the busiest
        assert len(shown) < 12 and "more below" in lines[-1], lines  # 80x24 has no room for all twelve
        assert "+ 1 ⚠" in title and "Members 1-" in title, title
        for keys in (("end",), ("pagedown",), ("s", "s", "s", "s", "end"), ("S", "end")):
            await pilot.press(*keys)
            title, lines = pane(screen)
            assert names(lines)[0] == "sdl", (keys, lines)
        # Every member is still reachable under it.
        await pilot.press("home")
        seen = set(names(pane(screen)[1]))
        while "more below" in pane(screen)[1][-1]:
            await pilot.press("pagedown")
            seen |= set(names(pane(screen)[1]))
        assert len(seen) == 12


async def test_the_wheel_scrolls_the_members() -> None:
    async with watch_app("synthetic", "md0").run_test(size=SMALL) as pilot:
        screen = await show_snapshots(pilot, wide_array("sdl"), frozenset())
        first = names(pane(screen)[1])[1]
        widget = screen.query_one("#watch-members", MembersPane)
        widget.post_message(MouseScrollDown(widget, 1, 1, 0, 0, 0, False, False, False))
        await pilot.pause()
        await pilot.pause()
        lines = pane(screen)[1]
        assert names(lines)[0] == "sdl" and names(lines)[1] != first and "above" in lines[-1], lines
