"""Rules about resync: a resync competes with every benchmark and explains low figures first."""

from __future__ import annotations

import statistics

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, mbps
from mdtui.model.array import MdArray
from mdtui.store.records import RunRecord

RESYNC_WHY = (
    "A resync reads every member (and writes parity) while the benchmark runs, so the figures measure both; "
    "the field measurements of finding 5 (docs/findings.md) made their arrays with --build or --assume-clean "
    "so that no resync disturbed the runs."
)


def device_name(target: str) -> str:
    return target.rstrip("/").rsplit("/", 1)[-1]


def _syncing_arrays(inp: AdviceInput) -> dict[str, MdArray]:
    arrays: dict[str, MdArray] = {}
    if inp.inventory is not None:
        arrays.update((a.name, a) for a in inp.inventory.arrays if a.sync is not None)
    if inp.snapshots:
        # The newest view wins: a resync that ended since the scan is not reported.
        latest = {a.name: a for a in inp.snapshots[-1].arrays}
        for name in list(arrays):
            if name in latest and latest[name].sync is None:
                del arrays[name]
        arrays.update((a.name, a) for a in latest.values() if a.sync is not None)
    return arrays


def rule_resync(inp: AdviceInput) -> list[Finding]:
    """An array resyncing now (critical when a benchmark is about to run on it), and stored runs that overlapped one."""
    findings = []
    target = device_name(inp.benchmark_target) if inp.benchmark_target else None
    for name, array in sorted(_syncing_arrays(inp).items()):
        sync = array.sync
        assert sync is not None
        evidence = [Evidence("action", f"{sync.action} ({sync.state})")]
        if sync.fraction is not None:
            evidence.append(Evidence("done", round(sync.fraction * 100, 1), "%"))
        if sync.speed_bytes_per_s is not None:
            evidence.append(Evidence("sync speed", mbps(sync.speed_bytes_per_s), "MB/s"))
        if sync.eta_seconds is not None:
            evidence.append(Evidence("time left", round(sync.eta_seconds), "s"))
        about_to_run = target == name
        findings.append(
            Finding(
                id=f"resync:{name}",
                severity=Severity.CRITICAL if about_to_run else Severity.WARNING,
                title=(
                    f"A benchmark is about to run on {name} during its {sync.action}"
                    if about_to_run
                    else f"{name} is running a {sync.action}: benchmarks on it now mislead"
                ),
                evidence=tuple(evidence),
                why=RESYNC_WHY,
                what_to_do=(
                    "Wait for it to finish (the resync view's boost, f, shortens it and is put back afterwards), "
                    "or recreate the test array with --assume-clean."
                ),
            )
        )
    findings += _runs_during_resync(inp)
    return findings


def runs_during_resync(inp: AdviceInput) -> list[tuple[RunRecord, list[MdArray], object]]:
    """Stored runs that overlapped a resync of their target: (run, arrays sampled syncing, sync recorded)."""
    found = []
    for run in inp.runs:
        if run.ended_at is None:
            continue
        name = device_name(run.target)
        start, end = run.started_at.timestamp(), run.ended_at.timestamp()
        seen = [
            array
            for s in inp.snapshots
            if start <= s.timestamp <= end and (array := s.array(name)) is not None and array.sync is not None
        ]
        # The benchmark engine records a sync running when the run began (mdtui.execute.record.array_config).
        recorded = run.array.get("sync") if run.array else None
        if seen or recorded:
            found.append((run, seen, recorded))
    return found


def resync_run_ids(inp: AdviceInput) -> set[int]:
    """Ids of the stored runs whose figures a resync explains before anything else."""
    return {run.id for run, _, _ in runs_during_resync(inp)}


def _runs_during_resync(inp: AdviceInput) -> list[Finding]:
    findings = []
    for run, seen, recorded in runs_during_resync(inp):
        name = device_name(run.target)
        speeds = [a.sync.speed_bytes_per_s for a in seen if a.sync and a.sync.speed_bytes_per_s]
        evidence = [Evidence("run", run.title)]
        if recorded:
            evidence.append(Evidence("recorded at its start", str(recorded)))
        if seen:
            evidence.append(Evidence("samples during a sync", len(seen)))
            evidence.append(Evidence("action", seen[0].sync.action if seen[0].sync else "sync"))
        if speeds:
            evidence.append(Evidence("mean sync speed", mbps(statistics.fmean(speeds)), "MB/s"))
        findings.append(
            Finding(
                id=f"run-during-resync:{run.id}",
                severity=Severity.WARNING,
                title=f"Run {run.title} on {name} ran while {name} was resyncing; its figures are not the array's",
                evidence=tuple(evidence),
                why=RESYNC_WHY,
                what_to_do="Run it again once the resync has finished and compare the two.",
                ruled_out=(
                    f"a slow member or too little parallelism, from run {run.title}: the resync read and wrote "
                    "every member while it ran, so its figures say nothing about either",
                ),
            )
        )
    return findings
