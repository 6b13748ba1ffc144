"""What this host gives mdtui and what each missing piece costs: the checks `mdtui doctor` prints and the app's
Doctor view shows, with where mdtui keeps its state and results."""

from __future__ import annotations

from pathlib import Path

from mdtui.errors import MdtuiError
from mdtui.probe.host import Check, Status, host_checks
from mdtui.probe.owner import state_dir
from mdtui.probe.root import SystemRoot
from mdtui.store.database import checked_default_db_path


def locations() -> list[tuple[str, Path | MdtuiError, str]]:
    """Where mdtui keeps its state and its results, or why a location was refused."""
    found: list[tuple[str, Path | MdtuiError, str]] = []
    for name, where, what in (
        ("state", state_dir, "guide, experiment and knob journals"),
        ("results", checked_default_db_path, "benchmark results"),
    ):
        try:
            found.append((name, where(), what))
        except MdtuiError as exc:
            found.append((name, exc, what))
    return found


def doctor_checks(root: SystemRoot) -> list[Check]:
    return host_checks(root, locations())


def doctor_lines(checks: list[Check]) -> list[str]:
    """One line per check, aligned, then how many need attention."""
    width = max(len(check.name) for check in checks)
    lines = [check.line(width) for check in checks]
    missing = sum(check.status is not Status.OK for check in checks)
    lines.append(f"{missing} of {len(checks)} need attention" if missing else "everything mdtui uses is here")
    return lines
