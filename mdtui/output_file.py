"""Writing to a path the user named: never onto a database, never over a file unasked, always whole.

Every file mdtui writes at a user's request (exports, captures) goes through here. The rules:
- a directory, a device, a FIFO or any other non-regular file is never written;
- an SQLite database (the results database above all) and its -wal/-shm/-journal companions are never
  written, whatever the user confirmed;
- an existing regular file is replaced only when the caller says the user confirmed it (``replace``);
- the text goes to a temporary file in the same directory and is renamed into place, so a failure or a
  crash half-way leaves either the old file or none, never a torn one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from mdtui.errors import MdtuiError
from mdtui.rootwrite import write_file

SQLITE_HEADER = b"SQLite format 3\x00"
_SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts with SQLite's header."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def output_problem(path: Path, *, protected: Iterable[Path] = ()) -> str | None:
    """Why ``path`` may never be written as an output file, whatever the user confirms; None if it may.

    ``protected`` names files this command must not touch (the results database it reads).
    """
    for guarded in protected:
        for candidate in (guarded, *(Path(f"{guarded}{suffix}") for suffix in _SQLITE_COMPANIONS)):
            if _same_file(path, candidate):
                return f"{path} is the results database (or its journal); mdtui never writes an export onto it"
    for suffix in _SQLITE_COMPANIONS:
        if path.name.endswith(suffix) and is_sqlite_file(path.with_name(path.name.removesuffix(suffix))):
            return f"{path} belongs to the SQLite database beside it; mdtui never writes onto it"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return f"cannot check {path}: {exc.strerror}"
    if mode is not None:
        if stat.S_ISDIR(mode):
            return f"{path} is a directory; name a file in it"
        if not stat.S_ISREG(mode):
            return f"{path} is not a regular file (a device, FIFO or socket); mdtui writes only regular files"
        if is_sqlite_file(path):
            return f"{path} is an SQLite database; mdtui never writes an export over one"
    return parent_problem(path)


def parent_problem(path: Path) -> str | None:
    """Why nothing can be made at ``path`` because of the directory it would go in, or None."""
    parent = path.parent
    if not parent.is_dir():
        return f"cannot write {path}: {parent} does not exist (or is not a directory)"
    if not os.access(parent, os.W_OK):
        return f"cannot write {path}: {parent} is not writable"
    return None


def write_text(path: str | os.PathLike[str], text: str, *, replace: bool, protected: Iterable[Path] = ()) -> Path:
    """Write ``text`` to ``path`` whole, the one way root writes a file (mdtui.rootsafe); returns the path.

    Raises MdtuiError when :func:`output_problem` names one, and OutputExistsError when the file exists
    and ``replace`` is False. A new file gets the usual permissions (0666 less the umask); a replaced
    file keeps its own.
    """
    target = Path(path).expanduser()
    problem = output_problem(target, protected=protected)
    if problem:
        raise MdtuiError(problem)
    return write_file(target, text.encode("utf-8"), replace=replace)
