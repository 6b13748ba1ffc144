"""A system root, and the one place files from /proc, /sys, /run/udev and /dev/disk are read.

Every path is built from the root, so tests and `--root DIR` read captured trees. Every read is
bounded and never blocks:

- The path is stat()ed first and anything but a regular file (a FIFO, a device such as /dev/zero, a
  socket, a directory) is refused without being opened. The open uses O_NONBLOCK, and the opened
  descriptor is checked again, so a FIFO swapped in between the two cannot block the read.
- At most a cap of bytes is read; a file longer than its cap is refused, never truncated:
  ``ATTRIBUTE_LIMIT`` (1 MiB) for a sysfs attribute or a /proc/PID file (the kernel prints at most
  a page for these), ``TABLE_LIMIT`` (16 MiB) for /proc/mdstat, /proc/diskstats, /proc/stat,
  /proc/self/mountinfo, /proc/mounts, /proc/swaps, /proc/cpuinfo and udev database records (a
  1024-disk host with several partitions per disk and hundreds of arrays prints a few MiB at most),
  ``LOG_LIMIT`` (64 MiB) for a saved kernel log.

Two kinds of read follow from what the caller can do without the file. An optional value (a sysfs
attribute) is read with :meth:`SystemRoot.read_text`, which gives None for a missing file and for
one that is refused: the value is unknown. A whole table (/proc/mdstat, /proc/diskstats, ...) is
read with :meth:`SystemRoot.read_table`, which gives None only when the file does not exist and
raises :class:`RefusedFileError`, naming the file and the reason, when it exists but cannot be used.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from mdtui.ascii_numbers import U64_MAX, parse_hex, parse_int
from mdtui.errors import ParseError, ReadOnlyRootError
from mdtui.rootsafe import UnsafePathError, open_beneath

T = TypeVar("T")

ATTRIBUTE_LIMIT = 1 << 20
TABLE_LIMIT = 16 << 20
LOG_LIMIT = 64 << 20

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_CHUNK = 65536
# Errors that mean "there is no such file": a missing file, a dangling link, a file where a directory
# should be on the way there.
_MISSING = (errno.ENOENT, errno.ENOTDIR)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class RefusedFileError(ParseError):
    """A file exists but was not read: not a regular file, larger than its cap, binary, or unreadable."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size_text(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor for a regular file; FileNotFoundError when it does not exist.

    Raises RefusedFileError for anything else: a FIFO, device, socket or directory (refused after a
    stat, before any open), or a file that cannot be opened (permission, I/O error).
    """
    source = os.fspath(path)
    try:
        mode = os.stat(source).st_mode
    except ValueError:  # a NUL byte in a path built from file text
        raise RefusedFileError(repr(source), "is not a valid path; not read") from None
    except OSError as exc:
        if exc.errno in _MISSING:
            raise FileNotFoundError(exc.errno, exc.strerror, source) from None
        raise RefusedFileError(source, f"cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise RefusedFileError(source, f"is {_kind(mode)}, not a regular file; not read")
    try:
        fd = os.open(source, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno in _MISSING:
            raise FileNotFoundError(exc.errno, exc.strerror, source) from None
        raise RefusedFileError(source, f"cannot be read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise RefusedFileError(source, f"cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise RefusedFileError(source, f"is {_kind(mode)}, not a regular file; not read")
    return fd


def read_descriptor(fd: int, limit: int, source: str) -> bytes:
    """Everything from offset 0 of an open regular file, at most ``limit`` bytes; RefusedFileError past it.

    pread from offset 0, so a descriptor kept open re-reads a procfs or sysfs file's fresh text.
    OSError (a device gone, a task exited) is left to the caller.
    """
    chunks = []
    size = 0
    while True:
        wanted = min(_CHUNK, limit + 1 - size)
        chunk = os.pread(fd, wanted, size)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise RefusedFileError(source, f"is larger than {_size_text(limit)}; not read")
        if len(chunk) < wanted:
            # A short read is the end: procfs and sysfs fill the whole buffer while they have text.
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_file_bytes(
    path: str | os.PathLike[str], *, limit: int = ATTRIBUTE_LIMIT, opener: Callable[[str], int] | None = None
) -> bytes | None:
    """A regular file's bytes; None when it does not exist, RefusedFileError when it cannot be used.

    ``opener`` opens it (open_regular by default; a captured tree's confined open, SystemRoot.open_file).
    """
    source = os.fspath(path)
    try:
        fd = (opener or open_regular)(source)
    except FileNotFoundError:
        return None
    try:
        return read_descriptor(fd, limit, source)
    except OSError as exc:
        raise RefusedFileError(source, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def decode_table(data: bytes, source: str) -> str:
    """Kernel table text; RefusedFileError for NUL bytes, which no procfs table or udev record holds."""
    if b"\0" in data:
        raise RefusedFileError(source, "holds binary data (NUL bytes), not text; not read")
    return data.decode(errors="replace")


def read_table_file(path: str | os.PathLike[str], *, limit: int = TABLE_LIMIT) -> str | None:
    """A whole kernel table (path, not root): None when missing, RefusedFileError when unusable."""
    data = read_file_bytes(path, limit=limit)
    return None if data is None else decode_table(data, os.fspath(path))


def read_attribute(path: str | os.PathLike[str], *, limit: int = ATTRIBUTE_LIMIT) -> str | None:
    """An optional value such as a sysfs attribute, stripped; None when missing, refused or unreadable."""
    try:
        data = read_file_bytes(path, limit=limit)
    except RefusedFileError:
        return None
    return None if data is None else data.decode(errors="replace").strip()


def _link_text(fd: int) -> str | None:
    """The text of the link an O_PATH|O_NOFOLLOW descriptor holds (readlinkat with an empty name); None if
    it holds no link."""
    return os.readlink("", dir_fd=fd) if stat.S_ISLNK(os.fstat(fd).st_mode) else None


def _open_checked(fd: int, source: str) -> int:
    """A readable descriptor for the regular file an O_PATH descriptor ``fd`` holds (closed here), opened
    again through /proc/self/fd so it is the same file; RefusedFileError for anything else, which is
    never opened (a device node in a tree must not be)."""
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise RefusedFileError(source, f"is {_kind(mode)}, not a regular file; not read")
        return os.open(f"/proc/self/fd/{fd}", _OPEN_FLAGS)
    except OSError as exc:
        raise RefusedFileError(source, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


class SystemRoot:
    """Reads files below a root directory ("/" on a live system) and never raises on a missing one.

    A captured tree is read confined to it: every read, listing and resolution follows links only
    inside the tree (mdtui.rootsafe.open_beneath), so a link in a tree someone sent can never make
    mdtui read, print or copy a file of this machine; a link leading out is refused like an unreadable
    file.
    """

    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        self.root = Path(root)
        self._real: Path | None = None  # the root with its links resolved, when first needed
        self._confined: bool | None = None  # a captured tree (not "/"): read beneath it, when first needed
        # What path() puts before an absolute path, for the reads that need only its text: a scan of a
        # thousand disks reads some 20000 files, and building each path as a Path cost more than reading it.
        self._prefix = str(self.root).rstrip("/")

    @property
    def confined(self) -> bool:
        """Whether reads are confined beneath the root: every root but the live system's own "/"."""
        if self._confined is None:
            self._confined = not self.is_live
        return self._confined

    def _inside(self, absolute: str | Path) -> str:
        """The path below the root that ``absolute`` names (a system path, or a Path inside the root)."""
        if not isinstance(absolute, Path):
            return absolute
        for base in (self.root, self._real_root()):
            try:
                return "/" + str(absolute.relative_to(base))
            except ValueError:
                continue
        raise RefusedFileError(str(absolute), f"is outside {self.root}; not read")

    def open_file(self, absolute: str | Path) -> int:
        """A read-only, non-blocking descriptor for a regular file (see open_regular); a captured tree's
        file is found beneath the tree only. FileNotFoundError when it does not exist."""
        if not self.confined:
            return open_regular(self._file(absolute))
        inside = self._inside(absolute)
        source = str(self._file(absolute))
        try:
            fd = open_beneath(self.root, inside, os.O_PATH)
        except UnsafePathError as exc:
            raise RefusedFileError(source, str(exc)) from None
        except OSError as exc:
            if exc.errno in _MISSING:
                raise FileNotFoundError(exc.errno, exc.strerror, source) from None
            raise RefusedFileError(source, f"cannot be read: {exc.strerror or exc}") from None
        return _open_checked(fd, source)

    def read_raw(self, absolute: str | Path, *, limit: int = ATTRIBUTE_LIMIT) -> bytes | None:
        """A file's bytes; None when it does not exist, RefusedFileError when it cannot be used."""
        opener = (lambda _: self.open_file(absolute)) if self.confined else None
        return read_file_bytes(self._file(absolute), limit=limit, opener=opener)

    @property
    def is_live(self) -> bool:
        return self._real_root() == Path("/")

    def path(self, absolute: str) -> Path:
        """Map an absolute system path such as "/sys/block" into this root."""
        return self.root / absolute.lstrip("/")

    def to_system(self, path: Path) -> str:
        """Map a path inside this root back to the absolute path the system would use."""
        for base in (self.root, self._real_root()):
            try:
                inside = str(path.relative_to(base))
            except ValueError:
                continue
            # Not lstrip("./"): that made "/.x" of a tree's ".x" and so two paths of one.
            return "/" if inside == "." else "/" + inside
        return str(path)

    def _real_root(self) -> Path:
        # A scan maps every disk's path back (twice per disk): resolve the root once, not per path.
        if self._real is None:
            self._real = Path(os.path.realpath(self.root))
        return self._real

    def _where(self, absolute: str | Path) -> Path:
        return absolute if isinstance(absolute, Path) else self.path(absolute)

    def _file(self, absolute: str | Path) -> str | Path:
        """Where a read finds ``absolute``: the path() of a system path, as text (the same file)."""
        return absolute if isinstance(absolute, Path) else f"{self._prefix}/{absolute.lstrip('/')}"

    def read_text(self, absolute: str | Path, *, limit: int = ATTRIBUTE_LIMIT) -> str | None:
        """An optional value (a sysfs attribute), stripped; None when missing or refused (see the module doc)."""
        if not self.confined:
            return read_attribute(self._file(absolute), limit=limit)
        data = self.read_bytes(absolute, limit=limit)
        return None if data is None else data.decode(errors="replace").strip()

    def read_bytes(self, absolute: str | Path, *, limit: int = ATTRIBUTE_LIMIT) -> bytes | None:
        """A binary attribute (a VPD page); None when missing or refused."""
        try:
            return self.read_raw(absolute, limit=limit)
        except RefusedFileError:
            return None

    def read_table(self, absolute: str | Path, *, limit: int = TABLE_LIMIT) -> str | None:
        """A whole table such as /proc/mdstat: None when it does not exist, RefusedFileError when unusable."""
        if not self.confined:
            return read_table_file(self._file(absolute), limit=limit)
        data = self.read_raw(absolute, limit=limit)
        return None if data is None else decode_table(data, str(self._file(absolute)))

    def read_int(self, absolute: str | Path, *, lo: int = 0, hi: int = U64_MAX) -> int | None:
        """The first word of an attribute as a decimal (or 0x hexadecimal) integer in [lo, hi]; else None."""
        text = self.read_text(absolute)
        if not text:
            return None
        word = text.split(maxsplit=1)[0]
        if word[:2] in ("0x", "0X"):
            return parse_hex(word, lo=lo, hi=hi)
        return parse_int(word, lo=lo, hi=hi)

    def _beneath(self, absolute: str | Path, flags: int, use: Callable[[int], T]) -> T | None:
        """``use`` on a descriptor of a captured tree's path, found beneath the tree only; None when the path
        cannot be reached that way or ``use`` fails."""
        try:
            fd = open_beneath(self.root, self._inside(absolute), flags)
        except (OSError, UnsafePathError, RefusedFileError, ValueError):
            return None
        try:
            return use(fd)
        except OSError:
            return None
        finally:
            os.close(fd)

    def listdir(self, absolute: str | Path) -> list[str]:
        if self.confined:
            return sorted(self._beneath(absolute, os.O_RDONLY | os.O_DIRECTORY, os.listdir) or [])
        try:
            return sorted(os.listdir(self._file(absolute)))
        except OSError:
            return []

    def lstat(self, absolute: str | Path) -> os.stat_result | None:
        """What is at a path itself (a link is not followed; links above it are, inside a tree only); None
        when nothing is there or it cannot be reached."""
        if self.confined:
            return self._beneath(absolute, os.O_PATH | os.O_NOFOLLOW, os.fstat)
        try:
            return os.lstat(self._file(absolute))
        except (OSError, ValueError):
            return None

    def read_link(self, absolute: str | Path) -> str | None:
        """What a link says (its text, not followed); None when it is not a link or cannot be reached."""
        if self.confined:
            return self._beneath(absolute, os.O_PATH | os.O_NOFOLLOW, _link_text)
        try:
            return os.readlink(self._file(absolute))
        except (OSError, ValueError):
            return None

    def link_name(self, absolute: str | Path) -> str | None:
        """Last component of where a link chain points, whether or not the target exists.

        Captured trees keep links such as ``driver -> ../../bus/pci/drivers/nvme`` whose empty target
        directory a git checkout does not keep; the name is all that is needed.
        """
        path = self._where(absolute)
        if not path.is_symlink():
            return None
        with contextlib.suppress(OSError, RuntimeError):
            return Path(os.path.realpath(path)).name
        return None

    def resolve(self, absolute: str | Path) -> Path | None:
        """Resolve symlinks inside the root; captured trees keep sysfs's relative links. None when the path
        does not exist or (in a captured tree) leads out of it."""
        if self.confined:
            # Where the descriptor found beneath the tree is (the kernel names it), if it is in the tree.
            where = self._beneath(absolute, os.O_PATH, lambda fd: os.readlink(f"/proc/self/fd/{fd}"))
            top = str(self._real_root()).rstrip("/")
            return Path(where) if where is not None and (where == top or where.startswith(top + "/")) else None
        path = self._where(absolute)
        try:
            return path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None


def live_refusal(root: SystemRoot | str | os.PathLike[str], action: str) -> str | None:
    """Why ``action`` must not run with this root: a captured tree (``--root DIR``) is only read.

    What mdtui would run (mdadm, fio, wipefs, a knob write, update-initramfs) acts on the live system,
    whatever tree the plan was made from, so with a captured tree only planning is allowed.
    """
    system = root if isinstance(root, SystemRoot) else SystemRoot(root)
    if system.is_live:
        return None
    return (
        f"--root {system.root} is read-only: {action} would act on this machine's live devices, not on the "
        "captured tree; run it without --root"
    )


def require_live(root: SystemRoot | str | os.PathLike[str], action: str) -> None:
    """Raise ReadOnlyRootError when ``root`` is a captured tree (see live_refusal)."""
    refusal = live_refusal(root, action)
    if refusal is not None:
        raise ReadOnlyRootError(refusal)
