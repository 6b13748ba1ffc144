"""The inventory's detail pane: the highlighted disk or array under its title, drawn again only when what it is drawn
from changed; a disk's SMART and an array's slower readings come in the background and draw it again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll

from mdtui.model.inventory import Inventory
from mdtui.ui.common.render import Palette, array_detail, disk_detail
from mdtui.ui.inventory.array_readings import ArrayReadings, FindingsRead, ForecastsRead
from mdtui.ui.inventory.smart import SmartReader
from mdtui.ui.inventory.widgets import DetailBody

Pane = Literal["disks", "arrays"]


class Selection(NamedTuple):
    """What the screen shows now: its scan, the pane the detail follows, that pane's row, the disks not probed yet."""

    inventory: Inventory | None
    pane: Pane
    key: str | None
    pending: tuple[str, ...]


class DetailPane(VerticalScroll):
    """Draws the detail of what ``selection`` names (asked whenever it draws); ``palette`` gives the theme's."""

    def __init__(
        self, root: str, privileged: bool | None, palette: Callable[[], Palette], selection: Callable[[], Selection]
    ) -> None:
        super().__init__(id="detail")
        self.root = root
        self.privileged = privileged
        self._palette = palette
        self._selection = selection
        # What the detail was drawn from (source), and from which scan.
        self._shown: tuple[object, ...] | None = None
        self._shown_inventory: Inventory | None = None
        self._title = "Detail"  # the pane's border title, as last set

    def compose(self) -> ComposeResult:
        yield DetailBody(Text("Scanning…"), id="detail-body")
        yield SmartReader(self.root, self._smart_read)
        yield ArrayReadings(self.root, self.privileged)

    def on_mount(self) -> None:
        self.border_title = self._title

    def chosen(self) -> tuple[str, RenderableType] | None:
        """Title and renderable of the selected row of the pane the detail follows."""
        inventory, pane, key, pending = self._selection()
        if inventory is None or key is None:
            return None
        palette = self._palette()
        if pane == "disks":
            if key in pending:
                return f"Disk {key}", Text(f"{key}: probing… (the scan has not reached it yet)", style=palette.muted)
            disk = inventory.disk(key)
            if disk is None:
                return None
            health, health_pending = self.query_one(SmartReader).health_of(disk.name, inventory)
            detail = disk_detail(disk, palette, health, health_pending=health_pending)
            if disk.backing_file:  # under the grid's last row, its value in the grid's value column
                detail = Group(detail, Text.assemble((f"{'File':<12}", palette.muted), disk.backing_file))
            return f"Disk {disk.name}", detail
        array = inventory.array(key)
        if array is None:
            return None
        # A complete scan's first array shown starts its readings (scrubs, forecasts, findings).
        rows = self.query_one(ArrayReadings).rows(array, inventory, complete=not pending)
        return f"Array {array.name}", array_detail(array, palette, rows)

    def _source(self, selection: Selection) -> tuple[object, ...]:
        """What the detail is drawn from, with the scan: the pane, its row, the disk's SMART reading and
        whether it is fresh, the array's forecast, and the theme's palette."""
        inventory, pane, key, pending = selection
        key = key if inventory is not None else None
        smart, fresh = self.query_one(SmartReader).kept(key)
        forecast = self.query_one(ArrayReadings).forecast(key) if pane == "arrays" and key is not None else None
        return (pane, key, key in pending, smart, fresh, forecast, self._palette())

    def update(self) -> None:
        # The same row of the same scan is not laid out again: a table fill, a focus change or a
        # highlight of the row already shown would each have redrawn it (a layout of the whole screen).
        selection = self._selection()
        source = self._source(selection)
        if source == self._shown and selection.inventory is self._shown_inventory:
            return
        self._shown, self._shown_inventory = source, selection.inventory
        body = self.query_one("#detail-body", DetailBody)
        chosen = self.chosen()
        if chosen is None:
            empty = "No disks found." if selection.pane == "disks" else "No md arrays."
            chosen = ("Detail", Text(empty))
        title, renderable = chosen
        # Set only when it changes: setting a border title repaints the whole pane, title or not.
        if title != self._title:
            self._title = self.border_title = title
        body.show(renderable)

    def redraw(self) -> None:
        """Draw the same row again (what it is drawn from changed in a way the source does not show)."""
        self._shown = None
        self.update()

    def say(self, text: str) -> None:
        """Words instead of a detail (a scan that failed before any inventory)."""
        self._shown = None
        self.query_one("#detail-body", DetailBody).show(Text(text))

    def _smart_read(self, name: str) -> None:
        _, pane, key, _ = self._selection()
        if pane == "disks" and key == name:
            self.update()

    @on(FindingsRead)
    def _findings_read(self, message: FindingsRead) -> None:
        if self._selection().pane == "arrays":  # an array's detail names them (ArrayReadings keeps them)
            self.redraw()  # the same row, drawn again with them; a disk's does not change

    @on(ForecastsRead)
    def _forecasts_read(self, message: ForecastsRead) -> None:
        self.update()  # drawn again only when the array shown now has a forecast to show
