"""A benchmark on an array far below the figure predicted for it when it was stored (the md model over its
members' own figures), with the likely bound."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.resync import device_name
from mdtui.bench.predicted import FAR_BELOW, metric_text, predicted_of, ratio_of
from mdtui.store.records import RunRecord, RunStatus

PARITY_LEVELS = ("raid4", "raid5", "raid6")


def likely_bound(run: RunRecord, bound: str, metric: str) -> str:
    """What most likely held the run below its prediction, from what the run itself recorded."""
    level = str(run.array.get("level") or "")
    md_cpu = run.metrics.get("md_thread_cpu_pct")
    if md_cpu is not None and md_cpu >= 90:
        return f"the md kernel thread ({md_cpu:.0f}% of a core during the run)"
    if level in PARITY_LEVELS and metric.startswith("write"):
        return "md's stripe handling (one raid5d thread with group_thread_cnt 0, or a small stripe_cache_size)"
    if not bound.startswith("members"):
        return bound
    return "the members as they are now (slower than when measured alone, or busy), or a link they share"


def _far_below(runs: Sequence[RunRecord]) -> list[tuple[RunRecord, float]]:
    """The newest complete run of each (array, metric) with a prediction, when it is far below it."""
    newest: dict[tuple[str, str], RunRecord] = {}
    for run in sorted(runs, key=lambda r: r.id):
        both = predicted_of(run)
        if run.status is RunStatus.COMPLETE and both is not None:
            newest[(device_name(run.target), str(both[2]["metric"]))] = run
    found = []
    for run in newest.values():
        ratio = ratio_of(run)
        if ratio is not None and ratio < FAR_BELOW:
            found.append((run, ratio))
    return found


def rule_below_prediction(inp: AdviceInput) -> list[Finding]:
    findings = []
    for run, ratio in _far_below(inp.runs):
        both = predicted_of(run)
        if both is None:
            continue
        predicted, measured, entry = both
        metric = str(entry["metric"])
        array = device_name(run.target)
        workload = str(entry.get("workload", metric))
        bound = str(entry.get("bound", ""))
        likely = likely_bound(run, bound, metric)
        unit = "µs" if metric.endswith("_ns") else ("MB/s" if metric.endswith("bytes_per_s") else "IOPS")
        scale = 1e-3 if unit == "µs" else (1e-6 if unit == "MB/s" else 1.0)
        findings.append(
            Finding(
                id=f"below-prediction:{array}:{metric}",
                severity=Severity.WARNING,
                title=(
                    f"{array}: {workload} measured {metric_text(metric, measured)} in run #{run.id}, "
                    f"{ratio:.2f}× the {metric_text(metric, predicted)} predicted; likely bound: {likely}"
                ),
                evidence=(
                    Evidence(f"predicted when stored ({entry.get('basis')})", round(predicted * scale, 1), unit),
                    Evidence(f"measured (run #{run.id})", round(measured * scale, 1), unit),
                    Evidence("measured / predicted", round(ratio, 2)),
                ),
                why=(
                    f"The prediction is the md model over each member's own member-matrix figures "
                    f"({entry.get('members', 'members measured alone')}); its bound was {bound}. A run below "
                    f"{FAR_BELOW:g}× of it is held back by something the members alone did not show."
                ),
                what_to_do=(
                    "Re-measure the members alone (mdtui bench --preset member-matrix --target DISK) to see whether "
                    "they changed; for a parity array try group_thread_cnt and stripe_cache_size (mdtui tune)"
                ),
            )
        )
    return findings
