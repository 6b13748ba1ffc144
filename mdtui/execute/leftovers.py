"""Arrays a killed experiment left behind: found at the next start, named with the run they were made for.

An experiment writes a journal entry (mdtui.execute.state.TemporaryArrayJournal) before it creates each
temporary array and removes it after the teardown. An entry whose owner no longer runs, for an array that
is still there, means the experiment was killed in between (SIGKILL, the OOM killer, a power cut): every
mdtui start says so in one line, with the command that removes the array.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from mdtui.errors import MdtuiError
from mdtui.execute.state import TemporaryArray, TemporaryArrayJournal
from mdtui.probe.root import SystemRoot

# mdadm's runner and the results store are imported only when the journal names an array: every start
# looks for leftovers and almost always finds none, so the common start pays for neither import.

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeftoverArray:
    entry: TemporaryArray
    run_id: int | None  # the last run the experiment began on it, when the results database says

    @property
    def notice(self) -> str:
        entry = self.entry
        run = f" (run #{self.run_id})" if self.run_id is not None else ""
        return (
            f"{entry.name} was left by an interrupted {entry.purpose}{run}: "
            f"remove it with `mdtui destroy {entry.device}`"
        )


def _same_uuid(a: str, b: str) -> bool:
    # mdadm prints 8:8:8:8 hex, sysfs 8-4-4-4-12: the same 128 bits.
    def digits(text: str) -> str:
        return "".join(c for c in text.lower() if c in "0123456789abcdef")

    return digits(a) == digits(b)


def _run_id(entry: TemporaryArray) -> int | None:
    if entry.db is None:
        return None
    from mdtui.store.runs import ResultsStore

    try:
        # Opening the store also writes "interrupted" over the runs the killed process left running.
        with ResultsStore(entry.db, create=False) as store:
            return store.last_run_of(entry.owner, entry.device)
    except MdtuiError as exc:
        log.info("could not look up the run of %s in %s: %s", entry.device, entry.db, exc)
        return None


def find_leftovers(root: SystemRoot | None = None, journal: TemporaryArrayJournal | None = None) -> list[LeftoverArray]:
    """Temporary arrays whose experiment died before tearing them down and that still exist.

    Entries of dead owners whose array is gone (destroyed by hand, or not assembled after a reboot), or
    whose device now holds another array (another UUID), are dropped from the journal.
    """
    system = root or SystemRoot("/")
    journal = journal or TemporaryArrayJournal()
    found = []
    for entry in journal.left_behind():
        from mdtui.execute.mdadm import find_array

        array = find_array(system, entry.device)
        if array is None or (entry.uuid and array.uuid and not _same_uuid(entry.uuid, array.uuid)):
            journal.remove(entry)
            continue
        found.append(LeftoverArray(entry, _run_id(entry)))
    return found


def leftovers_at_start(root: str = "/") -> list[LeftoverArray]:
    """What find_leftovers finds on the live system; nothing for a captured tree (--root), or on an error."""
    if not SystemRoot(root).is_live:
        return []
    try:
        return find_leftovers()
    except (OSError, MdtuiError) as exc:  # a notice must never stop the command the user asked for
        log.warning("could not look for arrays left behind: %s", exc)
        return []


def leftover_notices(root: str = "/") -> list[str]:
    """One line per array a killed experiment left behind (see leftovers_at_start)."""
    return [leftover.notice for leftover in leftovers_at_start(root)]
