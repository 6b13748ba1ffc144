"""A finished knob sweep (mdtui experiment knob) as evidence: which value gave what here, with the run ids."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.resync import device_name
from mdtui.store.records import RunRecord, RunStatus
from mdtui.tune.catalogue import KNOBS_BY_NAME

# A sweep run is labelled "<knob>=<value>" by mdtui.advise.knob_sweep; a preset of several steps adds " · step".
_LABEL = re.compile(r"^(?P<knob>[a-z_:]+)=(?P<value>[^\s·]+)")
# Below this ratio between the best and the first value the sweep found no difference worth a change
# (repeated fio runs differ by a few percent).
KNOB_GAIN_THRESHOLD = 1.05
_METRICS = (("write_bw_bytes_per_s", "writes"), ("read_bw_bytes_per_s", "reads"))


def _sweeps(runs: Sequence[RunRecord]) -> dict[tuple[str, str], list[tuple[str, RunRecord]]]:
    """Complete sweep runs by (array, knob), in run order; a later sweep of the same values replaces the older."""
    found: dict[tuple[str, str], dict[str, RunRecord]] = {}
    for run in sorted(runs, key=lambda r: r.id):
        match = _LABEL.match(run.label or "")
        if match is None or run.status is not RunStatus.COMPLETE or match["knob"] not in KNOBS_BY_NAME:
            continue
        if "knobs" not in run.context:  # not from a knob sweep (a label that merely looks like one)
            continue
        found.setdefault((device_name(run.target), match["knob"]), {})[match["value"]] = run
    return {key: sorted(values.items(), key=lambda item: item[1].id) for key, values in found.items()}


def rule_knob_sweep(inp: AdviceInput) -> list[Finding]:
    """What each finished knob sweep measured, the best value named against the first, with run ids."""
    findings = []
    for (array, name), points in _sweeps(inp.runs).items():
        if len(points) < 2:
            continue
        metric, what = next(((m, w) for m, w in _METRICS if points[0][1].metrics.get(m) is not None), (None, ""))
        if metric is None:
            continue
        scored = [(value, run, figure) for value, run in points if (figure := run.metrics.get(metric))]
        if len(scored) < 2:
            continue
        first_value, first_run, first_figure = scored[0]
        best_value, best_run, best_figure = max(scored, key=lambda item: item[2])
        gain = best_figure / first_figure
        evidence = tuple(
            Evidence(f"{name}={value} (run #{run.id})", round(figure / 1e6, 1), "MB/s") for value, run, figure in scored
        )
        if gain >= KNOB_GAIN_THRESHOLD and best_value != first_value:
            title = (
                f"{array}: {name}={best_value} gave {gain:.2f}× the {what} of {first_value} here "
                f"(run #{best_run.id} vs #{first_run.id})"
            )
            todo = f"Keep it across reboots: mdtui tune --apply {name}={best_value} {array}"
            # Still at the value the sweep measured worse (known for the stripe cache, which the advisor reads).
            still_worse = name == "stripe_cache_size" and str(inp.stripe_cache_pages.get(array)) == first_value
            severity = Severity.WARNING if still_worse else Severity.INFO
        else:
            others = "; ".join(
                f"{value} gave {figure / first_figure:.2f}× the {what} of {first_value} "
                f"(run #{run.id} vs #{first_run.id})"
                for value, run, figure in scored[1:]
            )
            title = f"{array}: {name} made no difference worth keeping here: {others}"
            todo = "Leave it as it is; sweep again with another workload if writes are what matters"
            severity = Severity.INFO
        findings.append(
            Finding(
                id=f"knob-sweep:{array}:{name}",
                severity=severity,
                title=title,
                evidence=evidence,
                why="Measured on this machine by mdtui experiment knob, one run per value, each run's context "
                "holding the value read back from sysfs.",
                what_to_do=todo,
                experiment="knob-sweep",
            )
        )
    return findings
