"""Progress on the terminal: one rewritten status line, lines that stay, and a resync's progress line."""

from __future__ import annotations

from typing import TextIO

from mdtui.format import duration, rate_mb_s
from mdtui.model.array import MdArray

_CLEAR_LINE = "\r\x1b[K"


class LinePrinter:
    """Lines that stay (say) and, on a terminal, one status line rewritten in place (live).

    Once a write fails (the terminal hung up: EIO, and nobody reads it) it writes nothing more; the work
    it reports on goes on and stores its figures without a reader.
    """

    def __init__(self, out: TextIO, live: bool) -> None:
        self.out = out
        self.live = live
        self._line = False  # a status line is on screen, to clear before the next line that stays
        self._gone = False

    def _write(self, text: str) -> None:
        if self._gone:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except OSError:
            self._gone = True

    def live_line(self, text: str) -> None:
        """Replace the status line with text (only on a terminal)."""
        if self.live and not self._gone:
            self._write(_CLEAR_LINE + text)
            self._line = True

    def say(self, text: str) -> None:
        """A line that stays, in place of the status line if one is shown."""
        if self._line:
            self._write(_CLEAR_LINE)
            self._line = False
        self._write(text + "\n")


def sync_progress_line(array: MdArray) -> str | None:
    """ "resync  42.0% at 120 MB/s, ETA 3m10s" for an array syncing with a known position, else None."""
    sync = array.sync
    if sync is None or sync.fraction is None:
        return None
    return (
        f"{sync.action} {sync.fraction * 100:5.1f}% "
        f"at {rate_mb_s(sync.speed_bytes_per_s)}, ETA {duration(sync.eta_seconds)}   "
    )


def print_sync_progress(array: MdArray) -> None:
    """Rewrite the current line of standard output with the array's sync progress (nothing when unknown)."""
    line = sync_progress_line(array)
    if line is not None:
        print("\r" + line, end="", flush=True)


__all__ = ["LinePrinter", "print_sync_progress", "sync_progress_line"]
