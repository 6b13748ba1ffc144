"""Benchmark jobs: what to run (JobSpec), how far it got (Progress) and what it measured (JobResult)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mdtui.errors import PlanError
from mdtui.text import clean_text

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


class Tool(StrEnum):
    FIO = "fio"
    DD = "dd"


class IoEngine(StrEnum):
    LIBAIO = "libaio"
    IO_URING = "io_uring"
    SYNC = "sync"


class RwMode(StrEnum):
    """fio's --rw values mdtui offers; dd jobs are always READ."""

    READ = "read"
    WRITE = "write"
    RANDREAD = "randread"
    RANDWRITE = "randwrite"
    READWRITE = "readwrite"
    RANDRW = "randrw"

    @property
    def writes(self) -> bool:
        return self not in (RwMode.READ, RwMode.RANDREAD)


# A write step's confirmation: the fio job that runs on after fio first called the step steady is named like it
# with this suffix. The step is steady only when the confirmation is steady too and its mean is at most this many
# percent below the window fio first called steady: repeated runs of one step differ by a percent or two, and a
# write cache running out takes a drive's figure down by tens of percent.
CONFIRM_SUFFIX = "-confirm"
CONFIRM_FALL_PERCENT = 5.0


@dataclass(frozen=True)
class SteadyState:
    """When a time-based fio job may end early: its figure is steady by fio's own criterion (--steadystate).

    fio watches ``metric`` ("bw" or "iops") once a second, after ``ramp_s`` of warm-up, over a sliding window
    of ``window_s`` seconds: with ``kind`` "slope" the least-squares slope of the window, with "deviation" the
    largest deviation from its mean, must stay within ``limit_percent`` of the window's mean. The job's
    runtime is then the ceiling: a job that never settles runs to it and says so.
    """

    metric: str = "bw"
    kind: str = "slope"
    limit_percent: float = 2.0
    window_s: int = 5
    ramp_s: int = 2
    # Once fio calls the job steady, the same job runs on as a second fio job (CONFIRM_SUFFIX) judged by the same
    # criterion without a ramp; see CONFIRM_FALL_PERCENT.
    confirm: bool = False

    def __post_init__(self) -> None:
        if self.metric not in ("bw", "iops") or self.kind not in ("slope", "deviation"):
            raise PlanError(f"steady state: {self.metric}_{self.kind} is not one of fio's criteria")
        if not 0 < self.limit_percent <= 100 or self.window_s < 2 or self.ramp_s < 0:
            raise PlanError("steady state: a limit in (0, 100] %, a window of at least 2 s, a ramp of 0 s or more")

    @property
    def floor_s(self) -> int:
        """The shortest a step can be: the ramp, then one whole window (and one more to confirm it)."""
        return self.ramp_s + self.window_s + (self.window_s if self.confirm else 0)

    def confirm_s(self, runtime_s: int) -> int:
        """The confirmation's share of a step's ceiling ``runtime_s``: a quarter of it, one window at least.

        More than one window so that a figure that fell during it can settle again and be judged on what it
        fell to; the first part's ceiling is the rest, so the step never runs past ``runtime_s``.
        """
        return max(self.window_s, runtime_s // 4) if self.confirm else 0

    @property
    def fio_criterion(self) -> str:
        """fio's spelling: "bw_slope:2%" for a slope, "bw:2%" (the bare metric) for the largest deviation."""
        name = f"{self.metric}_slope" if self.kind == "slope" else self.metric
        return f"{name}:{self.limit_percent:g}%"

    def describe(self) -> str:
        what = "MB/s" if self.metric == "bw" else "IOPS"
        how = "slope" if self.kind == "slope" else "largest deviation"
        return f"{what} {how} within {self.limit_percent:g}% over {self.window_s} s, after {self.ramp_s} s"


@dataclass(frozen=True)
class SteadyOutcome:
    """What fio said of a job's steady state: reached or not, after how long, by which criterion."""

    attained: bool
    criterion: str  # fio's own spelling, "bw_slope:2.000000%"
    measured: str  # what the window showed at the end, "-0.698066%"
    after_s: float | None  # the job's runtime when it ended (the ceiling when not attained)
    # How far the confirmation's figure fell below the window fio had called steady, in percent (negative: it
    # rose); None without a confirmation or where fio never called the first part steady.
    fell_percent: float | None = None

    @property
    def fell(self) -> bool:
        """Looked steady, then fell by more than CONFIRM_FALL_PERCENT: a write cache running out, most likely."""
        return self.fell_percent is not None and self.fell_percent > CONFIRM_FALL_PERCENT


@dataclass(frozen=True)
class JobSpec:
    """One benchmark process against one target.

    A fio job runs for ``runtime_s`` (time based) or until it has moved ``size_bytes`` per job. A dd job
    reads ``size_bytes`` (a whole number of blocks) starting at ``offset_bytes`` (also whole blocks),
    because dd can only express both as block counts.
    """

    name: str
    target: str  # a device path such as /dev/md0, or a file
    block_size_bytes: int
    tool: Tool = Tool.FIO
    rw: RwMode = RwMode.READ
    iodepth: int = 1
    numjobs: int = 1
    ioengine: IoEngine = IoEngine.LIBAIO
    direct: bool = True
    runtime_s: int | None = None
    size_bytes: int | None = None
    offset_bytes: int = 0
    status_interval_s: int = 1
    steady: SteadyState | None = None  # end early once steady; runtime_s is then the ceiling

    def __post_init__(self) -> None:
        if not self.name or any(c.isspace() or c in "[]" for c in self.name):
            raise PlanError(f"job name {self.name!r} must be non-empty without spaces or brackets")
        if not self.target:
            raise PlanError(f"job {self.name}: no target device given")
        if self.block_size_bytes <= 0:
            raise PlanError(f"job {self.name}: block size must be positive")
        if self.iodepth < 1 or self.numjobs < 1:
            raise PlanError(f"job {self.name}: iodepth and numjobs must be at least 1")
        if self.offset_bytes < 0:
            raise PlanError(f"job {self.name}: offset must not be negative")
        if self.status_interval_s < 1:
            raise PlanError(f"job {self.name}: status interval must be at least 1 s")
        if (self.runtime_s is None) == (self.size_bytes is None):
            raise PlanError(f"job {self.name}: give exactly one of a runtime or a size")
        if self.runtime_s is not None and self.runtime_s < 1:
            raise PlanError(f"job {self.name}: runtime must be at least 1 s")
        if self.size_bytes is not None and self.size_bytes < self.block_size_bytes:
            raise PlanError(f"job {self.name}: size must be at least one block")
        if self.steady is not None:
            if self.tool is not Tool.FIO or self.runtime_s is None:
                raise PlanError(f"job {self.name}: only a time-based fio job can end on steady state")
            if self.runtime_s < self.steady.floor_s or (
                self.runtime_s - self.steady.confirm_s(self.runtime_s) < self.steady.ramp_s + self.steady.window_s
            ):
                raise PlanError(
                    f"job {self.name}: a runtime of {self.runtime_s} s is shorter than the steady-state ramp and "
                    f"window ({self.steady.floor_s} s)"
                )
        if self.tool is Tool.DD:
            if self.rw is not RwMode.READ:
                raise PlanError(f"job {self.name}: dd jobs only read (to /dev/null)")
            if self.size_bytes is None:
                raise PlanError(f"job {self.name}: a dd job needs a size (a block count), not a runtime")
            if self.size_bytes % self.block_size_bytes or self.offset_bytes % self.block_size_bytes:
                raise PlanError(f"job {self.name}: dd size and offset must be whole blocks")

    @property
    def writes(self) -> bool:
        """True when the job overwrites data on its target."""
        return self.rw.writes

    @property
    def time_based(self) -> bool:
        return self.runtime_s is not None


class SummedRates:
    """Totals of read and write rates, for any record that has the four (a job's progress, a step's update)."""

    read_bytes_per_s: float
    write_bytes_per_s: float
    read_iops: float
    write_iops: float

    @property
    def bytes_per_s(self) -> float:
        return self.read_bytes_per_s + self.write_bytes_per_s

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops


@dataclass(frozen=True)
class Progress(SummedRates):
    """One status update of a running job.

    Byte counts are cumulative since the start; the rates are over the interval since the previous
    update (differences between consecutive reports), so a stall shows at once.
    """

    elapsed_s: float
    read_bytes: int
    write_bytes: int
    read_bytes_per_s: float
    write_bytes_per_s: float
    read_iops: float
    write_iops: float
    confirming_s: float | None = None  # seconds into a write step's confirmation (SteadyState.confirm), once begun


@dataclass(frozen=True)
class Latency:
    """Completion latency (fio's clat) in nanoseconds; None where the tool does not report it."""

    mean_ns: float | None = None
    p50_ns: float | None = None
    p99_ns: float | None = None
    p99_9_ns: float | None = None
    max_ns: float | None = None


@dataclass(frozen=True)
class DirectionStats:
    """Figures for one direction (read or write) of a job."""

    io_bytes: int = 0
    runtime_s: float = 0.0
    bytes_per_s: float = 0.0
    iops: float = 0.0
    total_ios: int = 0
    latency: Latency = Latency()


@dataclass(frozen=True)
class JobStats:
    """One job's (or the total's) figures. CPU is fio's: percent of one CPU, averaged over its threads."""

    name: str
    read: DirectionStats
    write: DirectionStats
    usr_cpu_percent: float | None = None
    sys_cpu_percent: float | None = None
    error: int = 0  # fio's errno for the job; 0 when it ran cleanly
    steady: SteadyOutcome | None = None  # None when the job had no steady-state criterion

    @property
    def bytes_per_s(self) -> float:
        return self.read.bytes_per_s + self.write.bytes_per_s

    @property
    def iops(self) -> float:
        return self.read.iops + self.write.iops


class JobStatus(StrEnum):
    COMPLETE = "complete"
    CANCELLED = "cancelled"  # stopped on request; the figures cover the part that ran
    FAILED = "failed"
    TIMED_OUT = "timed-out"  # stopped by mdtui because it ran past its deadline


@dataclass(frozen=True)
class JobResult:
    """What one job measured and how it ended.

    ``partial`` is True when the figures come from the last complete status report rather than the
    tool's own final summary (the stream was cut, or the process had to be killed).
    """

    spec: JobSpec
    status: JobStatus
    argv: tuple[str, ...]
    returncode: int | None
    duration_s: float
    total: JobStats | None = None
    jobs: tuple[JobStats, ...] = ()
    partial: bool = False
    error: str | None = None  # a sentence for the user when status is FAILED (or a job reported an error)
    stderr: str = ""
    raw: str = ""  # the tool's own output the figures were taken from (fio's JSON document, dd's stderr)

    def __post_init__(self) -> None:
        # The error quotes fio's or dd's own messages (a remote server's too); stderr and raw are kept as
        # they came, for the record, and are never printed to a terminal as they are.
        if self.error is not None:
            object.__setattr__(self, "error", clean_text(self.error))

    @property
    def ok(self) -> bool:
        return self.status is JobStatus.COMPLETE

    @property
    def bytes_per_s(self) -> float | None:
        return None if self.total is None else self.total.bytes_per_s
