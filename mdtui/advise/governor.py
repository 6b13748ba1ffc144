"""Switch every CPU's cpufreq governor for the length of a block, and always put the old ones back."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mdtui.errors import MdtuiError, PlanError
from mdtui.probe.cpu import cpufreq_dirs
from mdtui.probe.root import SystemRoot
from mdtui.tune.journal import write_sysfs


class GovernorError(MdtuiError):
    """A governor could not be read, switched or restored; the message names the file and what to do."""


def read_governors(root: SystemRoot) -> dict[Path, str]:
    """Each cpufreq policy directory (shared by its CPUs, so written once) → its scaling_governor."""
    found: dict[Path, str] = {}
    # A policy shared by several CPUs is reached through each CPU's link: resolve so it is written once.
    for directory in dict.fromkeys(path.resolve() for path in cpufreq_dirs(root).values()):
        governor = root.read_text(directory / "scaling_governor")
        if governor:
            found[directory] = governor
    return found


def governor_label(governors: dict[Path, str]) -> str:
    """ "powersave", or "mixed (performance, powersave)" when the policies differ."""
    distinct = sorted(set(governors.values()))
    return distinct[0] if len(distinct) == 1 else f"mixed ({', '.join(distinct)})"


def check_switchable(root: SystemRoot, governor: str) -> dict[Path, str]:
    """The current governors, after checking every policy offers ``governor`` and can be written."""
    current = read_governors(root)
    if not current:
        raise GovernorError("this system exposes no cpufreq governors (common in VMs): there is nothing to switch")
    for directory in current:
        offered = root.read_text(directory / "scaling_available_governors")
        if offered is not None and governor not in offered.split():
            raise PlanError(f"{directory} does not offer the {governor} governor (it offers: {offered})")
        if not os.access(directory / "scaling_governor", os.W_OK):
            raise GovernorError(
                f"cannot write {root.to_system(directory / 'scaling_governor')}: switching governors needs root"
            )
    return current


def _write(root: SystemRoot, directory: Path, governor: str) -> str | None:
    """Write one policy's scaling_governor through tune.journal.write_sysfs, the one writer of kernel attributes
    (it records the write in the action log and the journal); a sentence naming the file on failure, None on
    success."""
    try:
        write_sysfs(root, root.to_system(directory / "scaling_governor"), governor, "CPU governor")
    except MdtuiError as exc:
        return str(exc)
    return None


def restore_governors(root: SystemRoot, saved: dict[Path, str]) -> list[str]:
    """Put every saved governor back; the files that refused, one sentence each (empty when all went back)."""
    problems = [_write(root, directory, governor) for directory, governor in saved.items()]
    return [problem for problem in problems if problem]


@contextmanager
def governor_switched(root: SystemRoot, governor: str) -> Iterator[dict[Path, str]]:
    """Run the block with every policy on ``governor``; the previous governors come back however it ends.

    Yields the governors as they were. A failure to restore is raised after a clean block, and added as a
    note to the block's own exception otherwise, so the admin always learns a core was left switched.
    """
    saved = check_switchable(root, governor)
    try:
        for directory in saved:
            if problem := _write(root, directory, governor):
                raise GovernorError(f"could not switch the governor to {governor}: {problem}")
        yield dict(saved)
    except BaseException as exc:
        if problems := restore_governors(root, saved):
            exc.add_note("governors NOT restored: " + "; ".join(problems))
        raise
    problems = restore_governors(root, saved)
    if problems:
        raise GovernorError("the run finished but these governors could not be put back: " + "; ".join(problems))
