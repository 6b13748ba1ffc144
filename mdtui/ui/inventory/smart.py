"""SMART health of the disk the inventory's detail shows: read in the background, kept for a minute."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on, work
from textual.widget import Widget

from mdtui.model.disk import Transport
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.messages import SmartRead

if TYPE_CHECKING:
    from mdtui.probe.smart import SmartHealth

# smartctl's "Unable to detect device type" in words: what the device is not, and that it is not a fault.
LOOP_NO_SMART = "a loop device is a file, not a drive: it has no SMART"
UNKNOWN_TYPE = "smartctl cannot tell what kind of drive this is (not ATA, SCSI or NVMe as it sees it)"
SMART_MAX_AGE_S = 60.0  # a disk's SMART line is read again when shown after this long


class SmartReader(Widget):
    """Reads smartctl for one disk at a time as asked; ``read`` is called with a disk's name once its
    health came in. Shown only through the detail it feeds."""

    DEFAULT_CSS = "SmartReader { display: none; }"

    def __init__(self, root: str, read: Callable[[str], None]) -> None:
        super().__init__()
        self.root = root
        self._read = read
        self._health: dict[str, tuple[float, SmartHealth]] = {}  # disk → (when read, health), live and as root
        self._reading: set[str] = set()

    def kept(self, name: str | None) -> tuple[tuple[float, SmartHealth] | None, bool]:
        """The disk's last reading (when read, health) if any, and whether it is fresh."""
        kept = self._health.get(name) if name is not None else None
        return kept, kept is not None and time.monotonic() - kept[0] < SMART_MAX_AGE_S

    def health_of(self, name: str, inventory: Inventory) -> tuple[SmartHealth | None, bool]:
        """The disk's SMART health if read lately, else (None, True) and a read started; (None, False) where
        smartctl cannot run (a captured tree, not root)."""
        from mdtui.probe.smart import SmartHealth

        disk = inventory.disk(name)
        if disk is not None and disk.transport is Transport.LOOP:
            return SmartHealth(f"/dev/{name}", error=LOOP_NO_SMART), False
        if not inventory.privileged or not SystemRoot(self.root).is_live or shutil.which("smartctl") is None:
            return None, False
        kept, fresh = self.kept(name)
        if kept is not None and fresh:
            return kept[1], False
        if name not in self._reading:
            self._reading.add(name)
            self.read_smart_of(name)
        return (kept[1] if kept else None), kept is None

    @work(thread=True, exit_on_error=False, group="smart")
    def read_smart_of(self, name: str) -> None:
        """Thread worker: smartctl for one disk (up to its timeout), then ``read`` is told."""
        from mdtui.probe.smart import SmartHealth, read_smart

        try:
            health = read_smart(f"/dev/{name}")
        except Exception as exc:  # never a traceback for a health line
            health = SmartHealth(f"/dev/{name}", error=str(exc) or type(exc).__name__)
        if health.error and "Unable to detect device type" in health.error:
            health = SmartHealth(f"/dev/{name}", error=UNKNOWN_TYPE)
        self.post_message(SmartRead(name, health))

    @on(SmartRead)
    def _smart_read(self, message: SmartRead) -> None:
        self._health[message.name] = (time.monotonic(), message.health)
        self._reading.discard(message.name)
        self._read(message.name)
