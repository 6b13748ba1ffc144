"""A fresh clone stands on its own: nothing reads or links a directory beside the checkout.

The needles are built by concatenation so that this file does not match its own patterns.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SIBLING = ".." + "/" + "shared"
NEEDLES = (SIBLING, "shared" + "/fixtures", "shared" + "/DESIGN" + ".md")
# The design notes stayed outside; the field findings live in docs/findings.md. Naming a notes file
# the repository does not hold is a dangling reference.
DESIGN_NOTES = "DESIGN" + ".md"
# Walked only when git is not available (an unpacked archive); hidden and __dunder__ directories too.
SKIPPED_DIRS = {"node_modules", "build", "dist"}
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
FINDINGS = REPO / "docs" / "findings.md"


def tracked_files() -> list[Path]:
    """Every file a clone holds (plus new files not yet committed); a walk of the tree without git."""
    git = shutil.which("git")
    if git is not None and (REPO / ".git").exists():
        listed = subprocess.run(
            [git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO, capture_output=True, check=True,
        ).stdout.decode()
        return [REPO / name for name in listed.split("\0") if name and (REPO / name).is_file()]
    found = []
    for directory, dirnames, filenames in os.walk(REPO):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith((".", "_", "venv"))]
        dirnames[:] = [d for d in dirnames if not d.endswith(".egg-info")]
        if Path(directory).is_relative_to(REPO / "tests" / "fixtures"):
            # Captured /sys and /proc trees are data, not references; only their READMEs are read.
            filenames = [name for name in filenames if name == "README.md"]
        found += [Path(directory) / name for name in filenames]
    return found


def text_of(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None  # binary
    return data.decode("utf-8", errors="replace")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def anchors(markdown: Path) -> set[str]:
    text = markdown.read_text()
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_nothing_reads_or_names_a_sibling_directory() -> None:
    files = tracked_files()
    assert len(files) > 50, "the file listing found almost nothing"
    needles = NEEDLES if any(path.name == DESIGN_NOTES for path in files) else (*NEEDLES, DESIGN_NOTES)
    offenders = []
    for path in files:
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            offenders += [f"{path.relative_to(REPO)}:{number}: {needle}" for needle in needles if needle in line]
    assert offenders == [], "files that reach outside the repository:\n" + "\n".join(offenders)


def test_readme_links_stay_inside_the_repository() -> None:
    readme = (REPO / "README.md").read_text()
    assert "](" + "../" not in readme
    assert "](docs/findings.md" in readme  # the findings are explained in the repository


def test_markdown_links_resolve_inside_the_repository() -> None:
    broken = []
    for path in tracked_files():
        if path.suffix != ".md" or (text := text_of(path)) is None:
            continue
        for target in MARKDOWN_LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith(("#", "<")):
                continue  # a web address or an anchor in the same page
            relative, _, anchor = target.partition("#")
            resolved = (path.parent / relative).resolve()
            where = f"{path.relative_to(REPO)}: {target}"
            if not resolved.is_relative_to(REPO) or not resolved.exists():
                broken.append(f"{where} (no such file in the repository)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{where} (no such heading)")
    assert broken == [], "\n".join(broken)


def test_findings_have_stable_anchors() -> None:
    # Code, advice texts and README cite these anchors; renaming a heading breaks them.
    assert {
        "1-the-weakest-link",
        "2-the-cpu-governor",
        "3-parity-costs-cpu",
        "4-the-level-matrix",
        "5-chunk-size-follows-the-workload",
        "knob-figures",
    } <= anchors(FINDINGS)
