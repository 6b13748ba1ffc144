"""Running a plan: steps in order, the sampler and md-thread meter beside them, every step stored as a run."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mdtui.actionlog import ActionLog
from mdtui.bench.check import CheckOutcome, run_check_pass
from mdtui.bench.md_thread import MdThreadMeter
from mdtui.bench.plan import BenchPlan, recheck_plan
from mdtui.bench.progress import (
    BenchEvent,
    EventCallback,
    StepFinished,
    StepOutcome,
    StepProgress,
    StepStarted,
    run_status,
    step_status,
)
from mdtui.bench.report import weakest_link_report
from mdtui.bench.result import BenchResult
from mdtui.bench.run_setup import RunSetups
from mdtui.bench.samples import sample_values
from mdtui.command import CommandResult
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError
from mdtui.execute import record
from mdtui.execute.presets import Step
from mdtui.execute.record import step_title
from mdtui.execute.runners import run_step
from mdtui.model.inventory import Inventory
from mdtui.model.job import JobResult, JobSpec, JobStatus, Progress
from mdtui.model.snapshot import Snapshot
from mdtui.probe.root import SystemRoot
from mdtui.sample.sampler import Sampler
from mdtui.store.errors import StoreError
from mdtui.store.records import Metrics, RunSetup, RunStatus, SamplePoint
from mdtui.store.runs import ResultsStore
from mdtui.store.spool import SpooledRun, write_spooled

log = logging.getLogger(__name__)


class StopRequest(asyncio.Event):
    """A cancel that can say why ("SIGHUP"), so the stored runs tell a dropped session from a Ctrl-C."""

    reason: str = ""

    def request(self, reason: str = "") -> None:
        if not self.is_set():
            self.reason = reason
        self.set()


def _cancelled(cancel: asyncio.Event) -> str:
    """The word "cancelled", with the reason when the StopRequest gave one: "cancelled (SIGHUP)"."""
    reason = cancel.reason if isinstance(cancel, StopRequest) else ""
    return f"cancelled ({reason})" if reason else "cancelled"


@dataclass
class _Current:
    """The run being measured: the store run samples go to, and all of it, in case the store fails."""

    run_id: int | None
    started_at: datetime
    focus: tuple[str, ...]
    setup: RunSetup
    samples: list[SamplePoint] = field(default_factory=list)
    lost: str = ""  # the first store error that cost this run part of its record
    degraded: str = ""  # the target array lost a member while this run measured it: what was seen, when

    @property
    def started_wall(self) -> float:
        return self.started_at.timestamp()


@dataclass
class _Session:
    plan: BenchPlan
    inventory: Inventory
    root: SystemRoot
    store: ResultsStore | None
    context: dict[str, Any]
    on_event: EventCallback | None
    cancel: asyncio.Event
    sample_interval_s: float | None
    stall_timeout_s: float | None = None
    started_wall: float = field(default_factory=time.time)
    started_mono: float = field(default_factory=time.monotonic)
    samples: list[SamplePoint] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    spooled: list[Path] = field(default_factory=list)
    unsaved: list[dict[str, Any]] = field(default_factory=list)
    current: _Current | None = None
    sampler: Sampler | None = None  # set while the time series is being sampled
    setups: RunSetups = field(init=False)  # each step's RunSetup, as its stored run records it

    def __post_init__(self) -> None:
        self.setups = RunSetups(self.plan, self.inventory, self.root, self.store, self.context, self.notes)

    def emit(self, event: BenchEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _progress(self, tracker: StepProgress, spec: JobSpec, progress: Progress) -> None:
        update = tracker.update(spec, progress)
        if update is not None:
            self.emit(update)

    # -- store -------------------------------------------------------------------------------------

    def _record(
        self, action: str, call: Callable[..., Any], *args: Any, run: _Current | None = None, **kwargs: Any
    ) -> Any:
        """A store call; a store that fails loses the record, not the measurement.

        A failure is marked on ``run``, whose whole record is then spooled beside the database when it ends
        (see _keep). Beginning and finishing a run are called on the loop, not in a thread: an await there
        would be a point where a cancel could leave a run begun but never finished.
        """
        if self.store is None:
            return None
        try:
            return call(*args, **kwargs)
        except StoreError as exc:
            if run is not None and not run.lost:
                # The note names the database once: "cannot store samples: database or disk is full".
                run.lost = str(exc).replace(f" in {self.store.path}", "")
            note = f"could not {action} in the results store: {exc}"
            if note not in self.notes:
                self.notes.append(note)
            log.warning(note)
            return None

    def _keep(self, run: _Current, status: RunStatus, **kwargs: Any) -> None:
        """The store lost part of ``run``: write all of it beside the database, or keep it for stdout."""
        assert self.store is not None
        metrics = kwargs.get("metrics") or Metrics()
        spooled = SpooledRun(
            setup=run.setup,
            status=status,
            started_at=run.started_at,
            ended_at=datetime.now(UTC),
            metrics=metrics,
            samples=tuple(run.samples),
            error=str(kwargs.get("error") or ""),
            fio_json=kwargs.get("fio_json"),
            run_id=run.run_id,
            database=str(self.store.path),
            reason=run.lost,
        )
        where = f"run{f' #{run.run_id}' if run.run_id is not None else ''} could not be stored in {self.store.path}"
        try:
            path = write_spooled(self.store.path, spooled)
        except OSError as exc:
            self.unsaved.append(spooled.document())
            self.notes.append(
                f"{where} ({run.lost}) nor kept beside it ({exc.strerror or exc}): its figures follow on stdout "
                "as JSON, for `mdtui results import`"
            )
            return
        self.spooled.append(path)
        self.notes.append(
            f"{where} ({run.lost}); its figures are kept in {path}: `mdtui results import {path}` stores them "
            "once the database can be written"
        )

    # -- sampling ----------------------------------------------------------------------------------

    async def _on_snapshot(self, snapshot: Snapshot) -> None:
        current = self.current
        array = self.plan.target.array.name if self.plan.target.array is not None else None
        focus = current.focus if current is not None else ()
        values = sample_values(snapshot, self.plan.sampled_devices(), focus, array)
        self.samples.append(SamplePoint(snapshot.timestamp - self.started_wall, values))
        if current is not None:
            point = SamplePoint(snapshot.timestamp - current.started_wall, values)
            current.samples.append(point)
            if array is not None and not current.degraded:
                current.degraded = self._lost_member(snapshot, array, point.t_s)
            if current.run_id is not None and self.store is not None:
                await asyncio.to_thread(
                    self._record, "store samples", self.store.append_samples, current.run_id, [point], run=current
                )

    def _lost_member(self, snapshot: Snapshot, name: str, t_s: float) -> str:
        """Why this run's figures are not the healthy array's, if the array lost a member since the plan saw it."""
        seen, planned = snapshot.array(name), self.plan.target.array
        if seen is None or planned is None or seen.degraded <= planned.degraded:
            return ""
        failed = [m.name for m in seen.members if m.faulty]
        which = f" ({', '.join(failed)} failed)" if failed else ""
        return (
            f"{name} lost a member during this run{which}: degraded ({seen.degraded} missing) from {t_s:.1f} s, so "
            "these figures are partly the degraded array's"
        )

    async def _closing_sample(self) -> None:
        """One more sample as a step ends, so a step shorter than the interval still has its rates."""
        sampler = self.sampler
        if sampler is None:
            return
        try:
            snapshot = await asyncio.to_thread(sampler.sample)
            await self._on_snapshot(snapshot)
        except Exception as exc:  # the step's figures come from fio; the time series is a bonus
            log.warning("closing sample failed: %s", exc)

    async def _sample(self) -> None:
        try:
            with Sampler(self.root, devices=self.plan.sampled_devices()) as sampler:
                self.sampler = sampler
                await sampler.run(self.sample_interval_s or 1.0, self._on_snapshot)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the benchmark goes on without a time series
            log.exception("sampling failed")
            self.notes.append(f"sampling stopped: {exc}")

    # -- steps -------------------------------------------------------------------------------------

    def _begin(self, setup: RunSetup, focus: tuple[str, ...]) -> int | None:
        current = _Current(None, datetime.now(UTC), focus, setup)
        if self.store is not None:
            current.run_id = self._record(
                "record the run", self.store.begin_run, setup, started_at=current.started_at, run=current
            )
        self.current = current
        return current.run_id

    def _abandon(self, run_id: int | None, exc: BaseException) -> None:
        """End a run whose step did not return: stopped by a cancel, or broken by an error."""
        if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
            self._finish(run_id, RunStatus.CANCELLED, error=f"{_cancelled(self.cancel)}: the benchmark was stopped")
        else:
            self._finish(run_id, RunStatus.FAILED, error=str(exc) or type(exc).__name__)

    def _finish(self, run_id: int | None, status: RunStatus, **kwargs: Any) -> None:
        current, self.current = self.current, None
        if self.store is None:
            return
        if run_id is not None:
            self._record("finish the run", self.store.finish_run, run_id, status, run=current, **kwargs)
        if current is not None and current.lost:
            self._keep(current, status, **kwargs)

    async def run_step(self, index: int, rate_hint: float | None) -> StepOutcome:
        plan = self.plan
        step = plan.steps[index]
        names = plan.device_names()
        focus = tuple(names[spec.target] for spec in step.jobs if spec.target in names)
        run_id = self._begin(self.setups.setup(step, index), focus)
        try:
            targets = tuple(dict.fromkeys(spec.target for spec in step.jobs))
            progress = StepProgress(plan.steps, index, rate_hint)
            expected = progress.expected_s(step)
            self.emit(StepStarted(index, len(plan.steps), step_title(step), targets, expected, run_id))
            meter = None
            if step.measure_md_cpu and plan.target.array is not None:
                meter = MdThreadMeter(self.root, plan.target.array.name)
                meter.start()
            started = time.monotonic()
            results = await run_step(
                step,
                lambda spec, p: self._progress(progress, spec, p),
                cancel=self.cancel,
                stall_timeout_s=self.stall_timeout_s,
            )
            duration = time.monotonic() - started
            await self._closing_sample()
            cpu = meter.stop() if meter is not None else None
            status = step_status(results)
            self._record_writes(step, results)
            metrics = record.metrics_from_results(results, md_thread_cpu_pct=cpu)
            outcome = StepOutcome(
                index=index,
                step=step,
                results=results,
                status=status,
                started_s=started - self.started_mono,
                duration_s=duration,
                metrics=metrics,
                md_thread_cpu_pct=cpu,
                md_threads=meter.threads if meter is not None else (),
                run_id=run_id,
            )
        except BaseException as exc:
            self._abandon(run_id, exc)
            raise
        error = outcome.error
        degraded = self.current.degraded if self.current is not None else ""
        if degraded:
            error = degraded + (f"; {error}" if error else "")
            if degraded not in self.notes:
                self.notes.append(degraded)
        if status is JobStatus.CANCELLED:
            error = f"{_cancelled(self.cancel)}: the figures cover the part that ran" + (f"; {error}" if error else "")
        self._finish(run_id, run_status(status), metrics=metrics, fio_json=record.fio_json_of(results), error=error)
        self.emit(StepFinished(outcome, len(plan.steps)))
        return outcome

    def _record_writes(self, step: Step, results: tuple[JobResult, ...]) -> None:
        """A job that wrote to a device is an action like any other: each in the action log and the system
        journal, with the argv the runner ran (fio's --size and --offset_increment fitted to the target), its
        exit, stderr and duration, and how it ended."""
        for result in results:
            if not result.spec.writes:
                continue
            # No exit status (the process was never reaped): how the job ended stands for it.
            returncode = result.returncode if result.returncode is not None else (0 if result.ok else 1)
            title = f"{step_title(step)} writes {result.spec.target}"
            note = f"bench {self.plan.preset.key}: {title} ({result.status.value})"
            ActionLog().record(CommandResult(result.argv, returncode, "", result.stderr, result.duration_s), note)

    async def run_check(self) -> CheckOutcome:
        plan = self.plan
        assert plan.target.array is not None
        name = plan.target.array.name
        setup = RunSetup(
            preset=plan.preset.key,
            params={"step": "check pass", "action": "check", "quick": plan.request.quick},
            target=plan.target.path,
            array=record.array_config(plan.target.array, self.inventory),
            context=dict(self.context),
            label=plan.label,
        )
        run_id = self._begin(setup, (name,))
        try:
            outcome = await run_check_pass(self.root, name, cancel=self.cancel, on_update=self.emit)
        except MdtuiError as exc:
            outcome = CheckOutcome(name, JobStatus.FAILED, error=str(exc))
        except BaseException as exc:
            self._abandon(run_id, exc)
            raise
        outcome = replace(outcome, run_id=run_id)
        error = outcome.error or outcome.skipped
        if outcome.status is JobStatus.CANCELLED:
            error = "cancelled: the check was set back to idle before it finished"
        metrics = Metrics(md_thread_cpu_pct=outcome.md_thread_cpu_pct)
        self._finish(run_id, run_status(outcome.status), metrics=metrics, error=error)
        return outcome

    async def run(self) -> BenchResult:
        plan = self.plan
        sampler = asyncio.create_task(self._sample()) if self.sample_interval_s else None
        outcomes: list[StepOutcome] = []
        check: CheckOutcome | None = None
        status = RunStatus.COMPLETE
        error = ""
        try:
            rate_hint: float | None = None
            for index in range(len(plan.steps)):
                if self.cancel.is_set():
                    status = RunStatus.CANCELLED
                    break
                outcome = await self.run_step(index, rate_hint)
                outcomes.append(outcome)
                rate_hint = outcome.bytes_per_s or rate_hint
                if outcome.status is not JobStatus.COMPLETE:
                    status = run_status(outcome.status)
                    error = outcome.error
                    break
            if status is RunStatus.COMPLETE and plan.check_pass:
                if self.cancel.is_set():
                    status = RunStatus.CANCELLED
                else:
                    check = await self.run_check()
                    if check.status is not JobStatus.COMPLETE:
                        status = run_status(check.status)
                        error = check.error or check.skipped
        finally:
            if sampler is not None:
                sampler.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sampler
        report = weakest_link_report(plan, outcomes) if plan.preset.key == "weakest-link" else None
        if status is RunStatus.CANCELLED and not error:
            error = _cancelled(self.cancel)
        return BenchResult(
            plan=plan,
            status=status,
            steps=tuple(outcomes),
            context=self.context,
            started_at=datetime.fromtimestamp(self.started_wall, UTC),
            duration_s=time.monotonic() - self.started_mono,
            samples=tuple(self.samples),
            check=check,
            weakest_link=report,
            error=error,
            notes=tuple(self.notes),
            spooled=tuple(self.spooled),
            unsaved=tuple(self.unsaved),
        )


async def run_bench(
    plan: BenchPlan,
    *,
    root: SystemRoot,
    store: ResultsStore | None,
    confirmed: str | None = None,
    privileged: bool | None = None,
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
    sample_interval_s: float | None = 1.0,
    inventory: Inventory | None = None,
    stall_timeout_s: float | None = None,
) -> BenchResult:
    """Run a plan's steps one after another and store each as a run (begun before it starts, finished after).

    A plan that writes runs only when ``confirmed`` names its target, and only if a fresh scan right
    before starting still allows it (SafetyError otherwise). A read-only plan runs on ``inventory``, the
    scan it was just made from, when given (a scan costs seconds on a slow machine), else on a fresh one.
    Setting ``cancel`` stops the running jobs (their figures so far are kept and the stored run marked
    cancelled, with the StopRequest's reason) and starts no further step. A job that prints no status
    report for ``stall_timeout_s`` (default: mdtui.execute.runners.STALL_INTERVALS status intervals) is killed
    and its step stored as failed, naming the stall.
    """
    if plan.writes:
        require_confirmed(confirmed, plan.confirmation, f"{plan.preset.key} overwrites {plan.target.path}")
    context_task = asyncio.create_task(asyncio.to_thread(record.system_context, root))
    try:
        if plan.writes or inventory is None:
            plan, inventory = await asyncio.to_thread(recheck_plan, plan, root, privileged)
        context = await context_task
    finally:
        context_task.cancel()
    assert inventory is not None  # rechecked above when it was not given
    session = _Session(
        plan=plan,
        inventory=inventory,
        root=root,
        store=store,
        context=context,
        on_event=on_event,
        cancel=cancel or asyncio.Event(),
        sample_interval_s=sample_interval_s,
        stall_timeout_s=stall_timeout_s,
    )
    return await session.run()
