"""Parser for GNU dd's stderr: status=progress updates (carriage-return separated) and the final summary."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mdtui.ascii_numbers import U64_MAX, parse_float, parse_int
from mdtui.model.job import Progress

# "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.5 s, 429 MB/s"; below 1 kB the parenthesis is absent and
# a single byte reads "1 byte copied". The seconds use the C locale's "." because mdtui runs dd with
# LC_ALL=C; progress lines give whole seconds, the summary uses %g, which turns tiny times into "5e-05".
_COPIED = re.compile(
    r"^(?P<bytes>[0-9]+) bytes? (?:\([^)]*\) )?copied, (?P<seconds>[0-9.]+(?:e[-+]?[0-9]+)?) s, (?P<rate>.+)$"
)
_RECORDS = re.compile(r"^(?P<full>[0-9]+)\+(?P<part>[0-9]+) records (?P<way>in|out)$")
_LINE_ENDS = re.compile(r"[\r\n]")
# A progress or summary line is under 100 characters. Past this a line still arriving is not one, so
# it is neither checked as an early progress line nor kept whole (an error line keeps its start).
MAX_LINE = 4096
# Seconds of a dd run: a year is plenty, and keeps rates finite.
MAX_SECONDS = 366 * 86400.0


@dataclass(frozen=True)
class DdSummary:
    """dd's final report. ``bytes_per_s`` is computed from bytes and seconds, not dd's rounded rate."""

    bytes_copied: int
    seconds: float
    records_in_full: int
    records_in_partial: int
    records_out_full: int
    records_out_partial: int
    rate_text: str  # dd's own rounded rate, e.g. "429 MB/s", kept for display and checks

    @property
    def bytes_per_s(self) -> float:
        return self.bytes_copied / self.seconds if self.seconds > 0 else 0.0


def _copied(line: str) -> tuple[int, float, str] | None:
    """(bytes, seconds, dd's rate text) of a progress or summary line; None for any other line."""
    match = _COPIED.match(line.strip())
    if match is None:
        return None
    bytes_copied = parse_int(match["bytes"], hi=U64_MAX)
    seconds = parse_float(match["seconds"], hi=MAX_SECONDS)
    if bytes_copied is None or seconds is None:
        return None
    return bytes_copied, seconds, match["rate"].strip()


class DdProgressTracker:
    """Turns dd's cumulative progress lines into Progress with per-interval rates."""

    def __init__(self) -> None:
        self._previous: tuple[float, int] = (0.0, 0)

    def update(self, bytes_copied: int, seconds: float) -> Progress:
        prev_seconds, prev_bytes = self._previous
        self._previous = (seconds, bytes_copied)
        interval = seconds - prev_seconds
        rate = (bytes_copied - prev_bytes) / interval if interval > 0 else 0.0
        return Progress(
            elapsed_s=seconds,
            read_bytes=bytes_copied,
            write_bytes=0,
            read_bytes_per_s=rate,
            write_bytes_per_s=0.0,
            read_iops=0.0,  # dd does not count I/Os separately from bytes
            write_iops=0.0,
        )


class DdStreamParser:
    """Feed stderr text as it arrives; get Progress for each progress line, then the summary.

    Linear in the stream, never raising: only the newly fed text is split into lines, and the line
    still arriving is kept as pieces, at most MAX_LINE characters of it.
    """

    def __init__(self) -> None:
        self._partial: list[str] = []  # the line still arriving, in pieces
        self._partial_size = 0
        self._early = False  # that line was reported before its terminator arrived
        self._tracker = DdProgressTracker()
        self._records: dict[str, tuple[int, int]] = {}
        self.summary: DdSummary | None = None
        self.errors: list[str] = []
        self.progress: list[Progress] = []

    def feed(self, text: str) -> list[Progress]:
        found: list[Progress] = []
        # dd writes "\r" *before* each progress line (the next one overwrites it) and "\n" after the
        # summary lines, so a progress line's end is known only when the next one starts.
        last = max(text.rfind("\r"), text.rfind("\n"))
        if last >= 0:
            first = _LINE_ENDS.search(text)
            assert first is not None
            complete = [self._take_partial(text[: first.start()]), *_LINE_ENDS.split(text[first.end() : last])]
            if first.start() == last:
                complete = complete[:1]
            if self._early:
                complete = complete[1:]  # already reported when it arrived
            self._early = False
            found = self._lines(complete)
            self._add_partial(text[last + 1 :])
        else:
            self._add_partial(text)
        # Waiting a second for the next line would make every update late: a pending line that
        # already ends in its rate unit ("MB/s") is whole, since dd writes each line in one go.
        if not self._early and not self._records and 0 < self._partial_size <= MAX_LINE:
            pending = "".join(self._partial).strip()
            if pending.endswith("/s") and _copied(pending) is not None:
                found += self._lines([pending])
                self._early = True
        return found

    def _add_partial(self, text: str) -> None:
        room = MAX_LINE + 1 - self._partial_size
        if text and room > 0:
            piece = text[:room]
            self._partial.append(piece)
            self._partial_size += len(piece)

    def _take_partial(self, text: str) -> str:
        """The line still arriving, completed by text, and start a new one."""
        self._add_partial(text)
        line = "".join(self._partial)
        self._partial = []
        self._partial_size = 0
        return line

    def close(self) -> list[Progress]:
        rest = self._take_partial("")
        if self._early:
            self._early = False
            return []
        return self._lines([rest])

    def _lines(self, lines: list[str]) -> list[Progress]:
        found: list[Progress] = []
        for raw in lines:
            # The streaming path keeps only a line's first MAX_LINE + 1 characters; reading every line
            # by that start makes a whole-text parse read exactly what a streamed one does.
            line = raw[: MAX_LINE + 1].strip()
            if not line:
                continue
            records = _RECORDS.match(line)
            if records:
                full, part = parse_int(records["full"]), parse_int(records["part"])
                if full is not None and part is not None:
                    self._records[records["way"]] = (full, part)
                continue
            copied = _copied(line)
            if copied is None:
                if line.startswith("dd:"):
                    self.errors.append(line)
                continue
            bytes_copied, seconds, rate = copied
            if "in" in self._records:
                # The line after "records in/out" is the summary, not a progress update.
                full_in, part_in = self._records["in"]
                full_out, part_out = self._records.get("out", (0, 0))
                self.summary = DdSummary(bytes_copied, seconds, full_in, part_in, full_out, part_out, rate)
                continue
            progress = self._tracker.update(bytes_copied, seconds)
            self.progress.append(progress)
            found.append(progress)
        return found
