"""Progress of a running benchmark: step events, summed rates and remaining time."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mdtui.bench.check import CheckUpdate
from mdtui.bench.plan import step_bytes, step_runtime_s
from mdtui.execute.presets import (
    Step,
)
from mdtui.execute.record import step_title
from mdtui.model.job import JobResult, JobSpec, JobStatus, Progress, SteadyState, SummedRates
from mdtui.store.records import Metrics, RunStatus


@dataclass(frozen=True)
class StepStarted:
    index: int  # 0-based
    count: int
    label: str
    targets: tuple[str, ...]
    expected_s: float | None
    run_id: int | None


@dataclass(frozen=True)
class StepUpdate(SummedRates):
    """A step's jobs at their latest status report, rates summed over jobs that run at once."""

    index: int
    count: int
    label: str
    elapsed_s: float
    read_bytes_per_s: float
    write_bytes_per_s: float
    read_iops: float
    write_iops: float
    step_remaining_s: float | None  # to the step's ceiling when it ends on steady state
    remaining_s: float | None  # all remaining steps (the check pass not included); at most, with steady steps
    steady_note: str | None = None  # "steady in ~4 s ..." for a step that ends once steady (steady_note())


def window_movement(steady: SteadyState, values: Sequence[float]) -> float | None:
    """How far a window of once-a-second figures moved by fio's criterion, in percent of the window's mean:
    the least-squares slope per second for "slope", the largest deviation from the mean for "deviation".
    None without a whole window or with a mean of zero."""
    window = list(values[-steady.window_s :])
    if len(window) < steady.window_s or len(window) < 2:
        return None
    mean = statistics.fmean(window)
    if mean <= 0:
        return None
    if steady.kind == "deviation":
        return 100 * max(abs(value - mean) for value in window) / mean
    xs = range(len(window))
    x_mean = statistics.fmean(xs)
    slope = sum((x - x_mean) * (y - mean) for x, y in zip(xs, window, strict=True)) / sum((x - x_mean) ** 2 for x in xs)
    return 100 * slope / mean


def steady_note(
    steady: SteadyState, elapsed_s: float, ceiling_s: float, values: Sequence[float], confirming_s: float | None = None
) -> str:
    """What a step that ends once steady shows in place of a countdown to a fixed end.

    ``values`` are the step's figures (fio's metric: bytes/s or IOPS) once a second after its ramp. Before a
    whole window fio cannot judge: the earliest end is ramp + window. Then the same test fio applies says
    whether the last window would pass now (fio ends the step at its next check, about a second later) or by
    how much it still moves. A write step fio has called steady then runs on to confirm it
    (``confirming_s`` into that), judged again over a window of its own.
    """
    ceiling = f"ceiling {ceiling_s:.0f} s"
    if confirming_s is not None:
        if confirming_s < steady.window_s:
            return f"confirming steady: {confirming_s:.0f} s of {steady.window_s} s, {ceiling}"
        movement = window_movement(steady, values)
        how = "slope" if steady.kind == "slope" else "deviation"
        moved = "" if movement is None else f": last {steady.window_s} s {how} {movement:+.1f}%"
        return f"confirming steady{moved}, {ceiling}, {max(0.0, ceiling_s - elapsed_s):.0f} s left"
    if elapsed_s < steady.ramp_s + steady.window_s:
        return f"steady in ~{math.ceil(steady.floor_s - elapsed_s)} s if it holds, {ceiling}"
    movement = window_movement(steady, values)
    if movement is None:
        return f"judging steady state, {ceiling}"
    how = "slope" if steady.kind == "slope" else "deviation"
    if abs(movement) <= steady.limit_percent:
        return f"steady in ~1 s ({how} {movement:+.1f}% within {steady.limit_percent:g}%), {ceiling}"
    return (
        f"judging steady state: last {steady.window_s} s {how} {movement:+.1f}% (needs {steady.limit_percent:g}%), "
        f"{ceiling}, {max(0.0, ceiling_s - elapsed_s):.0f} s left"
    )


def step_steady(step: Step) -> SteadyState | None:
    """The step's criterion when every job of it ends on the same one, else None (a fixed-time step)."""
    criteria = {job.steady for job in step.jobs}
    return criteria.pop() if len(criteria) == 1 else None


@dataclass(frozen=True)
class StepOutcome:
    index: int
    step: Step
    results: tuple[JobResult, ...]
    status: JobStatus
    started_s: float  # since the bench started
    duration_s: float
    metrics: Metrics = field(default_factory=Metrics)
    md_thread_cpu_pct: float | None = None
    md_threads: tuple[str, ...] = ()
    run_id: int | None = None

    @property
    def label(self) -> str:
        return self.step.label

    @property
    def partial(self) -> bool:
        return self.status is not JobStatus.COMPLETE or any(r.partial for r in self.results)

    @property
    def error(self) -> str:
        return "; ".join(r.error for r in self.results if r.error)

    def _sum(self, pick: Callable[[JobResult], float]) -> float | None:
        values = [pick(r) for r in self.results if r.total is not None]
        return sum(values) if values else None

    @property
    def read_bytes_per_s(self) -> float | None:
        return self._sum(lambda r: r.total.read.bytes_per_s if r.total else 0.0)

    @property
    def write_bytes_per_s(self) -> float | None:
        return self._sum(lambda r: r.total.write.bytes_per_s if r.total else 0.0)

    @property
    def bytes_per_s(self) -> float | None:
        return self._sum(lambda r: r.total.bytes_per_s if r.total else 0.0)

    @property
    def iops(self) -> float | None:
        return self._sum(lambda r: r.total.iops if r.total else 0.0)

    @property
    def steady_words(self) -> str:
        """How the step ended: ", steady after 7 s", ", NOT steady at its 120 s ceiling", "" for a fixed time."""
        outcomes = [r.total.steady for r in self.results if r.total is not None and r.total.steady is not None]
        if not outcomes:
            return ""
        after = max((o.after_s for o in outcomes if o.after_s is not None), default=None)
        seconds = f" {after:.0f} s" if after is not None else ""
        if all(o.attained for o in outcomes):
            return f", steady after{seconds}"
        fell = max((o.fell_percent for o in outcomes if o.fell and o.fell_percent is not None), default=None)
        if fell is not None:
            return f", NOT steady: fell {fell:.0f}% after looking steady (a write cache running out?)"
        return f", NOT steady at its{seconds} ceiling (still moving: not the sustained figure)"

    def target_rates(self) -> dict[str, float]:
        """Bytes/s per job target (the members of an all-at-once step)."""
        rates: dict[str, float] = {}
        for result in self.results:
            if result.total is not None:
                rates[result.spec.target] = rates.get(result.spec.target, 0.0) + result.total.bytes_per_s
        return rates


@dataclass(frozen=True)
class StepFinished:
    outcome: StepOutcome
    count: int


BenchEvent = StepStarted | StepUpdate | StepFinished | CheckUpdate


EventCallback = Callable[[BenchEvent], None]


def step_status(results: Sequence[JobResult]) -> JobStatus:
    statuses = {result.status for result in results}
    if JobStatus.CANCELLED in statuses:
        return JobStatus.CANCELLED
    if statuses - {JobStatus.COMPLETE}:
        return JobStatus.FAILED
    return JobStatus.COMPLETE


def run_status(status: JobStatus) -> RunStatus:
    return {JobStatus.COMPLETE: RunStatus.COMPLETE, JobStatus.CANCELLED: RunStatus.CANCELLED}.get(
        status, RunStatus.FAILED
    )


class StepProgress:
    """Turns each job's Progress into one StepUpdate for the step, with remaining time estimated.

    Time-based steps end at their runtime. Size-based ones end when their bytes are moved at the
    current rate; later size-based steps are estimated at the last rate seen.
    """

    STALL_S = 1.5

    def __init__(self, steps: Sequence[Step], index: int, rate_hint: float | None = None) -> None:
        self.steps = steps
        self.index = index
        self.rate_hint = rate_hint
        self._latest: dict[str, Progress] = {}
        self._counts: dict[str, int] = {}
        self._emitted_at = 0.0
        self._figures: list[float] = []  # the criterion's figure once a round, after the ramp

    def update(self, spec: JobSpec, progress: Progress) -> StepUpdate | None:
        """The step's state after this report, once per round of reports from all of its jobs.

        Jobs that run at once report about together; one update per round keeps the summed rate
        from rising job by job within a second. A job that stops reporting (it finished) holds no
        one back for longer than STALL_S.
        """
        self._latest[spec.name] = progress
        self._counts[spec.name] = self._counts.get(spec.name, 0) + 1
        step = self.steps[self.index]
        round_done = len(self._counts) == len(step.jobs) and min(self._counts.values()) >= self._counts[spec.name]
        if not round_done and progress.elapsed_s < self._emitted_at + self.STALL_S:
            return None
        self._emitted_at = progress.elapsed_s
        latest = self._latest.values()
        elapsed = max(p.elapsed_s for p in latest)
        read_rate = sum(p.read_bytes_per_s for p in latest)
        write_rate = sum(p.write_bytes_per_s for p in latest)
        if read_rate + write_rate > 0:
            self.rate_hint = read_rate + write_rate
        step_remaining = self._step_remaining(step, elapsed, sum(p.read_bytes + p.write_bytes for p in latest))
        remaining = step_remaining
        for later in self.steps[self.index + 1 :]:
            seconds = self.expected_s(later)
            remaining = None if remaining is None or seconds is None else remaining + seconds
        steady = step_steady(step)
        note = None
        runtime = step_runtime_s(step)
        if steady is not None and runtime is not None:
            if elapsed > steady.ramp_s:
                rates = (read_rate + write_rate) if steady.metric == "bw" else sum(p.iops for p in latest)
                self._figures.append(rates)
            confirming = max((p.confirming_s for p in latest if p.confirming_s is not None), default=None)
            note = steady_note(steady, elapsed, runtime, self._figures, confirming)
        return StepUpdate(
            index=self.index,
            count=len(self.steps),
            label=step_title(step),
            elapsed_s=elapsed,
            read_bytes_per_s=read_rate,
            write_bytes_per_s=write_rate,
            read_iops=sum(p.read_iops for p in latest),
            write_iops=sum(p.write_iops for p in latest),
            step_remaining_s=step_remaining,
            remaining_s=remaining,
            steady_note=note,
        )

    def _step_remaining(self, step: Step, elapsed: float, done_bytes: int) -> float | None:
        runtime = step_runtime_s(step)
        if runtime is not None:
            return max(0.0, runtime - elapsed)
        total = step_bytes(step)
        if total is None or not self.rate_hint:
            return None
        return max(0.0, (total - done_bytes) / self.rate_hint)

    def expected_s(self, step: Step) -> float | None:
        runtime = step_runtime_s(step)
        if runtime is not None:
            return runtime
        total = step_bytes(step)
        return total / self.rate_hint if total is not None and self.rate_hint else None
