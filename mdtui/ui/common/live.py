"""The app's side of ``--root DIR``: an action that would act on the live system is refused at its key."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen

from mdtui.probe.root import live_refusal


def refused_on_tree(screen: Screen[Any], root: str, action: str) -> bool:
    """True (after saying why) when ``root`` is a captured tree and ``action`` would touch live devices."""
    if getattr(screen.app, "tree_stands_for_live", False):
        return False
    refusal = live_refusal(root, action)
    if refusal is None:
        return False
    screen.notify(refusal, title="A captured tree is read-only", severity="error", timeout=10)
    return True


def read_only_tree(screen: Screen[Any], root: str) -> bool:
    """True when ``root`` is a captured tree the app only reads: an action there shows its plan, as the CLI's
    --dry-run prints it, and runs nothing."""
    if getattr(screen.app, "tree_stands_for_live", False):
        return False
    return live_refusal(root, "acting") is not None
