"""The snapshots a chart shows: those of the last window_s seconds."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.model.snapshot import Snapshot

DEFAULT_WINDOW_S = 120.0


def in_window(snapshots: Sequence[Snapshot], window_s: float) -> list[Snapshot]:
    if not snapshots:
        return []
    start = snapshots[-1].timestamp - window_s
    index = len(snapshots)
    while index > 0 and snapshots[index - 1].timestamp >= start:
        index -= 1
    return list(snapshots[index:])


__all__ = ["DEFAULT_WINDOW_S", "in_window"]
