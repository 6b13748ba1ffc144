"""Store-side records of benchmark runs: plain data, independent of the benchmark engine's classes."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from functools import cached_property
from typing import Any, TypedDict

from mdtui.model.job import SteadyOutcome
from mdtui.store.fio_read import text_steady


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    CANCELLED = "cancelled"
    FAILED = "failed"
    # Never written by a live run: a run still "running" whose process is gone is reported (and, when
    # the database can be written, stored) as interrupted.
    INTERRUPTED = "interrupted"

    @property
    def sign(self) -> str:
        """The status as one sign for a narrow table, told apart without colour (the app's and the CLI's)."""
        return _STATUS_SIGNS[self]


_STATUS_SIGNS = {
    RunStatus.COMPLETE: "✓",
    RunStatus.FAILED: "✗",
    RunStatus.INTERRUPTED: "!",
    RunStatus.RUNNING: "▶",
    RunStatus.CANCELLED: "–",
}


FINAL_STATUSES = frozenset({RunStatus.COMPLETE, RunStatus.CANCELLED, RunStatus.FAILED})


class Steadiness(StrEnum):
    """Whether a step's figure is the sustained one, as every listing, compare and export says it."""

    REACHED = "reached"  # fio judged it steady by the step's criterion
    NOT_REACHED = "not reached"  # still moving when the step hit its ceiling
    NOT_JUDGED = "not judged"  # a fixed-time step (no criterion): neither steady nor unsteady

    @property
    def mark(self) -> str:
        """The column cell of tables: "yes", "NO", "fixed"."""
        return {"reached": "yes", "not reached": "NO", "not judged": "fixed"}[self.value]


STEADINESS_LEGEND = (
    "steady: yes = fio judged the figure steady; NO = still moving at the step's time ceiling, not the "
    "sustained figure; fixed = a fixed-time step, not judged"
)


@dataclass(frozen=True)
class MetricInfo:
    name: str  # attribute of Metrics and key in the database
    label: str  # short column title, with the unit the UI shows
    unit: str  # unit of the stored value: "bytes/s", "IOPS", "ns", "%"
    higher_is_better: bool


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("read_bw_bytes_per_s", "Read MB/s", "bytes/s", True),
    MetricInfo("write_bw_bytes_per_s", "Write MB/s", "bytes/s", True),
    MetricInfo("read_iops", "Read IOPS", "IOPS", True),
    MetricInfo("write_iops", "Write IOPS", "IOPS", True),
    MetricInfo("read_lat_mean_ns", "Read lat mean µs", "ns", False),
    MetricInfo("read_lat_p50_ns", "Read lat p50 µs", "ns", False),
    MetricInfo("read_lat_p99_ns", "Read lat p99 µs", "ns", False),
    MetricInfo("read_lat_p99_9_ns", "Read lat p99.9 µs", "ns", False),
    MetricInfo("write_lat_mean_ns", "Write lat mean µs", "ns", False),
    MetricInfo("write_lat_p50_ns", "Write lat p50 µs", "ns", False),
    MetricInfo("write_lat_p99_ns", "Write lat p99 µs", "ns", False),
    MetricInfo("write_lat_p99_9_ns", "Write lat p99.9 µs", "ns", False),
    # CPU figures are percent of one core, summed over fio jobs (fio's usr_cpu/sys_cpu per job).
    MetricInfo("cpu_usr_pct", "CPU usr %", "%", False),
    MetricInfo("cpu_sys_pct", "CPU sys %", "%", False),
    # utime+stime of the md kernel thread over the run (finding 3, docs/findings.md), percent of one core.
    MetricInfo("md_thread_cpu_pct", "md thread CPU %", "%", False),
)
METRICS_BY_NAME: dict[str, MetricInfo] = {m.name: m for m in METRICS}


def metric_info(name: str) -> MetricInfo:
    """The metric called ``name``; ValueError listing the known names otherwise."""
    try:
        return METRICS_BY_NAME[name]
    except KeyError:
        known = ", ".join(METRICS_BY_NAME)
        raise ValueError(f"unknown metric {name!r}; known metrics: {known}") from None


@dataclass(frozen=True)
class Metrics:
    """Summary figures of one run; None where the run did not measure it."""

    read_bw_bytes_per_s: float | None = None
    write_bw_bytes_per_s: float | None = None
    read_iops: float | None = None
    write_iops: float | None = None
    read_lat_mean_ns: float | None = None
    read_lat_p50_ns: float | None = None
    read_lat_p99_ns: float | None = None
    read_lat_p99_9_ns: float | None = None
    write_lat_mean_ns: float | None = None
    write_lat_p50_ns: float | None = None
    write_lat_p99_ns: float | None = None
    write_lat_p99_9_ns: float | None = None
    cpu_usr_pct: float | None = None
    cpu_sys_pct: float | None = None
    md_thread_cpu_pct: float | None = None

    def get(self, name: str) -> float | None:
        metric_info(name)
        value: float | None = getattr(self, name)
        return value

    def as_dict(self) -> dict[str, float]:
        """Measured figures only, in METRICS order."""
        return {m.name: float(v) for m in METRICS if (v := getattr(self, m.name)) is not None}

    @classmethod
    def from_dict(cls, values: dict[str, float]) -> Metrics:
        # Names a newer mdtui stored are skipped rather than refused, so old versions can still read.
        known = {f.name for f in fields(cls)}
        return cls(**{k: float(v) for k, v in values.items() if k in known and v is not None})


@dataclass(frozen=True)
class SamplePoint:
    """One point of a run's time series: seconds since the run started and the values sampled then."""

    t_s: float
    values: dict[str, float]


class MemberInfo(TypedDict, total=False):
    name: str  # kernel name, "sdb" or "nvme0n1"
    model: str
    serial: str
    link: str  # as the UI shows it, e.g. "PCIe 3.0 x4 (8.0 GT/s)"; compared as text
    spare: bool


class ArrayConfig(TypedDict, total=False):
    level: str  # "raid5", as /proc/mdstat names it
    raid_disks: int  # active members (spares excluded)
    chunk_bytes: int
    layout: str
    bitmap: str  # "none", "internal", a file
    metadata: str
    members: list[MemberInfo]


class SystemContext(TypedDict, total=False):
    hostname: str
    kernel: str
    cpu_model: str
    governor: str
    fio_version: str
    mdadm_version: str
    source_file: str  # where an imported run's fio JSON came from


@dataclass(frozen=True)
class RunSetup:
    """What is known when a run starts. An engine adapter builds one of these from its own job spec."""

    preset: str  # preset name, "custom" for hand-set params, "imported" for fio JSON from elsewhere
    params: dict[str, Any] = field(default_factory=dict)  # fio options as given (bs, rw, iodepth, numjobs, ...)
    target: str = ""  # device or file measured, "/dev/md0"
    array: ArrayConfig | dict[str, Any] = field(default_factory=dict)  # empty for a raw device or a file
    context: SystemContext | dict[str, Any] = field(default_factory=dict)
    label: str = ""
    note: str = ""


@dataclass(frozen=True)
class RunRecord:
    """One stored run. ``samples`` and ``fio_json`` are empty when loaded by a listing."""

    id: int
    status: RunStatus
    started_at: datetime  # timezone-aware, UTC
    ended_at: datetime | None
    preset: str
    params: dict[str, Any]
    target: str
    array: dict[str, Any]
    context: dict[str, Any]
    metrics: Metrics
    label: str = ""
    note: str = ""
    error: str = ""  # why a run failed or was cancelled, when known
    samples: tuple[SamplePoint, ...] = ()
    fio_json: str | None = None
    listed_steady: SteadyOutcome | None = None  # fio's verdict, read by a listing that leaves fio_json out

    @property
    def title(self) -> str:
        """How tables name the run: "#12", or "#12 raid5 512k" when it has a label."""
        return f"#{self.id} {self.label}" if self.label else f"#{self.id}"

    @property
    def duration_s(self) -> float | None:
        if self.ended_at is None:
            return None
        return (self.ended_at - self.started_at).total_seconds()

    @cached_property
    def steady(self) -> SteadyOutcome | None:
        """fio's verdict on the step's steady state: from its stored JSON when loaded, else what the listing read;
        None for a step without a criterion."""
        return text_steady(self.fio_json) if self.fio_json else self.listed_steady

    @property
    def steadiness(self) -> Steadiness:
        outcome = self.steady
        if outcome is None:
            return Steadiness.NOT_JUDGED
        return Steadiness.REACHED if outcome.attained else Steadiness.NOT_REACHED
