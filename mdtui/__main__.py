"""Entry point: `mdtui` with no command opens the app, `mdtui watch` its dashboard, `mdtui COMMAND` runs the CLI."""

from __future__ import annotations

import gc
import os
import shutil
import sys
from collections.abc import Sequence

from mdtui.cli.launch import app_launch_args
from mdtui.errors import MdtuiError
from mdtui.invoker import settle_environment

# How long the launch waits for the first step of the inventory's scan before loading the app anyway
# (a slow host's screen then shows "Scanning…" until the step comes, as it would without waiting).
SCAN_AHEAD_WAIT_S = 0.5


def main(argv: Sequence[str] | None = None) -> int:
    # Before anything reads $HOME or $TMPDIR or starts a program: another user's kept there are not used.
    settle_environment()
    if argv is None and "_ARGCOMPLETE" in os.environ:
        # A shell's tab: the completion scripts run `mdtui` with the line typed so far in the environment.
        from mdtui.cli.complete import complete

        return complete()
    # The app's two launches are parsed without loading every CLI verb (mdtui.cli.launch).
    args = app_launch_args(sys.argv[1:] if argv is None else argv)
    if args is None:
        from mdtui.cli.main import build_parser

        args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
    if args.command == "watch" and not args.json:
        from mdtui.cli.watch import check_watch_args

        # The dashboard is UI, which the CLI never imports; the arguments are checked by the core first.
        try:
            request = check_watch_args(args)
        except MdtuiError as exc:
            print(f"mdtui: {exc}", file=sys.stderr)
            return 2
        from mdtui.ui.app import run_app
        from mdtui.ui.watch.screen import WatchScreen

        # As for the inventory below: what is loaded lives as long as the process, and the dashboard's
        # sampler thread, which allocates most, would otherwise walk it at every full collection.
        gc.freeze()
        return run_app(
            root=request.root, start_screen=lambda: WatchScreen(request.root, request.array, request.interval)
        )
    if args.command is not None:
        from mdtui.cli.common import ignore_late_signals
        from mdtui.cli.main import run_cli

        code = run_cli(args)
        if code > 128:
            # Stopped by a signal (129 SIGHUP, 143 SIGTERM ...) and about to exit: a second one, which a
            # dropped SSH session may send, must not turn the exit code into "killed" on the way out.
            ignore_late_signals()
        return code
    # The garbage collector waits until the first screen is drawn (cli.launch.pause_collector), and the
    # inventory's first scan begins before the app is loaded: its first step (a screenful of disks and
    # every array) is probed while nothing else runs, so the screen is first drawn with it.
    from mdtui.cli.launch import pause_collector
    from mdtui.probe.inventory import ScanAhead, screenful

    restart_collector = pause_collector()
    ahead = ScanAhead(args.root, first=screenful(shutil.get_terminal_size().lines))
    ahead.wait(SCAN_AHEAD_WAIT_S)
    from mdtui.ui.app import run_app
    from mdtui.ui.inventory.screen import InventoryScreen  # noqa: F401  (loaded before the freeze below)

    gc.freeze()  # the modules and classes just loaded live as long as the process: later collections skip them
    return run_app(root=args.root, scan_ahead=ahead, first_screen_drawn=restart_collector)


if __name__ == "__main__":
    sys.exit(main())
