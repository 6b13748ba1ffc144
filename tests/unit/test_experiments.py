"""Experiments: governor A/B restores the governors however the run ends; sweeps store labelled runs.

The governor tests switch a WRITABLE copy of the procfs fixture's cpufreq tree, because neither this
machine nor the lab guest has cpufreq (the lab blacklists it; VMs rarely expose it). The benchmark runs
themselves are real: mdtui.bench through BenchRunner, fio reading a file, each step stored in a
temporary ResultsStore. Sweeps that create arrays run against recorders here (this host has no md
driver); tests/lab/test_experiments.py runs the chunk sweep on real md.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mdtui.actionlog import ActionLog
from mdtui.advise.experiments import (
    ArrayTools,
    ExperimentCancelled,
    RunPreset,
    chunk_sweep,
    governor_ab,
    level_comparison,
    parallelism_sweep,
)
from mdtui.advise.governor import GovernorError, governor_switched, read_governors
from mdtui.advise.runner import BenchRunner
from mdtui.errors import PlanError, SafetyError
from mdtui.execute.mdadm import CreateOutcome
from mdtui.execute.state import ArrayRegistry, CreatedArray
from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.model.job import RwMode
from mdtui.plan.create import CreatePlan
from mdtui.plan.destroy import DestroyPlan
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

REPO = Path(__file__).resolve().parents[2]
REAL_LINKS = REPO / "tests" / "fixtures" / "trees" / "real-links"


# --- governors ----------------------------------------------------------------------------------------


@pytest.fixture
def cpu_root(tmp_path: Path, procfs_testdata: Path) -> SystemRoot:
    """A writable copy of the procfs fixture's cpufreq tree: policy0 (cpu0) and cpu1, both on powersave.

    The lab has no cpufreq, so a copied fixture is the only cpufreq these tests can switch.
    """
    root = tmp_path / "cpu-root"
    target = root / "sys" / "devices" / "system" / "cpu"
    shutil.copytree(procfs_testdata / "sys" / "devices" / "system" / "cpu", target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return SystemRoot(root)


def governor_files(root: SystemRoot) -> dict[str, str]:
    cpu = root.path("/sys/devices/system/cpu")
    return {
        "policy0": (cpu / "cpufreq" / "policy0" / "scaling_governor").read_text().strip(),
        "cpu1": (cpu / "cpu1" / "cpufreq" / "scaling_governor").read_text().strip(),
    }


def test_governors_read_once_per_policy(cpu_root: SystemRoot) -> None:
    governors = read_governors(cpu_root)
    # cpu0's cpufreq is a captured link to policy0; cpu1 has its own directory.
    assert sorted(governors.values()) == ["powersave", "powersave"]
    assert len(governors) == 2


def test_switch_and_restore_after_a_clean_block(cpu_root: SystemRoot) -> None:
    with governor_switched(cpu_root, "performance") as before:
        assert governor_files(cpu_root) == {"policy0": "performance", "cpu1": "performance"}
        assert set(before.values()) == {"powersave"}
    assert governor_files(cpu_root) == {"policy0": "powersave", "cpu1": "powersave"}


@pytest.mark.parametrize("error", [RuntimeError("fio crashed"), KeyboardInterrupt(), ExperimentCancelled("stop")])
def test_restored_when_the_block_raises(cpu_root: SystemRoot, error: BaseException) -> None:
    with pytest.raises(type(error)), governor_switched(cpu_root, "performance"):
        assert governor_files(cpu_root)["cpu1"] == "performance"
        raise error
    assert governor_files(cpu_root) == {"policy0": "powersave", "cpu1": "powersave"}


def test_a_governor_the_policy_does_not_offer_is_refused_before_any_write(cpu_root: SystemRoot) -> None:
    with pytest.raises(PlanError, match="does not offer the ondemand governor"), governor_switched(
        cpu_root, "ondemand"
    ):
        pytest.fail("the block must not run")
    assert governor_files(cpu_root) == {"policy0": "powersave", "cpu1": "powersave"}


def test_a_restore_that_fails_is_reported(cpu_root: SystemRoot) -> None:
    policy = cpu_root.path("/sys/devices/system/cpu/cpu1/cpufreq")
    with pytest.raises(GovernorError, match="could not be put back"), governor_switched(cpu_root, "performance"):
        # The policy goes away mid-run (CPU hot-unplug): its file cannot be written back.
        shutil.rmtree(policy)
    assert governor_files_without_cpu1(cpu_root) == "powersave"


def governor_files_without_cpu1(root: SystemRoot) -> str:
    return root.path("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor").read_text().strip()


def test_a_governor_is_written_by_the_one_sysfs_writer_and_never_through_a_planted_link(
    cpu_root: SystemRoot, tmp_path: Path
) -> None:
    """tune.journal.write_sysfs writes the governor: logged by its system path, and a link planted in place of
    scaling_governor is not followed out of /sys (the governor's own write_text followed it before)."""
    from mdtui.actionlog import ActionLog

    with governor_switched(cpu_root, "performance"):
        pass
    policy0 = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
    assert [(e["argv"][1:], e["note"]) for e in ActionLog().entries()][::2] == [
        ([policy0, "performance"], "CPU governor"),
        ([policy0, "powersave"], "CPU governor"),
    ]
    victim = tmp_path / "victim"
    victim.write_text("secret\n")
    with pytest.raises(GovernorError, match=r"could not be put back.*outside /sys/block"), governor_switched(
        cpu_root, "performance"
    ):
        planted = cpu_root.path(policy0)  # swapped for a link while the block runs
        planted.unlink()
        planted.symlink_to(victim)
    assert victim.read_text() == "secret\n"


def test_no_cpufreq_means_no_switch(tmp_path: Path) -> None:
    with pytest.raises(GovernorError, match="no cpufreq governors"), governor_switched(
        SystemRoot(tmp_path), "performance"
    ):
        pytest.fail("the block must not run")


# --- governor A/B over real benchmark runs ------------------------------------------------------------


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 << 20))
    return path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ResultsStore]:
    with ResultsStore(tmp_path / "results.db") as opened:
        yield opened


# A small read of the file: fio through the benchmark engine, one stored run per call.
SMALL_READ = {"size_bytes": 1 << 20, "block_size_bytes": 64 << 10, "direct": False}


class Watching:
    """The real runner, plus what the governors were while each run ran."""

    def __init__(self, runner: RunPreset, cpu_root: SystemRoot, fail_on: str | None = None,
                 error: BaseException | None = None) -> None:
        self.runner = runner
        self.cpu_root = cpu_root
        self.fail_on = fail_on
        self.error = error
        self.seen: list[tuple[str, dict[str, str]]] = []

    def __call__(self, preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
        self.seen.append((label, governor_files(self.cpu_root)))
        if label == self.fail_on:
            assert self.error is not None
            raise self.error
        return self.runner(preset_key, target, quick=quick, label=label, **options)


def test_governor_ab_stores_before_and_after_and_restores(
    cpu_root: SystemRoot, data_file: Path, store: ResultsStore
) -> None:
    runner = Watching(BenchRunner(store, sample_interval_s=None), cpu_root)
    result = governor_ab(runner, str(data_file), root=cpu_root, preset_key="custom", quick=True, **SMALL_READ)
    assert [label for label, _ in runner.seen] == ["before: powersave", "after: performance"]
    assert runner.seen[0][1] == {"policy0": "powersave", "cpu1": "powersave"}
    assert runner.seen[1][1] == {"policy0": "performance", "cpu1": "performance"}
    assert governor_files(cpu_root) == {"policy0": "powersave", "cpu1": "powersave"}

    before, after = result.runs
    assert len(result.pairs()) == 1
    stored = [store.get_run(run_id) for run_id in (*before.run_ids, *after.run_ids)]
    assert [run.label for run in stored] == ["before: powersave", "after: performance"]
    assert all(run.status is RunStatus.COMPLETE for run in stored)
    assert all((run.metrics.read_bw_bytes_per_s or 0) > 0 for run in stored)
    assert all(run.target == str(data_file) for run in stored)


@pytest.mark.parametrize("error", [RuntimeError("fio crashed"), ExperimentCancelled("stopped"), KeyboardInterrupt()])
def test_governor_ab_restores_when_the_after_run_fails(
    cpu_root: SystemRoot, store: ResultsStore, error: BaseException
) -> None:
    # The engine itself is exercised above; here only how the second run ends matters.
    def store_one(preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
        moment = datetime(2026, 5, 1, tzinfo=UTC)
        return [store.add_run(RunSetup(preset_key, target=target, label=label), status=RunStatus.COMPLETE,
                              started_at=moment, ended_at=moment, metrics=Metrics(read_bw_bytes_per_s=1.0))]

    runner = Watching(store_one, cpu_root, fail_on="after: performance", error=error)  # type: ignore[arg-type]
    with pytest.raises(type(error)):
        governor_ab(runner, "/dev/md9", root=cpu_root, preset_key="custom", quick=True)
    assert runner.seen[1][1]["cpu1"] == "performance"  # it did switch before the run failed
    assert governor_files(cpu_root) == {"policy0": "powersave", "cpu1": "powersave"}
    assert [run.label for run in store.list_runs()] == ["before: powersave"]


def test_governor_ab_restores_when_the_engine_refuses_the_target(
    cpu_root: SystemRoot, data_file: Path, store: ResultsStore, tmp_path: Path
) -> None:
    calls: list[str] = []
    real = BenchRunner(store, sample_interval_s=None)

    def runner(preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
        calls.append(label)
        # The file is gone by the second run: the engine's own re-check refuses it.
        if label.startswith("after"):
            data_file.unlink()
        return real(preset_key, target, quick=quick, label=label, **options)

    with pytest.raises(PlanError, match="does not exist"):
        governor_ab(runner, str(data_file), root=cpu_root, preset_key="custom", quick=True, **SMALL_READ)
    assert calls == ["before: powersave", "after: performance"]
    assert governor_files(cpu_root) == {"policy0": "powersave", "cpu1": "powersave"}


def test_governor_ab_refuses_when_already_on_the_target_governor(cpu_root: SystemRoot, store: ResultsStore) -> None:
    with governor_switched(cpu_root, "performance"), pytest.raises(PlanError, match="already runs the performance"):
        governor_ab(BenchRunner(store), "/nonexistent", root=cpu_root)
    assert store.list_runs() == []


def test_a_writing_preset_needs_the_target_confirmed(data_file: Path, store: ResultsStore) -> None:
    runner = BenchRunner(store, sample_interval_s=None)
    with pytest.raises(SafetyError, match="not confirmed"):
        runner("custom", str(data_file), quick=True, label="x", rw=RwMode.WRITE, size_bytes=1 << 20, direct=False)
    assert store.list_runs() == []
    allowed = BenchRunner(store, sample_interval_s=None, allow_writes_to={str(data_file)})
    (run_id,) = allowed(
        "custom", str(data_file), quick=True, label="w", rw=RwMode.WRITE, size_bytes=1 << 20, direct=False
    )
    assert (store.get_run(run_id).metrics.write_bw_bytes_per_s or 0) > 0


# --- parallelism sweep --------------------------------------------------------------------------------


def test_parallelism_sweep_runs_each_job_count(data_file: Path, store: ResultsStore) -> None:
    runner = BenchRunner(store, sample_interval_s=None)
    result = parallelism_sweep(runner, str(data_file), quick=True, numjobs=(1, 4), runtime_s=1)
    assert [run.label for run in result.runs] == ["numjobs 1", "numjobs 4"]
    stored = store.get_runs(result.run_ids)
    assert [run.params["numjobs"] for run in stored] == [1, 4]
    assert [run.params["bs"] for run in stored] == ["4m", "4m"]
    assert [run.params["iodepth"] for run in stored] == [12, 12]
    assert all(run.status is RunStatus.COMPLETE for run in stored)


# --- sweeps that create arrays (recorders for mdadm) --------------------------------------------------


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return scan(REAL_LINKS, privileged=True)


def free_disks(inventory: Inventory, *names: str) -> tuple[Disk, ...]:
    found = []
    for name in names:
        disk = inventory.disk(name)
        assert disk is not None
        found.append(dataclasses.replace(disk, in_use=()))
    return tuple(found)


class FakeMd:
    """Stands in for mdadm on a temporary root: create writes /proc/mdstat, destroy removes it; both record."""

    def __init__(self, root: Path, registry: ArrayRegistry) -> None:
        self.root = root
        self.registry = registry
        self.events: list[str] = []
        self.created: list[CreatePlan] = []
        self.destroyed: list[DestroyPlan] = []
        (root / "proc").mkdir(parents=True, exist_ok=True)

    def create(self, plan: CreatePlan, *, confirmed: bool, root: SystemRoot, log: Any, registry: Any
               ) -> CreateOutcome:
        assert confirmed
        names = [d.name for d in plan.request.members]
        chunk = f", {plan.chunk_bytes // 1024}k chunk" if plan.chunk_bytes else ""
        members = " ".join(f"{name}[{i}]" for i, name in enumerate(names))
        (self.root / "proc" / "mdstat").write_text(
            f"Personalities : [raid0]\nmd9 : active {plan.level.name} {members}\n"
            f"      2093056 blocks super 1.2{chunk} [{len(names)}/{len(names)}]\n\nunused devices: <none>\n"
        )
        # An array with a superblock is mdtui's only by its UUID, which the scan reads from sysfs.
        uuid = f"{len(self.created) + 1:08x}-0000-0000-0000-00000000cafe"
        (self.root / "sys/block/md9/md").mkdir(parents=True, exist_ok=True)
        (self.root / "sys/block/md9/md/uuid").write_text(uuid + "\n")
        self.registry.add(CreatedArray(plan.request.device, uuid, (), plan.member_paths, 0.0))
        self.events.append(f"create {plan.level.name} {plan.chunk_bytes}")
        self.created.append(plan)
        array = MdArray("md9", "active", plan.level.name, tuple(ArrayMember(n, i) for i, n in enumerate(names)))
        return CreateOutcome(plan.request.device, None, (), array)

    def destroy(self, plan: DestroyPlan, *, confirmed: bool, root: SystemRoot, log: Any, registry: Any) -> tuple:
        assert confirmed
        (self.root / "proc" / "mdstat").write_text("Personalities : [raid0]\nunused devices: <none>\n")
        self.registry.remove(plan.array, self.registry._load()[-1].uuid)
        self.events.append(f"destroy {plan.array}")
        self.destroyed.append(plan)
        return ()

    def tools(self) -> ArrayTools:
        return ArrayTools(SystemRoot(self.root), ActionLog(self.root / "actions.log"), self.registry,
                          self.create, self.destroy)


class StoringRunner:
    """Stores one run per call with a figure from ``figures`` (by label); records the calls in FakeMd's log."""

    def __init__(self, store: ResultsStore, md: FakeMd, figures: dict[str, float],
                 steps: Sequence[str] = ("read",), fail_on: str | None = None) -> None:
        self.store = store
        self.md = md
        self.figures = figures
        self.steps = steps
        self.fail_on = fail_on

    def __call__(self, preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
        self.md.events.append(f"run {label} on {target}")
        if label == self.fail_on:
            raise RuntimeError("fio failed")
        moment = datetime(2026, 5, 1, tzinfo=UTC)
        return [
            self.store.add_run(
                RunSetup(preset=preset_key, target=target, label=label, params={"step": step, **options}),
                status=RunStatus.COMPLETE,
                started_at=moment,
                ended_at=moment,
                metrics=Metrics(
                    read_bw_bytes_per_s=self.figures[label] * (index + 1),
                    write_bw_bytes_per_s=self.figures[label] / 2,
                    read_iops=self.figures[label] / 1e3,
                    write_iops=self.figures[label] / 2e3,
                ),
            )
            for index, step in enumerate(self.steps)
        ]


@pytest.fixture
def fake_md(tmp_path: Path) -> FakeMd:
    return FakeMd(tmp_path / "md-root", ArrayRegistry(tmp_path / "created.json"))


def test_chunk_sweep_creates_measures_and_tears_down_each_chunk(
    inventory: Inventory, fake_md: FakeMd, store: ResultsStore
) -> None:
    members = free_disks(inventory, "nvme2n1", "nvme3n1", "nvme4n1")
    figures = {"raw member nvme2n1": 200e6, "raid5 chunk 64 KiB": 80e6, "raid5 chunk 512 KiB": 380e6}
    runner = StoringRunner(store, fake_md, figures)
    result = chunk_sweep(
        runner, members, store=store, device="/dev/md9", level="raid5", chunks_kib=(64, 512),
        preset_key="custom", confirmed="/dev/md9", tools=fake_md.tools(), size_bytes=8 << 20,
    )
    assert fake_md.events == [
        "run raw member nvme2n1 on /dev/nvme2n1",
        "create raid5 65536",
        "run raid5 chunk 64 KiB on /dev/md9",
        "destroy /dev/md9",
        "create raid5 524288",
        "run raid5 chunk 512 KiB on /dev/md9",
        "destroy /dev/md9",
    ]
    # Arrays for measuring: no resync (finding 5's --assume-clean) and no bitmap (finding 4), see docs/findings.md.
    for plan in fake_md.created:
        assert "--assume-clean" in plan.argv and "--bitmap=none" in plan.argv
    assert ["--chunk=64K" in fake_md.created[0].argv, "--chunk=512K" in fake_md.created[1].argv] == [True, True]
    # Each teardown stops the array and wipes exactly the three members.
    for plan in fake_md.destroyed:
        assert plan.steps[0].argv == ("mdadm", "--stop", "/dev/md9")
        assert len(plan.member_paths) == 3
    assert ArrayRegistry(fake_md.registry.path).find("/dev/md9", None) is None
    # Normalised as finding 5 (docs/findings.md): figure ÷ (raw member × data disks); raid5 of 3 has 2 data disks.
    table = result.normalised
    assert table is not None
    assert [row.normalised for row in table.rows] == [pytest.approx(80 / 400), pytest.approx(380 / 400)]
    assert [run.label for run in result.runs] == list(figures)


def test_chunk_sweep_tears_down_when_the_run_fails(inventory: Inventory, fake_md: FakeMd, store: ResultsStore) -> None:
    members = free_disks(inventory, "nvme2n1", "nvme3n1")
    runner = StoringRunner(store, fake_md, {"raw member nvme2n1": 1e8}, fail_on="raid0 chunk 64 KiB")
    with pytest.raises(RuntimeError, match="fio failed"):
        chunk_sweep(runner, members, store=store, device="/dev/md9", level="raid0", chunks_kib=(64, 512),
                    preset_key="custom", confirmed="/dev/md9", tools=fake_md.tools())
    assert fake_md.events[-2:] == ["run raid0 chunk 64 KiB on /dev/md9", "destroy /dev/md9"]
    assert "create raid0 524288" not in fake_md.events


def test_chunk_sweep_runs_nothing_unconfirmed_or_invalid(
    inventory: Inventory, fake_md: FakeMd, store: ResultsStore
) -> None:
    members = free_disks(inventory, "nvme2n1", "nvme3n1")
    runner = StoringRunner(store, fake_md, {})
    # Nothing typed, a bool from an older caller, or another device's name: none confirms /dev/md9.
    for typed in (None, True, "/dev/md8"):
        with pytest.raises(SafetyError, match="confirm by naming it"):
            chunk_sweep(runner, members, store=store, device="/dev/md9", level="raid0", confirmed=typed,  # type: ignore[arg-type]
                        tools=fake_md.tools())
    with pytest.raises(PlanError, match="needs at least 3 members"):
        chunk_sweep(runner, members, store=store, device="/dev/md9", level="raid5", confirmed="/dev/md9",
                    tools=fake_md.tools())
    busy = inventory.disk("nvme0n1")  # a member of md0 in the tree
    assert busy is not None
    with pytest.raises(PlanError, match="in use"):
        chunk_sweep(runner, (busy, members[0]), store=store, device="/dev/md9", level="raid0", confirmed="/dev/md9",
                    tools=fake_md.tools())
    assert fake_md.events == []


def test_level_comparison_builds_the_matrix_against_raid0_and_raid10(
    inventory: Inventory, fake_md: FakeMd, store: ResultsStore
) -> None:
    members = free_disks(inventory, "nvme2n1", "nvme3n1", "nvme4n1")
    figures = {"raid0": 600e6, "raid10": 300e6, "raid5": 120e6}
    steps = ("SEQ1MQ8T8 read", "RND4KQ32T8 write")
    runner = StoringRunner(store, fake_md, figures, steps=steps)
    result = level_comparison(runner, members, store=store, device="/dev/md9", confirmed="/dev/md9",
                              tools=fake_md.tools(), quick=True)
    assert [run.label for run in result.runs] == ["raid0", "raid10", "raid5"]
    assert result.notes == ("raid6 skipped: it needs 4 members, 3 given",)
    assert [e for e in fake_md.events if e.startswith(("create", "destroy"))] == [
        "create raid0 262144", "destroy /dev/md9", "create raid10 262144", "destroy /dev/md9",
        "create raid5 262144", "destroy /dev/md9",
    ]
    seq, rnd = result.ratios
    assert seq.metric.name == "read_bw_bytes_per_s" and rnd.metric.name == "write_iops"
    assert [ref.label for ref in seq.references] == ["raid0", "raid10"]
    raid5 = next(row for row in rnd.rows if row.run.label == "raid5")
    assert raid5.ratios == (pytest.approx(120 / 600), pytest.approx(120 / 300))


def test_cancel_between_points_keeps_what_ran(inventory: Inventory, fake_md: FakeMd, store: ResultsStore) -> None:
    import threading

    cancel = threading.Event()
    members = free_disks(inventory, "nvme2n1", "nvme3n1")

    class CancelAfterFirst(StoringRunner):
        def __call__(self, *args: Any, **kwargs: Any) -> Sequence[int]:
            ids = super().__call__(*args, **kwargs)
            cancel.set()
            return ids

    runner = CancelAfterFirst(store, fake_md, {"raw member nvme2n1": 1e8})
    with pytest.raises(ExperimentCancelled, match="#1"):
        chunk_sweep(runner, members, store=store, device="/dev/md9", level="raid0", chunks_kib=(64,),
                    confirmed="/dev/md9", tools=fake_md.tools(), cancel=cancel)
    assert not any(e.startswith("create") for e in fake_md.events)


def test_chunk_sweep_stops_early_by_the_stated_rule_and_full_sweep_runs_every_chunk(
    inventory: Inventory, fake_md: FakeMd, store: ResultsStore
) -> None:
    members = free_disks(inventory, "nvme2n1", "nvme3n1")
    # The raw member is the baseline, not a point: 256 KiB is best, 512 KiB and 1024 KiB each clearly below.
    figures = {"raw member nvme2n1": 100e6, "raid0 chunk 64 KiB": 150e6, "raid0 chunk 256 KiB": 200e6,
               "raid0 chunk 512 KiB": 170e6, "raid0 chunk 1024 KiB": 150e6, "raid0 chunk 2048 KiB": 400e6}  # fmt: skip
    chunks = (64, 256, 512, 1024, 2048)
    options: dict[str, Any] = {"level": "raid0", "chunks_kib": chunks, "preset_key": "custom", "confirmed": "/dev/md9"}
    result = chunk_sweep(StoringRunner(store, fake_md, figures), members, store=store, device="/dev/md9",
                         tools=fake_md.tools(), **options)  # fmt: skip
    assert "create raid0 2097152" not in fake_md.events
    assert result.notes[0].startswith("stopped after raid0 chunk 1024 KiB")
    assert result.notes[1] == "not run (the sweep stopped early): raid0 chunk 2048 KiB"
    fake_md.events.clear()
    chunk_sweep(StoringRunner(store, fake_md, figures), members, store=store, device="/dev/md9",
                tools=fake_md.tools(), full_sweep=True, **options)  # fmt: skip
    assert "create raid0 2097152" in fake_md.events
