"""Guided experiments: before/after and sweep runs over one benchmark runner, each run stored and labelled."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Protocol

from mdtui.actionlog import ActionLog
from mdtui.advise.governor import governor_label, governor_switched, read_governors
from mdtui.advise.sweep_stop import skipped_note, sweep_stop
from mdtui.command import run_command
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError, PlanError
from mdtui.execute import mdadm as md_run
from mdtui.execute.state import ArrayRegistry, TemporaryArrayJournal
from mdtui.format import plural
from mdtui.model.disk import Disk
from mdtui.model.job import MIB
from mdtui.plan.create import CreatePlan, CreateRequest, plan_create
from mdtui.plan.destroy import plan_destroy
from mdtui.plan.levels import RAID0, RAID5, RAID6, RAID10, RaidLevel, level_from_name
from mdtui.probe.root import SystemRoot
from mdtui.store.compare import NormalisedTable, RatioTable, normalise, ratio_table
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore

# The job of finding 1 (docs/findings.md), with the job count swept: 4 MiB sequential direct reads, libaio,
# iodepth 12.
PARALLELISM_NUMJOBS: tuple[int, ...] = (1, 4, 16, 64)
PARALLELISM_BLOCK = 4 * MIB
PARALLELISM_IODEPTH = 12
PARALLELISM_RUNTIME_S = 30
PARALLELISM_QUICK_RUNTIME_S = 5
# Finding 5 (docs/findings.md) swept 4 KiB to 8 MiB; these bracket its best single-reader (2 MiB) and
# concurrent (8 MiB) results.
DEFAULT_CHUNKS_KIB: tuple[int, ...] = (64, 512, 2048)
COMPARED_LEVELS: tuple[RaidLevel, ...] = (RAID0, RAID10, RAID5, RAID6)


class RunPreset(Protocol):
    """Runs one benchmark preset on a target, stores it labelled ``label`` and returns the stored run IDs.

    The benchmark engine stores every step of a preset as its own run, so a preset of one step (custom)
    gives one ID and the disk-mark matrix ten, in step order. ``options`` are ``members=`` for the
    weakest-link run and the custom job's fio options (``numjobs=``, ``size_bytes=`` ...). It blocks until
    the run ends and raises when it did not complete.
    """

    def __call__(self, preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]: ...


class ExperimentCancelled(MdtuiError):
    """The user stopped an experiment between two of its runs; the runs already stored are kept."""


@dataclass(frozen=True)
class ExperimentRun:
    """One point of an experiment ("before: powersave", "chunk 64 KiB") and the runs its preset stored."""

    label: str
    run_ids: tuple[int, ...]


@dataclass(frozen=True)
class ExperimentResult:
    """The stored runs of one experiment, in order (before, after; or sweep points), and tables over them."""

    key: str
    runs: tuple[ExperimentRun, ...]
    notes: tuple[str, ...] = ()
    normalised: NormalisedTable | None = None
    ratios: tuple[RatioTable, ...] = field(default=())

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(run_id for run in self.runs for run_id in run.run_ids)

    def pairs(self) -> tuple[tuple[int, int], ...]:
        """(before, after) run IDs step by step, for the compare view of an A/B experiment."""
        if len(self.runs) != 2:
            return ()
        return tuple(zip(self.runs[0].run_ids, self.runs[1].run_ids, strict=False))


def _run(
    run_preset: RunPreset, key: str, target: str, quick: bool, label: str, options: dict[str, Any]
) -> tuple[int, ...]:
    run_ids = tuple(run_preset(key, target, quick=quick, label=label, **options))
    if not run_ids:
        raise MdtuiError(f"{key} on {target} stored no run (is the results database writable?)")
    return run_ids


def _check_cancel(cancel: threading.Event | None, done: Sequence[ExperimentRun]) -> None:
    if cancel is not None and cancel.is_set():
        kept = ", ".join(f"#{run_id}" for run in done for run_id in run.run_ids) or "none"
        raise ExperimentCancelled(f"experiment stopped; runs already stored: {kept}")


# --- governor A/B ------------------------------------------------------------------------------------


def governor_ab(
    run_preset: RunPreset,
    target: str,
    *,
    root: SystemRoot,
    preset_key: str = "sync-random",
    quick: bool = False,
    governor: str = "performance",
    cancel: threading.Event | None = None,
    **options: Any,
) -> ExperimentResult:
    """The preset under the current governor, then with every core on ``governor``; the old ones come back.

    The test of finding 2 (docs/findings.md), sync-random, by default. The previous governors are restored
    even when the second run fails or is cancelled.
    """
    before = read_governors(root)
    if not before:
        raise PlanError("this system exposes no cpufreq governors (common in VMs): there is no A/B to run")
    if set(before.values()) == {governor}:
        raise PlanError(f"every core already runs the {governor} governor: there is nothing to compare")
    before_label = f"before: {governor_label(before)}"
    first = ExperimentRun(before_label, _run(run_preset, preset_key, target, quick, before_label, options))
    _check_cancel(cancel, [first])
    after_label = f"after: {governor}"
    with governor_switched(root, governor):
        second = ExperimentRun(after_label, _run(run_preset, preset_key, target, quick, after_label, options))
    return ExperimentResult("governor-ab", (first, second), (f"governors restored to {governor_label(before)}",))


# --- parallelism sweep -------------------------------------------------------------------------------


def parallelism_sweep(
    run_preset: RunPreset,
    target: str,
    *,
    quick: bool = False,
    numjobs: Sequence[int] = PARALLELISM_NUMJOBS,
    runtime_s: int | None = None,
    cancel: threading.Event | None = None,
    store: ResultsStore | None = None,
    full_sweep: bool = False,
) -> ExperimentResult:
    """The read of finding 1 (4 MiB, iodepth 12) with 1, 4, 16 and 64 jobs: where the md device saturates.

    Read-only. Finding 1 is in docs/findings.md. With ``store`` (and not ``full_sweep``) it stops early by
    sweep_stop's rule, judged by read MB/s.
    """
    runtime = runtime_s or (PARALLELISM_QUICK_RUNTIME_S if quick else PARALLELISM_RUNTIME_S)
    done: list[ExperimentRun] = []
    notes: list[str] = []
    for position, jobs in enumerate(numjobs):
        _check_cancel(cancel, done)
        if store is not None and not full_sweep and (reason := _stop(store, done, "read_bw_bytes_per_s")):
            notes += [reason, skipped_note([f"numjobs {n}" for n in numjobs[position:]])]
            break
        label = f"numjobs {jobs}"
        options = {
            "block_size_bytes": PARALLELISM_BLOCK,
            "iodepth": PARALLELISM_IODEPTH,
            "numjobs": jobs,
            "runtime_s": runtime,
        }
        done.append(ExperimentRun(label, _run(run_preset, "custom", target, quick, label, options)))
    return ExperimentResult("parallelism-sweep", tuple(done), tuple(notes))


def _stop(store: ResultsStore, done: Sequence[ExperimentRun], metric: str) -> str | None:
    return sweep_stop(store, [(run.label, run.run_ids) for run in done], metric)


# --- arrays made for one measurement -----------------------------------------------------------------


@dataclass(frozen=True)
class ArrayTools:
    """Where create/teardown run and are recorded; tests point these at temporary files."""

    root: SystemRoot = field(default_factory=SystemRoot)
    log: ActionLog | None = None
    registry: ArrayRegistry | None = None
    create: Callable[..., md_run.CreateOutcome] = md_run.execute_create
    destroy: Callable[..., object] = md_run.execute_destroy
    journal: TemporaryArrayJournal | None = None  # default: the one in mdtui's state directory


def _settle_udev() -> None:
    """Wait for udev to see the wiped members, so the next create's in-use re-check reads fresh signatures."""
    # Without udev, signatures come from blkid, which reads the disk itself: nothing to wait for.
    with suppress(MdtuiError):
        run_command(["udevadm", "settle", "--timeout=20"], timeout_s=30)


def teardown(plan: CreatePlan, tools: ArrayTools) -> None:
    """Stop and wipe an array this experiment created, through plan_destroy and execute_destroy."""
    device = plan.request.device
    array = md_run.find_array(tools.root, device)
    if array is None:
        return
    destroy_plan = plan_destroy(
        array,
        list(plan.request.members),
        mounted=md_run.is_mounted(tools.root, array),
        created_by_tool=md_run.created_by_mdtui(array, tools.registry),
    )
    # Only an array this experiment made runs through here, and the user confirmed "create and destroy" for it
    # (temporary_array checked that confirmation before the create): the teardown is part of that action.
    tools.destroy(
        destroy_plan,
        confirmed=destroy_plan.confirmation,
        root=tools.root,
        log=tools.log,
        registry=tools.registry,
    )
    _settle_udev()


@contextmanager
def temporary_array(
    plan: CreatePlan,
    tools: ArrayTools,
    *,
    confirmed: str | None,
    purpose: str = "experiment",
    db: str | os.PathLike[str] | None = None,
) -> Iterator[md_run.CreateOutcome]:
    """Create the planned array for the block and tear it down afterwards, even when the block fails.

    A journal entry (``purpose``, this process, the results database ``db``) is on disk before the create
    and removed after the teardown, so if mdtui is killed in between the next start names the array
    (mdtui.execute.leftovers). A teardown that fails leaves the entry, for the same reason. ``confirmed`` is what
    the user typed for the experiment (the create's confirmation), checked before anything is journalled.
    """
    require_confirmed(confirmed, plan.confirmation, f"creating and destroying {plan.request.device}")
    device = plan.request.device
    journal = tools.journal or TemporaryArrayJournal()
    existed = md_run.find_array(tools.root, device) is not None
    entry = journal.add(device, purpose, members=plan.member_paths, db=db)
    try:
        outcome = tools.create(plan, confirmed=confirmed, root=tools.root, log=tools.log, registry=tools.registry)
    except BaseException:
        # Refused (someone's array already there) or failed: the entry stays only for an array it made.
        if existed or md_run.find_array(tools.root, device) is None:
            journal.remove(entry)
        raise
    entry = journal.set_uuid(entry, outcome.uuid)
    try:
        yield outcome
    finally:
        teardown(plan, tools)
        journal.remove(entry)


def sweep_request(device: str, level: RaidLevel, members: Sequence[Disk], chunk_kib: int | None) -> CreateRequest:
    """An array for measuring: --assume-clean where a resync would run (finding 5), no bitmap (finding 4).

    Both findings are in docs/findings.md.
    """
    return CreateRequest(
        device=device,
        level=level,
        members=tuple(members),
        chunk_kib=chunk_kib if level.uses_chunk else None,
        bitmap="none",
        assume_clean=level.redundant,
    )


def _check_members(members: Sequence[Disk], level: RaidLevel) -> None:
    if len(members) < level.min_members:
        raise PlanError(f"{level.name} needs at least {level.min_members} members; {len(members)} given")


# --- chunk sweep -------------------------------------------------------------------------------------


def chunk_sweep(
    run_preset: RunPreset,
    members: Sequence[Disk],
    *,
    store: ResultsStore,
    device: str,
    level: str | RaidLevel = RAID5,
    chunks_kib: Sequence[int] = DEFAULT_CHUNKS_KIB,
    preset_key: str = "offset-sweep",
    quick: bool = False,
    confirmed: str | None,
    tools: ArrayTools | None = None,
    metric: str = "read_bw_bytes_per_s",
    cancel: threading.Event | None = None,
    full_sweep: bool = False,
    **options: Any,
) -> ExperimentResult:
    """The sweep of finding 5 (docs/findings.md): the preset on one raw member, then per chunk create, measure,
    tear down; it stops early by sweep_stop's rule on ``metric`` unless ``full_sweep``.

    Every plan is made (and so validated) before anything runs. The table is each array's figure ÷ (the
    raw member's × data disks), as finding 5 normalised it. With a preset that writes, the runner must
    allow writes to ``device`` and to the first member (BenchRunner(allow_writes_to=...)).
    """
    tools = tools or ArrayTools()
    raid = level if isinstance(level, RaidLevel) else level_from_name(level)
    _check_members(members, raid)
    if not raid.uses_chunk:
        raise PlanError(f"{raid.name} has no chunk: sweep raid0, raid4/5/6 or raid10")
    if not chunks_kib:
        raise PlanError("give at least one chunk size to sweep")
    plans = [plan_create(sweep_request(device, raid, members, chunk)) for chunk in chunks_kib]
    require_confirmed(confirmed, device, f"the chunk sweep creates and destroys arrays as {device} on the members")

    done: list[ExperimentRun] = []
    baseline_label = f"raw member {members[0].name}"
    baseline = _run(run_preset, preset_key, members[0].dev_path, quick, baseline_label, options)
    done.append(ExperimentRun(baseline_label, baseline))
    data_disks: dict[int, float] = {}
    notes: list[str] = []
    for position, (chunk, plan) in enumerate(zip(chunks_kib, plans, strict=True)):
        _check_cancel(cancel, done)
        # The raw member is the baseline, not a point of the sweep.
        if not full_sweep and (reason := _stop(store, done[1:], metric)):
            notes += [reason, skipped_note([f"{raid.name} chunk {c} KiB" for c in chunks_kib[position:]])]
            break
        label = f"{raid.name} chunk {chunk} KiB"
        with temporary_array(plan, tools, confirmed=confirmed, purpose="chunk sweep", db=store.path):
            run_ids = _run(run_preset, preset_key, device, quick, label, options)
        done.append(ExperimentRun(label, run_ids))
        data_disks.update((run_id, plan.data_disks) for run_id in run_ids)
    runs = store.get_runs([run_id for run in done[1:] for run_id in run.run_ids])
    # Finding 5 (docs/findings.md) divided every figure by the raw disk's first reading (offset 0, one reader).
    raw_disk = store.get_run(done[0].run_ids[0])
    table = normalise(runs, raw_disk, metric=metric, data_disks_by_run=data_disks)
    return ExperimentResult("chunk-sweep", tuple(done), tuple(notes), normalised=table)


# --- level comparison --------------------------------------------------------------------------------


def level_comparison(
    run_preset: RunPreset,
    members: Sequence[Disk],
    *,
    store: ResultsStore,
    device: str,
    levels: Sequence[RaidLevel] = COMPARED_LEVELS,
    chunk_kib: int = 256,
    preset_key: str = "disk-mark",
    quick: bool = False,
    confirmed: str | None,
    tools: ArrayTools | None = None,
    cancel: threading.Event | None = None,
    **options: Any,
) -> ExperimentResult:
    """Each level on the same members with the disk-mark matrix (docs/findings.md, finding 4: 256 KiB chunk, no bitmap).

    Levels the member count cannot make are skipped with a note. The ratio tables put every level against
    RAID0 and RAID10, as finding 4 read its matrix. disk-mark writes: the runner must allow writes to ``device``.
    """
    tools = tools or ArrayTools()
    usable = [level for level in levels if len(members) >= level.min_members]
    notes = [
        f"{level.name} skipped: it needs {level.min_members} members, {len(members)} given"
        for level in levels
        if level not in usable
    ]
    if not usable:
        raise PlanError(f"none of the levels can be made from {plural(len(members), 'member')}")
    plans = [(level, plan_create(sweep_request(device, level, members, chunk_kib))) for level in usable]
    require_confirmed(
        confirmed, device, f"the level comparison creates and destroys arrays as {device} on the members"
    )

    done: list[ExperimentRun] = []
    for level, plan in plans:
        _check_cancel(cancel, done)
        with temporary_array(plan, tools, confirmed=confirmed, purpose="level comparison", db=store.path):
            done.append(ExperimentRun(level.name, _run(run_preset, preset_key, device, quick, level.name, options)))
    return ExperimentResult("level-compare", tuple(done), tuple(notes), ratios=level_matrix(store, done))


def _step_metric(step: str) -> str:
    """The figure a disk-mark step is read by: bandwidth for sequential tests, IOPS for random ones."""
    direction = "write" if step.endswith("write") else "read"
    return f"{direction}_iops" if step.startswith("RND") else f"{direction}_bw_bytes_per_s"


def level_matrix(store: ResultsStore, points: Sequence[ExperimentRun]) -> tuple[RatioTable, ...]:
    """The matrix of finding 4 (docs/findings.md): per step (SEQ1MQ8T8 read, RND4KQ32T8 write ...) each level
    against RAID0 and RAID10.

    Runs are matched across levels by the step the benchmark engine recorded (``params["step"]``).
    """
    by_step: dict[str, list[RunRecord]] = {}
    for point in points:
        for run in store.get_runs(point.run_ids):
            step = str(run.params.get("step", run.preset))
            by_step.setdefault(step, []).append(dataclasses.replace(run, label=point.label))
    tables = []
    for step, runs in by_step.items():
        references = [run for run in runs if run.label in (RAID0.name, RAID10.name)]
        if references:
            tables.append(ratio_table(runs, references, _step_metric(step)))
    return tuple(tables)
