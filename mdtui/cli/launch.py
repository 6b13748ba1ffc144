"""The top-level `mdtui` options, and the two launches that open the app parsed without loading every verb.

`mdtui` (the inventory) and `mdtui watch` (the dashboard) open the app; loading the parser of every
CLI verb first (bench, advise, experiment, results, keep, tune ...) costs more than the first screen
itself. They are parsed here with the same top-level options (base_parser, which cli.main builds on)
and the watch verb's own parser; anything else goes to the full parser. Launch time is the reason.
"""

from __future__ import annotations

import argparse
import gc
from collections.abc import Callable, Sequence

from mdtui import __version__

_HELP = ("-h", "--help")


def base_parser() -> argparse.ArgumentParser:
    """`mdtui` with its top-level options (--version, --root) and no verbs yet."""
    parser = argparse.ArgumentParser(prog="mdtui", description="A terminal workbench for Linux md software RAID.")
    parser.add_argument("--version", action="version", version=f"mdtui {__version__}")
    parser.add_argument(
        "--root",
        default="/",
        help="read /sys, /proc and /run/udev below this directory instead of / (for captured trees)",
    )
    return parser


def after_root(argv: Sequence[str]) -> list[str]:
    """The command line after its top-level ``--root DIR`` / ``--root=DIR`` options."""
    words = list(argv)
    while words and (words[0] == "--root" or words[0].startswith("--root=")):
        words = words[1 if "=" in words[0] else 2 :]
    return words


def app_launch_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """argv parsed when it opens the app (`mdtui [--root DIR]`, `mdtui [--root DIR] watch ...` without --json).

    None for anything else, and for anything this cannot tell apart quickly (help, an abbreviated
    option): the caller parses it with the full parser, which gives the same result, only slower.
    """
    words = after_root(argv)
    if any(word in _HELP for word in words):
        return None
    parser = base_parser()
    if not words:
        parser.set_defaults(command=None)
    elif words[0] == "watch":
        from mdtui.cli.watch import add_watch_parser

        add_watch_parser(parser.add_subparsers(dest="command", metavar="COMMAND"))
    else:
        return None
    args = parser.parse_args(list(argv))
    return None if getattr(args, "json", False) else args


def pause_collector() -> Callable[[], None]:
    """Pause Python's cyclic garbage collector for the launch; the function returned restarts it (once).

    A launch allocates the app's modules, classes and widgets and the first scan's objects, few of
    them garbage: the collections that allocating triggers walked them all again and again (a tenth of
    the time to the inventory's first rows at 256 disks). Reference counting still frees what the
    launch drops; what it made long-lived is frozen once the app is loaded (``gc.freeze`` in
    ``mdtui.__main__``), so later full collections skip it. Nothing is paused if the collector is off.
    """
    if not gc.isenabled():
        return lambda: None
    gc.disable()
    restarted = False

    def restart() -> None:
        nonlocal restarted
        if not restarted:
            restarted = True
            gc.enable()

    return restart
