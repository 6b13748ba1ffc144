"""Read fio 3.x `--output-format=json` output (one document, or one per --status-interval) into a run."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from mdtui.store.db import ResultsStore
from mdtui.store.errors import FioImportError
from mdtui.store.records import Metrics, RunSetup, RunStatus, SamplePoint
from mdtui.store.spool import read_bounded_text

IMPORTED_PRESET = "imported"
# fio timestamps are milliseconds since 1970; anything past the year 9999 cannot be a date.
_LATEST_MS = 253_402_300_799_000
# A --status-interval=1 log of an hour with 64 jobs is ~200 MiB; more is not one run's output.
MAX_IMPORT_BYTES = 512 << 20
# fio's default percentile_list holds these; a custom list without them leaves the figure unknown.
_PERCENTILES = {"p50": 50.0, "p99": 99.0, "p99_9": 99.9}
# Each document fio prints starts with "{" in column 0; nested objects are indented.
_DOCUMENT_START = re.compile(r"^\{", re.MULTILINE)


@dataclass(frozen=True)
class FioRun:
    """What fio output says about one run, ready for ResultsStore.add_run."""

    setup: RunSetup
    status: RunStatus
    started_at: datetime
    ended_at: datetime
    metrics: Metrics
    samples: tuple[SamplePoint, ...]
    error: str
    fio_json: str


def parse_fio_output(text: str) -> list[dict[str, Any]]:
    """Every fio JSON document in ``text``, in order; warnings fio printed around them are skipped.

    Linear in the text for fio's output: each document is decoded once from its column-0 "{", and a
    failed decode moves on to the next column-0 "{". Never raises.
    """
    decoder = json.JSONDecoder()
    documents: list[dict[str, Any]] = []
    position = 0
    while (match := _DOCUMENT_START.search(text, position)) is not None:
        try:
            document, end = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            # JSONDecodeError: a document cut short (fio killed mid-write) or a stray brace; ValueError
            # also for an integer of 4300+ digits, RecursionError for nesting deeper than Python's
            # stack. Look for the next document.
            position = match.start() + 1
            continue
        if isinstance(document, dict) and isinstance(document.get("jobs"), list):
            documents.append(document)
        position = end
    return documents


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float
        return math.inf


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _jobs(document: dict[str, Any]) -> list[dict[str, Any]]:
    jobs = document.get("jobs")
    return [job for job in jobs if isinstance(job, dict)] if isinstance(jobs, list) else []


def _direction(jobs: Sequence[Any], name: str) -> list[dict[str, Any]]:
    return [job[name] for job in jobs if isinstance(job, dict) and isinstance(job.get(name), dict)]


def _percentile(stats: dict[str, Any], wanted: float) -> float | None:
    # Total latency (lat_ns) has percentiles only with lat_percentiles=1; fio's default is completion latency.
    for key in ("lat_ns", "clat_ns"):
        table = _dict(stats.get(key)).get("percentile")
        if isinstance(table, dict):
            for point, value in table.items():
                try:
                    if abs(float(point) - wanted) < 1e-6:
                        return _number(value)
                except (TypeError, ValueError):
                    continue
    return None


def metrics_from_fio(document: dict[str, Any]) -> Metrics:
    """Summary figures of one fio JSON document.

    Bandwidth, IOPS and CPU are summed over jobs (with group_reporting there is one job per group).
    Mean latency is weighted by each job's I/O count. Percentiles cannot be merged from per-job
    tables, so the worst job's percentile is kept: an upper bound, exact with group_reporting.
    A direction with no I/O at all is left unknown rather than recorded as zero.
    """
    jobs = _jobs(document)
    values: dict[str, float] = {}
    for name in ("read", "write"):
        stats = _direction(jobs, name)
        total_ios = sum(_number(s.get("total_ios")) for s in stats)
        if total_ios <= 0 and sum(_number(s.get("io_bytes")) for s in stats) <= 0:
            continue
        values[f"{name}_bw_bytes_per_s"] = sum(_number(s.get("bw_bytes")) for s in stats)
        values[f"{name}_iops"] = sum(_number(s.get("iops")) for s in stats)
        weighted = [s for s in stats if _number(s.get("total_ios")) > 0]
        if weighted:
            values[f"{name}_lat_mean_ns"] = sum(
                _number(_dict(s.get("lat_ns")).get("mean")) * _number(s.get("total_ios")) for s in weighted
            ) / sum(_number(s.get("total_ios")) for s in weighted)
            for suffix, wanted in _PERCENTILES.items():
                found = [p for s in weighted if (p := _percentile(s, wanted)) is not None]
                if found:
                    values[f"{name}_lat_{suffix}_ns"] = max(found)
    if jobs:
        values["cpu_usr_pct"] = sum(_number(job.get("usr_cpu")) for job in jobs)
        values["cpu_sys_pct"] = sum(_number(job.get("sys_cpu")) for job in jobs)
    return Metrics.from_dict(values)


def samples_from_fio(documents: Sequence[dict[str, Any]], started_ms: float) -> tuple[SamplePoint, ...]:
    """Per-interval rates from consecutive --status-interval documents, whose figures are cumulative."""
    points = []
    if not documents:
        return ()
    final_jobs = _jobs(documents[-1])
    # Directions the run never used would only add rows of zeros.
    used = [name for name in ("read", "write") if any(_number(s.get("io_bytes")) for s in _direction(final_jobs, name))]
    for before, after in pairwise(documents):
        seconds = (_number(after.get("timestamp_ms")) - _number(before.get("timestamp_ms"))) / 1000
        if seconds <= 0:
            continue
        values = {}
        for name in used:
            for field, metric in (("io_bytes", f"{name}_bw_bytes_per_s"), ("total_ios", f"{name}_iops")):
                delta = sum(_number(s.get(field)) for s in _direction(_jobs(after), name)) - sum(
                    _number(s.get(field)) for s in _direction(_jobs(before), name)
                )
                values[metric] = delta / seconds
        points.append(SamplePoint((_number(after.get("timestamp_ms")) - started_ms) / 1000, values))
    return tuple(points)


def _setup(document: dict[str, Any], source: str, label: str) -> RunSetup:
    jobs = _jobs(document)
    params: dict[str, Any] = dict(_dict(document.get("global options")))
    distinct: list[dict[str, Any]] = []
    for job in jobs:
        options = _dict(job.get("job options"))
        if options not in distinct:
            distinct.append(options)
    # numjobs=N repeats one job N times with the same options: that is one set of parameters.
    if len(distinct) == 1:
        params.update(distinct[0])
    elif distinct:
        params["jobs"] = distinct
    target = str(params.get("filename") or params.get("directory") or "")
    if not target and distinct:
        target = str(distinct[0].get("filename") or distinct[0].get("directory") or "")
    context: dict[str, Any] = {}
    if document.get("fio version"):
        context["fio_version"] = str(document["fio version"])
    if source:
        context["source_file"] = source
    return RunSetup(preset=IMPORTED_PRESET, params=params, target=target, context=context, label=label)


def read_fio_output(text: str, *, source: str = "", label: str = "") -> FioRun:
    """A run from fio JSON output; FioImportError when the text holds no fio JSON document."""
    documents = parse_fio_output(text)
    if not documents:
        where = source or "the input"
        raise FioImportError(
            f"{where} holds no fio JSON output (no document with a 'jobs' list); produce it with "
            "fio --output-format=json"
        )
    final = documents[-1]
    where = source or "the input"
    jobs = _jobs(final)
    if not jobs:
        raise FioImportError(f"{where}: the fio JSON lists no jobs, so there is nothing to store")
    ended_ms = _number(final.get("timestamp_ms")) or _number(final.get("timestamp")) * 1000
    if not 0 < ended_ms < _LATEST_MS:
        raise FioImportError(f"{where}: fio JSON without a usable timestamp; is it from fio 3.x?")
    # "elapsed" is whole seconds since the job started (layout included): the best start time fio gives.
    elapsed_s = max((_number(job.get("elapsed")) for job in jobs), default=0.0)
    if not 0 <= elapsed_s < ended_ms / 1000:
        raise FioImportError(f"{where}: a job's elapsed time ({elapsed_s:g} s) is negative or impossible")
    ended_at = datetime.fromtimestamp(ended_ms / 1000, UTC)
    started_at = ended_at - timedelta(seconds=elapsed_s)
    metrics = metrics_from_fio(final)
    bad = [name for name, value in metrics.as_dict().items() if not (math.isfinite(value) and value >= 0)]
    if bad:
        raise FioImportError(
            f"{where}: {', '.join(bad)} would be negative or not finite; that is not what fio writes"
        )
    failures = [
        f"job {str(job.get('jobname', '?'))!r}: error {code} ({_strerror(code)})"
        for job in jobs
        if (code := _error_code(job.get("error")))
    ]
    return FioRun(
        setup=_setup(final, source, label),
        status=RunStatus.FAILED if failures else RunStatus.COMPLETE,
        started_at=started_at,
        ended_at=ended_at,
        metrics=metrics,
        samples=samples_from_fio(documents, started_at.timestamp() * 1000),
        error="; ".join(failures),
        fio_json=text,
    )


def _error_code(value: Any) -> int:
    number = _number(value)
    return int(number) if math.isfinite(number) and 0 < abs(number) < 1 << 31 else 0


def _strerror(code: int) -> str:
    try:
        return os.strerror(code)
    except ValueError:
        return "unknown error"


def read_fio_file(path: str | os.PathLike[str], *, label: str = "") -> FioRun:
    """The run that the fio JSON output in ``path`` describes, checked; FioImportError otherwise."""
    text = read_bounded_text(path, limit=MAX_IMPORT_BYTES, what="fio JSON output")
    return read_fio_output(text, source=str(Path(path).resolve()), label=label)


def import_fio_file(store: ResultsStore, path: str | os.PathLike[str], *, label: str = "") -> int:
    """Store the fio JSON output in ``path`` as a run with preset "imported"; returns the run ID."""
    return store_fio_run(store, read_fio_file(path, label=label))


def store_fio_run(store: ResultsStore, run: FioRun) -> int:
    """Store a run read by :func:`read_fio_output`; returns its ID."""
    return store.add_run(
        run.setup,
        status=run.status,
        started_at=run.started_at,
        ended_at=run.ended_at,
        metrics=run.metrics,
        samples=run.samples,
        fio_json=run.fio_json,
        error=run.error,
    )
