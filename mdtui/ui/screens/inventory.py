"""The inventory screen: disks and arrays side by side (stacked when narrow) over a detail pane."""

from __future__ import annotations

from typing import Literal

from rich.console import RenderableType
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from mdtui.errors import MdtuiError
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.ui.messages import InventoryScanned, ScanFailed
from mdtui.ui.render import Palette, array_detail, disk_detail
from mdtui.ui.screens.detail import DetailScreen
from mdtui.ui.widgets import ArrayTable, DiskTable, InventoryTable

Pane = Literal["disks", "arrays"]


def scan_root(root: str, privileged: bool | None) -> Inventory:
    """Scan ``root``; the core refuses a path that is not a system root with a sentence to act on."""
    return scan(root, privileged=privileged)


class InventoryScreen(Screen[None]):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    BINDINGS = [
        Binding("r", "rescan", "Rescan"),
        Binding("tab", "app.focus_next", "Pane"),
        Binding("shift+tab", "app.focus_previous", "Previous pane", show=False),
        Binding("n", "toggle_notes", "Notes"),
    ]

    # always_update: a rescan that finds the same system still redraws (and clears a stale error).
    inventory: reactive[Inventory | None] = reactive(None, always_update=True, init=False)
    scan_error: reactive[str | None] = reactive(None, init=False)
    scanning: reactive[bool] = reactive(False, init=False)
    notes_hidden: reactive[bool] = reactive(False, init=False)

    def __init__(self, root: str, privileged: bool | None) -> None:
        super().__init__()
        self.root = root
        self.privileged = privileged
        self._pane: Pane = "disks"

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield Static(id="banner")
        with Container(id="tables"):
            yield DiskTable(id="disks")
            yield ArrayTable(id="arrays")
        with VerticalScroll(id="detail"):
            yield Static(Text("Scanning…"), id="detail-body")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#disks").border_title = "Disks"
        self.query_one("#arrays").border_title = "Arrays"
        self.query_one("#detail").border_title = "Detail"
        self.query_one("#disks", DiskTable).focus()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        self.action_rescan()

    # -- scanning --------------------------------------------------------------------------------

    def action_rescan(self) -> None:
        self.scanning = True
        self.run_scan()

    @work(thread=True, exclusive=True, exit_on_error=False, group="scan")
    def run_scan(self) -> None:
        """Thread worker: call the core and post the result; never touches a widget."""
        try:
            inventory = scan_root(self.root, self.privileged)
        except MdtuiError as exc:
            self.post_message(ScanFailed(str(exc)))
            return
        except Exception as exc:  # a scan must never take the UI down with a traceback
            self.log.error(f"scan of {self.root} failed", exc)
            self.post_message(ScanFailed(f"Scan of {self.root} failed: {exc.__class__.__name__}: {exc}"))
            return
        self.post_message(InventoryScanned(inventory))

    @on(InventoryScanned)
    def _scanned(self, message: InventoryScanned) -> None:
        self.scanning = False
        self.scan_error = None
        self.inventory = message.inventory

    @on(ScanFailed)
    def _failed(self, message: ScanFailed) -> None:
        self.scanning = False
        self.scan_error = message.reason

    # -- drawing ---------------------------------------------------------------------------------

    def palette(self) -> Palette:
        variables = self.app.get_css_variables()

        def pick(name: str, default: str) -> str:
            value = variables.get(name, "")
            return value if value.startswith("#") and len(value) in (4, 7) else default

        base = Palette()
        return Palette(
            good=pick("text-success", base.good),
            warning=pick("text-warning", base.warning),
            error=pick("text-error", base.error),
            muted=base.muted,
            label=base.label,
        )

    def watch_inventory(self) -> None:
        self._redraw()

    def watch_scan_error(self) -> None:
        self._update_banner()
        self._update_title()
        if self.inventory is None:
            self.query_one("#detail-body", Static).update(Text(self.scan_error or ""))

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
        disks.show(inventory.disks, palette)
        arrays.show(inventory.arrays, palette)
        disks.border_title = f"Disks ({len(inventory.disks)})"
        self.refresh_bindings()
        # The arrays title repeats a missing md driver where users look for arrays.
        md_missing = not inventory.md_available
        arrays.border_title = "Arrays: no md driver" if md_missing else f"Arrays ({len(inventory.arrays)})"
        self._update_detail()

    def _update_title(self) -> None:
        parts = []
        if self.scanning:
            parts.append("scanning…")
        elif self.inventory is not None:
            inv = self.inventory
            parts.append(f"{len(inv.disks)} disks, {len(inv.arrays)} arrays")
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

    def selected(self) -> tuple[str, RenderableType] | None:
        """Title and renderable of the selected row of the pane the detail follows."""
        inventory = self.inventory
        if inventory is None:
            return None
        key = self._table(self._pane).selected_key
        if key is None:
            return None
        palette = self.palette()
        if self._pane == "disks":
            disk = inventory.disk(key)
            return (f"Disk {disk.name}", disk_detail(disk, palette)) if disk else None
        array = inventory.array(key)
        return (f"Array {array.name}", array_detail(array, palette)) if array else None

    def _update_detail(self) -> None:
        detail = self.query_one("#detail", VerticalScroll)
        body = self.query_one("#detail-body", Static)
        chosen = self.selected()
        if chosen is None:
            empty = "No disks found." if self._pane == "disks" else "No md arrays."
            detail.border_title = "Detail"
            body.update(Text(empty))
            return
        title, renderable = chosen
        detail.border_title = title
        body.update(renderable)

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == self._pane:
            self._update_detail()

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        chosen = self.selected()
        if chosen is not None:
            self.app.push_screen(DetailScreen(*chosen))

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        widget = event.widget
        if isinstance(widget, InventoryTable) and widget.id in ("disks", "arrays") and widget.id != self._pane:
            self._pane = "disks" if widget.id == "disks" else "arrays"
            self._update_detail()
