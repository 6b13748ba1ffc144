"""Collect what the rules look at from a system root and the results store: one call for the CLI and the app."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.advise.findings import Workload
from mdtui.advise.kernel_log import read_parity_routines
from mdtui.advise.rules import AdviceInput, WeakestLinkFigures
from mdtui.model.array import MdArray
from mdtui.model.snapshot import Snapshot
from mdtui.plan.create import CreatePlan
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.sample.sampler import Sampler
from mdtui.store.records import RunRecord

PARITY_LEVELS = ("raid4", "raid5", "raid6")
WEAKEST_LINK_PRESET = "weakest-link"
TOGETHER_STEP = "all members at once"
ARRAY_STEP_PREFIX = "array "


def read_stripe_cache_pages(root: SystemRoot, arrays: Sequence[MdArray]) -> dict[str, int]:
    """stripe_cache_size of every raid4/5/6 array, where sysfs has it."""
    found = {}
    for array in arrays:
        if array.level in PARITY_LEVELS:
            pages = root.read_int(f"/sys/block/{array.name}/md/stripe_cache_size")
            if pages is not None:
                found[array.name] = pages
    return found


def _read_bytes_per_s(run: RunRecord) -> float | None:
    return run.metrics.read_bw_bytes_per_s


def weakest_link_figures(runs: Sequence[RunRecord]) -> tuple[WeakestLinkFigures, ...]:
    """Pairs of weakest-link steps stored as runs: "all members at once" and the "array …" step after it.

    The benchmark engine stores each step of a preset as its own run with ``params["step"]`` naming it
    (mdtui.run.record.step_params); a pair belongs together when it has the same label.
    """
    steps = sorted(
        (r for r in runs if r.preset == WEAKEST_LINK_PRESET and isinstance(r.params.get("step"), str)),
        key=lambda r: r.id,
    )
    figures = []
    together: dict[str, RunRecord] = {}
    for run in steps:
        step = run.params["step"]
        if step == TOGETHER_STEP:
            together[run.label] = run
        elif step.startswith(ARRAY_STEP_PREFIX) and (pair := together.pop(run.label, None)) is not None:
            together_bps, array_bps = _read_bytes_per_s(pair), _read_bytes_per_s(run)
            if together_bps is None or array_bps is None:
                continue
            numjobs = run.params.get("numjobs")
            figures.append(
                WeakestLinkFigures(
                    run_id=run.id,
                    array=run.target,
                    level=run.array.get("level") if run.array else None,
                    members=int(pair.params.get("processes") or 0),
                    together_bytes_per_s=together_bps,
                    array_bytes_per_s=array_bps,
                    numjobs=numjobs if isinstance(numjobs, int) else None,
                )
            )
    return tuple(figures)


def gather(
    root: SystemRoot,
    *,
    workload: Workload | None = None,
    runs: Sequence[RunRecord] = (),
    plan: CreatePlan | None = None,
    benchmark_target: str | None = None,
    samples: int | None = None,
    interval_s: float = 1.0,
    privileged: bool | None = None,
) -> AdviceInput:
    """Scan, sample (two samples a second apart live, so rates and md thread CPU exist; one from a capture),
    read stripe caches and the kernel's parity routines, and bundle them with the stored runs."""
    inventory = scan(root, privileged=privileged)
    count = samples if samples is not None else (2 if root.is_live else 1)
    snapshots: tuple[Snapshot, ...] = ()
    if count > 0:
        with Sampler(root) as sampler:
            snapshots = tuple(sampler.iterate(interval_s, count))
    return AdviceInput(
        inventory=inventory,
        snapshots=snapshots,
        plan=plan,
        runs=tuple(runs),
        workload=workload,
        stripe_cache_pages=read_stripe_cache_pages(root, inventory.arrays),
        parity=read_parity_routines(root),
        benchmark_target=benchmark_target,
        weakest_link=weakest_link_figures(runs),
    )
