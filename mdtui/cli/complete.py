"""Shell completion: the scripts in share/ (bash, zsh, fish) run `mdtui` with argcomplete's variables set.

argcomplete reads the command line being typed from the environment, answers from the full parser
(mdtui.cli.main.build_parser) and exits, so completion follows every verb and option as they change.
"""

from __future__ import annotations

import argcomplete

from mdtui.cli.main import build_parser


def complete() -> int:
    argcomplete.autocomplete(build_parser())  # prints the candidates and exits the process
    return 0
