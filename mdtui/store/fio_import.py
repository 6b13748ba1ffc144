"""Read fio 3.x `--output-format=json` output (one document, or one per --status-interval) into a run."""

from __future__ import annotations

import json
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

IMPORTED_PRESET = "imported"
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
    """Every fio JSON document in ``text``, in order; warnings fio printed around them are skipped."""
    decoder = json.JSONDecoder()
    documents: list[dict[str, Any]] = []
    position = 0
    while (match := _DOCUMENT_START.search(text, position)) is not None:
        try:
            document, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            # A document cut short (fio killed mid-write) or a stray brace: look for the next one.
            position = match.start() + 1
            continue
        if isinstance(document, dict) and isinstance(document.get("jobs"), list):
            documents.append(document)
        position = end
    return documents


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _direction(jobs: Sequence[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [job[name] for job in jobs if isinstance(job.get(name), dict)]


def _percentile(stats: dict[str, Any], wanted: float) -> float | None:
    # Total latency (lat_ns) has percentiles only with lat_percentiles=1; fio's default is completion latency.
    for key in ("lat_ns", "clat_ns"):
        table = stats.get(key, {}).get("percentile")
        if isinstance(table, dict):
            for point, value in table.items():
                try:
                    if abs(float(point) - wanted) < 1e-6:
                        return _number(value)
                except ValueError:
                    continue
    return None


def metrics_from_fio(document: dict[str, Any]) -> Metrics:
    """Summary figures of one fio JSON document.

    Bandwidth, IOPS and CPU are summed over jobs (with group_reporting there is one job per group).
    Mean latency is weighted by each job's I/O count. Percentiles cannot be merged from per-job
    tables, so the worst job's percentile is kept: an upper bound, exact with group_reporting.
    A direction with no I/O at all is left unknown rather than recorded as zero.
    """
    jobs = [job for job in document.get("jobs", []) if isinstance(job, dict)]
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
                _number(s.get("lat_ns", {}).get("mean")) * _number(s.get("total_ios")) for s in weighted
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
    final_jobs = documents[-1]["jobs"]
    # Directions the run never used would only add rows of zeros.
    used = [name for name in ("read", "write") if any(_number(s.get("io_bytes")) for s in _direction(final_jobs, name))]
    for before, after in pairwise(documents):
        seconds = (_number(after.get("timestamp_ms")) - _number(before.get("timestamp_ms"))) / 1000
        if seconds <= 0:
            continue
        values = {}
        for name in used:
            for field, metric in (("io_bytes", f"{name}_bw_bytes_per_s"), ("total_ios", f"{name}_iops")):
                delta = sum(_number(s.get(field)) for s in _direction(after["jobs"], name)) - sum(
                    _number(s.get(field)) for s in _direction(before["jobs"], name)
                )
                values[metric] = delta / seconds
        points.append(SamplePoint((_number(after.get("timestamp_ms")) - started_ms) / 1000, values))
    return tuple(points)


def _setup(document: dict[str, Any], source: str, label: str) -> RunSetup:
    jobs = [job for job in document["jobs"] if isinstance(job, dict)]
    params: dict[str, Any] = dict(document.get("global options") or {})
    distinct: list[dict[str, Any]] = []
    for job in jobs:
        options = job.get("job options") or {}
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
    jobs = [job for job in final["jobs"] if isinstance(job, dict)]
    ended_ms = _number(final.get("timestamp_ms")) or _number(final.get("timestamp")) * 1000
    if ended_ms <= 0:
        raise FioImportError(f"{source or 'the input'}: fio JSON without a timestamp; is it from fio 3.x?")
    # "elapsed" is whole seconds since the job started (layout included): the best start time fio gives.
    elapsed_s = max((_number(job.get("elapsed")) for job in jobs), default=0.0)
    ended_at = datetime.fromtimestamp(ended_ms / 1000, UTC)
    started_at = ended_at - timedelta(seconds=elapsed_s)
    failures = [
        f"job {job.get('jobname', '?')!r}: error {int(_number(job['error']))} "
        f"({os.strerror(int(_number(job['error'])))})"
        for job in jobs
        if _number(job.get("error"))
    ]
    return FioRun(
        setup=_setup(final, source, label),
        status=RunStatus.FAILED if failures else RunStatus.COMPLETE,
        started_at=started_at,
        ended_at=ended_at,
        metrics=metrics_from_fio(final),
        samples=samples_from_fio(documents, started_at.timestamp() * 1000),
        error="; ".join(failures),
        fio_json=text,
    )


def import_fio_file(store: ResultsStore, path: str | os.PathLike[str], *, label: str = "") -> int:
    """Store the fio JSON output in ``path`` as a run with preset "imported"; returns the run ID."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FioImportError(f"{file} is not text, so not fio JSON output") from None
    except OSError as exc:
        raise FioImportError(f"cannot read {file}: {exc.strerror}") from None
    run = read_fio_output(text, source=str(file.resolve()), label=label)
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
