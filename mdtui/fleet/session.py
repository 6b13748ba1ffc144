"""Running a fleet plan: each host's steps through its fio server, in parallel or one host at a time.

Every step on every host is stored as its own run (begun before it starts, finished after) with the host
in its context and the fleet's id, so the hosts compare (mdtui.fleet.compare). A host that refuses the
connection, drops mid-run or does not answer in time is named, its run stored as failed and its later
steps skipped; the other hosts go on and keep their runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mdtui.bench.progress import run_status, step_status
from mdtui.confirmation import require_confirmed
from mdtui.execute import record
from mdtui.execute.record import step_title
from mdtui.fleet.client import host_timeout_s, run_on_host
from mdtui.fleet.plan import FleetPlan, HostPlan, host_context
from mdtui.format import plural
from mdtui.model.job import JobResult, JobStatus
from mdtui.store.errors import StoreError
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HostStepStarted:
    host: str
    index: int
    count: int
    title: str
    expected_s: float | None
    run_id: int | None


@dataclass(frozen=True)
class HostStepFinished:
    host: str
    index: int
    count: int
    title: str
    status: JobStatus
    metrics: Metrics
    duration_s: float
    run_id: int | None
    error: str = ""


FleetEvent = HostStepStarted | HostStepFinished
FleetCallback = Callable[[FleetEvent], None]


@dataclass(frozen=True)
class HostStep:
    index: int
    title: str
    status: JobStatus
    metrics: Metrics
    results: tuple[JobResult, ...]
    duration_s: float
    run_id: int | None
    error: str = ""


@dataclass(frozen=True)
class HostOutcome:
    host: str
    status: RunStatus
    steps: tuple[HostStep, ...]
    error: str = ""
    planned_steps: int = 0

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(s.run_id for s in self.steps if s.run_id is not None)


@dataclass(frozen=True)
class FleetResult:
    plan: FleetPlan
    fleet_id: str
    hosts: tuple[HostOutcome, ...]
    started_at: datetime
    duration_s: float
    notes: tuple[str, ...] = ()

    @property
    def failed(self) -> tuple[HostOutcome, ...]:
        return tuple(h for h in self.hosts if h.status is RunStatus.FAILED)

    @property
    def status(self) -> RunStatus:
        statuses = {h.status for h in self.hosts}
        if RunStatus.CANCELLED in statuses:
            return RunStatus.CANCELLED
        return RunStatus.FAILED if RunStatus.FAILED in statuses else RunStatus.COMPLETE

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(i for h in self.hosts for i in h.run_ids)


def new_fleet_id(now: datetime | None = None) -> str:
    """A fleet's id: its start time and mdtui's pid, "fleet-20261123T141000-4242"."""
    moment = now or datetime.now(UTC)
    return f"fleet-{moment:%Y%m%dT%H%M%S}-{os.getpid()}"


@dataclass
class _FleetSession:
    plan: FleetPlan
    store: ResultsStore | None
    fleet_id: str
    on_event: FleetCallback | None
    cancel: asyncio.Event
    notes: list[str] = field(default_factory=list)

    def emit(self, event: FleetEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _store(self, action: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.store is None:
            return None
        try:
            return call(*args, **kwargs)
        except StoreError as exc:
            note = f"could not {action} in the results store: {exc}"
            if note not in self.notes:
                self.notes.append(note)
            log.warning(note)
            return None

    def _setup(self, plan: HostPlan, step_index: int, context: dict[str, Any]) -> RunSetup:
        step = plan.steps[step_index]
        targets = tuple(dict.fromkeys(spec.target for spec in step.jobs))
        on_target = targets == (plan.target,)
        params = {
            **record.step_params(step),
            "quick": self.plan.request.quick,
            "step_index": step_index + 1,
            "steps": len(plan.steps),
            "host": plan.host.label,
        }
        run_context = dict(context)
        if plan.inventory is not None:
            devices = [d for t in targets if (d := plan.inventory.disk(t)) is not None]
            if devices:
                run_context["devices"] = devices
            if not on_target and plan.check.array:
                run_context["member_of"] = plan.target
        return RunSetup(
            preset=self.plan.preset_key,
            params=params,
            target=", ".join(targets),
            array=plan.check.array if on_target else {},
            context=run_context,
            label=f"{self.plan.label} @ {plan.host.label}",
        )

    async def run_host(self, plan: HostPlan) -> HostOutcome:
        label = plan.host.label
        context = host_context(plan, self.fleet_id, [p.host for p in self.plan.hosts])
        steps: list[HostStep] = []
        count = len(plan.steps)
        for index, step in enumerate(plan.steps):
            if self.cancel.is_set():
                return HostOutcome(label, RunStatus.CANCELLED, tuple(steps), "stopped", count)
            title = step_title(step)
            run_id = self._store("record the run", self._begin, self._setup(plan, index, context))
            expected = max((host_timeout_s(s, 0) for s in step.jobs), default=None)
            self.emit(HostStepStarted(label, index, count, title, expected, run_id))
            started = time.monotonic()
            try:
                results = tuple(
                    await asyncio.gather(
                        *(
                            run_on_host(spec, plan.host, cancel=self.cancel, slack_s=self.plan.slack_s)
                            for spec in step.jobs
                        )
                    )
                )
            except Exception as exc:  # one host's surprise must not cost the others their runs
                log.exception("host %s failed", label)
                error = f"host {label}: {exc}"
                if run_id is not None:
                    self._store("finish the run", self._finish, run_id, RunStatus.FAILED, error=error)
                return HostOutcome(label, RunStatus.FAILED, tuple(steps), error, count)
            except asyncio.CancelledError:
                if run_id is not None:
                    self._store("finish the run", self._finish, run_id, RunStatus.CANCELLED, error="cancelled")
                raise
            duration = time.monotonic() - started
            status = step_status(results)
            metrics = record.metrics_from_results(results)
            error = "; ".join(dict.fromkeys(r.error for r in results if r.error))
            if run_id is not None:
                self._store(
                    "finish the run",
                    self._finish,
                    run_id,
                    run_status(status),
                    metrics=metrics,
                    fio_json=record.fio_json_of(results),
                    error=error,
                )
            steps.append(HostStep(index, title, status, metrics, results, duration, run_id, error))
            self.emit(HostStepFinished(label, index, count, title, status, metrics, duration, run_id, error))
            if status is not JobStatus.COMPLETE:
                return HostOutcome(label, run_status(status), tuple(steps), error, count)
        return HostOutcome(label, RunStatus.COMPLETE, tuple(steps), "", count)

    def _begin(self, setup: RunSetup) -> int:
        assert self.store is not None
        return self.store.begin_run(setup)

    def _finish(self, run_id: int, status: RunStatus, **kwargs: Any) -> None:
        assert self.store is not None
        self.store.finish_run(run_id, status, **kwargs)

    async def run(self) -> tuple[HostOutcome, ...]:
        if self.plan.serial:
            outcomes = []
            for plan in self.plan.hosts:
                outcomes.append(await self.run_host(plan))
            return tuple(outcomes)
        return tuple(await asyncio.gather(*(self.run_host(plan) for plan in self.plan.hosts)))


async def run_fleet(
    plan: FleetPlan,
    *,
    store: ResultsStore | None,
    confirmed: str | None = None,
    on_event: FleetCallback | None = None,
    cancel: asyncio.Event | None = None,
    fleet_id: str | None = None,
) -> FleetResult:
    """Run the plan on every host and store each host's steps; writes need ``confirmed`` == the target."""
    plan.ensure_allowed()
    if plan.writes:
        require_confirmed(
            confirmed,
            plan.confirmation,
            f"{plan.preset_key} overwrites {plan.request.target} on {plural(len(plan.hosts), 'host')}",
        )
    started_at = datetime.now(UTC)
    started = time.monotonic()
    session = _FleetSession(plan, store, fleet_id or new_fleet_id(started_at), on_event, cancel or asyncio.Event())
    outcomes = await session.run()
    return FleetResult(
        plan=plan,
        fleet_id=session.fleet_id,
        hosts=outcomes,
        started_at=started_at,
        duration_s=time.monotonic() - started,
        notes=tuple(session.notes),
    )
