"""Read fio's JSON output, fio 2.x to today's (one document, or one per --status-interval), into runs."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from mdtui.store.errors import FioImportError
from mdtui.store.fio_read import (
    PERCENTILES,
    elapsed_seconds,
    fio_documents,
    fold_confirmations,
    io_seconds,
    job_direction,
    number,
    read_direction,
)
from mdtui.store.records import Metrics, RunSetup, RunStatus, SamplePoint
from mdtui.store.runs import ResultsStore
from mdtui.store.spool import MAX_SPOOL_BYTES, SpooledRun, is_spooled, parse_spooled, read_bounded_text
from mdtui.text import clean_strings, clean_text

IMPORTED_PRESET = "imported"
# fio timestamps are milliseconds since 1970; anything past the year 9999 cannot be a date.
_LATEST_MS = 253_402_300_799_000
# A --status-interval=1 log of an hour with 64 jobs is ~200 MiB; more is not one run's output.
MAX_IMPORT_BYTES = 512 << 20
# The runs one import may add (stonewall groups × --client hosts): a sweep of 8 block sizes × 4 depths ×
# 2 directions on 4 hosts is 256. More is not a benchmark anyone compares run by run.
MAX_IMPORT_RUNS = 256
# fio's "global options" section, as JSON: a few hundred bytes in practice. Every run of an import keeps
# it (its parameters), so one far larger would be stored that many times over.
MAX_GLOBAL_OPTIONS_BYTES = 64 << 10
# What a run of a multi-group import keeps of fio's final document besides its own jobs; anything else
# (disk_util, keys fio may add) is kept once, with the import's first run.
_HEADER_KEYS = ("fio version", "timestamp", "timestamp_ms", "time", "global options")
_JOB_LISTS = ("jobs", "client_stats")


@dataclass(frozen=True)
class FioRun:
    """What fio output says about one run, ready for ResultsStore.add_run."""

    setup: RunSetup
    status: RunStatus
    started_at: datetime | None  # None when fio wrote no timestamp (fio 2.1)
    ended_at: datetime | None
    metrics: Metrics
    samples: tuple[SamplePoint, ...]
    error: str
    fio_json: str


def parse_fio_output(text: str) -> list[dict[str, Any]]:
    """Every fio JSON document in ``text``, in order (store.fio_read.fio_documents); never raises."""
    return fio_documents(text)


def _number(value: Any) -> float:
    """A JSON number, 0 for anything else: for counts whose absence means none (fio's error code)."""
    figure = number(value)
    return 0.0 if figure is None else figure


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _jobs(document: dict[str, Any]) -> list[dict[str, Any]]:
    jobs = document.get("jobs")
    # A confirmed write step's two fio jobs are one figure (fold_confirmations).
    return (
        [dict(job) for job in fold_confirmations([j for j in jobs if isinstance(j, dict)])]
        if isinstance(jobs, list)
        else []
    )


def _client_entries(document: dict[str, Any]) -> list[dict[str, Any]]:
    """``fio --client`` output: each host's job entries; fio's own "All clients" sum is left out."""
    stats = document.get("client_stats")
    if not isinstance(stats, list):
        return []
    return [entry for entry in stats if isinstance(entry, dict) and entry.get("jobname") != "All clients"]


def _fio_version(document: dict[str, Any]) -> str:
    return str(document.get("fio version") or "fio of unknown version")


@dataclass(frozen=True)
class GroupFigures:
    """Summary figures of jobs that ran at the same time, and how they were read."""

    metrics: Metrics
    percentile_kind: str | None  # "clat" or "lat": which latency p50/p99/p99.9 are of
    missing: tuple[str, ...]  # "<direction>: <why>" for each used direction that cannot be read right


def group_figures(jobs: Sequence[dict[str, Any]]) -> GroupFigures:
    """Bandwidth, IOPS and CPU summed over jobs that ran together; latency as fio measured it.

    Mean latency is total latency (fio's lat), weighted by each job's I/O count. Percentiles cannot be
    merged from per-job tables, so the worst job's is kept: an upper bound, exact with group_reporting.
    A direction with no I/O, and a figure no job measured, is left unknown rather than recorded as zero.
    """
    values: dict[str, float] = {}
    kinds: set[str] = set()
    missing: list[str] = []
    for name in ("read", "write"):
        figures = [job_direction(job, name) for job in jobs if isinstance(job.get(name), dict)]
        used = [f for f in figures if f.used]
        if not used:
            continue
        missing.extend(f"{name}: {key}" for f in used for key in f.missing if f"{name}: {key}" not in missing)
        if all(f.bytes_per_s is not None for f in used):
            values[f"{name}_bw_bytes_per_s"] = sum(f.bytes_per_s or 0.0 for f in used)
        if all(f.iops is not None for f in used):
            values[f"{name}_iops"] = sum(f.iops or 0.0 for f in used)
        weighted = [(m, w) for f in used if (m := f.lat.mean_ns) is not None and (w := f.weight)]
        if weighted:
            values[f"{name}_lat_mean_ns"] = sum(m * w for m, w in weighted) / sum(w for _, w in weighted)
        for suffix in PERCENTILES:
            found = [p for f in used if (p := f.percentiles_ns.get(suffix)) is not None]
            if found:
                values[f"{name}_lat_{suffix}_ns"] = max(found)
        kinds.update(kind for f in used if (kind := f.percentile_kind) is not None)
    for key, field in (("usr_cpu", "cpu_usr_pct"), ("sys_cpu", "cpu_sys_pct")):
        cpu = [figure for job in jobs if (figure := number(job.get(key))) is not None]
        if cpu:
            values[field] = sum(cpu)
    # Jobs of one run share their options, lat_percentiles included; a mix is named as such.
    kind = kinds.pop() if len(kinds) == 1 else ("clat and lat" if kinds else None)
    return GroupFigures(Metrics.from_dict(values), kind, tuple(missing))


def metrics_from_fio(document: dict[str, Any]) -> Metrics:
    """Summary figures of one fio JSON document's jobs (see :func:`group_figures`)."""
    return group_figures(_jobs(document) or _client_entries(document)).metrics


def samples_from_fio(documents: Sequence[dict[str, Any]], started_ms: float) -> tuple[SamplePoint, ...]:
    """Per-interval rates from consecutive --status-interval documents, whose figures are cumulative."""
    points = []
    if not documents:
        return ()

    def summed(document: dict[str, Any], name: str, field: str) -> float | None:
        """A job total; None when a job does not carry the figure (fio 2.1 has no total_ios)."""
        figures = [getattr(read_direction(job.get(name)), field) for job in _jobs(document)]
        return None if any(f is None for f in figures) else float(sum(figures))

    # Directions the run never used would only add rows of zeros.
    used = [name for name in ("read", "write") if summed(documents[-1], name, "io_bytes")]
    for before, after in pairwise(documents):
        seconds = (_number(after.get("timestamp_ms")) - _number(before.get("timestamp_ms"))) / 1000
        if seconds <= 0:
            continue
        values = {}
        for name in used:
            for field, metric in (("io_bytes", f"{name}_bw_bytes_per_s"), ("total_ios", f"{name}_iops")):
                now, then = summed(after, name, field), summed(before, name, field)
                if now is not None and then is not None:
                    values[metric] = (now - then) / seconds
        points.append(SamplePoint((_number(after.get("timestamp_ms")) - started_ms) / 1000, values))
    return tuple(points)


def _setup(
    document: dict[str, Any], jobs: Sequence[dict[str, Any]], source: str, label: str, extra: dict[str, Any]
) -> RunSetup:
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
    params.update(extra.pop("params", {}))
    target = str(params.get("filename") or params.get("directory") or "")
    if not target and distinct:
        target = str(distinct[0].get("filename") or distinct[0].get("directory") or "")
    context: dict[str, Any] = {}
    if document.get("fio version"):
        context["fio_version"] = str(document["fio version"])
    context.update(extra)
    if source:
        context["source_file"] = source
    return RunSetup(preset=IMPORTED_PRESET, params=params, target=target, context=context, label=label)


def _ended_ms(document: dict[str, Any]) -> float | None:
    ended_ms = _number(document.get("timestamp_ms")) or _number(document.get("timestamp")) * 1000
    return ended_ms if 0 < ended_ms < _LATEST_MS else None


def _elapsed_s(jobs: Sequence[dict[str, Any]]) -> float | None:
    """How long before its end a group started: fio's ``elapsed`` (setup included, the best start time fio gives),
    else the jobs' runtime (``fio --client`` entries carry no elapsed); None when fio said neither, never 0."""
    return elapsed_seconds(list(jobs)) or io_seconds(list(jobs))


_PERCENTILES_OF = {
    "clat": "clat (completion latency; the lat mean is total latency)",
    "lat": "lat (total latency, lat_percentiles=1)",
    "clat and lat": "clat for some jobs, lat for others",
}


def read_fio_runs(text: str, *, source: str = "", label: str = "") -> list[FioRun]:
    """The runs fio output describes: one per stonewall group (``groupid``) and, for ``fio --client``
    output, per host; FioImportError naming the fio version and what is missing when it cannot be read.
    """
    # Strings from outside (job names, options, hosts, errors) are cleaned here, where they enter.
    raw_documents = parse_fio_output(text)
    documents = [clean_strings(document) for document in raw_documents]
    where = source or "the input"
    if not documents:
        raise FioImportError(
            f"{where} holds no fio JSON output (no document with a 'jobs' or 'client_stats' list); produce it "
            "with fio --output-format=json"
        )
    final = documents[-1]
    version = _fio_version(final)
    client = "client_stats" in final and not _jobs(final)
    entries = _client_entries(final) if client else _jobs(final)
    if not entries:
        raise FioImportError(f"{where}: the {version} JSON lists no jobs, so there is nothing to store")
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for entry in entries:
        host = str(entry.get("hostname") or "?") if client else ""
        groupid = int(number(entry.get("groupid")) or 0)
        groups.setdefault((host, groupid), []).append(entry)
    if len(groups) > MAX_IMPORT_RUNS:
        raise FioImportError(
            f"{where}: the {version} JSON holds {len(groups)} runs (stonewall groups × hosts); mdtui imports at "
            f"most {MAX_IMPORT_RUNS} from one file"
        )
    options_size = len(json.dumps(final.get("global options"), default=str))
    if options_size > MAX_GLOBAL_OPTIONS_BYTES:
        raise FioImportError(
            f"{where}: fio's global options take {options_size >> 10} KiB; fio writes a few hundred bytes there"
        )
    stored = _stored_documents(text, raw_documents, documents, groups, client)
    ended_ms = _ended_ms(final)
    if ended_ms is None and any(k in final for k in ("timestamp", "timestamp_ms")):
        raise FioImportError(f"{where}: the {version} JSON has a timestamp that is no date")
    ended_at = None if ended_ms is None else datetime.fromtimestamp(ended_ms / 1000, UTC)
    group_ids = sorted({groupid for _, groupid in groups})
    # Groups apart from the first start with stonewall (one after another: each ends where the next one
    # starts, the last at fio's end) or, rarely, new_group, which fio's JSON does not tell apart; their
    # figures are right either way, only such a group's times would be too early.
    ends: dict[int, datetime | None] = {}
    moment = ended_at
    for groupid in reversed(group_ids):
        ends[groupid] = moment
        lengths = [_elapsed_s(jobs) for (_, g), jobs in groups.items() if g == groupid]
        longest = max((length for length in lengths if length is not None), default=None)
        if moment is not None and longest is not None:
            if not 0 <= longest < moment.timestamp():
                raise FioImportError(f"{where}: a job's elapsed time ({longest:g} s) is negative or impossible")
            moment = moment - timedelta(seconds=longest)
        elif longest is None:
            moment = None  # an earlier group ended when this one started, which is not known
    runs = []
    for key, jobs in groups.items():
        host, groupid = key
        figures = group_figures(jobs)
        if figures.missing:
            raise FioImportError(
                f"{where}: {version} output has {'; '.join(figures.missing)}, so its figures cannot be read right"
            )
        bad = [name for name, value in figures.metrics.as_dict().items() if not (math.isfinite(value) and value >= 0)]
        if bad:
            raise FioImportError(
                f"{where}: {', '.join(bad)} would be negative or not finite; that is not what fio writes"
            )
        group_end = ends[groupid]
        seconds = _elapsed_s(jobs)
        extra: dict[str, Any] = {}
        group_start: datetime | None
        if group_end is not None and seconds is None:
            # The one time fio gave is kept as the start; the run has no end, so its length is "unknown", not 0.
            extra["time"] = (
                f"ended {group_end.isoformat(timespec='seconds')}; how long it ran is not measured "
                f"({version} gives its jobs no runtime or elapsed time)"
            )
            group_start, group_end = group_end, None
        else:
            group_start = None if group_end is None or seconds is None else group_end - timedelta(seconds=seconds)
        if figures.percentile_kind is not None:
            extra["latency_percentiles_of"] = _PERCENTILES_OF[figures.percentile_kind]
        if host:
            extra["fio_client_host"] = host
        if group_end is None and "time" not in extra:
            extra["time"] = f"unknown: {version} wrote no timestamp"
        if len(group_ids) > 1:
            extra["params"] = {"step": f"fio group {groupid} of {len(group_ids)}"}
        failures = [
            f"job {str(job.get('jobname', '?'))!r}: error {code} ({_strerror(code)})"
            for job in jobs
            if (code := _error_code(job.get("error")))
        ]
        # A time series is only the whole run's: status documents sum every group and host.
        alone = len(groups) == 1 and not client and group_start is not None
        runs.append(
            FioRun(
                setup=_setup(final, jobs, source, label, extra),
                status=RunStatus.FAILED if failures else RunStatus.COMPLETE,
                started_at=group_start,
                ended_at=group_end,
                metrics=figures.metrics,
                samples=samples_from_fio(documents, group_start.timestamp() * 1000) if alone and group_start else (),
                error="; ".join(failures),
                fio_json=stored[key],
            )
        )
    return runs


def _stored_documents(
    text: str,
    raw: Sequence[dict[str, Any]],
    documents: Sequence[dict[str, Any]],
    groups: dict[tuple[str, int], list[dict[str, Any]]],
    client: bool,
) -> dict[tuple[str, int], str]:
    """What each run keeps of fio's output, so that every part of it is stored once, not once per run.

    One run: every document as read (the text itself when cleaning changed nothing). Several: fio's final
    document cut down to the run's own job entries and its header (version, times, global options); what
    else the document holds goes with the first run only, and the interim --status-interval documents,
    which sum every group and host, are not kept.
    """
    if len(groups) == 1:
        (key,) = groups
        same = all(a == b for a, b in zip(raw, documents, strict=True))
        return {key: text if same else "\n".join(json.dumps(d) for d in documents)}
    final = documents[-1]
    listed = "client_stats" if client else "jobs"
    stored = {}
    for index, (key, entries) in enumerate(groups.items()):
        kept = {k: v for k, v in final.items() if k in _HEADER_KEYS or (index == 0 and k not in _JOB_LISTS)}
        kept[listed] = entries
        stored[key] = json.dumps(kept)
    return stored


def read_fio_output(text: str, *, source: str = "", label: str = "") -> FioRun:
    """The run fio output describes; FioImportError when it holds none, or several (see read_fio_runs)."""
    runs = read_fio_runs(text, source=source, label=label)
    if len(runs) > 1:
        where = source or "the input"
        raise FioImportError(f"{where} holds {len(runs)} runs (stonewall groups or --client hosts); read them all")
    return runs[0]


def _error_code(value: Any) -> int:
    number = _number(value)
    return int(number) if math.isfinite(number) and 0 < abs(number) < 1 << 31 else 0


def _strerror(code: int) -> str:
    try:
        return os.strerror(code)
    except ValueError:
        return "unknown error"


def read_fio_file_runs(path: str | os.PathLike[str], *, label: str = "") -> list[FioRun]:
    """Every run (stonewall group, --client host) the fio JSON output in ``path`` describes, checked."""
    text = read_bounded_text(path, limit=MAX_IMPORT_BYTES, what="fio JSON output")
    return read_fio_runs(text, source=str(Path(path).resolve()), label=label)


def read_import(path: str | os.PathLike[str], *, label: str = "") -> SpooledRun | list[FioRun]:
    """What `mdtui results import FILE` stores: a spooled run of mdtui's, or the runs of fio's JSON output.

    The file is read once, bounded, and only when it is a regular file (a FIFO or device is refused before
    anything is read from it); it is then told apart by its text.
    """
    text = read_bounded_text(path, limit=MAX_IMPORT_BYTES, what="fio JSON output or a spooled run")
    if is_spooled(text):
        if len(text.encode()) > MAX_SPOOL_BYTES:
            raise FioImportError(f"{path} is larger than {MAX_SPOOL_BYTES >> 20} MiB; not a spooled run")
        run = parse_spooled(text, source=str(Path(path)))
        return replace(run, setup=replace(run.setup, label=clean_text(label))) if label else run
    return read_fio_runs(text, source=str(Path(path).resolve()), label=label)


def store_fio_run(store: ResultsStore, run: FioRun) -> int:
    """Store a run read by :func:`read_fio_runs`; returns its ID.

    A run fio gave no time for is stored at the moment of import with no end, and says so in its context.
    """
    return store.add_run(
        run.setup,
        status=run.status,
        started_at=run.started_at or datetime.now(UTC),
        ended_at=run.ended_at,
        metrics=run.metrics,
        samples=run.samples,
        fio_json=run.fio_json,
        error=run.error,
    )
