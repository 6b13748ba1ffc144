#!/usr/bin/env python3
"""Write the files the wheel ships beside the code: mdtui(8) and the bash, zsh and fish completions.

    .venv/bin/python scripts/shipfiles.py          write them under share/
    .venv/bin/python scripts/shipfiles.py --check  exit 1 naming each one that differs (the test runs this)

The man page comes from the argparse parser (mdtui.cli.main.build_parser) through argparse-manpage;
the completion scripts from argcomplete, which answers each tab from the same parser at run time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARE = REPO / "share"
MAN_PAGE = "man/man8/mdtui.8"
COMPLETIONS = {
    "bash": "bash-completion/completions/mdtui",
    "zsh": "zsh/site-functions/_mdtui",
    "fish": "fish/vendor_completions.d/mdtui.fish",
}
# argparse wraps help to the terminal's width: fixed, so the page is the same wherever it is made.
WIDTH = "80"

SEE_ALSO = """[SEE ALSO]
.BR mdadm (8),
.BR fio (1),
.BR smartctl (8),
.BR md (4).
Run
.B mdtui doctor
to see what this host gives mdtui.
"""


def man_page() -> str:
    # Help texts name default locations (the results database): as root sees them with no overrides,
    # whoever makes the page, since mdtui(8) is root's.
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "MDTUI_DB", "MDTUI_STATE_DIR", "SUDO_UID"):
        os.environ.pop(name, None)
    os.environ["HOME"] = "/root"
    from argparse_manpage.manpage import Manpage

    from mdtui import __version__
    from mdtui.cli.main import build_parser

    os.environ["COLUMNS"] = WIDTH
    with tempfile.TemporaryDirectory() as scratch:
        # argparse-manpage takes extra sections from a file only.
        include = Path(scratch) / "see-also.txt"
        include.write_text(SEE_ALSO)
        return str(_manpage(Manpage, build_parser(), __version__, include))


def _manpage(Manpage: type, parser: argparse.ArgumentParser, version: str, include: Path) -> object:
    return Manpage(
        parser,
        _data={
            "project_name": "mdtui",
            "version": version,
            "manual_title": "System Administration",
            "manual_section": 8,
            "description": "a terminal workbench for Linux md software RAID",
            # A date would make every regeneration differ; the version names the release.
            "date": " ",
            "include": str(include),
        },
    )


def completion(shell: str) -> str:
    from argcomplete import shell_integration

    return shell_integration.shellcode(["mdtui"], shell=shell)


def wanted() -> dict[Path, str]:
    files = {SHARE / MAN_PAGE: man_page()}
    files.update({SHARE / path: completion(shell) for shell, path in COMPLETIONS.items()})
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    stale = []
    for path, text in wanted().items():
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(path.relative_to(REPO))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path.relative_to(REPO)}")
    for path in stale:
        print(f"{path} is out of date: run scripts/shipfiles.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
