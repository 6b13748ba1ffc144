"""Streaming parser for fio's JSON output: status documents → Progress, the final document → figures."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mdtui.model.job import DirectionStats, JobStats, Latency, Progress, SteadyOutcome
from mdtui.store.fio_read import (
    elapsed_seconds,
    fold_confirmations,
    io_seconds,
    job_direction,
    number,
    read_direction,
    steady_outcome,
)

# fio indents everything inside a document, so only a document's own braces sit at column 0. Trying a
# decode only once a column-0 "}" has arrived keeps the decoder linear in the stream length.
_DOC_END = re.compile(r"^\}", re.MULTILINE)
_DOC_START = re.compile(r"^\{", re.MULTILINE)
_NON_SPACE = re.compile(r"\S")
_FIO_MESSAGE = re.compile(r"^fio: .*$", re.MULTILINE)


class FioStreamDecoder:
    """Feed stdout text as it arrives; get back each complete JSON document in order.

    fio may print text (warnings, option help) around its documents; such lines are kept in
    ``skipped`` and never stop decoding. Whatever is left after ``close()`` is a cut-off document.

    Linear in the stream: fed text is kept as pieces and joined only when it can complete something
    (a column-0 "}" for a document, a newline for a text line), each character is searched for a
    document end once, and a document that fails to decode because it is still arriving is tried
    again only once it has doubled in length (or at ``flush()``). Never raises on any input.
    """

    def __init__(self) -> None:
        self._decoder = json.JSONDecoder()
        self._pieces: list[str] = []  # text not consumed yet, in order
        self._size = 0  # their total length
        self._in_document = False  # the unconsumed text starts with "{"
        self._broken = False  # ... and that document cannot decode: wait for the next column-0 "{"
        self._searched = 0  # unconsumed characters already searched for a column-0 "}"
        self._retry_at = 0  # a document still arriving is decoded again once this long
        self._last = "\n"  # the last character fed, to see a column-0 brace at a piece boundary
        self.skipped: list[str] = []
        self.documents_seen = 0

    def feed(self, text: str) -> list[tuple[dict[str, Any], str]]:
        """Add text; return the (document, its raw text) pairs it completed."""
        if not text:
            return []
        after_newline = self._last == "\n"
        self._last = text[-1]
        self._pieces.append(text)
        self._size += len(text)
        if self._in_document:
            opener = "{" if self._broken else "}"
            if not ((after_newline and text[0] == opener) or "\n" + opener in text):
                return []
            if not self._broken and self._size < self._retry_at:
                return []
        elif "\n" not in text and "{" not in text:
            return []  # a text line, or whitespace, still arriving
        return self._decode(force=False)

    def flush(self) -> list[tuple[dict[str, Any], str]]:
        """Decode whatever complete documents are waiting, however short (the end of a stream)."""
        return self._decode(force=True) if self._pieces else []

    def _decode(self, *, force: bool) -> list[tuple[dict[str, Any], str]]:
        buffer = "".join(self._pieces)
        position, found = self._consume(buffer, force)
        rest = buffer[position:]
        self._pieces = [rest] if rest else []
        self._size = len(rest)
        self._in_document = rest.startswith("{")
        if not self._in_document:
            self._broken = False
            self._retry_at = 0
        return found

    def _consume(self, buffer: str, force: bool) -> tuple[int, list[tuple[dict[str, Any], str]]]:
        found: list[tuple[dict[str, Any], str]] = []
        position = 0
        size = len(buffer)
        while True:
            following = _NON_SPACE.search(buffer, position)
            if following is None:
                return size, found
            position = following.start()
            if buffer[position] != "{":
                newline = buffer.find("\n", position)
                if newline < 0:
                    return position, found  # a text line still arriving
                self.skipped.append(buffer[position:newline])
                position = newline + 1
                continue
            if self._broken or not self._has_end(buffer, position):
                if self._broken and (later := _DOC_START.search(buffer, position + 1)) is not None:
                    self.skipped.append(buffer[position : later.start()])
                    position = later.start()
                    self._broken = False
                    self._searched = 0
                    continue
                return position, found
            if not force and size - position < self._retry_at:
                return position, found
            try:
                document, end = self._decoder.raw_decode(buffer, position)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, or an integer of 4300+ digits
                error_at = exc.pos if isinstance(exc, json.JSONDecodeError) else position
                if isinstance(exc, json.JSONDecodeError) and _NON_SPACE.search(buffer, error_at) is None:
                    # Cut off at the end of what arrived: most likely a document still arriving.
                    self._retry_at = 2 * (size - position)
                    return position, found
                later = _DOC_START.search(buffer, position + 1)
                if later is None:
                    self._broken = True  # nothing after it can fix it; wait for the next document
                    return position, found
                # A broken document followed by a new one: drop the broken part, keep going.
                self.skipped.append(buffer[position : later.start()])
                position = later.start()
                self._searched = 0
                continue
            raw = buffer[position:end]
            position = end
            self._searched = 0
            self._retry_at = 0
            if isinstance(document, dict):
                self.documents_seen += 1
                found.append((document, raw))
            else:
                self.skipped.append(raw)

    def _has_end(self, buffer: str, start: int) -> bool:
        """Whether a column-0 "}" follows start; text searched on an earlier call is not searched again."""
        begin = max(start, start + self._searched - 1)
        if _DOC_END.search(buffer, begin) is not None:
            return True
        self._searched = len(buffer) - start
        return False

    def close(self) -> str:
        """End of stream: return what could not be decoded (a cut-off document), empty when none."""
        rest = "".join(self._pieces).strip()
        self._pieces = []
        self._size = 0
        self._in_document = self._broken = False
        if rest and not rest.startswith("{"):
            self.skipped.append(rest)
            return ""
        return rest


def _number(value: Any, default: float = 0.0) -> float:
    """fio_read.number, with ``default`` for what is not a usable fio figure."""
    found = number(value)
    return default if found is None else found


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _jobs(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The document's job entries; a "jobs" that is not a list of objects (not fio's shape) has none."""
    jobs = document.get("jobs")
    return fold_confirmations([job for job in jobs if isinstance(job, dict)]) if isinstance(jobs, list) else []


def document_elapsed_s(document: Mapping[str, Any]) -> float:
    """Seconds of I/O a document covers; fio's whole-second ``elapsed`` (it counts setup) only without them; 0
    before any job has run."""
    jobs = _jobs(document)
    return io_seconds(jobs) or elapsed_seconds(jobs) or 0.0


def _totals(document: Mapping[str, Any]) -> tuple[int, int, int, int]:
    read_bytes = write_bytes = read_ios = write_ios = 0
    for job in _jobs(document):
        read = read_direction(job.get("read"))
        write = read_direction(job.get("write"))
        read_bytes += read.io_bytes or 0
        write_bytes += write.io_bytes or 0
        read_ios += read.total_ios or 0
        write_ios += write.total_ios or 0
    return read_bytes, write_bytes, read_ios, write_ios


def _confirm_runtime_s(job: Mapping[str, Any]) -> float:
    """Seconds a folded job's confirmation (fold_confirmations) has run; 0 before it begins or without one."""
    confirm = job.get("confirm")
    return _number(confirm.get("runtime_ms")) / 1000 if isinstance(confirm, dict) else 0.0


class FioProgressTracker:
    """Turns consecutive cumulative documents into Progress with per-interval rates."""

    def __init__(self) -> None:
        self._previous: tuple[float, int, int, int, int] = (0.0, 0, 0, 0, 0)

    def update(self, document: Mapping[str, Any]) -> Progress:
        elapsed = document_elapsed_s(document)
        confirming = max((_confirm_runtime_s(job) for job in _jobs(document)), default=0.0)
        read_bytes, write_bytes, read_ios, write_ios = _totals(document)
        prev_elapsed, prev_rb, prev_wb, prev_ri, prev_wi = self._previous
        interval = elapsed - prev_elapsed
        self._previous = (elapsed, read_bytes, write_bytes, read_ios, write_ios)
        if interval <= 0:
            # Two documents for the same instant (the final one right after a status one): nothing
            # new happened, so report no rate rather than divide by zero.
            return Progress(elapsed, read_bytes, write_bytes, 0.0, 0.0, 0.0, 0.0, confirming or None)
        return Progress(
            elapsed_s=elapsed,
            read_bytes=read_bytes,
            write_bytes=write_bytes,
            read_bytes_per_s=(read_bytes - prev_rb) / interval,
            write_bytes_per_s=(write_bytes - prev_wb) / interval,
            read_iops=(read_ios - prev_ri) / interval,
            write_iops=(write_ios - prev_wi) / interval,
            confirming_s=confirming or None,
        )


def _direction(job: Mapping[str, Any], name: str) -> DirectionStats:
    """A job's direction read as the import reads it (mdtui.store.fio_read.job_direction: every fio version's
    units, a steady job's window figures).

    DirectionStats counts what was not measured as 0 for volumes and rates; latency stays None.
    """
    figures = job_direction(job, name)
    clat = figures.clat
    percentiles = clat.percentiles_ns or {}
    return DirectionStats(
        io_bytes=figures.io_bytes or 0,
        runtime_s=figures.runtime_s or 0.0,
        bytes_per_s=figures.bytes_per_s or 0.0,
        iops=figures.iops or 0.0,
        total_ios=figures.total_ios or 0,
        latency=Latency(
            mean_ns=clat.mean_ns,
            p50_ns=percentiles.get("p50"),
            p99_ns=percentiles.get("p99"),
            p99_9_ns=percentiles.get("p99_9"),
            max_ns=clat.max_ns,
        ),
    )


def job_stats(job: Mapping[str, Any]) -> JobStats:
    """One entry of a document's ``jobs`` list (with --group_reporting, the whole group)."""
    return JobStats(
        name=str(job.get("jobname", "")),
        read=_direction(job, "read"),
        write=_direction(job, "write"),
        usr_cpu_percent=_number(job.get("usr_cpu")) if "usr_cpu" in job else None,
        sys_cpu_percent=_number(job.get("sys_cpu")) if "sys_cpu" in job else None,
        error=int(_number(job.get("error"))),
        steady=steady_outcome(job),
    )


def _combine_direction(parts: list[DirectionStats]) -> DirectionStats:
    samples = sum(p.total_ios for p in parts)
    means = [(p.latency.mean_ns, p.total_ios) for p in parts if p.latency.mean_ns is not None]
    # Percentiles of separate jobs cannot be merged from their summaries; only a mean can.
    mean = sum(m * n for m, n in means) / samples if means and samples else None
    maxima = [p.latency.max_ns for p in parts if p.latency.max_ns is not None]
    return DirectionStats(
        io_bytes=sum(p.io_bytes for p in parts),
        runtime_s=max((p.runtime_s for p in parts), default=0.0),
        bytes_per_s=sum(p.bytes_per_s for p in parts),
        iops=sum(p.iops for p in parts),
        total_ios=samples,
        latency=Latency(mean_ns=mean, max_ns=max(maxima) if maxima else None),
    )


def total_stats(jobs: Iterable[JobStats], name: str = "total") -> JobStats | None:
    """The whole run: the single job as is, or several summed (bandwidth and IOPS add up, as fio's do)."""
    parts = list(jobs)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    cpu = [(p.usr_cpu_percent, p.sys_cpu_percent) for p in parts if p.usr_cpu_percent is not None]
    steadies = [p.steady for p in parts if p.steady is not None]
    # Several jobs at once (a step reading every member together) are steady only when each of them is.
    steady = (
        SteadyOutcome(
            attained=all(o.attained for o in steadies),
            criterion=steadies[0].criterion,
            measured="; ".join(o.measured for o in steadies),
            after_s=max((o.after_s for o in steadies if o.after_s is not None), default=None),
            fell_percent=max((o.fell_percent for o in steadies if o.fell_percent is not None), default=None),
        )
        if steadies
        else None
    )
    return JobStats(
        name=name,
        read=_combine_direction([p.read for p in parts]),
        write=_combine_direction([p.write for p in parts]),
        usr_cpu_percent=sum(u for u, _ in cpu) / len(cpu) if cpu else None,
        sys_cpu_percent=sum(s or 0.0 for _, s in cpu) / len(cpu) if cpu else None,
        error=next((p.error for p in parts if p.error), 0),
        steady=steady,
    )


@dataclass(frozen=True)
class FioOutput:
    """Everything read from one fio run's stdout."""

    documents: tuple[dict[str, Any], ...]
    raw_documents: tuple[str, ...]
    truncated: str = ""  # the text of a document that was cut off, empty when the stream ended cleanly
    skipped: tuple[str, ...] = field(default=())

    @property
    def final(self) -> dict[str, Any] | None:
        return self.documents[-1] if self.documents else None

    @property
    def final_raw(self) -> str:
        return self.raw_documents[-1] if self.raw_documents else ""


def parse_fio_output(text: str) -> FioOutput:
    """Parse a whole captured stdout (the streaming decoder, fed at once)."""
    decoder = FioStreamDecoder()
    pairs = decoder.feed(text) + decoder.flush()
    truncated = decoder.close()
    return FioOutput(
        documents=tuple(d for d, _ in pairs),
        raw_documents=tuple(r for _, r in pairs),
        truncated=truncated,
        skipped=tuple(decoder.skipped),
    )


def document_stats(document: Mapping[str, Any]) -> tuple[JobStats | None, tuple[JobStats, ...]]:
    """(total, per-job) figures of one document."""
    jobs = tuple(job_stats(job) for job in _jobs(document))
    return total_stats(jobs), jobs


def fio_messages(text: str) -> list[str]:
    """fio's own "fio: ..." lines (errors and warnings) in text, in order."""
    return [m.group(0).strip() for m in _FIO_MESSAGE.finditer(text)]


def document_error(document: Mapping[str, Any]) -> str | None:
    """A sentence naming the jobs that reported an error in the document, or None."""
    failed = [
        f"{job.get('jobname', '?')} (error {int(_number(job.get('error')))})"
        for job in _jobs(document)
        if _number(job.get("error"))
    ]
    return "fio reported an error in job " + ", ".join(failed) if failed else None
