"""What each stored run of a benchmark says about its step: the targets' disks and the array, md's and the queues'
knobs right before it, the step's parameters, and the figure predicted for it from the member figures stored so
far (never a reason to stop the benchmark)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mdtui.ascii_numbers import parse_int
from mdtui.bench.member_figures import MEMBER_MATRIX_PRESET
from mdtui.bench.plan import BenchPlan
from mdtui.bench.predicted import predicted_entry
from mdtui.errors import MdtuiError
from mdtui.execute import record
from mdtui.execute.presets import Step
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.plan.forecast import CeilingsChoice
from mdtui.plan.safety_cost import NO_SAFETY, WriteSafety
from mdtui.probe.root import SystemRoot
from mdtui.probe.safety import read_live_safety
from mdtui.store.calibration import host_ceilings
from mdtui.store.records import RunRecord, RunSetup
from mdtui.store.runs import ResultsStore
from mdtui.tune.read import knob_context


@dataclass
class RunSetups:
    """Builds each step's RunSetup for one benchmark; a prediction that cannot be made adds to ``notes``."""

    plan: BenchPlan
    inventory: Inventory
    root: SystemRoot
    store: ResultsStore | None
    context: dict[str, Any]
    notes: list[str]  # the session's: what the benchmark tells the user at its end
    _member_runs: list[RunRecord] | None = None  # member-matrix runs, read once for the predicted figures
    _host: CeilingsChoice | None = None  # this host's md ceilings (store.calibration), read once likewise

    def setup(self, step: Step, index: int) -> RunSetup:
        """The stored run's setup for step ``index``: targets, devices, knobs, parameters, the predicted figure."""
        plan = self.plan
        targets = tuple(dict.fromkeys(spec.target for spec in step.jobs))
        on_array = plan.target.array is not None and targets == (plan.target.path,)
        names = plan.device_names()
        disks = [d for t in targets if (d := self.inventory.disk(names.get(t, ""))) is not None]
        context = dict(self.context)
        if disks:
            context["devices"] = [record.disk_config(d) for d in disks]
        if plan.target.array is not None and not on_array:
            context["member_of"] = plan.target.array.name
        if plan.target.array is not None and on_array:
            # md's and the queues' knobs as sysfs says right before this step (mdtui.tune): what a knob sweep varies.
            context["knobs"] = knob_context(self.root, plan.target.array)
        params = {**record.step_params(step), "quick": plan.request.quick, "step_index": index + 1}
        params["steps"] = len(plan.steps)
        if on_array and plan.target.array is not None:
            predicted = self._predicted(plan.target.array, step, context["knobs"])
            if predicted is not None:
                params["predicted"] = predicted
        return RunSetup(
            preset=plan.preset.key,
            params=params,
            target=", ".join(targets),
            array=record.array_config(plan.target.array, self.inventory) if on_array and plan.target.array else {},
            context=context,
            label=plan.label,
        )

    def _predicted(self, array: MdArray, step: Step, knobs: dict[str, str]) -> dict[str, Any] | None:
        """The step's predicted figure from the member figures stored so far; never stops the benchmark."""
        if self.store is None:
            return None
        try:
            if self._member_runs is None:
                self._member_runs = [r for r in self.store.list_runs() if r.preset == MEMBER_MATRIX_PRESET]
            if self._host is None:
                self._host = host_ceilings()
            # The array's own stripe cache, which bounds a parity level's sequential writes (None: not readable),
            # as the step's knobs (``knobs``, tune.read.knob_context) read it right before the step.
            words = knobs.get("md/stripe_cache_size", "").split(maxsplit=1)
            cache = parse_int(words[0], lo=1, hi=1 << 20) if words else None
            # Its bitmap and consistency policy, whose cost the prediction carries.
            live = read_live_safety(self.root, array.name)
            safety = (
                NO_SAFETY
                if live is None
                else WriteSafety(live.bitmap, live.bitmap_chunk_bytes, live.choice_policy, None, array.size_bytes)
            )
            return predicted_entry(
                array,
                step.jobs,
                self._member_runs,
                self.inventory,
                stripe_cache_size=cache,
                safety=safety,
                md=self._host,
            )
        except MdtuiError as exc:
            self.notes.append(f"no prediction stored: {exc}")
            return None
