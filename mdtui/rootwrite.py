"""Writing and removing a file as root, in the directory mdtui.rootsafe's walk opened: a fresh file of its own
(0600, O_EXCL, no link followed), written, given its mode on the descriptor, synced and renamed (or linked) into
place within that directory's descriptor; scratch directories made only where no other user can change them."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mdtui.errors import MdtuiError
from mdtui.rootsafe import READ_DIR, locate, path_problem, trusted_uids

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Where scratch directories may go when $TMPDIR is unset or others could change it (root's, sticky).
SCRATCH_PLACES = ("/tmp", "/var/tmp")


class OutputExistsError(MdtuiError):
    """The named file exists and the user has not confirmed replacing it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        super().__init__(f"{path} exists; pass --force to replace it (or name another file)")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _new_temporary(directory: int, name: str) -> tuple[str, int]:
    for _ in range(100):
        temp = f".{name[:200]}.{secrets.token_hex(8)}.part"
        try:
            return temp, os.open(temp, _NEW_FILE, 0o600, dir_fd=directory)
        except FileExistsError:
            continue
    raise MdtuiError(f"cannot make a temporary file beside {name}")


def _sync_directory(directory: int) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(".", READ_DIR, dir_fd=directory)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_file(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    replace: bool,
    mode: int | None = None,
    follow_last: bool = False,
    make_mode: int | None = None,
) -> Path:
    """Write ``data`` to ``path`` whole, the one way (module doc); returns the path written.

    ``replace``: an existing file (or a link, which is replaced, never followed) is replaced; otherwise the
    file is made only if the name is free at the moment it is linked in (OutputExistsError if not).
    ``mode``: the new file's mode; None keeps a replaced regular file's mode, else 0666 less the umask.
    ``follow_last``: a link at the target is followed (when no other user can change it) and its target
    replaced, as mdadm.conf is written through a link. ``make_mode``: missing directories are made so.
    A directory, device, FIFO or socket at the target is never replaced.
    """
    with locate(path, owners=trusted_uids(), follow_last=follow_last, make_mode=make_mode) as where:
        if not where.name:
            raise MdtuiError(f"{path} is a directory; name a file in it")
        if where.via_link and where.info is None:
            # Writing a new file where a dangling link points would leave the path still not a file.
            raise MdtuiError(f"{path} is a link to {where.path}, which does not exist; nothing was written")
        write_in(where.directory, where.name, data, replace=replace, mode=mode, shown=where.path)
        return where.path


def write_in(
    directory: int, name: str, data: bytes, *, replace: bool, mode: int | None = None, shown: Path | None = None
) -> None:
    """Write ``data`` as ``name`` in the open ``directory``: a new file of its own (0600, O_EXCL, no link
    followed), its mode set with fchmod, synced, renamed (or, without ``replace``, linked) into place.
    See :func:`write_file` for ``replace`` and ``mode``; ``shown`` names the file in messages."""
    where = shown or Path(name)
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise MdtuiError(f"cannot check {where}: {exc.strerror or exc}") from None
    if existing is not None:
        if stat.S_ISDIR(existing.st_mode):
            raise MdtuiError(f"{where} is a directory; name a file in it")
        if not (stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)):
            raise MdtuiError(
                f"{where} is not a regular file (a device, FIFO or socket); mdtui writes regular files only"
            )
        if not replace:
            raise OutputExistsError(where)
    if mode is None:
        if existing is not None and stat.S_ISREG(existing.st_mode):
            mode = stat.S_IMODE(existing.st_mode)
        else:
            mode = 0o666 & ~_umask()
    try:
        temp, fd = _new_temporary(directory, name)
    except OSError as exc:
        raise MdtuiError(f"cannot write in {where.parent}: {exc.strerror or exc}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.rename(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
        else:
            # link() fails if the name appeared meanwhile: a file made by someone else is never clobbered.
            os.link(temp, name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
            os.unlink(temp, dir_fd=directory)
    except FileExistsError:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=directory)
        raise OutputExistsError(where) from None
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=directory)
        raise MdtuiError(f"cannot write {where}: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=directory)
        raise
    _sync_directory(directory)


def remove_file(path: str | os.PathLike[str], *, follow_last: bool = False) -> bool:
    """Remove the file at ``path`` (found the one way); False when there was none. A directory is refused."""
    with locate(path, owners=trusted_uids(), follow_last=follow_last) as where:
        if where.info is None:
            return False
        if not where.name or stat.S_ISDIR(where.info.st_mode):
            raise MdtuiError(f"{where.path} is a directory; not removed")
        try:
            os.unlink(where.name, dir_fd=where.directory)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise MdtuiError(f"cannot remove {where.path}: {exc.strerror or exc}") from None
        _sync_directory(where.directory)
        return True


def scratch_base() -> str:
    """Where scratch directories go: $TMPDIR when no other user can change it or a path above it, else the
    first of /tmp and /var/tmp that passes the same check (MdtuiError when none does).

    A $TMPDIR kept from another user's environment (sudo -E, su) is theirs: root would make its files
    where that user can rename them and put links in their place.
    """
    candidates = [os.environ.get("TMPDIR") or "", *SCRATCH_PLACES]
    for candidate in candidates:
        if candidate and os.path.isabs(candidate) and os.path.isdir(candidate) and path_problem(candidate) is None:
            return candidate
    raise MdtuiError("no scratch directory that only root can change: $TMPDIR, /tmp and /var/tmp are all unsafe")


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A new private (0700) directory in :func:`scratch_base`, removed with what it holds afterwards."""
    base = scratch_base()
    try:
        made = tempfile.mkdtemp(prefix=prefix, dir=base)
    except OSError as exc:
        raise MdtuiError(f"cannot make a scratch directory in {base}: {exc.strerror or exc}") from None
    try:
        yield Path(made)
    finally:
        shutil.rmtree(made, ignore_errors=True)
