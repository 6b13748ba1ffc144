"""Streaming parser for fio's JSON output: status documents → Progress, the final document → figures."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from mdtui.model.job import DirectionStats, JobStats, Latency, Progress

# fio indents everything inside a document, so only a document's own braces sit at column 0. Trying a
# decode only once a column-0 "}" has arrived keeps the decoder linear in the stream length.
_DOC_END = re.compile(r"^\}", re.MULTILINE)
_DOC_START = re.compile(r"^\{", re.MULTILINE)
_FIO_MESSAGE = re.compile(r"^fio: .*$", re.MULTILINE)


class FioStreamDecoder:
    """Feed stdout text as it arrives; get back each complete JSON document in order.

    fio may print text (warnings, option help) around its documents; such lines are kept in
    ``skipped`` and never stop decoding. Whatever is left after ``close()`` is a cut-off document.
    """

    def __init__(self) -> None:
        self._decoder = json.JSONDecoder()
        self._buffer = ""
        self.skipped: list[str] = []
        self.documents_seen = 0

    def feed(self, text: str) -> list[tuple[dict[str, Any], str]]:
        """Add text; return the (document, its raw text) pairs it completed."""
        self._buffer += text
        found: list[tuple[dict[str, Any], str]] = []
        while True:
            self._skip_text()
            if not self._buffer.startswith("{") or not _DOC_END.search(self._buffer):
                break
            try:
                document, end = self._decoder.raw_decode(self._buffer)
            except json.JSONDecodeError:
                later = _DOC_START.search(self._buffer, 1)
                if later is None:
                    break  # most likely a document still arriving
                # A broken document followed by a new one: drop the broken part, keep going.
                self.skipped.append(self._buffer[: later.start()])
                self._buffer = self._buffer[later.start() :]
                continue
            raw = self._buffer[:end]
            self._buffer = self._buffer[end:]
            if isinstance(document, dict):
                self.documents_seen += 1
                found.append((document, raw))
            else:
                self.skipped.append(raw)
        return found

    def _skip_text(self) -> None:
        """Drop whitespace and whole non-JSON lines in front of the next document."""
        while True:
            stripped = self._buffer.lstrip()
            self._buffer = stripped
            if not stripped or stripped.startswith("{"):
                return
            newline = stripped.find("\n")
            if newline < 0:
                return  # a text line still arriving
            self.skipped.append(stripped[:newline])
            self._buffer = stripped[newline + 1 :]

    def close(self) -> str:
        """End of stream: return what could not be decoded (a cut-off document), empty when none."""
        rest = self._buffer.strip()
        self._buffer = ""
        if rest and not rest.startswith("{"):
            self.skipped.append(rest)
            return ""
        return rest


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _direction_runtime_s(job: Mapping[str, Any]) -> float:
    return max((_number(job.get(d, {}).get("runtime")) for d in ("read", "write", "trim")), default=0.0) / 1000


def document_elapsed_s(document: Mapping[str, Any]) -> float:
    """Seconds of I/O a document covers: the longest direction runtime (ms in the JSON) over all jobs.

    fio's own ``elapsed`` is whole seconds and counts setup, so it is only the fallback.
    """
    jobs = document.get("jobs") or []
    runtime = max((_direction_runtime_s(job) for job in jobs), default=0.0)
    if runtime > 0:
        return runtime
    return max((_number(job.get("elapsed")) for job in jobs), default=0.0)


def _totals(document: Mapping[str, Any]) -> tuple[int, int, int, int]:
    read_bytes = write_bytes = read_ios = write_ios = 0
    for job in document.get("jobs") or []:
        read = job.get("read", {})
        write = job.get("write", {})
        read_bytes += int(_number(read.get("io_bytes")))
        write_bytes += int(_number(write.get("io_bytes")))
        read_ios += int(_number(read.get("total_ios")))
        write_ios += int(_number(write.get("total_ios")))
    return read_bytes, write_bytes, read_ios, write_ios


class FioProgressTracker:
    """Turns consecutive cumulative documents into Progress with per-interval rates."""

    def __init__(self) -> None:
        self._previous: tuple[float, int, int, int, int] = (0.0, 0, 0, 0, 0)

    def update(self, document: Mapping[str, Any]) -> Progress:
        elapsed = document_elapsed_s(document)
        read_bytes, write_bytes, read_ios, write_ios = _totals(document)
        prev_elapsed, prev_rb, prev_wb, prev_ri, prev_wi = self._previous
        interval = elapsed - prev_elapsed
        self._previous = (elapsed, read_bytes, write_bytes, read_ios, write_ios)
        if interval <= 0:
            # Two documents for the same instant (the final one right after a status one): nothing
            # new happened, so report no rate rather than divide by zero.
            return Progress(elapsed, read_bytes, write_bytes, 0.0, 0.0, 0.0, 0.0)
        return Progress(
            elapsed_s=elapsed,
            read_bytes=read_bytes,
            write_bytes=write_bytes,
            read_bytes_per_s=(read_bytes - prev_rb) / interval,
            write_bytes_per_s=(write_bytes - prev_wb) / interval,
            read_iops=(read_ios - prev_ri) / interval,
            write_iops=(write_ios - prev_wi) / interval,
        )


def _percentile(clat: Mapping[str, Any], key: str) -> float | None:
    percentiles = clat.get("percentile") or {}
    value = percentiles.get(key)
    return None if value is None else float(value)


def _direction(section: Mapping[str, Any]) -> DirectionStats:
    clat = section.get("clat_ns") or {}
    has_samples = _number(clat.get("N")) > 0
    latency = Latency(
        mean_ns=_number(clat.get("mean")) if has_samples else None,
        p50_ns=_percentile(clat, "50.000000"),
        p99_ns=_percentile(clat, "99.000000"),
        p99_9_ns=_percentile(clat, "99.900000"),
        max_ns=_number(clat.get("max")) if has_samples else None,
    )
    return DirectionStats(
        io_bytes=int(_number(section.get("io_bytes"))),
        runtime_s=_number(section.get("runtime")) / 1000,
        bytes_per_s=_number(section.get("bw_bytes")),
        iops=_number(section.get("iops")),
        total_ios=int(_number(section.get("total_ios"))),
        latency=latency,
    )


def job_stats(job: Mapping[str, Any]) -> JobStats:
    """One entry of a document's ``jobs`` list (with --group_reporting, the whole group)."""
    return JobStats(
        name=str(job.get("jobname", "")),
        read=_direction(job.get("read") or {}),
        write=_direction(job.get("write") or {}),
        usr_cpu_percent=_number(job.get("usr_cpu")) if "usr_cpu" in job else None,
        sys_cpu_percent=_number(job.get("sys_cpu")) if "sys_cpu" in job else None,
        error=int(_number(job.get("error"))),
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
    return JobStats(
        name=name,
        read=_combine_direction([p.read for p in parts]),
        write=_combine_direction([p.write for p in parts]),
        usr_cpu_percent=sum(u for u, _ in cpu) / len(cpu) if cpu else None,
        sys_cpu_percent=sum(s or 0.0 for _, s in cpu) / len(cpu) if cpu else None,
        error=next((p.error for p in parts if p.error), 0),
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
    pairs = decoder.feed(text)
    truncated = decoder.close()
    return FioOutput(
        documents=tuple(d for d, _ in pairs),
        raw_documents=tuple(r for _, r in pairs),
        truncated=truncated,
        skipped=tuple(decoder.skipped),
    )


def progress_series(documents: Iterable[Mapping[str, Any]]) -> Iterator[Progress]:
    tracker = FioProgressTracker()
    for document in documents:
        yield tracker.update(document)


def document_stats(document: Mapping[str, Any]) -> tuple[JobStats | None, tuple[JobStats, ...]]:
    """(total, per-job) figures of one document."""
    jobs = tuple(job_stats(job) for job in document.get("jobs") or [])
    return total_stats(jobs), jobs


def fio_messages(text: str) -> list[str]:
    """fio's own "fio: ..." lines (errors and warnings) in text, in order."""
    return [m.group(0).strip() for m in _FIO_MESSAGE.finditer(text)]


def document_error(document: Mapping[str, Any]) -> str | None:
    """A sentence naming the jobs that reported an error in the document, or None."""
    failed = [
        f"{job.get('jobname', '?')} (error {int(_number(job.get('error')))})"
        for job in document.get("jobs") or []
        if _number(job.get("error"))
    ]
    return "fio reported an error in job " + ", ".join(failed) if failed else None
