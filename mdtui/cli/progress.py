"""Progress on the terminal: one rewritten status line and lines that stay."""

from __future__ import annotations

from typing import TextIO

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


__all__ = ["LinePrinter"]
