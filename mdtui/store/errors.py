"""Errors of the results store: each message names the database file and what the user can do."""

from __future__ import annotations

from mdtui.errors import MdtuiError


class StoreError(MdtuiError):
    """The results database cannot be used as asked (damaged, foreign, too new, busy, ...)."""


class StoreMissingError(StoreError):
    """The database file does not exist and the caller asked not to create it."""


class StoreBusyError(StoreError):
    """Another process held a lock on the database for longer than the busy timeout."""


class UnknownRunError(StoreError):
    """No run with this ID is stored."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        super().__init__(f"no run #{run_id} in the results database (see: mdtui results list)")


class DamagedRunError(StoreError):
    """A stored run's row cannot be read back (hand-edited or damaged); it can still be deleted."""

    def __init__(self, run_id: int, reason: str) -> None:
        self.run_id = run_id
        self.reason = reason
        super().__init__(
            f"run #{run_id} is damaged ({reason}); its figures cannot be shown: "
            f"remove it with `mdtui results delete {run_id}`"
        )


class FioImportError(StoreError):
    """A file given to import is not fio JSON output that mdtui can read."""


class CompareError(MdtuiError):
    """Runs cannot be compared or normalised as asked (a figure or a configuration fact is missing)."""
