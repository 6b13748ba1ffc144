"""The findings of a host, as `mdtui advise` and the app's findings view both ask for them: what is gathered (the
system, a second of samples on a live one, the stored runs) and what the rules make of it."""

from __future__ import annotations

from os import PathLike

from mdtui.advise.findings import Finding, Workload
from mdtui.advise.gather import gather
from mdtui.advise.rules import advise
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.store.errors import StoreMissingError
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore

# The newest stored runs the rules look at: every preset's latest figures on a busy workbench.
RECENT_RUNS = 200


def recent_runs(db: str | PathLike[str] | None) -> list[RunRecord]:
    """The newest stored runs (listings: each run's window, figures and setup, no samples); none without a
    database."""
    try:
        with ResultsStore(db, create=False) as store:
            return store.list_runs(limit=RECENT_RUNS)
    except StoreMissingError:
        return []


def host_findings(
    root: SystemRoot,
    *,
    db: str | PathLike[str] | None = None,
    workload: Workload | None = None,
    target: str | None = None,
    samples: int | None = None,
    privileged: bool | None = None,
    inventory: Inventory | None = None,
) -> tuple[Finding, ...]:
    """Every finding about ``root``, in the advisor's order. ``target``: a device about to be benchmarked;
    ``inventory``: the scan of ``root`` just made (else it is scanned)."""
    if target and not target.startswith("/dev/"):
        target = f"/dev/{target}"
    inputs = gather(
        root,
        workload=workload,
        runs=recent_runs(db),
        benchmark_target=target,
        samples=samples,
        privileged=privileged,
        inventory=inventory,
    )
    return advise(inputs)
