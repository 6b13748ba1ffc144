"""The inventory screen: disks and arrays side by side (stacked when narrow) over a detail pane."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable, Header, Static
from textual.worker import get_current_worker

from mdtui.errors import MdtuiError
from mdtui.format import plural
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.probe import inventory as core_inventory
from mdtui.probe.inventory import ScanAhead, scan, screenful
from mdtui.ui.common.messages import (
    InventoryScanned,
    ScanFailed,
)
from mdtui.ui.common.render import Palette, app_palette
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.findings.render import FINDINGS_KEY
from mdtui.ui.inventory.detail_pane import DetailPane, Pane, Selection
from mdtui.ui.inventory.lifecycle import ARRAY_KEYS, Lifecycle
from mdtui.ui.inventory.teardown import Teardown
from mdtui.ui.inventory.widgets import ArrayTable, DiskTable, InventoryTable, SteadyFooter

if TYPE_CHECKING:
    from mdtui.ui.create.screen import Created

# The screens and dialogs this one opens (create, bench, watch, knobs, resync, details, the teardown's
# confirmation), the teardown's planner and runner, the boot/monitor rows of an array's detail and
# smartctl are imported when first used: the first screen needs none of them.

# Actions on the highlighted array, offered in the footer only while one is.
ARRAY_ACTIONS = tuple(key.action for key in ARRAY_KEYS)
# The knobs of the selected array (not k: the tables move up with it).
TUNE_KEY = "u"


def scan_steps(
    root: str, privileged: bool | None, first: int | None, ahead: ScanAhead | None = None
) -> Iterator[tuple[Inventory, tuple[str, ...]]]:
    """Scan ``root`` in steps (core scan_in_steps): (inventory so far, names not probed yet), the last complete.

    The core refuses a path that is not a system root with a sentence to act on. A scan begun at launch
    (``ahead``) gives the steps the screen has not shown yet. A scan function put in place of the
    core's (the tests' crafted inventories) is called once, for the whole result.
    """
    if ahead is not None:
        yield from ahead.steps()
        return
    if scan is not core_inventory.scan:
        yield scan(root, privileged=privileged), ()
        return
    yield from core_inventory.scan_in_steps(root, privileged=privileged, first=first)


class InventoryProbing(Message, bubble=False):
    """The first scan's early step: every array and the first disks; ``pending`` names the disks still probed."""

    def __init__(self, inventory: Inventory, pending: tuple[str, ...]) -> None:
        super().__init__()
        self.inventory = inventory
        self.pending = pending


class InventoryScreen(MdtuiScreen[None]):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (20, "-tall")]

    # j/k, s/S, / and Home/End/G are the tables' (ui.common.table): no key here means a second thing.
    BINDINGS = [
        Binding("r", "rescan", "Rescan"),
        Binding("tab", "app.focus_next", "Pane"),
        Binding("shift+tab", "app.focus_previous", "Previous pane", show=False),
        Binding("n", "toggle_notes", "Notes"),
        Binding("c", "create", "Create"),
        *(Binding(key.key, key.action, key.label) for key in ARRAY_KEYS),
        Binding("w", "watch", "Watch"),
        Binding("b", "bench", "Bench"),
        Binding(TUNE_KEY, "tune", "Knobs"),
        Binding("h", "app.history", "History"),
        Binding(FINDINGS_KEY, "findings", "Findings"),
    ]

    # always_update: a rescan that finds the same system still redraws (and clears a stale error).
    inventory: reactive[Inventory | None] = reactive(None, always_update=True, init=False)
    scan_error: reactive[str | None] = reactive(None, init=False)
    scanning: reactive[bool] = reactive(False, init=False)
    notes_hidden: reactive[bool] = reactive(False, init=False)

    def __init__(
        self,
        root: str,
        privileged: bool | None,
        scan_ahead: ScanAhead | None = None,
        *,
        drawn: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.root = root
        self.privileged = privileged
        # The first scan, begun at launch before the app was loaded (mdtui.__main__), if it was, and
        # what to call once its first step is drawn (the launch restarts the garbage collector).
        self._scan_ahead = scan_ahead
        self._drawn = drawn
        self._pane: Pane = "disks"
        self._teardown_offered: bool | None = None  # what the footer last offered (check_action "teardown")
        # Disks the first scan has not probed yet: rows with their name only, no detail, no actions on them.
        self._pending: tuple[str, ...] = ()
        self._detail_due = False  # the detail is to follow the cursor once the queued moves are handled
        self._palette: tuple[str, Palette] | None = None  # (theme, its palette)

    def compose(self) -> ComposeResult:
        # The layout's class for the terminal's width from the start, as Textual's breakpoints set it at
        # the first resize: set then, it restyled every widget and laid the tables out a second time,
        # after the first step had been fitted to the first layout's widths.
        width, height = self.app.size
        for breakpoints, size in ((self.HORIZONTAL_BREAKPOINTS, width), (self.VERTICAL_BREAKPOINTS, height)):
            self.add_class(next(name for edge, name in sorted(breakpoints, reverse=True) if size >= edge))
        yield Header(icon="▤")
        yield Static(id="banner")
        with Container(id="tables"):
            yield DiskTable(id="disks")
            yield ArrayTable(id="arrays")
        yield DetailPane(self.root, self.privileged, self.palette, self.selection)
        yield Teardown(self.root, self.palette, self.action_rescan)
        yield Lifecycle(self.root, self.palette, self.action_rescan)
        if self._scan_ahead is None:
            yield SteadyFooter(show_command_palette=False)
        else:
            # At launch the footer's keys (a dozen widgets to mount and style) follow the first rows;
            # its bar is there from the first frame, so nothing moves when they come.
            yield Static(id="footer-bar")

    def on_mount(self) -> None:
        if self._scan_ahead is not None:
            # The scan begun at launch: shown once the screen has laid itself out (tables filled before
            # then are drawn at the size they mount with, drawn again at their own, then filled again),
            # asked for first so that its rows come before the footer's keys.
            self.call_after_refresh(self._take_scan_ahead, self._scan_ahead)
        self.query_one("#disks").border_title = "Disks"
        self.query_one("#arrays").border_title = "Arrays"
        self.query_one("#disks", DiskTable).focus()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        if self._scan_ahead is None:
            self.action_rescan()
        else:
            self.scanning = True

    def _take_scan_ahead(self, ahead: ScanAhead) -> None:
        """The first step of the scan begun at launch if it is probed by now, and a worker for the rest."""
        step = ahead.ready() if self._scan_ahead is ahead else None  # not if a rescan (r) replaced it
        if step is None:
            if self._scan_ahead is ahead:
                self._scan_ahead = None
                self.run_scan(None, ahead)
            self._first_drawn()
            return
        self._show_step(*step)
        # The rest is probed once the first step is on screen: probed meanwhile, its thread took the
        # interpreter from the first frame's drawing about half the time.
        self.call_after_refresh(self._rest_of_scan_ahead, ahead)

    def _rest_of_scan_ahead(self, ahead: ScanAhead) -> None:
        self._first_drawn()
        if self._scan_ahead is ahead:  # not replaced by a rescan (r) meanwhile
            self._scan_ahead = None
            if self.scanning:
                self.run_scan(None, ahead)

    def _first_drawn(self) -> None:
        """The launch's first step is drawn (or there is none to draw): the footer's keys, then tell the launch."""
        self.call_later(self._mount_footer)
        drawn, self._drawn = self._drawn, None
        if drawn is not None:
            drawn()

    async def _mount_footer(self) -> None:
        bars = self.query("#footer-bar")
        if bars:
            await self.mount(SteadyFooter(show_command_palette=False), before=bars.first())
            await bars.remove()
            self.refresh_bindings()  # the footer shows the keys it is told of once mounted

    def action_rescan(self) -> None:
        self._scan_ahead = None  # a scan begun at launch and not taken up yet is replaced by this one
        self.scanning = True
        # The first scan shows the first screenful of disks early; a rescan replaces what is shown at once.
        first = screenful(self.app.size.height) if self.inventory is None else None
        self.run_scan(first)

    @work(thread=True, exclusive=True, exit_on_error=False, group="scan")
    def run_scan(self, first: int | None, ahead: ScanAhead | None = None) -> None:
        """Thread worker: call the core (or take the steps of the scan begun at launch) and post each step;
        never touches a widget."""
        worker = get_current_worker()
        try:
            for inventory, pending in scan_steps(self.root, self.privileged, first, ahead):
                if worker.is_cancelled:  # a newer scan was started (r): its steps are the ones to show
                    return
                self.post_message(InventoryProbing(inventory, pending) if pending else InventoryScanned(inventory))
        except MdtuiError as exc:
            self.post_message(ScanFailed(str(exc)))
            return
        except Exception as exc:  # a scan must never take the UI down with a traceback
            self.log.error(f"scan of {self.root} failed", exc)
            self.post_message(ScanFailed(f"Scan of {self.root} failed: {exc.__class__.__name__}: {exc}"))

    @on(InventoryProbing)
    def _probing(self, message: InventoryProbing) -> None:
        self._show_step(message.inventory, message.pending)

    @on(InventoryScanned)
    def _scanned(self, message: InventoryScanned) -> None:
        self._show_step(message.inventory, ())

    def _show_step(self, inventory: Inventory, pending: tuple[str, ...]) -> None:
        """A step of a scan: the first scan's early one (disks still ``pending``), or a whole scan."""
        if not pending:
            self.scanning = False
            self.scan_error = None
        self._pending = pending
        self.inventory = inventory

    @on(ScanFailed)
    def _failed(self, message: ScanFailed) -> None:
        self.scanning = False
        self.scan_error = message.reason

    # -- drawing ---------------------------------------------------------------------------------

    def palette(self) -> Palette:
        """The theme's state colours, worked out once per theme (the detail asks at every cursor move)."""
        theme = self.app.theme
        if self._palette is None or self._palette[0] != theme:
            self._palette = (theme, app_palette(self.app))
        return self._palette[1]

    def watch_inventory(self) -> None:
        self._redraw()

    def watch_scan_error(self) -> None:
        self._update_banner()
        self._update_title()
        if self.inventory is None:
            self.query_one(DetailPane).say(self.scan_error or "")

    def watch_scanning(self) -> None:
        self._update_title()

    def _redraw(self) -> None:
        inventory = self.inventory
        self._update_banner()
        self._update_title()
        if inventory is None:
            return
        palette = self.palette()
        disks = self.query_one("#disks", DiskTable)
        arrays = self.query_one("#arrays", ArrayTable)
        disks.show(inventory.disks, palette, self._pending)
        arrays.show(inventory.arrays, palette)
        disks.border_title = f"Disks ({len(inventory.disks) + len(self._pending)})"
        self._teardown_offered = None
        self.refresh_bindings()
        # The arrays title repeats a missing md driver where users look for arrays.
        md_missing = not inventory.md_available
        arrays.border_title = "Arrays: no md driver" if md_missing else f"Arrays ({len(inventory.arrays)})"
        self.query_one(DetailPane).update()

    def _update_title(self) -> None:
        parts = []
        if self.scanning:
            parts.append("scanning…")
        elif self.inventory is not None:
            inv = self.inventory
            parts.append(f"{plural(len(inv.disks) + len(self._pending), 'disk')}, {plural(len(inv.arrays), 'array')}")
            if not inv.privileged:
                parts.append("read-only")
        if self.scan_error:
            parts.append("scan failed")
        parts.append(f"root {self.root}")
        self.sub_title = " · ".join(parts)

    def action_toggle_notes(self) -> None:
        self.notes_hidden = not self.notes_hidden

    def watch_notes_hidden(self) -> None:
        self._update_banner()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_notes":
            return bool(self.inventory and self.inventory.notes)
        if action in ARRAY_ACTIONS:
            # Offered only while an array is selected, so the footer stays short on the disks pane.
            return self.selected_array() is not None
        return True

    def _update_banner(self) -> None:
        banner = self.query_one("#banner", Static)
        lines: list[str] = []
        if self.scan_error:
            lines.append(f"✖ {self.scan_error} Press r to retry.")
        if self.inventory is not None:
            lines += [f"⚠ {note}" for note in self.inventory.notes]
        if self.notes_hidden and not self.scan_error:
            lines = []
        banner.update(Text("\n".join(lines)))
        banner.set_class(bool(lines), "-shown")
        banner.set_class(bool(self.scan_error), "-error")

    # -- selection and detail --------------------------------------------------------------------

    def _table(self, pane: Pane) -> InventoryTable:
        return self.query_one(f"#{pane}", InventoryTable)

    def selection(self) -> Selection:
        """What the detail pane draws: this scan, the pane it follows, that pane's row, the disks not probed yet."""
        return Selection(self.inventory, self._pane, self._table(self._pane).selected_key, self._pending)

    def _follow_cursor(self) -> None:
        self._detail_due = False
        self.query_one(DetailPane).update()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == self._pane:
            # The detail follows once the moves already queued are handled: keys that come faster than
            # they are handled (an arrow key held on a thousand disks) move the cursor without a detail
            # laid out for every row passed.
            if not self._detail_due:
                self._detail_due = True
                self.call_later(self._follow_cursor)
            # The footer depends on whether an array is selected, not on which row: redrawing it on every
            # cursor move cost more than the move itself on a long table.
            offered = self.selected_array() is not None
            if offered != self._teardown_offered:
                self._teardown_offered = offered
                self.refresh_bindings()

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        chosen = self.query_one(DetailPane).chosen()
        if chosen is None:
            return
        if self._pane == "arrays":
            from mdtui.ui.inventory.array_detail import ArrayDetailScreen

            # The keys its Keys line lists work inside it: the detail closes and the action runs on the array.
            self.app.push_screen(ArrayDetailScreen(*chosen), self._act_on_array)
            return
        from mdtui.ui.dialogs.detail import DetailScreen

        self.app.push_screen(DetailScreen(*chosen))

    def _act_on_array(self, action: str | None) -> None:
        if action is not None:
            self.call_later(self.run_action, action)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        widget = event.widget
        if isinstance(widget, InventoryTable) and widget.id in ("disks", "arrays") and widget.id != self._pane:
            self._pane = "disks" if widget.id == "disks" else "arrays"
            self.query_one(DetailPane).update()
            self._teardown_offered = None
            self.refresh_bindings()

    # -- create and teardown ---------------------------------------------------------------------

    def selected_array(self) -> MdArray | None:
        # Focus moves at once on Tab while the pane follows by message: ask the focus first.
        focused = self.focused
        pane = focused.id if isinstance(focused, InventoryTable) else self._pane
        if pane != "arrays" or self.inventory is None:
            return None
        key = self._table("arrays").selected_key
        return self.inventory.array(key) if key is not None else None

    def _scanned_whole(self) -> bool:
        """True once a scan has probed every disk; else says why an action waits, and False."""
        if self.inventory is None:
            self.notify("Nothing scanned yet; press r to scan.", severity="warning")
            return False
        if self._pending:
            self.notify(
                f"Still probing {plural(len(self._pending), 'disk')}; try again in a moment.", severity="warning"
            )
            return False
        return True

    def action_create(self) -> None:
        if not self._scanned_whole() or self.inventory is None:
            return
        from mdtui.ui.create.screen import CreateScreen

        self.app.push_screen(CreateScreen(self.root, self.inventory), self._after_create)

    def _after_create(self, created: Created | None) -> None:
        if created is None:
            return
        self.action_rescan()
        from mdtui.ui.create.resync import ResyncScreen

        self.app.push_screen(ResyncScreen(self.root, created.plan, created.outcome), lambda _: self.action_rescan())

    def action_watch(self) -> None:
        """The live dashboard, on the selected array (or the first one, or all disks without arrays)."""
        from mdtui.ui.watch.screen import WatchScreen

        array = self.selected_array()
        self.app.push_screen(WatchScreen(self.root, array.name if array is not None else None))

    def action_tune(self) -> None:
        """The Tune screen: the selected array's knobs (or the first array's)."""
        from mdtui.ui.tune.screen import TuneScreen

        array = self.selected_array()
        self.app.push_screen(TuneScreen(self.root, array.name if array is not None else None))

    def action_bench(self) -> None:
        """The benchmark screen, with the selected array or disk as the target."""
        if not self._scanned_whole() or self.inventory is None:
            return
        focused = self.focused
        pane = focused.id if isinstance(focused, InventoryTable) else self._pane
        key = self._table("arrays" if pane == "arrays" else "disks").selected_key
        target = f"/dev/{key}" if key is not None else None
        from mdtui.ui.bench.screen import BenchScreen

        self.app.push_screen(BenchScreen(self.root, self.inventory, target))

    def action_teardown(self) -> None:
        array = self.selected_array()
        if array is None or not self._scanned_whole() or self.inventory is None:
            return
        self.query_one(Teardown).start(array, self.inventory)

    # -- keeping the array: alerts, persist, scrub, repair (mdtui.ui.inventory.lifecycle) ------------------

    def action_findings(self) -> None:
        """F: the findings view, of the highlighted array (its own first) or of the whole host."""
        array = self.selected_array()
        show = getattr(self.app, "action_findings", None)  # MdtuiApp's; the tests' bare apps have none
        if show is not None:
            show(array.name if array is not None else None)

        self.query_one(DetailPane).redraw()  # the same row, drawn again with the times

    def action_alerts(self) -> None:
        array = self.selected_array()
        if array is not None:
            self.query_one(Lifecycle).alerts(array)

    def action_persist(self) -> None:
        array = self.selected_array()
        if array is not None:
            self.query_one(Lifecycle).persist(array)

    def action_scrub(self) -> None:
        array = self.selected_array()
        if array is not None:
            self.query_one(Lifecycle).scrub(array)

    def action_repair(self) -> None:
        array = self.selected_array()
        if array is None or not self._scanned_whole() or self.inventory is None:
            return
        self.query_one(Lifecycle).repair(array, self.inventory)

    def action_grow(self) -> None:
        array = self.selected_array()
        if array is None or not self._scanned_whole() or self.inventory is None:
            return
        self.query_one(Lifecycle).grow(array, self.inventory)
