"""Messages that workers post to the UI; a worker never touches a widget itself."""

from __future__ import annotations

from textual.message import Message

from mdtui.model.inventory import Inventory


class InventoryScanned(Message, bubble=False):
    """A scan finished, for the screen that started it. A newer result replaces one still queued."""

    def __init__(self, inventory: Inventory) -> None:
        super().__init__()
        self.inventory = inventory

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, (InventoryScanned, ScanFailed))


class ScanFailed(Message, bubble=False):
    """A scan could not run; ``reason`` is a sentence for the user, never a traceback."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, (InventoryScanned, ScanFailed))
