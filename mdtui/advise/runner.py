"""The experiments' RunPreset over the benchmark engine (mdtui.bench): plan, re-check, run, store, label."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mdtui.advise.experiments import ExperimentCancelled
from mdtui.bench.background import Stop, run_bench_in_thread
from mdtui.bench.plan import BenchPlan, plan_bench
from mdtui.bench.progress import EventCallback
from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.confirmation import confirms
from mdtui.errors import MdtuiError, PlanError, SafetyError
from mdtui.execute.record import step_title
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore


class BenchRunner:
    """Runs presets the way `mdtui bench` does and returns the stored run IDs, one per step.

    Writes are refused unless the target is in ``allow_writes_to``: the experiment's caller confirmed
    exactly those devices (an A/B's array, a sweep's temporary array and members). Each stored run is
    labelled with the experiment's label, and the step after it when the preset has several.
    """

    def __init__(
        self,
        store: ResultsStore,
        root: SystemRoot | None = None,
        *,
        privileged: bool | None = None,
        allow_writes_to: Collection[str] = (),
        cancel: Stop | None = None,
        on_event: EventCallback | None = None,
        sample_interval_s: float | None = 1.0,
        fixed_time: bool = False,
    ) -> None:
        self.store = store
        self.root = root or SystemRoot("/")
        self.privileged = privileged
        self.allow_writes_to = frozenset(allow_writes_to)
        self.cancel = cancel
        self.on_event = on_event
        self.sample_interval_s = sample_interval_s
        self.fixed_time = fixed_time  # every step its whole runtime, as `mdtui bench --fixed-time`

    def plan(self, preset_key: str, target: str, *, quick: bool, label: str = "", **options: Any) -> BenchPlan:
        members = tuple(options.pop("members", ()))
        try:
            job_options = JobOptions(**options)
        except TypeError as exc:
            raise PlanError(f"{preset_key}: unknown job option ({exc})") from None
        # The label is stored from the start, so a run cut short (a kill) is named by its experiment point.
        request = BenchRequest(
            preset_key,
            target,
            quick=quick,
            members=members,
            options=job_options,
            label=label,
            fixed_time=self.fixed_time,
        )
        return plan_bench(request, scan(self.root, privileged=self.privileged), self.root)

    def __call__(self, preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> tuple[int, ...]:
        plan = self.plan(preset_key, target, quick=quick, label=label, **options)
        confirmed = None
        if plan.writes:
            # The tokens the user typed for this experiment; run_bench checks the one that names the target again.
            confirmed = next((typed for typed in self.allow_writes_to if confirms(typed, plan.confirmation)), None)
            if confirmed is None:
                raise SafetyError(
                    f"{preset_key} overwrites {plan.target.path}, which this experiment was not confirmed for"
                )
            plan.ensure_allowed()
        result = run_bench_in_thread(
            plan,
            stop=self.cancel,
            root=self.root,
            store=self.store,
            confirmed=confirmed,
            privileged=self.privileged,
            on_event=self.on_event,
            sample_interval_s=self.sample_interval_s,
        )
        for outcome in result.steps:
            if outcome.run_id is not None:
                step = f" · {step_title(outcome.step)}" if len(plan.steps) > 1 else ""
                self.store.set_label(outcome.run_id, label + step)
        if result.check is not None and result.check.run_id is not None:
            self.store.set_label(result.check.run_id, f"{label} · check pass")
        if result.status is RunStatus.CANCELLED:
            raise ExperimentCancelled(f"{preset_key} on {target} was stopped; runs kept: {list(result.run_ids)}")
        if result.status is not RunStatus.COMPLETE:
            raise MdtuiError(f"{preset_key} on {target} {result.status.value}: {result.error or 'no reason given'}")
        return result.run_ids
