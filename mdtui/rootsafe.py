"""One way to find a file as root, and (mdtui.rootwrite) to write it: directory descriptors, and no link another
user can change.

Every file mdtui writes outside its 0700 state directory (exports, the textfile collector's file, the udev
rule file, mdadm.conf, systemd drop-ins, the cron file, captures, the results database's directory and its
spool) is found here and written by mdtui.rootwrite, the same way:

- the path is walked one component at a time from an open directory (``openat`` with ``O_NOFOLLOW``), so
  nothing renamed or swapped in while it is walked is followed by name;
- a symbolic link on the way is followed only when no other user can change it: the link belongs to root
  or to the user mdtui runs as, and so does the directory holding it, which no one else may write (a
  sticky directory, /tmp, keeps others from replacing a link that is not theirs);
- the new file is made under a fresh random name in the target's directory (``O_CREAT|O_EXCL|O_NOFOLLOW``,
  mode 0600), written and synced, given its mode on the descriptor (``fchmod``) and renamed over the target
  within that directory's descriptor: a link planted at the target is replaced, never written through,
  and nothing is ever chmod'ed, opened or renamed by name in a directory found twice.

A directory another user can write (a textfile collector directory owned by node_exporter's user, a 1777
one) is written the same way, and that is what makes it safe: whatever that user renames, links or swaps
in it, root writes only the file root just made, in the directory the walk opened.

A captured tree (``--root DIR``) is read with the same walk confined beneath the tree (or the kernel's own
``openat2(RESOLVE_BENEATH)``): a link leading out of it, absolute or climbing above it with ``..``, is
refused, so a tree can never make mdtui read, copy or print a file of this machine.

Scratch space (a directory for a command's files, removed afterwards; mdtui.rootwrite) is made only where no other
user can change what is made: $TMPDIR when it passes that check, else /tmp or /var/tmp.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from mdtui.errors import MdtuiError

MAX_LINKS = 40  # the kernel's MAXSYMLINKS: a path through more links is a loop
_PATH_DIR = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePathError(MdtuiError):
    """A path mdtui will not use: through a link another user can change, or out of a captured tree."""


def trusted_uids() -> frozenset[int]:
    """Whose files and directories are not another user's: root's and the user's mdtui runs as."""
    return frozenset({0, os.geteuid()})


def component_problem(path: str, info: os.stat_result, owners: frozenset[int]) -> str | None:
    """Why someone outside ``owners`` could change what one existing component of a path is, or None."""
    if info.st_uid not in owners:
        return f"{path} belongs to uid {info.st_uid}"
    if stat.S_ISLNK(info.st_mode):
        return None  # a link's own mode means nothing; where it leads is checked on the resolved path
    if info.st_mode & 0o022:
        # /tmp: anyone may add entries, but the sticky bit keeps them from renaming or removing root's.
        if stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX and info.st_uid == 0:
            return None
        return f"{path} is writable by group or others"
    return None


def path_problem(path: str | os.PathLike[str], owners: frozenset[int] | None = None) -> str | None:
    """Why someone other than ``owners`` (root and the effective user by default) could change what
    ``path`` names: the path, an existing directory above it, or a component of where its links lead,
    is theirs or writable by them. None when no one else can."""
    trusted = owners if owners is not None else trusted_uids()
    absolute = os.path.abspath(path)
    for candidate in dict.fromkeys((absolute, os.path.realpath(absolute))):
        current = candidate
        while True:
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                info = None
            except OSError as exc:
                return f"cannot check {current}: {exc.strerror}"
            if info is not None:
                problem = component_problem(current, info, trusted)
                if problem:
                    return problem
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return None


def link_problem(
    link: os.stat_result, directory: os.stat_result, owners: frozenset[int], *, sticky: bool
) -> str | None:
    """Why another user could re-point a link (its owner, or its directory's owner or mode), or None.

    ``sticky``: a sticky directory others may write (/tmp) still protects a link that is not theirs.
    """
    if link.st_uid not in owners:
        return f"is a link of uid {link.st_uid}"
    if directory.st_uid not in owners:
        return f"is a link in a directory of uid {directory.st_uid}"
    if directory.st_mode & 0o022 and not (sticky and directory.st_mode & stat.S_ISVTX):
        return "is a link in a directory others can write"
    return None


class Location:
    """Where a walk ended: an open directory (O_PATH) and the last component's name in it.

    ``name`` is "" when the path names a directory reached by ``..`` (or the top itself). ``info`` is the
    last component's lstat as the walk saw it, None when it does not exist; ``via_link`` says a link at the
    end of the path was followed to reach it. ``chain`` holds every
    directory from the top down as (shown path, stat): what the walk resolved, links followed. Close it
    (or use it in a ``with``).
    """

    def __init__(
        self, stack: list[int], shown: list[str], name: str, info: os.stat_result | None, via_link: bool = False
    ) -> None:
        self._stack = stack
        self._shown = shown
        self.name = name
        self.info = info
        self.via_link = via_link  # the last component was reached through a link that was followed

    @property
    def directory(self) -> int:
        return self._stack[-1]

    @property
    def path(self) -> Path:
        """The resolved path (links followed), for messages."""
        base = Path(self._shown[-1])
        return base / self.name if self.name else base

    def chain(self) -> list[tuple[str, os.stat_result]]:
        return [(shown, os.fstat(fd)) for shown, fd in zip(self._shown, self._stack, strict=True)]

    def close(self) -> None:
        while self._stack:
            with contextlib.suppress(OSError):
                os.close(self._stack.pop())

    def __enter__(self) -> Location:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def locate(
    path: str | os.PathLike[str],
    *,
    top: str | os.PathLike[str] | int = "/",
    top_name: str | None = None,
    beneath: bool = False,
    owners: frozenset[int] | None = None,
    sticky: bool = True,
    follow_last: bool = True,
    make_mode: int | None = None,
) -> Location:
    """Walk ``path`` from ``top`` one component at a time, every one opened with O_NOFOLLOW.

    A relative ``path`` is taken from ``top`` (from the working directory when ``top`` is "/"); ``top`` may
    be an open directory's descriptor (``top_name`` names it in messages). Links are
    read and followed by hand: absolute ones from ``top`` again, ``..`` never above ``top``. With
    ``beneath`` (a captured tree) a link that is absolute or climbs above ``top`` raises UnsafePathError;
    with ``owners`` a link another user could re-point (:func:`link_problem`) does. The last component is
    followed only with ``follow_last``. Missing directories on the way are made with ``make_mode``, else
    MdtuiError names the first missing one.
    """
    text = os.fspath(path)
    if isinstance(top, int):
        top_text = top_name or "."
        first = os.dup(top)
    else:
        top_text = os.fspath(top)
        try:
            first = os.open(top_text, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise MdtuiError(f"cannot open {top_text}: {exc.strerror or exc}") from None
    if top_text == "/" and not text.startswith("/"):
        text = os.path.join(os.getcwd(), text)
    shown_top = top_text if top_text == "/" or isinstance(top, int) else os.path.abspath(top_text)
    stack = [first]
    shown = [shown_top]
    pending = list(reversed(text.split("/")))
    links = 0
    final_link = False  # the path's last component was a link, being followed

    def here(name: str = "") -> str:
        return os.path.join(shown[-1], name) if name else shown[-1]

    try:
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) > 1:
                    os.close(stack.pop())
                    shown.pop()
                elif beneath:
                    raise UnsafePathError(f"{text} leads out of {shown_top}; not followed")
                continue
            current = stack[-1]
            last = not any(part not in ("", ".") for part in pending)
            try:
                info = os.stat(name, dir_fd=current, follow_symlinks=False)
            except FileNotFoundError:
                if last:
                    return Location(stack, shown, name, None, final_link)
                if make_mode is None:
                    raise MdtuiError(f"cannot use {text}: {here(name)} does not exist") from None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, make_mode, dir_fd=current)
                info = os.stat(name, dir_fd=current, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                if last and not follow_last:
                    return Location(stack, shown, name, info)
                final_link = final_link or last
                if owners is not None:
                    problem = link_problem(info, os.fstat(current), owners, sticky=sticky)
                    if problem:
                        raise UnsafePathError(f"{here(name)} {problem}; mdtui does not follow it as root ({text})")
                links += 1
                if links > MAX_LINKS:
                    raise UnsafePathError(f"{text} goes through more than {MAX_LINKS} links; not followed")
                target = os.readlink(name, dir_fd=current)
                if target.startswith("/"):
                    if beneath:
                        raise UnsafePathError(f"{here(name)} leads out of {shown_top} (to {target}); not followed")
                    while len(stack) > 1:
                        os.close(stack.pop())
                        shown.pop()
                pending.extend(reversed(target.split("/")))
                continue
            if last:
                return Location(stack, shown, name, info, final_link)
            if not stat.S_ISDIR(info.st_mode):
                raise MdtuiError(f"cannot use {text}: {here(name)} is not a directory")
            try:
                opened = os.open(name, _PATH_DIR, dir_fd=current)
            except OSError as exc:
                # ENOTDIR/ELOOP: swapped for a link or a file since it was looked at.
                raise UnsafePathError(f"{here(name)} changed while it was opened ({exc.strerror}); not used") from None
            stack.append(opened)
            shown.append(here(name))
        return Location(stack, shown, "", None)
    except BaseException:
        for fd in stack:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise


@contextlib.contextmanager
def open_directory(
    path: str | os.PathLike[str], *, make_mode: int | None = None, owners: frozenset[int] | None = None
) -> Iterator[int]:
    """A readable descriptor of the directory ``path``, found the one way (made, with its missing parents,
    with ``make_mode``). ``owners`` limits whose links are followed (root's and this user's by default)."""
    with locate(path, owners=owners or trusted_uids(), make_mode=make_mode) as where:
        if where.name and where.info is None:
            if make_mode is None:
                raise MdtuiError(f"{where.path} does not exist")
            with contextlib.suppress(FileExistsError):
                os.mkdir(where.name, make_mode, dir_fd=where.directory)
        try:
            fd = os.open(where.name or ".", READ_DIR, dir_fd=where.directory)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                raise UnsafePathError(f"{where.path} is not a directory (or was swapped for a link)") from None
            raise MdtuiError(f"cannot open {where.path}: {exc.strerror or exc}") from None
    try:
        yield fd
    finally:
        os.close(fd)


# --- reading beneath a captured tree ---------------------------------------------------------------------

# openat2(2): Linux 5.6. RESOLVE_BENEATH refuses absolute links and ".." above the directory (EXDEV);
# RESOLVE_NO_MAGICLINKS refuses /proc/PID/fd-style links.
_SYS_OPENAT2 = 437  # the same number on every architecture (added after the syscall tables were unified)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_HOW_SIZE = ctypes.sizeof(_OpenHow)


_syscall: Callable[..., int] | None = None  # libc's syscall(), typed for openat2's arguments
_hows: dict[int, _OpenHow] = {}  # one open_how per set of flags: a scan opens thousands of files alike
_openat2_works: bool | None = None  # None: not tried yet; False: ENOSYS (an old kernel) or refused (seccomp)


def _openat2(directory: int, path: str, flags: int) -> int | None:
    """The kernel's openat2 beneath ``directory``; None when this kernel (or a sandbox) does not offer it."""
    global _syscall, _openat2_works
    if _openat2_works is False:
        return None
    if _syscall is None:
        # A library object of its own, so typing its syscall() leaves ctypes.CDLL(None).syscall as it was.
        function = ctypes.CDLL(None, use_errno=True).syscall
        function.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_OpenHow), ctypes.c_size_t]
        function.restype = ctypes.c_long
        _syscall = function
    how = _hows.get(flags)
    if how is None:
        how = _hows[flags] = _OpenHow(flags | os.O_CLOEXEC, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    encoded = os.fsencode(path)
    for _ in range(8):
        fd = _syscall(_SYS_OPENAT2, directory, encoded, how, _HOW_SIZE)
        if fd >= 0:
            _openat2_works = True
            return fd
        error = ctypes.get_errno()
        if error == errno.EAGAIN:
            continue  # a rename raced the lookup; the kernel asks to try again
        if error in (errno.ENOSYS, errno.EPERM) and _openat2_works is None:
            _openat2_works = False
            return None
        raise OSError(error, os.strerror(error), path)
    return None


def open_beneath(top: str | os.PathLike[str] | int, path: str, flags: int, *, kernel: bool = True) -> int:
    """A descriptor for ``path`` inside ``top`` (absolute or relative, taken from ``top``), links resolved
    only inside it: UnsafePathError when one leads out, FileNotFoundError when it does not exist.

    ``top`` is a directory's path or an open descriptor of it (O_PATH will do). ``flags`` are os.open flags
    (O_PATH to look, O_RDONLY to read, with O_DIRECTORY for a directory). The kernel's openat2 does it when
    it can; else (``kernel=False``, or kernels before 5.6) :func:`locate`.
    """
    relative = path.lstrip("/") or "."
    shown = top if isinstance(top, int) else os.fspath(top)
    if kernel:
        top_fd = top if isinstance(top, int) else os.open(top, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fd = _openat2(top_fd, relative, flags)
        except OSError as exc:
            if exc.errno == errno.EXDEV:
                raise UnsafePathError(f"{path} leads out of {shown}; not followed") from None
            if exc.errno == errno.ELOOP and not flags & os.O_NOFOLLOW:
                raise UnsafePathError(f"{path} in {shown} goes through too many links; not followed") from None
            raise
        finally:
            if top_fd is not top:
                os.close(top_fd)
        if fd is not None:
            return fd
    with locate(relative, top=top, top_name=str(shown), beneath=True) as where:
        if where.name and where.info is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return os.open(where.name or ".", flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=where.directory)
