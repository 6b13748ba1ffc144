"""The man page and completion scripts in share/ are what scripts/shipfiles.py makes from today's parser."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_man_page_and_completions_match_the_parser() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "shipfiles.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_man_page_names_every_verb() -> None:
    from mdtui.cli.main import COMMANDS

    page = (REPO / "share" / "man" / "man8" / "mdtui.8").read_text()
    assert page.startswith('.TH MDTUI "8"')
    groff = {verb: verb.replace("-", "\\-") for verb in COMMANDS}  # groff writes a hyphen as "\\-"
    missing = [verb for verb in COMMANDS if f"\\fBmdtui\\fR \\fI\\,{groff[verb]}\\/\\fR" not in page]
    assert missing == []
