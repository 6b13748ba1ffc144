"""One reading of fio's per-direction figures for every fio version, shared by the live parser and the import.

What a direction section ("read", "write", "trim") holds changed over fio's history; the units are chosen by
what the section itself carries, never by a version number alone:

- bandwidth: ``bw_bytes`` (bytes/s, fio 3.2 on) or only ``bw`` (KiB/s, fio 2.x to 3.1);
- I/O volume: ``io_bytes`` is bytes when ``io_kbytes`` sits beside it (fio 3.0 on) and KiB in fio 2.x,
  which has no ``io_kbytes``;
- latency: ``clat_ns``/``lat_ns`` in nanoseconds (fio 3.0 on) or ``clat``/``lat`` in microseconds (fio 2.x);
  percentiles in ``<kind>.percentile``, or only as ``bins`` (value: count) in ``--output-format=json+``;
- I/O count: ``total_ios`` (fio 2.2 on); fio 2.1 has none.

"Not measured" stays None: a latency block with ``N`` 0, or all zeros (``gtod_reduce=1`` turns latency
accounting off), is no latency, and a figure the section does not carry is unknown, never 0.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mdtui.ascii_numbers import FLOAT_MAX
from mdtui.model.job import CONFIRM_FALL_PERCENT, CONFIRM_SUFFIX, SteadyOutcome

# Each document fio prints starts with "{" in column 0; nested objects are indented.
_DOCUMENT_START = re.compile(r"^\{", re.MULTILINE)
# The percentiles mdtui keeps, as fio names them in its percentile tables.
PERCENTILES = {"p50": 50.0, "p99": 99.0, "p99_9": 99.9}
# Which latency the percentiles are of: completion latency unless the job set lat_percentiles=1.
COMPLETION = "clat"
TOTAL = "lat"


def number(value: Any) -> float | None:
    """A JSON number as a float; None for anything else and for what no fio figure can be (inf, 1e400)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        result = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return result if math.isfinite(result) and abs(result) <= FLOAT_MAX else None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class LatencyBlock:
    """One of fio's latency blocks (lat or clat), in nanoseconds; None where it was not measured."""

    mean_ns: float | None = None
    max_ns: float | None = None
    percentiles_ns: Mapping[str, float] | None = None  # "p50" -> ns, when fio gave a table or bins
    samples: float | None = None


@dataclass(frozen=True)
class DirectionFigures:
    """A direction section read in fio's units of its version; None where the section does not say."""

    io_bytes: int | None = None
    runtime_s: float | None = None
    bytes_per_s: float | None = None
    iops: float | None = None
    total_ios: int | None = None
    lat: LatencyBlock = LatencyBlock()  # total latency (submission + completion)
    clat: LatencyBlock = LatencyBlock()  # completion latency
    missing: tuple[str, ...] = ()  # why a used direction cannot be read right, naming fio's keys

    @property
    def used(self) -> bool:
        """Whether the direction did any I/O (a job that only reads has an all-zero write section)."""
        return bool(self.total_ios or self.io_bytes or self.bytes_per_s or self.iops)

    @property
    def percentile_kind(self) -> str | None:
        """ "lat" when fio reported total-latency percentiles (lat_percentiles=1), "clat" for completion."""
        if self.lat.percentiles_ns:
            return TOTAL
        if self.clat.percentiles_ns:
            return COMPLETION
        return None

    @property
    def percentiles_ns(self) -> Mapping[str, float]:
        return self.lat.percentiles_ns or self.clat.percentiles_ns or {}

    @property
    def weight(self) -> float | None:
        """The I/O count to weight this section's mean latency by: total_ios, or iops x runtime (fio 2.1)."""
        if self.total_ios is not None:
            return float(self.total_ios)
        if self.iops is not None and self.runtime_s is not None:
            return self.iops * self.runtime_s
        return None


def _from_table(table: Mapping[str, Any], scale: float) -> dict[str, float]:
    found: dict[str, float] = {}
    for point, value in table.items():
        try:
            where = float(point)
        except (TypeError, ValueError):
            continue
        figure = number(value)
        if figure is None:
            continue
        for name, wanted in PERCENTILES.items():
            if abs(where - wanted) < 1e-6:
                found[name] = figure * scale
    return found


def _from_bins(bins: Mapping[str, Any], scale: float) -> dict[str, float]:
    """Percentiles from json+ bins ({"<value>": count}): the smallest value with the share at or below it."""
    counted: list[tuple[float, float]] = []
    for key, count in bins.items():
        try:
            value = float(key)
        except (TypeError, ValueError):
            continue
        weight = number(count)
        if weight is not None and weight > 0 and math.isfinite(value):
            counted.append((value, weight))
    total = sum(weight for _, weight in counted)
    if total <= 0:
        return {}
    counted.sort()
    found: dict[str, float] = {}
    for name, wanted in PERCENTILES.items():
        running = 0.0
        for value, weight in counted:
            running += weight
            if running >= total * wanted / 100 - 1e-9:
                found[name] = value * scale
                break
    return found


def _latency(section: Mapping[str, Any], kind: str) -> LatencyBlock:
    if f"{kind}_ns" in section:
        block, scale = _dict(section.get(f"{kind}_ns")), 1.0
    elif kind in section:
        block, scale = _dict(section.get(kind)), 1000.0  # fio 2.x: microseconds
    else:
        return LatencyBlock()
    samples = number(block.get("N"))
    mean, biggest, smallest = number(block.get("mean")), number(block.get("max")), number(block.get("min"))
    # Older fio writes no N: there an unmeasured block is all zeros.
    measured = samples > 0 if samples is not None else any(v for v in (mean, biggest, smallest))
    if not measured:
        return LatencyBlock(samples=samples)
    table = block.get("percentile")
    percentiles = _from_table(table, scale) if isinstance(table, dict) else {}
    if not percentiles and isinstance(block.get("bins"), dict):
        percentiles = _from_bins(block["bins"], scale)
    return LatencyBlock(
        mean_ns=None if mean is None else mean * scale,
        max_ns=None if biggest is None else biggest * scale,
        percentiles_ns=percentiles or None,
        samples=samples,
    )


def read_direction(section: Any) -> DirectionFigures:
    """One direction section of a job (or of a --client host's job) in bytes, seconds and nanoseconds."""
    section = _dict(section)
    if not section:
        return DirectionFigures()
    missing: list[str] = []
    io = number(section.get("io_bytes"))
    if io is not None and "io_kbytes" not in section and not any(k in section for k in ("clat_ns", "lat_ns")):
        io *= 1024  # fio 2.x writes io_bytes in KiB
    bandwidth = number(section.get("bw_bytes"))
    if bandwidth is None:
        kib = number(section.get("bw"))
        bandwidth = None if kib is None else kib * 1024
    runtime_ms = number(section.get("runtime"))
    total = number(section.get("total_ios"))
    figures = DirectionFigures(
        io_bytes=None if io is None or io < 0 else int(io),
        runtime_s=None if runtime_ms is None else runtime_ms / 1000,
        bytes_per_s=bandwidth,
        iops=number(section.get("iops")),
        total_ios=None if total is None or total < 0 else int(total),
        lat=_latency(section, "lat"),
        clat=_latency(section, "clat"),
    )
    if figures.used:
        for key in ("bw_bytes", "bw", "iops", "io_bytes", "runtime", "total_ios"):
            if key in section and number(section[key]) is None:
                missing.append(f"{key} not finite")
        if figures.bytes_per_s is None and not any(k in section for k in ("bw_bytes", "bw")):
            missing.append("no bw_bytes or bw")
        if figures.iops is None and "iops" not in section:
            missing.append("no iops")
    return DirectionFigures(**{**figures.__dict__, "missing": tuple(missing)}) if missing else figures


def job_direction(job: Mapping[str, Any], name: str) -> DirectionFigures:
    """A job's ``read`` or ``write`` section; for a job that reached steady state moving one direction only,
    with that direction's rate and IOPS the steady window's means (fio's ``steadystate.data``).

    fio's own bw and iops cover the whole job, its ramp and anything before the window settled, such as a
    drive's write cache absorbing the first seconds; the figure that reached steady state is the window's.
    A job moving both ways keeps fio's figures: the window's means are of both directions together.
    """
    figures = read_direction(job.get(name))
    other = read_direction(job.get("write" if name == "read" else "read"))
    if not figures.used or other.used:
        return figures
    section = job.get("steadystate")
    if not isinstance(section, Mapping) or section.get("attained") not in (1, True):
        return figures
    data = _dict(section.get("data"))
    window_bw = number(data.get("bw_mean"))
    window_iops = number(data.get("iops_mean"))
    if window_bw is None or window_bw <= 0 or window_iops is None or window_iops <= 0:
        return figures
    return dataclasses.replace(figures, bytes_per_s=window_bw, iops=window_iops)


def fold_confirmations(jobs: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Job entries with each confirmed write step (a job followed by its ``<name>-confirm``, see
    mdtui.execute.argv) read as one entry, as every other reading of fio's jobs then takes it.

    The folded entry's figures are the confirmation's, never the first part's: the confirmation's steady
    window where it reached steady state, else its own mean. Volumes and runtimes are both parts' sums. Its
    ``steadystate`` is reached only when the confirmation reached it and, where fio had called the first part
    steady, the confirmation fell at most CONFIRM_FALL_PERCENT below that window; ``confirm`` says by how much.
    """
    folded: list[Mapping[str, Any]] = []
    for job in jobs:
        name = job.get("jobname")
        previous = folded[-1] if folded else None
        if (
            isinstance(name, str)
            and name.endswith(CONFIRM_SUFFIX)
            and previous is not None
            and previous.get("jobname") == name[: -len(CONFIRM_SUFFIX)]
            and "confirm" not in previous
        ):
            folded[-1] = _folded(previous, job)
        else:
            folded.append(job)
    return folded


def _window_means(section: Any) -> tuple[float, float] | None:
    """(bytes/s, IOPS) of a steadystate section's window, when fio reached steady state and gave both."""
    if not isinstance(section, Mapping) or section.get("attained") not in (1, True):
        return None
    data = _dict(section.get("data"))
    bw, iops = number(data.get("bw_mean")), number(data.get("iops_mean"))
    return (bw, iops) if bw is not None and bw > 0 and iops is not None and iops > 0 else None


def _folded(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    second_ss = _dict(second.get("steadystate"))
    started = any(read_direction(second.get(d)).used for d in ("read", "write"))
    if not started:  # a status report from before the confirmation began
        return {**first, "confirm": {"runtime_ms": 0}}
    first_ss = _dict(first.get("steadystate"))
    later = _window_means(second_ss)
    job: dict[str, Any] = {**second, "jobname": first.get("jobname")}
    for name in ("read", "write", "trim"):
        a, b = _dict(first.get(name)), _dict(second.get(name))
        if not b:
            continue
        section = dict(b)
        for key in ("io_bytes", "io_kbytes", "total_ios", "runtime"):
            if number(a.get(key)) is not None and number(b.get(key)) is not None:
                section[key] = a[key] + b[key]
        if later is not None and read_direction(b).used:
            section["bw_bytes"], section["iops"] = later
            section["bw"] = later[0] / 1024
        job[name] = section
    metric = 1 if str(first_ss.get("ss", "")).startswith("iops") else 0
    looked = _window_means(first_ss)
    confirmed = later if later is not None else _mean_rates(second)
    fell = None
    if looked is not None and confirmed is not None and looked[metric] > 0:
        fell = (1 - confirmed[metric] / looked[metric]) * 100
    attained = later is not None and not (fell is not None and fell > CONFIRM_FALL_PERCENT)
    job["steadystate"] = {
        "ss": first_ss.get("ss", second_ss.get("ss")),
        "attained": int(attained),
        "criterion": second_ss.get("criterion", ""),
    }
    runtime_ms = max(_runtime_ms(second.get(d)) for d in ("read", "write"))
    job["confirm"] = {"runtime_ms": runtime_ms, "fell_percent": fell}
    return job


def _mean_rates(job: Mapping[str, Any]) -> tuple[float, float] | None:
    """(bytes/s, IOPS) of a job's one used direction, by fio's own mean."""
    used = [f for d in ("read", "write") if (f := read_direction(job.get(d))).used]
    if len(used) != 1 or used[0].bytes_per_s is None or used[0].iops is None:
        return None
    return used[0].bytes_per_s, used[0].iops


def steady_outcome(job: Mapping[str, Any]) -> SteadyOutcome | None:
    """fio's ``steadystate`` section of a job: None when the job had no criterion (or the section is damaged)."""
    section = job.get("steadystate")
    if not isinstance(section, Mapping) or not isinstance(section.get("ss"), str):
        return None
    attained = section.get("attained")
    if attained not in (0, 1, True, False):
        return None
    runtimes = [_runtime_ms(job.get(d)) for d in ("read", "write")]
    runtime_ms = max(runtimes, default=0.0)
    return SteadyOutcome(
        attained=bool(attained),
        criterion=section["ss"],
        measured=str(section.get("criterion", "")),
        after_s=runtime_ms / 1000 if runtime_ms > 0 else None,
        fell_percent=number(_dict(job.get("confirm")).get("fell_percent")),
    )


def _runtime_ms(section: Any) -> float:
    value = section.get("runtime") if isinstance(section, Mapping) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0.0


def io_seconds(jobs: list[Mapping[str, Any]]) -> float | None:
    """Seconds of I/O of jobs that ran together: the longest direction's ``runtime`` (milliseconds in the JSON,
    carried by every job entry, ``fio --client``'s too); None when no job did any (not measured, never 0)."""
    runtime = max((_runtime_ms(job.get(d)) for job in jobs for d in ("read", "write", "trim")), default=0.0)
    return runtime / 1000 if runtime > 0 else None


def elapsed_seconds(jobs: list[Mapping[str, Any]]) -> float | None:
    """fio's own ``elapsed`` of jobs that ran together: whole seconds since they started, setup included (0 for
    jobs under a second); None when no job carries it (``fio --client`` entries do not)."""
    # As written, a negative one too: the importer refuses it as damage rather than reading past it.
    elapsed = [figure for job in jobs if (figure := number(job.get("elapsed"))) is not None]
    return max(elapsed) if elapsed else None


def document_steady(document: Mapping[str, Any]) -> SteadyOutcome | None:
    """A whole fio document's steady state: reached only when every job with a criterion reached it."""
    jobs = document.get("jobs")
    entries = fold_confirmations([job for job in jobs if isinstance(job, Mapping)]) if isinstance(jobs, list) else []
    return _combined([o for job in entries if (o := steady_outcome(job))])


def text_steady(text: str | None) -> SteadyOutcome | None:
    """A stored step's steady state from its fio output: one document, or one per fio process of the step.

    A job named again in a later document (``--status-interval`` output) counts as it was last reported.
    """
    if not text or '"steadystate"' not in text:
        return None
    latest: dict[tuple[object, int], SteadyOutcome] = {}
    for document in fio_documents(text):
        jobs = document.get("jobs")
        entries = (
            fold_confirmations([job for job in jobs if isinstance(job, Mapping)]) if isinstance(jobs, list) else []
        )
        for position, job in enumerate(entries):
            if (outcome := steady_outcome(job)) is not None:
                latest[(job.get("jobname"), position)] = outcome
    return _combined(list(latest.values()))


def _combined(outcomes: list[SteadyOutcome]) -> SteadyOutcome | None:
    if not outcomes:
        return None
    return SteadyOutcome(
        attained=all(o.attained for o in outcomes),
        criterion=outcomes[0].criterion,
        measured="; ".join(o.measured for o in outcomes),
        after_s=max((o.after_s for o in outcomes if o.after_s is not None), default=None),
        fell_percent=max((o.fell_percent for o in outcomes if o.fell_percent is not None), default=None),
    )


def fio_documents(text: str) -> list[dict[str, Any]]:
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
        if isinstance(document, dict) and (
            isinstance(document.get("jobs"), list) or isinstance(document.get("client_stats"), list)
        ):
            documents.append(document)
        position = end
    return documents
