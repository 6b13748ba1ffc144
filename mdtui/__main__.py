"""Entry point: `mdtui` with no command opens the app, `mdtui watch` its dashboard, `mdtui COMMAND` runs the CLI."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mdtui.cli.launch import app_launch_args
from mdtui.errors import MdtuiError


def main(argv: Sequence[str] | None = None) -> int:
    # The app's two launches are parsed without loading every CLI verb (mdtui.cli.launch).
    args = app_launch_args(sys.argv[1:] if argv is None else argv)
    if args is None:
        from mdtui.cli.main import build_parser

        args = build_parser().parse_args(argv)
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
    from mdtui.ui.app import run_app

    return run_app(root=args.root)


if __name__ == "__main__":
    sys.exit(main())
