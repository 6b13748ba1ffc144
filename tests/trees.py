"""Captured trees made to stand for a moment they were not captured in, shared by the tests that need one.

Importable as ``trees`` from any test (tests/ is on ``sys.path``, as for ``ci``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

LAB_STANDARD = Path(__file__).resolve().parent / "fixtures" / "trees" / "lab-standard"


def idle_copy(destination: Path, tree: Path = LAB_STANDARD) -> Path:
    """A copy of ``tree`` with md0's resync finished: mdstat's progress line gone, md's sync files idle."""
    shutil.copytree(tree, destination, symlinks=True)
    mdstat = destination / "proc/mdstat"
    mdstat.write_text("\n".join(line for line in mdstat.read_text().splitlines() if "resync =" not in line) + "\n")
    (destination / "sys/block/md0/md/sync_action").write_text("idle\n")
    (destination / "sys/block/md0/md/sync_completed").write_text("none\n")
    return destination
