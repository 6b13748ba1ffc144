"""The benchmark engine on the captured real-links tree: targets, write safety, plans, reports, orchestration.

Orchestration tests replace the process runner with canned fio documents run through the real fio
parser (fio cannot run against a captured tree); tests/unit/test_bench_fio.py runs real fio.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mdtui.bench import session
from mdtui.bench.check import CheckOutcome, run_check_pass
from mdtui.bench.md_thread import MdThreadMeter
from mdtui.bench.output import result_rows, result_to_json
from mdtui.bench.plan import BenchPlan, plan_bench
from mdtui.bench.progress import StepFinished, StepOutcome, StepProgress, StepStarted, StepUpdate
from mdtui.bench.report import weakest_link_report
from mdtui.bench.requests import BenchRequest, JobOptions, parse_size
from mdtui.bench.session import run_bench
from mdtui.bench.targets import TargetKind, resolve_target
from mdtui.errors import PlanError, SafetyError
from mdtui.execute.argv import job_argv
from mdtui.execute.fio import document_stats
from mdtui.execute.presets import Step
from mdtui.execute.record import metrics_from_results
from mdtui.model.inventory import Inventory
from mdtui.model.job import MIB, IoEngine, JobResult, JobSpec, JobStatus, Progress, RwMode, Tool
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
MB = 1_000_000


@pytest.fixture(scope="module")
def root() -> SystemRoot:
    return SystemRoot(TREE)


@pytest.fixture(scope="module")
def inventory(root: SystemRoot) -> Inventory:
    return scan(root, privileged=True)


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    with ResultsStore(tmp_path / "results.db") as opened:
        yield opened


def fio_document(name: str, read_bps: float, write_bps: float = 0.0, runtime_ms: int = 2000) -> dict[str, Any]:
    """A final fio JSON document in fio 3.33's shape (see tests/fixtures/fio) for one grouped job."""

    def direction(bps: float) -> dict[str, Any]:
        io_bytes = int(bps * runtime_ms / 1000)
        ios = io_bytes // 4096
        if not ios:
            return {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0, "clat_ns": {"N": 0}}
        return {
            "io_bytes": io_bytes,
            "bw_bytes": int(bps),
            "iops": ios / (runtime_ms / 1000),
            "runtime": runtime_ms,
            "total_ios": ios,
            "clat_ns": {"N": ios, "mean": 1000.0, "max": 9000.0, "percentile": {"50.000000": 900, "99.000000": 3000}},
            "lat_ns": {"N": ios, "mean": 1100.0},
        }

    job = {"jobname": name, "error": 0, "elapsed": runtime_ms // 1000, "usr_cpu": 1.5, "sys_cpu": 3.0}
    return {"fio version": "fio-3.33", "jobs": [{**job, "read": direction(read_bps), "write": direction(write_bps)}]}


def canned(spec: JobSpec, read_bps: float, write_bps: float = 0.0, status: JobStatus = JobStatus.COMPLETE) -> JobResult:
    document = fio_document(spec.name, read_bps, write_bps)
    total, jobs = document_stats(document)
    return JobResult(
        spec=spec,
        status=status,
        argv=tuple(job_argv(spec)),
        returncode=0 if status is JobStatus.COMPLETE else 1,
        duration_s=2.0,
        total=total,
        jobs=jobs,
        error=None if status is JobStatus.COMPLETE else "fio exited with code 1: fio: pid=1, err=5/file:io_u.c",
        raw=json.dumps(document),
    )


class FakeRunner:
    """Stands in for mdtui.execute.runners.run_step: canned figures per job target, one progress report each."""

    def __init__(self, rates: Callable[[JobSpec], tuple[float, float]], fail_step: int | None = None) -> None:
        self.rates = rates
        self.fail_step = fail_step
        self.steps: list[Step] = []

    async def __call__(
        self, step: Step, on_progress: Any = None, *, cancel: Any = None, timeout_s: Any = None, **_: Any
    ):
        self.steps.append(step)
        status = JobStatus.FAILED if self.fail_step == len(self.steps) else JobStatus.COMPLETE
        results = []
        for spec in step.jobs:
            read, write = self.rates(spec)
            if on_progress is not None:
                on_progress(spec, Progress(1.0, int(read), int(write), read, write, read / 4096, write / 4096))
            results.append(canned(spec, read, write, status))
        return tuple(results)


def by_target(rates: dict[str, float]) -> Callable[[JobSpec], tuple[float, float]]:
    return lambda spec: (0.0, rates[spec.target]) if spec.writes else (rates[spec.target], 0.0)


def plan(inventory: Inventory, root: SystemRoot, preset: str, target: str, **kwargs: Any) -> BenchPlan:
    return plan_bench(BenchRequest(preset, target, **kwargs), inventory, root)


# --- targets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["md0", "/dev/md0", "/dev/disk/by-id/md-name-mdtui-lab:0"])
def test_array_targets_resolve_by_name_path_or_link(text: str, inventory: Inventory, root: SystemRoot) -> None:
    target = resolve_target(text, inventory, root)
    assert (target.kind, target.name, target.path) == (TargetKind.ARRAY, "md0", "/dev/md0")
    assert target.array is inventory.array("md0")
    assert target.size_bytes == inventory.array("md0").size_bytes


def test_disk_target_by_id_link(inventory: Inventory, root: SystemRoot) -> None:
    target = resolve_target("/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_NVMESLOW0", inventory, root)
    assert (target.kind, target.name, target.path) == (TargetKind.DISK, "nvme4n1", "/dev/nvme4n1")
    assert target.disk is not None and target.disk.serial == "NVMESLOW0"


def test_unknown_device_names_what_exists(inventory: Inventory, root: SystemRoot) -> None:
    with pytest.raises(PlanError, match=r"no md array, disk or block device '/dev/sdz'.*arrays: md0, md1, md2"):
        resolve_target("/dev/sdz", inventory, root)


def test_files_directories_and_new_files(tmp_path: Path, inventory: Inventory, root: SystemRoot) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * 8192)
    target = resolve_target(str(image), inventory, root)
    assert (target.kind, target.size_bytes, target.exists) == (TargetKind.FILE, 8192, True)
    assert target.device is None
    new = resolve_target(str(tmp_path / "new.img"), inventory, root)
    assert (new.kind, new.exists) == (TargetKind.FILE, False)
    with pytest.raises(PlanError, match="is a directory"):
        resolve_target(str(tmp_path), inventory, root)
    with pytest.raises(PlanError, match=r"directory .* does not exist"):
        resolve_target(str(tmp_path / "missing" / "x.img"), inventory, root)
    with pytest.raises(PlanError, match="does not exist; fio can create it only for a write job given a --size"):
        plan(inventory, root, "custom", str(tmp_path / "new.img"))
    options = JobOptions(rw=RwMode.WRITE, size_bytes=MIB)
    created = plan(inventory, root, "custom", str(tmp_path / "new.img"), options=options)
    assert created.writes and created.refusals == ()


def test_parse_size() -> None:
    sizes = [parse_size(t) for t in ("512", "4k", "4K", "1m", "2GiB", "3 MB")]
    assert sizes == [512, 4096, 4096, MIB, 2 << 30, 3 * MIB]
    with pytest.raises(PlanError, match="not a size"):
        parse_size("fast")


# --- write safety ---------------------------------------------------------------------------------


def test_write_on_a_mounted_disk_is_refused_with_the_reason(inventory: Inventory, root: SystemRoot) -> None:
    mounted = next(d for d in inventory.disks if any(r.kind.value == "mounted" for r in d.in_use))
    refused = plan(inventory, root, "custom", mounted.name, options=JobOptions(rw=RwMode.WRITE))
    assert refused.writes
    assert any("mounted at /mnt/data" in reason for reason in refused.refusals)
    with pytest.raises(SafetyError, match=rf"refusing to run custom on {mounted.dev_path}: it writes"):
        refused.ensure_allowed()
    # Reading the same disk is always allowed.
    assert plan(inventory, root, "custom", mounted.name).refusals == ()


def test_write_on_an_array_member_or_unchecked_device_is_refused(inventory: Inventory, root: SystemRoot) -> None:
    member = plan(inventory, root, "disk-mark", "nvme0n1")
    assert member.refusals == ("nvme0n1 is in use: md-member: active member of md0",)
    held = plan(inventory, root, "custom", "dm-0", options=JobOptions(rw=RwMode.RANDWRITE))
    assert held.target.kind is TargetKind.BLOCK
    assert "neither a whole disk nor an md array" in held.refusals[0]


def test_write_on_a_free_disk_or_unmounted_array_is_allowed(inventory: Inventory, root: SystemRoot) -> None:
    free = next(d for d in inventory.disks if d.available and d.transport.value == "nvme")
    assert plan(inventory, root, "sync-random", free.name).refusals == ()
    assert plan(inventory, root, "disk-mark", "md2").refusals == ()


def test_write_without_root_is_refused(root: SystemRoot) -> None:
    unprivileged = scan(root, privileged=False)
    assert "needs root" in plan(unprivileged, root, "disk-mark", "md2").refusals[0]


async def test_a_write_needs_the_typed_target_before_anything_runs(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = FakeRunner(lambda spec: (0.0, 100 * MB))
    monkeypatch.setattr(session, "run_step", runner)
    writes = plan(inventory, root, "custom", "md2", options=JobOptions(rw=RwMode.WRITE, runtime_s=2))
    for wrong in (None, "md2", "/dev/md1"):
        with pytest.raises(SafetyError, match="confirm by naming it"):
            await run_bench(writes, root=root, store=store, confirmed=wrong)
    assert runner.steps == [] and store.list_runs() == []


async def test_recheck_refuses_a_disk_mounted_after_the_plan(
    tmp_path: Path, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "tree"
    shutil.copytree(TREE, copy, symlinks=True)
    root = SystemRoot(copy)
    inventory = scan(root, privileged=True)
    free = next(d for d in inventory.disks if d.available and d.transport.value == "nvme")
    planned = plan(inventory, root, "custom", free.name, options=JobOptions(rw=RwMode.WRITE, runtime_s=2))
    assert planned.refusals == ()
    mountinfo = copy / "proc" / "self" / "mountinfo"
    mountinfo.write_text(
        mountinfo.read_text() + f"99 28 {free.major_minor} / /mnt/late rw,relatime - ext4 {free.dev_path} rw\n"
    )
    runner = FakeRunner(lambda spec: (0.0, 100 * MB))
    monkeypatch.setattr(session, "run_step", runner)
    with pytest.raises(SafetyError, match=rf"(?s)refusing to write to {free.dev_path}:.*mounted at /mnt/late"):
        # The scan the plan came from is passed in, yet a write is checked on a fresh one.
        await run_bench(planned, root=root, store=store, confirmed=free.dev_path, inventory=inventory)
    assert runner.steps == [] and store.list_runs() == []


# --- plans ----------------------------------------------------------------------------------------


def test_weakest_link_plan_reads_each_member_then_all_then_the_array(inventory: Inventory, root: SystemRoot) -> None:
    planned = plan(inventory, root, "weakest-link", "md0", quick=True)
    members = [f"/dev/{m.name}" for m in inventory.array("md0").members]
    assert [m.path for m in planned.members] == members
    assert [step.jobs[0].target for step in planned.steps[: len(members)]] == members
    assert [spec.target for spec in planned.steps[len(members)].jobs] == members
    assert planned.steps[-1].jobs[0].target == "/dev/md0"
    assert not planned.writes and planned.refusals == ()
    assert any("running a resync" in w for w in planned.warnings)
    assert set(planned.sampled_devices()) == {"md0", *(m.name for m in inventory.array("md0").members)}
    chosen = plan(inventory, root, "weakest-link", "md0", members=("nvme0n1", "/dev/nvme1n1"))
    assert [m.name for m in chosen.members] == ["nvme0n1", "nvme1n1"] and len(chosen.steps) == 4
    with pytest.raises(PlanError, match="give an md array as the target, or list the devices with --members"):
        plan(inventory, root, "weakest-link", "nvme4n1")


def test_runtime_and_size_override_preset_steps(inventory: Inventory, root: SystemRoot) -> None:
    short = plan(inventory, root, "weakest-link", "md0", quick=True, options=JobOptions(runtime_s=2))
    assert {spec.runtime_s for step in short.steps for spec in step.jobs} == {2}
    assert short.expected_s == 2 * len(short.steps)
    small = plan(inventory, root, "sync-random", "md2", options=JobOptions(size_bytes=16 * MIB))
    assert {spec.size_bytes for step in small.steps for spec in step.jobs} == {16 * MIB}
    assert small.expected_s is None
    with pytest.raises(PlanError, match="no time-based fio steps for --runtime"):
        plan(inventory, root, "sync-random", "md2", options=JobOptions(runtime_s=2))
    lighter = plan(inventory, root, "weakest-link", "md0", options=JobOptions(iodepth=4, numjobs=2))
    assert {(spec.iodepth, spec.numjobs) for step in lighter.steps for spec in step.jobs} == {(4, 2)}
    with pytest.raises(PlanError, match="offset-sweep has no fio steps for --numjobs"):
        plan(inventory, root, "offset-sweep", "md2", options=JobOptions(numjobs=2))
    with pytest.raises(PlanError, match="--bs, --ioengine only apply to --preset custom"):
        plan(inventory, root, "disk-mark", "md2", options=JobOptions(block_size_bytes=4096, ioengine=IoEngine.SYNC))
    with pytest.raises(PlanError, match="--members only applies to the weakest-link preset"):
        plan(inventory, root, "disk-mark", "md2", members=("sdd",))


def test_parity_cost_needs_an_array_and_checks_redundant_ones(inventory: Inventory, root: SystemRoot) -> None:
    with pytest.raises(PlanError, match="give an array as the target"):
        plan(inventory, root, "parity-cost", "nvme4n1")
    raid6 = plan(inventory, root, "parity-cost", "md0", quick=True)
    assert raid6.check_pass and all(step.measure_md_cpu for step in raid6.steps)
    assert any("the check pass cannot start until it ends" in w for w in raid6.warnings)
    assert "then a check pass" in "\n".join(raid6.describe())


def test_offset_sweep_uses_the_target_size(inventory: Inventory, root: SystemRoot) -> None:
    sweep = plan(inventory, root, "offset-sweep", "md2", quick=True)
    last = sweep.steps[4].jobs[0]
    size = inventory.array("md2").size_bytes
    assert last.tool is Tool.DD and last.offset_bytes + last.size_bytes <= size
    assert not sweep.writes


def test_plan_description_shows_exact_argv(inventory: Inventory, root: SystemRoot) -> None:
    lines = plan(inventory, root, "custom", "md2", options=JobOptions(rw=RwMode.RANDWRITE, runtime_s=3)).describe()
    assert lines[1] == "WRITES to /dev/md2: its data will be overwritten"
    assert any(line.strip().startswith("fio --name=custom --filename=/dev/md2 --rw=randwrite") for line in lines)


# --- progress -------------------------------------------------------------------------------------


def test_remaining_time_for_time_and_size_based_steps() -> None:
    timed = Step("t", (JobSpec("t", "/dev/x", 4096, runtime_s=10),))
    sized = Step("s", (JobSpec("s", "/dev/x", 4096, size_bytes=100 * MB, numjobs=2),))
    tracker = StepProgress([timed, sized], 0)
    update = tracker.update(timed.jobs[0], Progress(4.0, 0, 0, 50 * MB, 0.0, 10.0, 0.0))
    # 6 s left of this step, then 200 MB at the 50 MB/s just seen.
    assert update.step_remaining_s == pytest.approx(6.0)
    assert update.remaining_s == pytest.approx(6.0 + 4.0)
    sizing = StepProgress([timed, sized], 1, rate_hint=50 * MB)
    update = sizing.update(sized.jobs[0], Progress(1.0, 100 * MB, 0, 100 * MB, 0.0, 1.0, 0.0))
    assert update.step_remaining_s == pytest.approx(1.0)
    unknown = StepProgress([sized], 0).update(sized.jobs[0], Progress(1.0, 0, 0, 0.0, 0.0, 0.0, 0.0))
    assert unknown.step_remaining_s is None and unknown.remaining_s is None


def test_jobs_at_once_give_one_update_per_round_of_reports() -> None:
    jobs = tuple(JobSpec(f"j{i}", f"/dev/x{i}", 4096, runtime_s=10) for i in range(2))
    tracker = StepProgress([Step("both", jobs)], 0)

    def report(job: int, second: float, rate: float) -> StepUpdate | None:
        return tracker.update(jobs[job], Progress(second, 0, 0, rate, 0.0, 1.0, 0.0))

    assert report(0, 1.0, 100.0) is None  # the other job has not reported yet
    first = report(1, 1.0, 50.0)
    assert first is not None and first.bytes_per_s == 150.0 and first.iops == 2.0
    assert report(1, 2.0, 60.0) is None
    assert report(0, 2.0, 110.0).bytes_per_s == 170.0
    # A job that stopped reporting (finished early) holds the updates back 1.5 s at most.
    assert report(0, 3.0, 120.0) is None
    assert report(0, 3.6, 130.0).bytes_per_s == 190.0


# --- the weakest-link report ----------------------------------------------------------------------


def _outcomes(planned: BenchPlan, rates: dict[str, float], together_scale: float = 1.0) -> list[StepOutcome]:
    outcomes = []
    for index, step in enumerate(planned.steps):
        scale = together_scale if len(step.jobs) > 1 else 1.0
        results = tuple(canned(spec, rates[spec.target] * scale) for spec in step.jobs)
        outcomes.append(StepOutcome(index, step, results, JobStatus.COMPLETE, 0.0, 2.0))
    return outcomes


def test_weakest_link_report_names_the_slow_member(inventory: Inventory, root: SystemRoot) -> None:
    planned = plan(inventory, root, "weakest-link", "md0", quick=True)
    rates = {"/dev/nvme0n1": 1000 * MB, "/dev/nvme1n1": 1010 * MB, "/dev/nvme2n1": 990 * MB}
    rates |= {"/dev/nvme3n1": 20 * MB, "/dev/md0": 81 * MB}
    report = weakest_link_report(planned, _outcomes(planned, rates, together_scale=0.5))
    assert report.slowest is not None and report.slowest.device == "/dev/nvme3n1"
    assert report.predicted_bytes_per_s == pytest.approx(80 * MB)
    assert report.vs_predicted == pytest.approx(81 / 80)
    assert report.vs_sum == pytest.approx(81 / 3020)
    findings = "\n".join(report.findings())
    assert "Slowest member: /dev/nvme3n1 at 20 MB/s alone, 0.02× the median of the others: it holds" in findings
    assert "/dev/md0 read 81 MB/s: 1.01× slowest × 4 (80 MB/s)" in findings
    assert "and 0.027× the members' sum alone (3,020 MB/s)." in findings
    assert "runs at its slowest member's pace: look at /dev/nvme3n1" in findings
    assert "All members at once read 1,510 MB/s, 0.50× their sum alone" in findings
    # md0 is a raid6 of four flash members: the md model reads it from all four, so slowest × 4 is its figure,
    # not an upper bound (the report's old closing line).
    assert "upper bound" not in findings
    assert report.verdict_json() == {
        "named": ["nvme3n1"], "unsure": [], "spread": [], "stripe_factor": 4.0,
        "shared_limit": True, "short_of_parallelism": False,
    }  # fmt: skip




def test_weakest_link_report_without_an_outlier_or_with_missing_steps(inventory: Inventory, root: SystemRoot) -> None:
    planned = plan(inventory, root, "weakest-link", "md0")
    even = {f"/dev/nvme{i}n1": 1000 * MB for i in range(4)} | {"/dev/md0": 2000 * MB}
    report = weakest_link_report(planned, _outcomes(planned, even))
    findings = "\n".join(report.findings())
    assert "holds the array back" not in findings
    assert "reads below what its members allow alone (slowest × 4) and together" in findings
    assert "All members at once" not in findings
    cut = weakest_link_report(planned, _outcomes(planned, even)[:2])
    assert cut.array_bytes_per_s is None and cut.predicted_bytes_per_s is None
    assert [m.alone_bytes_per_s for m in cut.members] == [1000 * MB, 1000 * MB, None, None]


# --- md thread CPU and the check pass -------------------------------------------------------------


def _thread(proc: Path, pid: int, comm: str, ticks: int) -> None:
    (proc / str(pid)).mkdir(parents=True, exist_ok=True)
    (proc / str(pid) / "comm").write_text(comm + "\n")
    fields = ["S", "2"] + ["0"] * 9 + [str(ticks), "0"] + ["0"] * 30
    (proc / str(pid) / "stat").write_text(f"{pid} ({comm}) " + " ".join(fields) + "\n")


def test_md_thread_meter_counts_threads_that_come_and_go(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    _thread(proc, 100, "md0_raid6", 500)
    _thread(proc, 200, "md1_raid1", 900)  # another array's thread is not counted
    now = [0.0]
    meter = MdThreadMeter(SystemRoot(tmp_path), "md0", clock_ticks_per_s=100, clock=lambda: now[0])
    meter.start()
    _thread(proc, 100, "md0_raid6", 520)
    _thread(proc, 101, "md0_resync", 30)  # started during the interval: all of its time counts
    meter.poll()
    shutil.rmtree(proc / "101")  # gone before the end; its last reading is kept
    _thread(proc, 100, "md0_raid6", 540)
    _thread(proc, 200, "md1_raid1", 990)
    now[0] = 2.0
    # (40 + 30) ticks at 100/s over 2 s = 35 % of one core.
    assert meter.stop() == pytest.approx(35.0)
    assert meter.threads == ("md0_raid6", "md0_resync")
    none = MdThreadMeter(SystemRoot(tmp_path), "md7", clock_ticks_per_s=100, clock=lambda: now[0])
    none.start()
    assert none.stop() is None


def _md_sysfs(tmp_path: Path, action: str = "idle") -> Path:
    md = tmp_path / "sys" / "block" / "md0" / "md"
    md.mkdir(parents=True)
    (md / "sync_action").write_text(action + "\n")
    (md / "sync_completed").write_text("none\n")
    (md / "sync_speed").write_text("none\n")
    (md / "mismatch_cnt").write_text("0\n")
    (md / "component_size").write_text("65536\n")
    return md


async def _kernel(md: Path, steps: Sequence[str], *, honour_idle: bool = True) -> None:
    """Plays md: waits for "check", reports progress, then goes idle (or stops when told idle)."""
    while (md / "sync_action").read_text().strip() != "check":
        await asyncio.sleep(0.01)
    for completed in steps:
        if honour_idle and (md / "sync_action").read_text().strip() == "idle":
            break
        (md / "sync_completed").write_text(completed + "\n")
        (md / "sync_speed").write_text("51200\n")
        await asyncio.sleep(0.05)
    (md / "sync_action").write_text("idle\n")
    (md / "mismatch_cnt").write_text("8\n")


async def test_check_pass_follows_sync_action_until_idle(tmp_path: Path) -> None:
    md = _md_sysfs(tmp_path)
    updates: list[session.CheckUpdate] = []
    kernel = asyncio.create_task(_kernel(md, ["0 / 131072", "65536 / 131072", "131072 / 131072"]))
    outcome = await run_check_pass(SystemRoot(tmp_path), "md0", on_update=updates.append, poll_s=0.02)
    await kernel
    assert outcome.status is JobStatus.COMPLETE and not outcome.skipped
    assert outcome.component_bytes == 131072 * 512 and outcome.mismatch_sectors == 8
    assert outcome.bytes_per_s == pytest.approx(outcome.component_bytes / outcome.duration_s)
    assert any(u.fraction == 0.5 for u in updates)
    assert all(u.speed_bytes_per_s in (None, 51200 * 1024) for u in updates)


async def test_check_pass_cancel_sets_idle_and_busy_arrays_are_skipped(tmp_path: Path) -> None:
    md = _md_sysfs(tmp_path)
    cancel = asyncio.Event()
    cancel.set()
    kernel = asyncio.create_task(_kernel(md, ["1 / 131072"] * 200))
    outcome = await asyncio.wait_for(run_check_pass(SystemRoot(tmp_path), "md0", cancel=cancel, poll_s=0.02), 5)
    await kernel
    assert outcome.status is JobStatus.CANCELLED and outcome.bytes_per_s is None
    busy = _md_sysfs(tmp_path / "busy", "resync")
    skipped = await run_check_pass(SystemRoot(tmp_path / "busy"), "md0", poll_s=0.02)
    assert skipped.skipped == "md0 is busy with resync; no check pass"
    assert (busy / "sync_action").read_text().strip() == "resync"


# --- orchestration with canned results ------------------------------------------------------------


async def test_weakest_link_run_stores_every_step_and_reports(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    rates = {f"/dev/nvme{i}n1": 1000 * MB for i in range(3)} | {"/dev/nvme3n1": 20 * MB, "/dev/md0": 80 * MB}
    runner = FakeRunner(by_target(rates))
    monkeypatch.setattr(session, "run_step", runner)
    planned = plan(inventory, root, "weakest-link", "md0", quick=True)
    events: list[Any] = []
    result = await run_bench(planned, root=root, store=store, on_event=events.append, sample_interval_s=None)
    assert result.status is RunStatus.COMPLETE and not result.partial
    assert len(runner.steps) == len(planned.steps) == len(result.run_ids)
    assert [type(e) for e in events[:3]] == [StepStarted, StepUpdate, StepFinished]
    assert result.weakest_link is not None and result.weakest_link.slowest.device == "/dev/nvme3n1"
    runs = {run.id: run for run in store.list_runs()}
    assert set(runs) == set(result.run_ids)
    first, together, array = (store.get_run(i) for i in (result.run_ids[0], result.run_ids[-2], result.run_ids[-1]))
    assert {run.label for run in runs.values()} == {"weakest-link md0"}
    assert first.params["step"] == "nvme0n1 alone" and first.array == {} and first.context["member_of"] == "md0"
    assert first.context["devices"][0]["serial"] == "NVME0"
    assert together.params["step"] == "all members at once" and together.params["processes"] == 4
    assert array.params["step"] == "array md0" and array.array["level"] == "raid6"
    assert [m["name"] for m in array.array["members"]] == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"]
    assert array.metrics.read_bw_bytes_per_s == 80 * MB and array.status is RunStatus.COMPLETE
    assert json.loads(array.fio_json)["jobs"][0]["read"]["bw_bytes"] == 80 * MB
    assert together.metrics.read_bw_bytes_per_s == 3020 * MB
    assert array.context["governor"] == "not available" and array.context["fio_version"].startswith("fio-")
    document = result_to_json(result)
    assert document["weakest_link"]["slowest"] == "/dev/nvme3n1"
    assert document["weakest_link"]["slowest_times_n_bytes_per_s"] == 80 * MB
    assert document["steps"][-1]["bytes_per_s"] == 80 * MB
    assert [row[1] for row in result_rows(result)][-1] == "array md0"


@pytest.mark.parametrize(
    ("array_bps", "named", "spread"),
    [
        (2800 * MB, ["nvme0n1"], []),  # 700 × 4: the array runs at nvme0n1's pace
        (3900 * MB, [], ["nvme0n1"]),  # the array read more than 700 × 4 allows: nvme0n1 is only slower
    ],
)
async def test_one_stored_weakest_link_run_gives_one_verdict_in_bench_and_advise(
    inventory: Inventory,
    root: SystemRoot,
    store: ResultsStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    array_bps: float,
    named: list[str],
    spread: list[str],
) -> None:
    """Issue 41: a member at 0.7× its peers whose figure × N explains the array is named by `bench --json` and
    `advise --json` alike (the advisor named nobody before: its 0.6× threshold and stated 3.5× scatter held it
    back while the bench report said "it holds the array back"); one that does not explain it is spread in both."""
    from mdtui.cli.main import main

    # real-links as captured has md0 mid-resync, and a run during a resync is the resync's figure, not the
    # members' (both would say so first): the same tree with the resync finished.
    settled = tmp_path / "tree"
    shutil.copytree(TREE, settled, symlinks=True)
    mdstat = settled / "proc" / "mdstat"
    mdstat.write_text("".join(line for line in mdstat.read_text().splitlines(True) if "resync =" not in line))
    (settled / "sys" / "block" / "md0" / "md" / "sync_action").write_text("idle\n")
    root = SystemRoot(settled)
    inventory = scan(root, privileged=True)
    assert all(array.sync is None for array in inventory.arrays)
    rates = {"/dev/nvme0n1": 700 * MB} | {f"/dev/nvme{i}n1": 1000 * MB for i in (1, 2, 3)} | {"/dev/md0": array_bps}
    monkeypatch.setattr(session, "run_step", FakeRunner(by_target(rates)))
    planned = plan(inventory, root, "weakest-link", "md0", quick=True)
    result = await run_bench(planned, root=root, store=store, sample_interval_s=None)
    verdict = result_to_json(result)["weakest_link"]["verdict"]
    assert (verdict["named"], verdict["spread"]) == (named, spread)
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "results.db"))
    assert main(["--root", str(settled), "advise", "--json", "--samples", "0"]) == 0
    findings = {f["id"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    measured = findings.get("measured-slow-member:md0")
    assert (measured["members"] if measured else []) == named, findings.keys()
    if spread:
        assert findings["member-spread:md0"]["title"].startswith("Spread: nvme0n1 read alone 700 MB/s")


async def test_a_failed_step_ends_the_run_and_later_steps_are_not_run(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = FakeRunner(lambda spec: (500 * MB, 0.0), fail_step=2)
    monkeypatch.setattr(session, "run_step", runner)
    planned = plan(inventory, root, "weakest-link", "md0", quick=True)
    result = await run_bench(planned, root=root, store=store, sample_interval_s=None)
    assert result.status is RunStatus.FAILED and result.partial
    assert len(result.steps) == 2 and "err=5" in result.error
    assert [run.status for run in reversed(store.list_runs())] == [RunStatus.COMPLETE, RunStatus.FAILED]
    assert [row[-1] for row in result_rows(result)] == ["ok", "failed"] + ["not run"] * (len(planned.steps) - 2)
    assert result_to_json(result)["not_run"][0] == "nvme2n1 alone"


async def test_cancel_keeps_what_ran_and_marks_the_run(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    cancel = asyncio.Event()

    async def cancelled_second_step(step: Step, on_progress: Any = None, *, cancel: Any = None, **_: Any):
        if runner.steps:
            cancel.set()
            runner.steps.append(step)
            return tuple(canned(spec, 300 * MB, status=JobStatus.CANCELLED) for spec in step.jobs)
        return await runner(step, on_progress, cancel=cancel)

    runner = FakeRunner(lambda spec: (500 * MB, 0.0))
    monkeypatch.setattr(session, "run_step", cancelled_second_step)
    planned = plan(inventory, root, "weakest-link", "md0", quick=True)
    result = await run_bench(planned, root=root, store=store, cancel=cancel, sample_interval_s=None)
    assert result.status is RunStatus.CANCELLED and result.partial
    assert len(runner.steps) == 2
    stored = store.get_run(result.run_ids[-1])
    assert stored.status is RunStatus.CANCELLED
    assert stored.error.startswith("cancelled: the figures cover the part that ran")
    assert stored.metrics.read_bw_bytes_per_s == 300 * MB
    assert result_to_json(result)["partial"] is True


async def test_task_cancellation_finishes_the_stored_run(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def hang(step: Step, on_progress: Any = None, *, cancel: Any = None, timeout_s: Any = None, **_: Any):
        await asyncio.sleep(60)

    monkeypatch.setattr(session, "run_step", hang)
    planned = plan(inventory, root, "custom", "md2", options=JobOptions(runtime_s=60))
    task = asyncio.create_task(run_bench(planned, root=root, store=store))
    while not store.list_runs():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [run.status for run in store.list_runs()] == [RunStatus.CANCELLED]


async def test_parity_cost_records_md_cpu_and_the_check_pass(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = FakeRunner(lambda spec: (0.0, 200 * MB) if spec.writes else (400 * MB, 0.0))
    monkeypatch.setattr(session, "run_step", runner)

    class Meter:
        def __init__(self, root: SystemRoot, array: str) -> None:
            self.array = array

        def start(self) -> None:
            pass

        def stop(self) -> float:
            return 9.5

        threads = ("md2_raid10",)

    async def check(root: SystemRoot, array: str, **kwargs: Any) -> CheckOutcome:
        return CheckOutcome(array, JobStatus.COMPLETE, 4.0, 64 * MIB, 3.25, ("md2_raid10", "md2_resync"), 0)

    monkeypatch.setattr(session, "MdThreadMeter", Meter)
    monkeypatch.setattr(session, "run_check_pass", check)
    planned = plan(inventory, root, "parity-cost", "md2", quick=True)
    assert planned.writes and planned.check_pass
    result = await run_bench(planned, root=root, store=store, confirmed="/dev/md2", sample_interval_s=None)
    assert result.status is RunStatus.COMPLETE
    write, read = (store.get_run(i) for i in result.run_ids[:2])
    assert write.metrics.md_thread_cpu_pct == 9.5 and write.metrics.write_bw_bytes_per_s == 200 * MB
    assert read.metrics.read_bw_bytes_per_s == 400 * MB
    check_run = store.get_run(result.run_ids[-1])
    assert check_run.params["step"] == "check pass" and check_run.metrics.md_thread_cpu_pct == 3.25
    assert result.check is not None and result.check.bytes_per_s == pytest.approx(16 * MIB)
    assert result_rows(result)[-1][1:] == ("check pass (4.0 s)", "17 MB/s/member", "-", "-", "3.2%", "ok")


def test_metrics_sum_concurrent_jobs_from_fios_json() -> None:
    specs = [JobSpec(f"j{i}", f"/dev/x{i}", MIB, runtime_s=2) for i in range(1, 3)]
    metrics = metrics_from_results([canned(specs[0], 100 * MB), canned(specs[1], 50 * MB)], md_thread_cpu_pct=1.0)
    assert metrics.read_bw_bytes_per_s == 150 * MB
    assert metrics.write_bw_bytes_per_s is None  # a direction that moved nothing is unknown, not zero
    assert metrics.cpu_sys_pct == 6.0 and metrics.md_thread_cpu_pct == 1.0
    dd_spec = JobSpec("s0", "/dev/x", 16 * MIB, tool=Tool.DD, size_bytes=32 * MIB)
    dd = JobResult(dd_spec, JobStatus.COMPLETE, (), 0, 1.0, total=canned(specs[0], 70 * MB).total)
    assert metrics_from_results([dd]).read_bw_bytes_per_s == 70 * MB


async def test_a_member_lost_during_a_run_is_said_with_the_run(
    tmp_path: Path, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A copy of the captured tree whose md1 (raid1) has both members when the run is planned and rechecked;
    # while the step runs the kernel's files change to what the capture holds, one member lost ([2/1] [U_]),
    # and the sampler reads that.
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree, symlinks=True)
    mdstat, degraded = tree / "proc" / "mdstat", tree / "sys" / "block" / "md1" / "md" / "degraded"
    lost = mdstat.read_text()
    mdstat.write_text(lost.replace("[2/1] [U_]", "[2/2] [UU]"))
    degraded.write_text("0\n")
    root = SystemRoot(tree)
    runner = FakeRunner(lambda spec: (300 * MB, 0.0))

    async def failing_member(step: Step, on_progress: Any = None, **kwargs: Any) -> Any:
        await asyncio.sleep(0.15)
        mdstat.write_text(lost)
        degraded.write_text("1\n")
        await asyncio.sleep(0.3)  # long enough for the sampler (every 0.1 s) to read the tree again
        return await runner(step, on_progress, **kwargs)

    monkeypatch.setattr(session, "run_step", failing_member)
    planned = plan(scan(root, privileged=True), root, "custom", "md1", quick=True)
    assert planned.target.array is not None and planned.target.array.degraded == 0
    result = await run_bench(planned, root=root, store=store, sample_interval_s=0.1)
    assert result.status is RunStatus.COMPLETE
    [note] = [n for n in result.notes if n.startswith("md1 lost a member during this run")]
    assert "degraded (1 missing) from " in note, note
    assert store.get_run(result.run_ids[0]).error == note
    # Degraded when planned and still degraded: nothing was lost during the run.
    again = await run_bench(
        plan(scan(root, privileged=True), root, "custom", "md1", quick=True), root=root, store=store,
        sample_interval_s=0.1,
    )  # fmt: skip
    assert not [n for n in again.notes if "lost a member" in n] and not store.get_run(again.run_ids[0]).error


@pytest.mark.parametrize(
    ("level", "said", "not_said"),
    [("raid1", "copies left", "parity"), ("raid5", "parity", "copies"), ("raid10", "copies left", "parity")],
)
def test_a_degraded_array_warning_says_what_its_level_reads_from(level: str, said: str, not_said: str) -> None:
    """A degraded raid1 has no parity: its reads come from the copy left (issue 44: it said "from parity")."""
    root = SystemRoot(TREE)
    inventory = scan(root, privileged=True)
    md1 = inventory.array("md1")
    assert md1 is not None and md1.level == "raid1" and md1.degraded == 1
    as_level = dataclasses.replace(md1, level=level)
    arrays = tuple(as_level if a.name == "md1" else a for a in inventory.arrays)
    inventory = dataclasses.replace(inventory, arrays=arrays)
    [warning] = [w for w in plan(inventory, root, "weakest-link", "md1").warnings if "degraded" in w]
    assert warning.startswith("/dev/md1 is degraded (1 missing): ") and said in warning and not_said not in warning


async def test_a_step_that_writes_is_in_the_action_log_and_the_journal(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A write benchmark overwrites a device: recorded like any other action (issue 44, item 10); reads are not."""
    import socket

    from mdtui import audit
    from mdtui.actionlog import ActionLog

    journal = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    journal.bind(str(tmp_path / "dev-log"))
    monkeypatch.setattr(audit, "SYSLOG_SOCKET", str(tmp_path / "dev-log"))
    runner = FakeRunner(lambda spec: (0.0, 200 * MB) if spec.writes else (400 * MB, 0.0))
    monkeypatch.setattr(session, "run_step", runner)
    checked = CheckOutcome("md2", JobStatus.COMPLETE)
    monkeypatch.setattr(session, "run_check_pass", lambda *a, **k: asyncio.sleep(0, checked))
    planned = plan(inventory, root, "parity-cost", "md2", quick=True)
    await run_bench(planned, root=root, store=store, confirmed="/dev/md2", sample_interval_s=None)
    journal.setblocking(False)
    told = [journal.recv(65536).decode()]
    with pytest.raises(BlockingIOError):
        journal.recv(65536)  # the read step is not an action
    journal.close()
    assert "bench parity-cost:" in told[0] and "writes /dev/md2 (complete): ran fio " in told[0], told
    [entry] = ActionLog().entries()
    assert entry["argv"][0] == "fio" and entry["returncode"] == 0


async def test_the_action_log_holds_the_argv_each_writing_job_ran_and_how_it_ended(
    inventory: Inventory, root: SystemRoot, store: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner fits fio's --size to the target (execute.runners): the log records that argv, its exit and
    stderr, for every writing job (it recorded job_argv of the first one, with an exit made up from the step)."""
    from mdtui.actionlog import ActionLog

    canned_runner = FakeRunner(lambda spec: (0.0, 200 * MB) if spec.writes else (400 * MB, 0.0))

    async def runner(step: Step, on_progress: Any = None, **kw: Any) -> tuple[JobResult, ...]:
        results = await canned_runner(step, on_progress, **kw)
        return tuple(
            dataclasses.replace(r, argv=(*r.argv, "--size=123456"), returncode=3, stderr="fio: warn", duration_s=1.5)
            if r.spec.writes
            else r
            for r in results
        )

    monkeypatch.setattr(session, "run_step", runner)
    checked = CheckOutcome("md2", JobStatus.COMPLETE)
    monkeypatch.setattr(session, "run_check_pass", lambda *a, **k: asyncio.sleep(0, checked))
    planned = plan(inventory, root, "parity-cost", "md2", quick=True)
    await run_bench(planned, root=root, store=store, confirmed="/dev/md2", sample_interval_s=None)
    writing = [spec for step in canned_runner.steps for spec in step.jobs if spec.writes]
    entries = ActionLog().entries()
    assert [entry["argv"] for entry in entries] == [[*job_argv(spec), "--size=123456"] for spec in writing]
    assert all((e["returncode"], e["stderr"], e["duration_s"]) == (3, "fio: warn", 1.5) for e in entries), entries
