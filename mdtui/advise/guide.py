"""The guided flow's core: its steps, a first plan for the workload, what to try, the summary, first-run state."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mdtui.advise.experiments import ExperimentResult, RunPreset, governor_ab, parallelism_sweep
from mdtui.advise.findings import EXPERIMENT_TITLES, Finding, Severity, Workload
from mdtui.advise.gather import weakest_link_figures
from mdtui.advise.rules import advise
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.resync import rule_resync
from mdtui.errors import PlanError
from mdtui.format import plural, rate_mb_s
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.plan.create import CreatePlan, CreateRequest, plan_create
from mdtui.plan.levels import RAID0, RAID1, RAID5, RAID6, RAID10, RaidLevel, level_from_name
from mdtui.plan.rejected import PlanRejected
from mdtui.probe.kernel_log import read_parity_routines
from mdtui.probe.owner import state_dir
from mdtui.probe.root import SystemRoot
from mdtui.sample.sampler import Sampler
from mdtui.state_dir import StateDir
from mdtui.store.errors import StoreError
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore

STEPS: tuple[tuple[str, str], ...] = (
    ("purpose", "Purpose"),
    ("disks", "Disks"),
    ("links", "Links"),
    ("plan", "Plan & create"),
    ("weakest-link", "Weakest link"),
    ("experiment", "Experiment"),
    ("summary", "Summary"),
)
# Experiments the guide offers on the array it just made (the sweeps would have to destroy it).
GUIDE_EXPERIMENTS: tuple[str, ...] = ("parallelism-sweep", "governor-ab")
# When the workload's level needs more members than were picked, the next level down that fits.
_FALLBACK: dict[str, tuple[RaidLevel, ...]] = {
    "raid6": (RAID6, RAID5, RAID10, RAID1),
    "raid5": (RAID5, RAID10, RAID1),
    "raid10": (RAID10, RAID1),
    "raid0": (RAID0,),
}
GUIDE_FLAG = "guide-seen"


@dataclass(frozen=True)
class GuideState:
    """What the user chose and what ran, step by step; every field stays empty when its step was skipped."""

    workload: Workload | None = None
    disks: tuple[Disk, ...] = ()
    findings: tuple[Finding, ...] = ()
    plan: CreatePlan | None = None  # what was created
    device: str | None = None
    weakest_link_runs: tuple[int, ...] = ()
    experiment: ExperimentResult | None = None
    skipped: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


def step_done(state: GuideState, key: str) -> bool:
    """Whether the guide did what step ``key`` is for (the step line ticks it), rather than passing it over:
    skipped, or nothing to do there (no array was created, so nothing was measured)."""
    done = {
        "purpose": state.workload is not None,
        "disks": bool(state.disks),
        "links": bool(state.disks),  # checked as soon as disks were picked
        "plan": state.device is not None,
        "weakest-link": bool(state.weakest_link_runs),
        "experiment": state.experiment is not None,
    }
    return key not in state.skipped and done.get(key, True)


def draft_level(workload: Workload | None, members: int) -> RaidLevel | None:
    """The workload's level, or the closest one this many members can make; None below two members."""
    wanted = workload.suggested_level if workload is not None else "raid10"
    for level in _FALLBACK.get(wanted, (level_from_name(wanted),)):
        if members >= level.min_members:
            return level
    return None


def draft_request(workload: Workload | None, disks: Sequence[Disk], device: str) -> CreateRequest | None:
    """A first request for the plan step: the workload's level and chunk on the picked disks, no bitmap."""
    level = draft_level(workload, len(disks))
    if level is None:
        return None
    chunk = workload.suggested_chunk_kib if workload is not None and level.uses_chunk else None
    return CreateRequest(device=device, level=level, members=tuple(disks), chunk_kib=chunk)


@dataclass(frozen=True)
class DiskCheck:
    """The draft for the picked disks: its request, the plan or why it cannot be made, and the findings."""

    request: CreateRequest | None
    plan: CreatePlan | None
    problems: tuple[str, ...]
    findings: tuple[Finding, ...]


def check_disks(root: SystemRoot, workload: Workload | None, disks: Sequence[Disk], device: str) -> DiskCheck:
    """Plan the draft and ask the advisor about it and this machine's CPU and parity routines.

    Without a plan (one disk, or a draft plan_create refused) the links of the picked disks are still checked.
    """
    request = draft_request(workload, disks, device)
    plan = None
    problems: tuple[str, ...] = ()
    if request is not None:
        try:
            plan = plan_create(request)
        except PlanRejected as exc:
            problems = tuple(exc.problems)
    with Sampler(root) as sampler:
        # For the CPU rules only: arrays already on the system have nothing to do with the picked disks.
        snapshot = dataclasses.replace(sampler.sample(), arrays=(), md_threads=())
    inputs = AdviceInput(
        inventory=None if plan is not None else Inventory(disks=tuple(disks), arrays=(), privileged=True, udev=True),
        snapshots=(snapshot,),
        plan=plan,
        workload=workload,
        parity=read_parity_routines(root) if plan is not None and plan.level.parity else None,
    )
    return DiskCheck(request, plan, problems, advise(inputs))


def before_run_findings(inventory: Inventory, device: str) -> tuple[Finding, ...]:
    """What would spoil a benchmark on ``device`` now: a resync running on it (critical)."""
    name = device.rsplit("/", 1)[-1]
    return tuple(
        f for f in rule_resync(AdviceInput(inventory=inventory, benchmark_target=device)) if f.id == f"resync:{name}"
    )


# What a weakest-link run can show about the array it measured (the advisor's measured reasoning).
_MEASURED_PREFIXES = ("measured-slow-member:", "member-spread:", "parallelism:", "run-during-resync:", "busy-member:")


def after_run_findings(inventory: Inventory | None, runs: Sequence[RunRecord]) -> tuple[Finding, ...] | None:
    """What the guide's weakest-link run showed, reasoned as `mdtui advise` does: the measured slow member (not
    a link guess), or too little parallelism, or a resync that explains the figures; empty when healthy, None
    when the runs hold no whole weakest-link result to reason from."""
    figures = weakest_link_figures(runs)
    if not figures:
        return None
    inputs = AdviceInput(inventory=inventory, runs=tuple(runs), weakest_link=figures)
    return tuple(f for f in advise(inputs) if f.id.startswith(_MEASURED_PREFIXES))


def experiment_writes(key: str) -> bool:
    """The governor A/B runs finding 2's sync-random preset (docs/findings.md), which writes; the sweep only reads."""
    return key == "governor-ab"


def run_experiment(
    key: str,
    runner: RunPreset,
    device: str,
    *,
    root: SystemRoot,
    quick: bool = True,
    cancel: threading.Event | None = None,
    store: ResultsStore | None = None,
) -> ExperimentResult:
    """One of the guide's experiments on the array it made; with ``store`` the sweep stops by sweep_stop's rule."""
    if key == "governor-ab":
        return governor_ab(runner, device, root=root, quick=quick, cancel=cancel)
    if key == "parallelism-sweep":
        return parallelism_sweep(runner, device, quick=quick, cancel=cancel, store=store)
    raise PlanError(f"the guide offers {', '.join(GUIDE_EXPERIMENTS)}, not {key!r}")


def suggested_experiment(findings: Sequence[Finding]) -> str:
    """The governor A/B when a finding points at the CPU governor, else the parallelism sweep."""
    if any(f.experiment == "governor-ab" for f in findings):
        return "governor-ab"
    return "parallelism-sweep"


def run_line(run: RunRecord) -> str:
    """One stored run with its figures: "  #12 guide: weakest link · array md0: read 2,000 MB/s"."""
    figures = []
    if run.metrics.read_bw_bytes_per_s:
        figures.append(f"read {rate_mb_s(run.metrics.read_bw_bytes_per_s)}")
    if run.metrics.write_bw_bytes_per_s:
        figures.append(f"write {rate_mb_s(run.metrics.write_bw_bytes_per_s)}")
    if run.metrics.md_thread_cpu_pct is not None:
        figures.append(f"md thread {run.metrics.md_thread_cpu_pct:.0f}% CPU")
    return f"  {run.title}: {', '.join(figures) or run.status.value}"


def summary_lines(state: GuideState, runs: Sequence[RunRecord] = ()) -> list[str]:
    """The report at the end of the guide; ``runs`` are the stored runs it made, for their figures."""
    by_id = {run.id: run for run in runs}
    lines = [f"Purpose: {state.workload.title if state.workload else 'not given'}"]
    if state.disks:
        lines.append("Disks: " + ", ".join(d.name for d in state.disks))
    counts = {s: sum(1 for f in state.findings if f.severity is s) for s in Severity}
    lines.append(
        f"Findings: {counts[Severity.CRITICAL]} critical, {counts[Severity.WARNING]} warnings, "
        f"{counts[Severity.INFO]} notes"
    )
    lines += [f"  {f.severity.mark} {f.title}" for f in state.findings]
    if state.plan is not None and state.device is not None:
        plan = state.plan
        chunk = f", chunk {plan.chunk_bytes // 1024} KiB" if plan.chunk_bytes else ""
        lines.append(f"Created: {state.device}, {plan.level.name} on {plural(len(plan.member_paths), 'member')}{chunk}")
        lines.append("  " + " ".join(plan.argv))
    else:
        lines.append("Created: nothing")
    if state.weakest_link_runs:
        lines.append("Weakest-link run:")
        lines += [run_line(by_id[i]) for i in state.weakest_link_runs if i in by_id]
    if state.experiment is not None:
        lines.append(f"Experiment: {EXPERIMENT_TITLES[state.experiment.key]}")
        for point in state.experiment.runs:
            lines += [run_line(by_id[i]) for i in point.run_ids if i in by_id]
        lines += [f"  {note}" for note in state.experiment.notes]
    run_ids = [*state.weakest_link_runs, *(state.experiment.run_ids if state.experiment else ())]
    if run_ids:
        lines.append(f"Stored runs: {', '.join(f'#{i}' for i in run_ids)}; compare them in the results history (h).")
    if state.skipped:
        lines.append("Skipped: " + ", ".join(dict(STEPS)[step] for step in state.skipped))
    lines += [f"Note: {note}" for note in state.notes]
    return lines


def guide_flag_path() -> Path:
    return state_dir() / GUIDE_FLAG


def should_show_guide(db_path: Path, flag: Path | None = None) -> bool:
    """First run: the guide was never closed here and the results store holds no runs."""
    if (flag or guide_flag_path()).exists():
        return False
    try:
        with ResultsStore(db_path, create=False) as store:
            return not store.list_runs(limit=1)
    except StoreError:
        # No database yet (or one mdtui cannot read): nothing has been measured here.
        return True


def mark_guide_seen(flag: Path | None = None) -> None:
    """Remember that the guide was shown, so it opens by itself only once (g opens it any time).

    The flag lives in mdtui's state directory and is written as every state file is (state_dir.StateDir):
    a link or FIFO planted under its name is refused, never followed.
    """
    path = flag or guide_flag_path()
    StateDir(path.parent).write(path.name, b"the guided flow was shown; press g in mdtui to open it again\n")
