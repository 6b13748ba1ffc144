"""Every disk for the create form: free ones become member or spare, busy ones are greyed with their reason."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from rich.text import Text
from textual import events, on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from mdtui.format import iec_bytes
from mdtui.model.disk import Disk
from mdtui.ui.common.render import link_label, truncate

MEMBER_MARK = "[x]"
SPARE_MARK = "[s]"
FREE_MARK = "[ ]"
BUSY_MARK = " ✗ "


def busy_reason(disk: Disk) -> str:
    """Why a disk is not offered: its first in-use reason (and how many more), or what could not be read."""
    if disk.in_use:
        more = f" (+{len(disk.in_use) - 1} more)" if len(disk.in_use) > 1 else ""
        return f"{disk.in_use[0]}{more}"
    if disk.problems:
        more = f" (+{len(disk.problems) - 1} more)" if len(disk.problems) > 1 else ""
        return f"unknown: {disk.problems[0]}{more}"
    return ""


class MemberPicker(OptionList):
    """Rows keyed by kernel name. The picker only shows roles; the screen owns them and redraws."""

    BINDINGS = [
        Binding("space", "select", "Member"),
        Binding("s", "spare", "Spare"),
    ]

    class Toggled(Message):
        """The user toggled a disk as member or spare."""

        def __init__(self, picker: MemberPicker, name: str, role: str) -> None:
            super().__init__()
            self.picker = picker
            self.disk_name = name
            self.role = role  # "member" or "spare"

        @property
        def control(self) -> MemberPicker:
            return self.picker

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._disks: tuple[Disk, ...] = ()
        self._members: frozenset[str] = frozenset()
        self._spares: frozenset[str] = frozenset()
        self._drawn_width: int | None = None

    def show(self, disks: Sequence[Disk], members: Sequence[str], spares: Sequence[str]) -> None:
        self._disks = tuple(disks)
        self._members = frozenset(members)
        self._spares = frozenset(spares)
        self._redraw()

    @property
    def free_count(self) -> int:
        return sum(1 for disk in self._disks if disk.available)

    def _width(self) -> int:
        # One cell spare, so a row that fits exactly is never wrapped again by the list itself.
        width = self.scrollable_content_region.width
        return width - 1 if width > 1 else 200

    def _row(self, disk: Disk, name_width: int, width: int) -> Text:
        size = iec_bytes(disk.size_bytes) if disk.size_bytes is not None else "?"
        if not disk.available:
            # The reason matters more than the size here, and it is shown whole: wrapped, not cut.
            line = f"{BUSY_MARK} {disk.name:<{name_width}} {busy_reason(disk)}"
            indent = " " * (len(BUSY_MARK) + 1 + name_width + 1)
            lines = textwrap.wrap(line, max(width, len(indent) + 10), subsequent_indent=indent)
            return Text("\n".join(lines), style="dim")
        mark = MEMBER_MARK if disk.name in self._members else SPARE_MARK if disk.name in self._spares else FREE_MARK
        link = link_label(disk.link)
        details = "  ".join(part for part in (disk.kind_label, link if link != "-" else "", disk.model or "") if part)
        line = f"{mark} {disk.name:<{name_width}} {size:>9}  {details}"
        text = Text(truncate(line, width))
        if mark != FREE_MARK:
            text.stylize("bold", 0, len(mark))
        return text

    def _redraw(self) -> None:
        width = self._width()
        self._drawn_width = width
        name_width = max((len(disk.name) for disk in self._disks), default=4)
        keep = self.highlighted
        options = [
            Option(self._row(disk, name_width, width), id=disk.name, disabled=not disk.available)
            for disk in self._disks
        ]
        self.set_options(options)
        if keep is not None and keep < len(options) and not options[keep].disabled:
            self.highlighted = keep
        else:
            first = next((i for i, option in enumerate(options) if not option.disabled), None)
            self.highlighted = first

    def on_resize(self, event: events.Resize) -> None:
        if self._width() != self._drawn_width:
            self._redraw()

    def _highlighted_name(self) -> str | None:
        if self.highlighted is None:
            return None
        option = self.get_option_at_index(self.highlighted)
        return None if option.disabled else option.id

    @on(OptionList.OptionSelected)
    def _toggle_member(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None and not event.option.disabled:
            self.post_message(self.Toggled(self, event.option.id, "member"))

    def action_spare(self) -> None:
        name = self._highlighted_name()
        if name is not None:
            self.post_message(self.Toggled(self, name, "spare"))
