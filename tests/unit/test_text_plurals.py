"""Counted nouns in user-facing text read '1 disk' and '2 disks', never 'disk(s)' or '1 disks'."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import mdtui
from mdtui.format import plural

PACKAGE = Path(mdtui.__file__).parent
# Everything a user reads: screens, plans, advice, the CLI, probes' findings, keep, fleet, bench, run.
CHECKED = ("ui", "plan", "advise", "cli", "probe", "keep", "fleet", "bench", "run", "tune", "store", "sample")
HEDGED = re.compile(r"[A-Za-z]\(s\)")


def strings_with_hedged_plurals() -> list[str]:
    found = []
    for top in CHECKED:
        for path in sorted((PACKAGE / top).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            for token in tokenize.generate_tokens(io.StringIO(source).readline):
                if token.type != tokenize.COMMENT and token.type == tokenize.STRING and HEDGED.search(token.string):
                    found.append(f"{path.relative_to(PACKAGE)}:{token.start[0]}: {token.string.strip()[:60]}")
    return found


def test_no_hedged_plural_in_user_text() -> None:
    assert strings_with_hedged_plurals() == []


def test_plural_reads_one_and_many() -> None:
    assert plural(1, "disk") == "1 disk"
    assert plural(2, "disk") == "2 disks"
    assert plural(1_000, "run") == "1,000 runs"
