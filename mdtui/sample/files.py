"""procfs and sysfs files kept open between ticks and re-read from offset 0."""

from __future__ import annotations

import contextlib
import os

_CHUNK = 65536


class KeptFile:
    """A kernel-generated file read through one descriptor for the sampler's lifetime.

    procfs and sysfs regenerate a file's text whenever it is read from offset 0, so pread(fd, 0)
    returns fresh values; skipping open() and close() halves the cost of reading a small file, and
    the sampler reads dozens per tick. A descriptor for /proc/PID/stat stays bound to that task,
    so a reused pid reads as an error rather than as another process's times.
    """

    __slots__ = ("_fd", "keep_open", "path")

    def __init__(self, path: str, keep_open: bool = True) -> None:
        self.path = path
        self.keep_open = keep_open  # False: open and close on every read, to spare descriptors
        self._fd: int | None = None

    def read(self) -> str | None:
        """The whole file, or None when it cannot be opened or read (it is tried again next time)."""
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        try:
            data = os.pread(self._fd, _CHUNK, 0)
            if len(data) == _CHUNK:
                chunks = [data]
                while chunk := os.pread(self._fd, _CHUNK, _CHUNK * len(chunks)):
                    chunks.append(chunk)
                data = b"".join(chunks)
        except OSError:
            # The file went away (a task exited, a CPU went offline): reopen on the next read.
            self.close()
            return None
        if not self.keep_open:
            self.close()
        return data.decode(errors="replace")

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)
