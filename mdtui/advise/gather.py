"""Collect what the rules look at from a system root and the results store: one call for the CLI and the app."""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.advise.findings import Workload
from mdtui.advise.rules.inputs import AdviceInput, MemberAlone, WeakestLinkFigures
from mdtui.advise.rules.resync import device_name
from mdtui.keep.boot import read_boot_state
from mdtui.keep.grow_resume import reshape_states
from mdtui.keep.health import read_health
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.model.snapshot import Snapshot
from mdtui.plan.create import CreatePlan
from mdtui.probe.inventory import scan
from mdtui.probe.kernel_log import read_kernel_log, read_parity_routines
from mdtui.probe.root import SystemRoot
from mdtui.probe.safety import read_live_safety
from mdtui.sample.sampler import Sampler
from mdtui.store.records import RunRecord

PARITY_LEVELS = ("raid4", "raid5", "raid6")
WEAKEST_LINK_PRESET = "weakest-link"
TOGETHER_STEP = "all members at once"
# md accepts 17 to 32768 pages; a larger figure in the file is damage and reads as unknown.
MAX_STRIPE_CACHE_PAGES = 1 << 20
ARRAY_STEP_PREFIX = "array "
ALONE_STEP_SUFFIX = " alone"


def read_stripe_cache_pages(root: SystemRoot, arrays: Sequence[MdArray]) -> dict[str, int]:
    """stripe_cache_size of every raid4/5/6 array, where sysfs has it."""
    found = {}
    for array in arrays:
        if array.level in PARITY_LEVELS:
            pages = root.read_int(f"/sys/block/{array.name}/md/stripe_cache_size", hi=MAX_STRIPE_CACHE_PAGES)
            if pages is not None:
                found[array.name] = pages
    return found


def weakest_link_figures(runs: Sequence[RunRecord]) -> tuple[WeakestLinkFigures, ...]:
    """Weakest-link results as the benchmark engine stores them: one run per step, ``params["step"]`` naming it.

    The "array …" step comes right after "all members at once" (step_index one higher, the next run ID).
    """
    by_id = {r.id: r for r in runs if r.preset == WEAKEST_LINK_PRESET}
    figures = []
    for run in sorted(by_id.values(), key=lambda r: r.id):
        step = run.params.get("step")
        if not isinstance(step, str) or not step.startswith(ARRAY_STEP_PREFIX):
            continue
        pair = by_id.get(run.id - 1)
        if pair is None or pair.params.get("step") != TOGETHER_STEP:
            continue
        if pair.params.get("step_index", 0) + 1 != run.params.get("step_index", 1):
            continue
        together_bps, array_bps = pair.metrics.read_bw_bytes_per_s, run.metrics.read_bw_bytes_per_s
        if together_bps is None or array_bps is None:
            continue
        numjobs = run.params.get("numjobs")
        members = int(pair.params.get("processes") or 0)
        figures.append(
            WeakestLinkFigures(
                run_id=run.id,
                array=run.target,
                level=run.array.get("level") if run.array else None,
                members=members,
                together_bytes_per_s=together_bps,
                array_bytes_per_s=array_bps,
                numjobs=numjobs if isinstance(numjobs, int) else None,
                alone=_alone_steps(by_id, pair, members),
                together_run_id=pair.id,
            )
        )
    return tuple(figures)


def _alone_steps(by_id: dict[int, RunRecord], together: RunRecord, members: int) -> tuple[MemberAlone, ...]:
    """The "X alone" steps of the same session: the runs stored just before "all members at once"."""
    found = []
    index = together.params.get("step_index")
    for offset in range(members, 0, -1):
        run = by_id.get(together.id - offset)
        step = run.params.get("step") if run is not None else None
        if run is None or not isinstance(step, str) or not step.endswith(ALONE_STEP_SUFFIX):
            return ()
        if isinstance(index, int) and run.params.get("step_index") != index - offset:
            return ()
        speed = run.metrics.read_bw_bytes_per_s
        if speed is None:
            return ()
        found.append(MemberAlone(device_name(run.target or step.removesuffix(ALONE_STEP_SUFFIX)), speed, run.id))
    return tuple(found)


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
    inventory: Inventory | None = None,
) -> AdviceInput:
    """Scan (unless given the ``inventory`` of a scan just made), sample (two samples a second apart live, so
    rates and md thread CPU exist; one from a capture), read stripe caches and the kernel's parity routines, and
    bundle them with the stored runs."""
    inventory = inventory if inventory is not None else scan(root, privileged=privileged)
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
        write_safety={
            a.name: found
            for a in inventory.arrays
            if (found := read_live_safety(root, a.name, bitmap=a.bitmap)) is not None
        },
        parity=read_parity_routines(root),
        benchmark_target=benchmark_target,
        weakest_link=weakest_link_figures(runs),
        boot=read_boot_state(root, arrays=inventory.arrays),
        reshapes=tuple(reshape_states(root, inventory.arrays)) if root.is_live else (),
        health=read_health(
            root,
            inventory.arrays,
            inventory=inventory,
            smart=inventory.privileged,
            kernel_log=read_kernel_log(root) if any(a.degraded for a in inventory.arrays) else None,
        ),
    )
