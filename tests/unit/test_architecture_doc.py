"""docs/architecture.md is true of the tree: its generated part is what scripts/architecture_doc.py reads off
today's modules, verbs and layers, and every module, package or path its prose names exists.

Mechanical on purpose: a module renamed, moved, added or removed fails here until the document is written
again (python scripts/architecture_doc.py), so the page cannot drift as the tree changes.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"


def test_the_generated_part_is_the_tree() -> None:
    from scripts import architecture_doc  # the checkout's root is on pytest's path

    text = DOC.read_text()
    assert architecture_doc.rewritten(text) == text, "stale: run python scripts/architecture_doc.py"


def test_it_names_every_verb_rule_family_and_screen_package() -> None:
    from mdtui.cli.main import COMMANDS

    text = DOC.read_text()
    assert [verb for verb in COMMANDS if f"`mdtui {verb}`" not in text] == []
    rules = sorted((REPO / "mdtui" / "advise" / "rules").glob("*.py"))
    assert [p.name for p in rules if p.name != "__init__.py" and f"`{p.relative_to(REPO)}`" not in text] == []
    screens = [p for p in (REPO / "mdtui" / "ui").iterdir() if (p / "__init__.py").is_file()]
    assert [p.name for p in screens if f"`{p.relative_to(REPO)}/" not in text] == []
    assert "in no layer of pyproject's contract" not in text and "(no docstring)" not in text


def test_every_path_and_module_the_prose_names_exists() -> None:
    prose = DOC.read_text().split("<!-- BEGIN generated", 1)[0]
    paths = set(re.findall(r"`((?:mdtui|tests|scripts|bench|themes|docs)/[\w/.-]*)`", prose))
    missing = [path for path in sorted(paths) if not (REPO / path.rstrip("/")).exists()]
    assert missing == []
    dotted = set(re.findall(r"`(mdtui(?:\.\w+)+)`", prose))
    assert [name for name in sorted(dotted) if importlib.util.find_spec(name) is None] == []
    assert len(paths) >= 15  # the prose does name where each decision lives
