"""An array's detail full screen, where the keys its Keys line lists (alerts, persist, scrub, repair, tear down)
work as they do on the inventory: the detail closes and the action runs on the array."""

from __future__ import annotations

from textual.binding import Binding

from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.inventory.lifecycle import ARRAY_KEYS


class ArrayDetailScreen(DetailScreen):
    BINDINGS = [Binding(key.key, f"act('{key.action}')", key.label) for key in ARRAY_KEYS]
