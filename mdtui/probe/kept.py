"""procfs and sysfs files kept open between ticks and re-read from offset 0."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from mdtui.probe.root import ATTRIBUTE_LIMIT, RefusedFileError, decode_table, open_regular, read_descriptor


class KeptFile:
    """A kernel-generated file read through one descriptor for the sampler's lifetime.

    procfs and sysfs regenerate a file's text whenever it is read from offset 0, so pread(fd, 0)
    returns fresh values; skipping open() and close() halves the cost of reading a small file, and
    the sampler reads dozens per tick. A descriptor for /proc/PID/stat stays bound to that task,
    so a reused pid reads as an error rather than as another process's times.

    Opening and reading go through mdtui.probe.root, so they are bounded the same way: only a regular
    file is opened, never blocking, and at most ``limit`` bytes are read. A ``table`` file (diskstats,
    /proc/stat, mdstat) that exists but cannot be used raises RefusedFileError; any other file then
    reads as None, like a missing one.
    """

    __slots__ = ("_fd", "_open", "keep_open", "limit", "path", "table")

    def __init__(
        self,
        path: str,
        keep_open: bool = True,
        *,
        limit: int = ATTRIBUTE_LIMIT,
        table: bool = False,
        opener: Callable[[], int] | None = None,
    ) -> None:
        self.path = path
        self.keep_open = keep_open  # False: open and close on every read, to spare descriptors
        self.limit = limit
        self.table = table
        # How the file is opened: open_regular(path), or a captured tree's confined open (SystemRoot.open_file).
        self._open = opener
        self._fd: int | None = None

    def read(self) -> str | None:
        """The whole file, or None when it cannot be opened or read (it is tried again next time)."""
        try:
            if self._fd is None:
                try:
                    self._fd = open_regular(self.path) if self._open is None else self._open()
                except FileNotFoundError:
                    return None
            try:
                data = read_descriptor(self._fd, self.limit, self.path)
            except OSError:
                # The file went away (a task exited, a CPU went offline): reopen on the next read.
                self.close()
                return None
            if not self.keep_open:
                self.close()
            return decode_table(data, self.path) if self.table else data.decode(errors="replace")
        except RefusedFileError:
            self.close()
            if self.table:
                raise
            return None

    def read_small(self, size: int = 64) -> bytes | None:
        """A short file's bytes in one pread (a frequency, a sync counter): what read() returns, undecoded.

        For files read every tick whose text is a few bytes: one system call when the descriptor is
        open and the text is shorter than size; anything else goes through read().
        """
        fd = self._fd
        if fd is None or not self.keep_open or self.table:
            text = self.read()
            return text.encode() if text is not None else None
        try:
            data = os.pread(fd, size, 0)
        except OSError:
            self.close()
            return None
        if len(data) < size:
            return data
        text = self.read()
        return text.encode() if text is not None else None

    @property
    def is_open(self) -> bool:
        """Whether a descriptor is held (a read that then gives None had it revoked, and closed it)."""
        return self._fd is not None

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)
