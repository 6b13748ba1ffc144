"""The live dashboard: an array's throughput and IOPS over time, its members' load, CPU frequency and md threads."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Sequence

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.scalar import Unit
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer, Header

from mdtui.bench.member_figures import stored_member_runs
from mdtui.bench.sync_forecast import foreground_io, running_pass_time, sync_view
from mdtui.model.array import MdArray
from mdtui.model.snapshot import Snapshot
from mdtui.plan.sync_time import SyncTime
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.sample.dashboard import (
    DEFAULT_WINDOW_S,
    CoreFrequencies,
    TargetView,
    WholeDisks,
    build_view,
    frequency_series,
    next_target,
    pick_target,
    target_names,
)
from mdtui.sample.members import MemberPage, MemberSort, member_page
from mdtui.sample.sampler import DEFAULT_INTERVAL_S, Sampler, check_interval
from mdtui.sample.series import DiskTotals, PastSnapshot, past
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.common.render import Palette, app_db_path, app_palette
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.watch.chart import LINE_MARKS
from mdtui.ui.watch.render import cpu_panel, members_table, members_title, summary
from mdtui.ui.watch.widgets import FrequencyChart, MembersPane, RateChart, TextLines


class SnapshotTaken(Message, bubble=False):
    """A new tick: the window's snapshots (oldest first; those before the latest as PastSnapshots) and the
    whole disks among the latest's devices.

    A newer tick replaces one the UI has not handled yet: history already holds every snapshot, so
    dropping a message loses no point of the charts, only a redraw nobody would have seen.
    """

    def __init__(self, snapshots: tuple[Snapshot, ...], disks: frozenset[str]) -> None:
        super().__init__()
        self.snapshots = snapshots
        self.disks = disks

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotTaken)


class SyncPredicted(Message, bubble=False):
    """A running sync's prediction (predict_sync), once per sync."""

    def __init__(self, name: str, action: str, predicted: SyncTime | None) -> None:
        super().__init__()
        self.name = name
        self.action = action
        self.predicted = predicted


class SamplerFailed(Message, bubble=False):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


# Charts need no more than a redraw a second (a braille dot is ~0.8 s of a two-minute window on a wide
# terminal): at 0.25 s the tables update every tick and the charts every fourth.
CHART_PERIOD_S = 1.0


def _legend(title: str, palette_colours: Sequence[str], labels: Sequence[str]) -> str:
    keys = " ".join(
        f"[{colour}]{LINE_MARKS[index % 2]} {label}[/]"
        for index, (colour, label) in enumerate(zip(palette_colours, labels, strict=True))
    )
    return f"{title}  {keys}"


def _same(old: Text | None, new: Text) -> bool:
    """The same text and styles: an update with it would repaint the pane for nothing."""
    return old is not None and old.plain == new.plain and old.spans == new.spans and old.style == new.style


class WatchScreen(MdtuiScreen[None]):
    """Samples in a thread worker and redraws from each tick's snapshot; the redraw never holds up sampling."""

    CSS_PATH = "watch.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("a", "next_target", "Next array"),
        Binding("i", "toggle_iops", "MB/s ↔ IOPS"),
        Binding("p", "toggle_pause", "Pause"),
        Binding("u", "tune", "Knobs"),  # u as on the inventory (k is a table's up)
        Binding("s", "sort_members", "Sort"),
        Binding("S", "reverse_members", "Reverse sort", show=False),
        # The member table scrolls (its last line names the keys): a screenful of a 256-disk host at a time.
        Binding("down,j", "scroll_members(1)", "Scroll down", show=False),
        Binding("up,k", "scroll_members(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_members_page(1)", "Page down", show=False),
        Binding("pageup", "scroll_members_page(-1)", "Page up", show=False),
        Binding("home", "scroll_members_to(0)", "First", show=False),
        Binding("end,G", "scroll_members_to(-1)", "Last", show=False),
    ]

    paused: reactive[bool] = reactive(False, init=False)

    def __init__(
        self,
        root: str,
        array: str | None = None,
        interval: float = DEFAULT_INTERVAL_S,
        *,
        live: bool = True,
        window_s: float = DEFAULT_WINDOW_S,
    ) -> None:
        """live=False starts no sampler: tests post SnapshotTaken themselves, so nothing depends on a clock."""
        super().__init__()
        self.root = root
        self.wanted = array.removeprefix("/dev/") if array else None
        self.interval = check_interval(interval)
        self.live = live
        self.window_s = window_s
        self.target: str | None = None
        self.view: TargetView | None = None
        self._snapshots: tuple[Snapshot, ...] = ()
        self._disks: frozenset[str] = frozenset()
        self._totals = DiskTotals()  # each snapshot's all-disks total, made once (big hosts)
        self._cores = CoreFrequencies()  # likewise each snapshot's per-core frequencies
        self._stop = threading.Event()
        self._palette = Palette()
        self._freq_colours: tuple[str, ...] = ()
        self._shown: dict[str, Text] = {}  # what each text pane shows, so an unchanged one is left alone
        self._titles: dict[str, str] = {}  # each pane's border title, likewise
        self._charts_at: float | None = None  # timestamp of the snapshot the charts last showed
        # The running sync of each array predicted whole (sync-time model), keyed by (array, action): worked out
        # once per sync in a worker (a scan and the stored member figures), None when it cannot be.
        self._forecasts: dict[tuple[str, str], SyncTime | None] = {}
        # The member table: its order (busiest first), and how far it is scrolled into the members that do
        # not stand out (standouts stay pinned on top); the page drawn last, for the keys that move it.
        self._sort = MemberSort.BUSY
        self._reverse = False
        self._offset = 0
        self._page: MemberPage | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield TextLines(Text("Waiting for the first sample…"), id="watch-summary")
        with Horizontal(id="watch-charts"):
            yield RateChart(id="rate-chart")
            yield RateChart(id="iops-chart")
        yield MembersPane(wrap=False, id="watch-members")
        with Horizontal(id="watch-cpu"):
            yield FrequencyChart(id="freq-chart")
            yield TextLines(id="cpu-text")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = f"every {self.interval:g} s · root {self.root}"
        self.query_one("#watch-members").border_title = "Members"
        self.query_one("#cpu-text").border_title = "CPU"
        self._apply_theme()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._apply_theme())
        self.query_one("#watch-members").focus()  # the one pane that scrolls: arrows and PgDn move it at once
        if self.live:
            self.sample_loop()

    def on_unmount(self) -> None:
        self._stop.set()

    def _apply_theme(self) -> None:
        variables = self.app.get_css_variables()
        self._palette = app_palette(self.app)
        read, write = variables.get("primary", "blue"), variables.get("accent", "yellow")
        rate, iops = self.query_one("#rate-chart", RateChart), self.query_one("#iops-chart", RateChart)
        self._set_title(rate, _legend("MB/s", (read, write), ("read", "write")))
        self._set_title(iops, _legend("IOPS", (read, write), ("read", "write")))
        for chart in (rate, iops):
            chart.set_colours("primary", "accent")
        freq = self.query_one("#freq-chart", FrequencyChart)
        names = ("primary", "accent", "success", "secondary", "warning", "error", "foreground", "panel")
        freq.set_colours(*names)
        self._freq_colours = tuple(variables.get(name, "white") for name in names)
        self._set_title(freq, "CPU GHz")
        self._redraw()

    # -- sampling --------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="sampler")
    def sample_loop(self) -> None:
        """Thread worker: sample every interval and post the history; never touches a widget."""
        try:
            # The window the charts show, not the sampler's default ten minutes of history: a 256-disk
            # snapshot is ~400 objects that every full garbage collection walks while it is kept, so the
            # ticks before the latest are kept as PastSnapshots (only what the charts read of them).
            length = math.ceil(self.window_s / self.interval) + 2
            with Sampler(SystemRoot(self.root), history_length=1) as sampler:
                disks = WholeDisks(SystemRoot(self.root))
                kept: deque[PastSnapshot] = deque(maxlen=length - 1)
                latest: Snapshot | None = None
                deadline = time.monotonic()
                while not self._stop.is_set():
                    snapshot = sampler.sample()
                    if latest is not None:
                        kept.append(past(latest, kept[-1] if kept else None))
                    latest = snapshot
                    names = disks.names(device.name for device in snapshot.devices)
                    self.post_message(SnapshotTaken((*kept, snapshot), names))
                    # Ticks stay on a fixed grid; a tick missed (a stalled host) is skipped, not caught up.
                    now = time.monotonic()
                    deadline = max(deadline + self.interval, now)
                    self._stop.wait(deadline - now)
        except Exception as exc:  # a broken sampler is a message on screen, never a traceback
            self.log.error("sampler failed", exc)
            self.post_message(SamplerFailed(failure_reason("Sampling", exc)))

    @on(SnapshotTaken)
    def _taken(self, message: SnapshotTaken) -> None:
        first = not self._snapshots
        self._snapshots = message.snapshots
        if first:
            self.refresh_bindings()
        self._disks = message.disks
        if not self.paused:
            self._redraw(charts_due=False)

    @on(SamplerFailed)
    def _failed(self, message: SamplerFailed) -> None:
        self.query_one("#watch-summary", TextLines).update(Text(f"✖ {message.reason}", style=self._palette.error))

    # -- drawing ---------------------------------------------------------------------------------

    def _show(self, widget_id: str, text: Text) -> None:
        # The pane repaints the lines that changed (and lays out only when its height changes).
        if _same(self._shown.get(widget_id), text):
            return
        self._shown[widget_id] = text
        self.query_one(widget_id, TextLines).update(text)

    def _set_title(self, widget: Widget, title: str) -> None:
        # Setting a border title repaints the whole widget, even when it is the title it had.
        if self._titles.get(widget.id or "") != title:
            widget.border_title = title
            self._titles[widget.id or ""] = title

    def _forecast_line(self, view: TargetView) -> str | None:
        """The running sync's prediction and what bounds it now (the array's own traffic is the foreground I/O)."""
        array = view.array
        if array is None or array.sync is None:
            return None
        key = (array.name, array.sync.action)
        if key not in self._forecasts:
            self._forecasts[key] = None
            self.predict_sync(array)
        total = view.total
        busy = foreground_io(total.read_bytes_per_s, total.write_bytes_per_s) if total is not None else None
        shown = sync_view(SystemRoot(self.root), array, predicted=self._forecasts[key], foreground_io=busy)
        return shown.prediction_line() if shown is not None else None

    @work(thread=True, exclusive=False, exit_on_error=False, group="forecast")
    def predict_sync(self, array: MdArray) -> None:
        """Thread worker: the running sync predicted from the stored member figures (once per sync)."""
        try:
            runs = stored_member_runs(app_db_path(self.app))
            inventory = scan(self.root)
            predicted = running_pass_time(SystemRoot(self.root), array, inventory, runs)
        except Exception as exc:  # no prediction is no reason to stop watching
            self.log.warning(f"no prediction for {array.name}: {exc}")
            return
        self.post_message(SyncPredicted(array.name, array.sync.action if array.sync else "", predicted))

    @on(SyncPredicted)
    def _predicted(self, message: SyncPredicted) -> None:
        self._forecasts[(message.name, message.action)] = message.predicted
        if not self.paused:
            self._redraw(charts_due=False)

    def _member_lines(self) -> int | None:
        """Lines the members pane can show (its max-height less its border), so a big host lays out only those."""
        members = self.query_one("#watch-members", TextLines)
        limit = members.styles.max_height
        if limit is None or limit.unit is not Unit.CELLS:
            return None
        return max(3, int(limit.value) - members.styles.gutter.height)

    def _member_room(self, view: TargetView, wide: bool) -> int | None:
        """How many member rows the pane has room for; None when every member fits with its notes."""
        lines = self._member_lines()
        if lines is None:
            return None
        summed = 1 if wide and view.array is not None and len(view.members) > 1 else 0
        reasons = sum(1 for member in view.members if member.standout)
        if 1 + len(view.members) + summed + reasons <= lines:
            return None
        return max(1, lines - 1 - summed - 1)  # the header, the Σ row, the line that says what is hidden

    def _redraw(self, charts_due: bool = True) -> None:
        """Draw the latest tick; charts_due=False (a new tick) redraws charts only every CHART_PERIOD_S."""
        snapshots = self._snapshots
        if not snapshots:
            return
        latest = snapshots[-1]
        # Snapshot time, not the wall clock: tests that feed fixed snapshots draw the same every run. Half
        # an interval of slack: ticks a hair under a second apart still draw every tick at 1 s.
        since = None if self._charts_at is None else latest.timestamp - self._charts_at
        if not charts_due and (since is None or since >= CHART_PERIOD_S - self.interval / 2):
            charts_due = True
        self.target = pick_target(latest, self.wanted)
        view = self.view = build_view(snapshots, self.target, self._disks, self.window_s, self._totals)
        palette = self._palette
        self._show("#watch-summary", summary(view, palette, self.paused, self._forecast_line(view)))
        wide = self.has_class("-wide")
        room = self._member_room(view, wide)
        page = self._page = member_page(view.members, self._sort, self._reverse, self._offset, room)
        self._offset = page.offset
        self._show("#watch-members", members_table(view, palette, wide, page))
        cpu = latest.cpu
        show_chart = cpu.cpufreq_available and self.has_class("-tall")
        self.set_class(not cpu.cpufreq_available, "-no-cpufreq")
        self._show("#cpu-text", cpu_panel(cpu, view, palette, with_frequencies=not show_chart, wide=wide))
        members = self.query_one("#watch-members", TextLines)
        self._set_title(members, members_title(view, self._sort, self._reverse, page))
        if not charts_due:
            return
        self._charts_at = latest.timestamp
        for chart_id, iops in (("#rate-chart", False), ("#iops-chart", True)):
            chart = self.query_one(chart_id, RateChart)
            chart.window_s = self.window_s
            if chart.display:
                chart.show(view.series, iops)
        if show_chart:
            freq = self.query_one("#freq-chart", FrequencyChart)
            freq.window_s = self.window_s
            tops = [core.max_freq_mhz for core in cpu.cores if core.max_freq_mhz]
            series = frequency_series(snapshots, self.window_s, cores=self._cores)
            freq.show(series, max(tops) / 1000 if tops else None)
            labels = [label for label, _ in series.lines]
            self._set_title(freq, _legend("CPU GHz", self._freq_colours[: len(series.lines)], labels))

    def on_resize(self) -> None:
        # A breakpoint change shows charts that were hidden, and hidden charts were not kept drawn.
        self.call_after_refresh(self._redraw)

    # -- keys ------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_iops":
            return self.has_class("-narrow")  # wide terminals show both charts
        if action == "next_target":
            return bool(self._snapshots) and len(target_names(self._snapshots[-1])) > 1
        return True

    def action_back(self) -> None:
        # Started on its own (`mdtui watch`) there is nothing beneath to go back to.
        if len(self.app.screen_stack) <= 2:
            self.app.exit()
        else:
            self.dismiss()

    def action_tune(self) -> None:
        """The Tune screen for the array on show (the first array when watching all disks)."""
        array = self.target if self.target and self.target.startswith("md") else None
        from mdtui.ui.tune.screen import TuneScreen

        self.app.push_screen(TuneScreen(self.root, array))

    def action_next_target(self) -> None:
        if not self._snapshots or self.target is None:
            return
        self.wanted = next_target(self._snapshots[-1], self.target)
        self._offset = 0  # another array's members, from their top
        self._redraw()

    # -- the member table: sort and scroll ---------------------------------------------------------

    def action_sort_members(self) -> None:
        """s: the next order (busiest, most read, most written, slowest per request, name), from the top."""
        self._sort, self._offset = self._sort.next(), 0
        self._redraw(charts_due=False)

    def action_reverse_members(self) -> None:
        self._reverse, self._offset = not self._reverse, 0
        self._redraw(charts_due=False)

    def action_scroll_members(self, rows: int) -> None:
        self._offset = max(0, self._offset + rows)
        self._redraw(charts_due=False)

    def action_scroll_members_page(self, pages: int) -> None:
        shown = len(self._page.rows) if self._page is not None else 1
        self.action_scroll_members(pages * max(1, shown - 1))  # a page keeps one row of the last in view

    def action_scroll_members_to(self, where: int) -> None:
        """Home (0) or End (-1): member_page clamps an offset past the end to the last screenful."""
        self._offset = 0 if where >= 0 else 1 << 30
        self._redraw(charts_due=False)

    def action_toggle_iops(self) -> None:
        self.toggle_class("-iops")
        self._redraw()

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused

    def watch_paused(self) -> None:
        self._redraw()
