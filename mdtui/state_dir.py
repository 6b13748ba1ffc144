"""mdtui's own state: files in a directory no one but this user (and root) can change, and what an entry in one may
say.

mdtui runs as root and re-reads its state at every start (the knob journal is written back to sysfs, the registry
decides what may be wiped), so a state file another user could plant, replace or point elsewhere would let that
user steer root. Every state file is therefore opened without following links and without blocking, and used only
when it is a regular file of the effective user that no one else may write; it is replaced through a uniquely
named temporary file in the same directory. A location from the environment ($MDTUI_STATE, $HOME) is used in
another user's environment only when root owns it; an entry read back is validated (kernel names, /dev paths, md
UUIDs) before anything acts on it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from mdtui.errors import MdtuiError
from mdtui.invoker import foreign_environment, own_home
from mdtui.rootsafe import open_directory, path_problem
from mdtui.rootwrite import write_in

T = TypeVar("T")

STATE_FILE_LIMIT = 16 << 20  # the largest state file read: a journal or registry is a few KiB
_STATE_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeStateError(MdtuiError):
    """A state file or directory (or a location from the environment) another user could control."""


def home_dir() -> Path:
    """The effective user's home: $HOME normally; in another user's environment (invoker.foreign_environment:
    sudo, su, doas, pkexec) the password database's, since $HOME may still be the invoking user's."""
    if foreign_environment():
        return Path(own_home())
    return Path.home()


def env_location(variable: str) -> str | None:
    """The location ``$variable`` names, or None when unset or empty.

    In another user's environment (invoker.foreign_environment: sudo, su, doas, pkexec) the location is
    used only when root owns it (and every directory above it) and no one else can write it; otherwise
    UnsafeStateError names the variable.
    """
    value = os.environ.get(variable)
    if not value:
        return None
    if not foreign_environment():
        return value
    if not os.path.isabs(value):
        raise UnsafeStateError(
            f"${variable} ({value}) is relative; in another user's environment mdtui uses only absolute ones"
        )
    problem = path_problem(value, frozenset({0}))
    if problem:
        raise UnsafeStateError(
            f"${variable} ({value}) is not root's ({problem}): this run keeps another user's environment "
            "(sudo, su, doas or pkexec), so mdtui uses it only when root owns it and no one else can write "
            "it; unset it, or start from a root login (sudo -i, su -)"
        )
    return value


def _check_state_file(fd: int, where: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeStateError(f"{where} is not a regular file; not used")
    if info.st_uid != os.geteuid():
        raise UnsafeStateError(f"{where} belongs to uid {info.st_uid}, not to this user; not used")
    if info.st_mode & 0o022:
        raise UnsafeStateError(f"{where} is writable by group or others; not used")


class StateDir:
    """One directory of mdtui's state (created 0700), with every file in it used as the module says."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def make(self) -> Path:
        """The directory made (0700, parents too) and checked like every state directory; its path."""
        with self._open(create=True):
            return self.path

    @contextlib.contextmanager
    def _open(self, create: bool) -> Iterator[int | None]:
        """A descriptor of the directory after its checks; None when it does not exist (and not ``create``).

        Made 0700 with its missing parents, and opened the one way (mdtui.rootsafe): walked without
        following a link another user could change, then checked on the descriptor itself.
        """
        if not create and not os.path.lexists(self.path):
            yield None
            return
        with contextlib.ExitStack() as stack:
            try:
                fd = stack.enter_context(open_directory(self.path, make_mode=0o700 if create else None))
                problem = path_problem(self.path)
            except UnsafeStateError:
                raise
            except (OSError, MdtuiError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise UnsafeStateError(f"cannot use mdtui's state directory {self.path}: {why}") from None
            if problem:
                raise UnsafeStateError(f"mdtui's state directory {self.path} is not safe ({problem}); not used")
            info = os.fstat(fd)
            if info.st_uid != os.geteuid():
                raise UnsafeStateError(f"mdtui's state directory {self.path} belongs to uid {info.st_uid}; not used")
            if stat.S_IMODE(info.st_mode) & 0o077:
                os.fchmod(fd, 0o700)
            yield fd

    def read(self, name: str, *, limit: int = STATE_FILE_LIMIT) -> bytes | None:
        """The file's bytes; None when it (or the directory) does not exist; UnsafeStateError when refused."""
        where = self.path / _state_name(name)
        with self._open(create=False) as directory:
            if directory is None:
                return None
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=directory)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise UnsafeStateError(f"{where} is a symbolic link; not used") from None
                raise UnsafeStateError(f"cannot read {where}: {exc.strerror or exc}") from None
            try:
                _check_state_file(fd, where)
                data = os.read(fd, limit + 1)
            finally:
                os.close(fd)
        if len(data) > limit:
            raise UnsafeStateError(f"{where} is larger than {limit >> 20} MiB; not used")
        return data

    def write(self, name: str, data: bytes) -> Path:
        """Replace the file with ``data``, synced: a new uniquely named file (O_EXCL, 0600) renamed over it."""
        where = self.path / _state_name(name)
        with self._open(create=True) as directory:
            assert directory is not None
            try:
                write_in(directory, name, data, replace=True, mode=0o600, shown=where)
            except UnsafeStateError:
                raise
            except MdtuiError as exc:
                raise UnsafeStateError(str(exc)) from None
        return where

    def append(self, name: str, data: bytes) -> None:
        """Add ``data`` at the end of the file (made 0600 when new)."""
        where = self.path / _state_name(name)
        with self._open(create=True) as directory:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            try:
                fd = os.open(name, flags, 0o600, dir_fd=directory)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise UnsafeStateError(f"{where} is a symbolic link; not written") from None
                raise UnsafeStateError(f"cannot write {where}: {exc.strerror or exc}") from None
            try:
                _check_state_file(fd, where)
                os.write(fd, data)
            finally:
                os.close(fd)

    def names(self, suffix: str = "") -> list[str]:
        """The names in the directory ending with ``suffix``, sorted; [] when it does not exist."""
        with self._open(create=False) as directory:
            if directory is None:
                return []
            return sorted(n for n in os.listdir(directory) if n.endswith(suffix) and _STATE_NAME.match(n))

    def remove(self, name: str) -> None:
        with self._open(create=False) as directory:
            if directory is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(_state_name(name), dir_fd=directory)


def load_json_entries(
    directory: Path, parse: Callable[[Any, Path], T], what: str, skipped: Callable[[Path, object], None]
) -> list[T]:
    """Every *.json entry of a state directory that parse accepts, in name order.

    Anything else is reported through skipped (where, why) and left for a person to see, never acted
    on: an unsafe directory or file (UnsafeStateError), damaged JSON, or an entry parse refuses
    (BadEntry says why; any other ValueError, KeyError or TypeError is reported as "not a {what}").
    """
    state = StateDir(directory)
    try:
        names = state.names(".json")
    except UnsafeStateError as exc:
        skipped(directory, exc)
        return []
    found = []
    for name in names:
        path = directory / name
        try:
            data = state.read(name)
            if data is not None:
                found.append(parse(json.loads(data), path))
        except UnsafeStateError as exc:
            skipped(path, exc)
        except (ValueError, KeyError, TypeError) as exc:  # BadEntry, damaged JSON
            skipped(path, exc if isinstance(exc, BadEntry) else f"not a {what}")
    return found


def _state_name(name: str) -> str:
    if not _STATE_NAME.match(name) or name in (".", ".."):
        raise UnsafeStateError(f"{name!r} is not a state file name")
    return name


# --- what a state entry may say ------------------------------------------------------------------------

# A kernel block device name (md0, nvme0n1, sdb1, dm-0): no '/', so it can never leave /sys/block or /dev.
KERNEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
_UUID_DIGITS = re.compile(r"^[0-9a-f]{32}$")


class BadEntry(ValueError):
    """A state entry that does not fit its schema: skipped, never acted on."""


def kernel_name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not KERNEL_NAME.match(value) or ".." in value:
        raise BadEntry(f"{what} {value!r} is not a kernel device name")
    return value


def dev_path(value: Any, what: str) -> str:
    """/dev/NAME or /dev/md/NAME, NAME a kernel-style name."""
    if not isinstance(value, str):
        raise BadEntry(f"{what} {value!r} is not a /dev path")
    for prefix in ("/dev/md/", "/dev/"):
        if value.startswith(prefix):
            kernel_name(value[len(prefix) :], what)
            return value
    raise BadEntry(f"{what} {value!r} is not a /dev path")


def uuid_text(value: Any, what: str) -> str | None:
    """An md UUID in any punctuation (32 hex digits), or None for none."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 64 or not _UUID_DIGITS.match(re.sub(r"[-:]", "", value.lower())):
        raise BadEntry(f"{what} {value!r} is not an md UUID")
    return value


def same_uuid(a: str | None, b: str | None) -> bool:
    """Whether two UUIDs name the same array; a missing UUID matches nothing."""
    if not a or not b:
        return False
    # mdadm prints 8:8:8:8 hex, sysfs 8-4-4-4-12: the same 128 bits.
    return re.sub(r"[-:]", "", a.lower()) == re.sub(r"[-:]", "", b.lower())
