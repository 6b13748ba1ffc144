"""What the verbs share: finding a disk from what the user typed, typed confirmation, and errors as one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from mdtui.errors import MdtuiError
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot


def find_disk(inventory: Inventory, text: str, root: str) -> Disk:
    name = text.rsplit("/", 1)[-1] if text.startswith("/dev/") and "/by-" not in text else text
    disk = inventory.disk(name)
    if disk is None and text.startswith("/"):
        target = SystemRoot(root).resolve(text)
        disk = inventory.disk(target.name) if target is not None else None
    if disk is None:
        known = ", ".join(d.name for d in inventory.disks) or "none"
        raise MdtuiError(f"no disk {text!r} found (disks: {known})")
    return disk


def confirm(args: argparse.Namespace, what: str, token: str) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        raise MdtuiError(f"refusing to {what} without confirmation: pass --yes, or run it at a terminal")
    answer = input(f"This will {what}. Type {token} to go ahead: ")
    return answer.strip() == token


def run_verb(verb: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run one verb: an MdtuiError is one line on stderr and exit 2, a closed pipe is a quiet 0."""
    try:
        return verb(args)
    except MdtuiError as exc:
        print(f"mdtui: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
