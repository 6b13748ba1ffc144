"""Entry point: `mdtui` with no command opens the app, `mdtui COMMAND` runs the CLI."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mdtui.cli import build_parser, run_cli


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is not None:
        return run_cli(args)
    from mdtui.ui.app import run_app

    return run_app(root=args.root)


if __name__ == "__main__":
    sys.exit(main())
