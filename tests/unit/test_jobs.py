"""Presets and the exact fio/dd argv built from a JobSpec."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.errors import PlanError
from mdtui.execute.argv import dd_argv, fio_argv, job_argv
from mdtui.execute.presets import (
    PRESETS,
    PresetTarget,
    Step,
    custom,
    disk_mark,
    offset_sweep,
    parity_cost,
    preset,
    sync_random,
    weakest_link,
)
from mdtui.model.job import GIB, KIB, MIB, IoEngine, JobSpec, RwMode, Tool

MEMBERS = ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1"]


def step_seconds(step: Step) -> int:
    return max(job.runtime_s or 0 for job in step.jobs)


def test_weakest_link_fio_argv_is_the_field_command() -> None:
    steps = weakest_link(MEMBERS, "/dev/md0")
    assert fio_argv(steps[0].jobs[0]) == [
        "fio",
        "--name=alone-nvme0n1",
        "--filename=/dev/nvme0n1",
        "--rw=read",
        "--bs=4m",
        "--iodepth=12",
        "--numjobs=16",
        "--ioengine=libaio",
        "--direct=1",
        "--time_based",
        "--runtime=30",
        "--size=6%",
        "--offset_increment=6%",
        "--readonly",
        "--thread",
        "--group_reporting",
        "--output-format=json",
        "--status-interval=1",
    ]


def test_weakest_link_steps_each_member_alone_then_together_then_array() -> None:
    steps = weakest_link(MEMBERS, "/dev/md0")
    assert len(steps) == len(MEMBERS) + 2
    assert [s.jobs[0].target for s in steps[: len(MEMBERS)]] == MEMBERS
    assert all(len(s.jobs) == 1 for s in steps[: len(MEMBERS)])
    assert [j.target for j in steps[-2].jobs] == MEMBERS
    assert [j.target for j in steps[-1].jobs] == ["/dev/md0"]
    assert not any(s.writes for s in steps)
    assert len({j.name for s in steps for j in s.jobs}) == sum(len(s.jobs) for s in steps)
    with pytest.raises(PlanError):
        weakest_link([], "/dev/md0")


def test_write_jobs_are_flagged_and_not_readonly() -> None:
    spec = parity_cost("/dev/md0")[0].jobs[0]
    assert spec.writes is True
    argv = fio_argv(spec)
    assert "--rw=write" in argv and "--readonly" not in argv
    assert "--bs=64k" in argv and "--iodepth=4" in argv


def test_disk_mark_matrix() -> None:
    steps = disk_mark("/dev/md0")
    names = [s.jobs[0].name for s in steps]
    assert names == [
        f"{test}-{direction}"
        for test in ("SEQ1MQ8T8", "SEQ1MQ8T1", "RND4KQ32T8", "RND4KQ32T1", "RND4KQ1T1")
        for direction in ("read", "write")
    ]
    by_name = {s.jobs[0].name: s.jobs[0] for s in steps}
    q32t8 = by_name["RND4KQ32T8-write"]
    assert (q32t8.rw, q32t8.block_size_bytes, q32t8.iodepth, q32t8.numjobs) == (RwMode.RANDWRITE, 4 * KIB, 32, 8)
    seq = by_name["SEQ1MQ8T1-read"]
    assert (seq.rw, seq.block_size_bytes, seq.iodepth, seq.numjobs) == (RwMode.READ, MIB, 8, 1)
    assert [s.writes for s in steps] == [False, True] * 5


def test_sync_random_is_size_based_sync_io() -> None:
    steps = sync_random("/dev/md0")
    specs = [s.jobs[0] for s in steps]
    assert [(s.rw, s.block_size_bytes) for s in specs] == [
        (RwMode.RANDREAD, 512 * KIB),
        (RwMode.RANDWRITE, 512 * KIB),
        (RwMode.RANDREAD, MIB),
        (RwMode.RANDWRITE, MIB),
    ]
    argv = fio_argv(specs[0])
    assert "--ioengine=sync" in argv and "--iodepth=1" in argv and "--numjobs=1" in argv
    assert "--size=500m" in argv and "--time_based" not in argv
    assert all(s.size_bytes == 128 * MIB for s in (st.jobs[0] for st in sync_random("/dev/md0", quick=True)))


def test_parity_cost_marks_md_cpu_sampling() -> None:
    steps = parity_cost("/dev/md127")
    assert [s.jobs[0].rw for s in steps] == [RwMode.WRITE, RwMode.READ]
    assert all(s.measure_md_cpu for s in steps)


def test_offset_sweep_points_and_dd_argv() -> None:
    size = 1024 * 16 * MIB  # 1024 blocks of 16 MiB
    steps = offset_sweep("/dev/md0", size, quick=True)
    singles = [s.jobs[0] for s in steps[:5]]
    skips = [s.offset_bytes // (16 * MIB) for s in singles]
    assert skips == [0, 256, 512, 768, 1024 - 64]  # 100% reads the last window before the end
    assert dd_argv(singles[1]) == [
        "dd",
        "if=/dev/md0",
        "of=/dev/null",
        "iflag=direct",
        "bs=16M",
        "count=64",
        "skip=256",
        "status=progress",
    ]
    assert len(steps[-1].jobs) == 5 and steps[-1].label == "all readers at once"
    assert all(j.tool is Tool.DD and not j.writes for s in steps for j in s.jobs)
    assert job_argv(singles[0])[0] == "dd"
    full = offset_sweep("/dev/md0", 12 * 1024 * 1024 * MIB)
    assert full[0].jobs[0].size_bytes == 1024 * 16 * MIB


def test_offset_sweep_on_a_small_device_shrinks_the_reads() -> None:
    steps = offset_sweep("/dev/loop0", 256 * MIB)  # 16 blocks: 3 per point
    for step in steps:
        for job in step.jobs:
            assert job.offset_bytes + (job.size_bytes or 0) <= 256 * MIB
    assert steps[0].jobs[0].size_bytes == 3 * 16 * MIB
    with pytest.raises(PlanError):
        offset_sweep("/dev/loop0", 8 * MIB)


@pytest.mark.parametrize(
    "steps",
    [
        weakest_link(MEMBERS, "/dev/md0", quick=True),
        weakest_link([f"/dev/sd{c}" for c in "bcdefghijklmnopqrs"], "/dev/md0", quick=True),
        disk_mark("/dev/md0", quick=True),
        parity_cost("/dev/md0", quick=True),
        custom("/dev/md0", runtime_s=600, quick=True),
    ],
)
def test_quick_time_based_presets_take_under_a_minute(steps: tuple[Step, ...]) -> None:
    assert sum(step_seconds(s) for s in steps) < 60


def test_custom_job() -> None:
    (step,) = custom(
        "/dev/md0",
        rw=RwMode.RANDRW,
        block_size_bytes=8 * KIB,
        iodepth=64,
        numjobs=4,
        size_bytes=2 * GIB,
        ioengine=IoEngine.IO_URING,
        direct=False,
        offset_bytes=MIB,
    )
    argv = fio_argv(step.jobs[0])
    assert argv[:10] == [
        "fio",
        "--name=custom",
        "--filename=/dev/md0",
        "--rw=randrw",
        "--bs=8k",
        "--iodepth=64",
        "--numjobs=4",
        "--ioengine=io_uring",
        "--direct=0",
        f"--offset={MIB}",
    ]
    assert "--size=2g" in argv and step.writes
    assert custom("/dev/md0", size_bytes=8 * GIB, quick=True)[0].jobs[0].size_bytes == GIB


@pytest.mark.parametrize(
    "kwargs",
    [
        {"runtime_s": None, "size_bytes": None},
        {"runtime_s": 10, "size_bytes": MIB},
        {"runtime_s": 10, "iodepth": 0},
        {"runtime_s": 10, "name": "has space"},
        {"runtime_s": 10, "target": ""},
        {"tool": Tool.DD, "runtime_s": 10},
        {"tool": Tool.DD, "size_bytes": MIB, "rw": RwMode.WRITE},
        {"tool": Tool.DD, "size_bytes": 3 * MIB, "block_size_bytes": 2 * MIB},
    ],
)
def test_invalid_specs_are_plan_errors(kwargs: dict) -> None:
    base = {"name": "job", "target": "/dev/md0", "block_size_bytes": MIB}
    with pytest.raises(PlanError):
        JobSpec(**(base | kwargs))


def test_argv_builders_refuse_the_other_tool() -> None:
    fio_spec = custom("/dev/md0", runtime_s=5)[0].jobs[0]
    dd_spec = offset_sweep("/dev/md0", GIB)[0].jobs[0]
    with pytest.raises(PlanError):
        dd_argv(fio_spec)
    with pytest.raises(PlanError):
        fio_argv(dd_spec)


def test_preset_registry() -> None:
    assert [p.key for p in PRESETS] == [
        "weakest-link",
        "disk-mark",
        "member-matrix",
        "sync-random",
        "parity-cost",
        "offset-sweep",
        "custom",
    ]
    assert all(len(p.doc) > 100 for p in PRESETS)
    assert preset("disk-mark").steps(PresetTarget("/dev/md0", quick=True)) == disk_mark("/dev/md0", quick=True)
    assert [p.key for p in PRESETS if p.array_target] == ["weakest-link", "parity-cost"]
    assert not preset("weakest-link").writes and preset("disk-mark").writes
    with pytest.raises(PlanError, match="known presets"):
        preset("nope")


def _first_offsets(argv: list[str]) -> dict[str, int]:
    """Each fio thread's first I/O offset, from fio's own --debug=io trace (real fio)."""
    done = subprocess.run([*argv, "--debug=io"], capture_output=True, text=True, timeout=60, check=True)
    first: dict[str, int] = {}
    for line in done.stdout.splitlines():
        match = re.search(r"^io\s+(\d+)\s+queue: .*off=(0x[0-9a-f]+)", line)
        if match:
            first.setdefault(match.group(1), int(match.group(2), 16))
    return first


def test_a_multi_job_sequential_step_gives_each_job_its_own_region(tmp_path: Path) -> None:
    # Before, all eight jobs of SEQ1MQ8T8 wrote from offset 0: the same stripes at the same moment, which a
    # raid5 serialises (the lab measured 0.14 of its predicted sequential write).
    target = tmp_path / "t.img"
    target.write_bytes(b"\0" * (64 * MIB))
    spec = JobSpec(
        name="seq",
        target=str(target),
        block_size_bytes=MIB,
        rw=RwMode.WRITE,
        numjobs=4,
        iodepth=1,
        ioengine=IoEngine.SYNC,
        direct=False,
        runtime_s=1,
    )
    argv = fio_argv(spec)
    assert "--size=25%" in argv and "--offset_increment=25%" in argv
    starts = sorted(_first_offsets(argv).values())
    assert starts == [0, 16 * MIB, 32 * MIB, 48 * MIB]
    # Random jobs spread by themselves; one job has nothing to share.
    for shape in ({"rw": RwMode.RANDWRITE, "numjobs": 4}, {"rw": RwMode.WRITE, "numjobs": 1}):
        other = fio_argv(JobSpec(name="o", target=str(target), block_size_bytes=MIB, runtime_s=1, **shape))
        assert not any(a.startswith("--offset_increment") for a in other)


def test_a_target_too_small_to_split_keeps_one_region(tmp_path: Path) -> None:
    # fio refuses a region smaller than a block ("blocksize is larger than data set range"): the parallelism
    # sweep's 4 MiB reads with 4 jobs on an 8 MiB file failed so.
    from mdtui.execute.runners import target_size

    small = tmp_path / "small.img"
    small.write_bytes(b"\0" * (8 * MIB))
    spec = JobSpec(name="p", target=str(small), block_size_bytes=4 * MIB, numjobs=4, runtime_s=1)
    assert target_size(str(small)) == 8 * MIB
    assert not any(a.startswith("--offset_increment") for a in fio_argv(spec, target_bytes=8 * MIB))
    assert "--offset_increment=25%" in fio_argv(spec, target_bytes=16 * MIB)
    assert "--offset_increment=25%" in fio_argv(spec)  # size unknown (a plan shown before the run)
    assert target_size(str(tmp_path / "missing")) is None and target_size("/dev/null") is None


@pytest.mark.parametrize(
    ("key", "options"),
    [
        ("disk-mark", JobOptions(runtime_s=3)),
        ("sync-random", JobOptions(size_bytes=8 << 20)),
        ("weakest-link", JobOptions(numjobs=2)),
        ("custom", JobOptions(rw=RwMode.WRITE, block_size_bytes=1 << 20, runtime_s=4, iodepth=2)),
    ],
)
def test_this_host_and_the_fleet_build_a_preset_s_steps_from_one_registry(
    key: str, options: JobOptions, tmp_path: Path
) -> None:
    """plan_bench and plan_fleet pick and build presets through execute.presets.PRESETS and bench.plan.preset_steps:
    the same request gives the same steps (the fleet's are fixed-time, as `--fixed-time` here)."""
    from mdtui.bench.plan import plan_bench
    from mdtui.fleet.hosts import Host
    from mdtui.fleet.plan import plan_fleet
    from mdtui.model.inventory import Inventory
    from mdtui.probe.root import SystemRoot

    files = [tmp_path / name for name in ("target", "m1", "m2")]
    for path in files:
        path.write_bytes(b"\0" * (1 << 20))
    target, *members = (str(path) for path in files)
    listed = tuple(members) if key == "weakest-link" else ()
    request = BenchRequest(key, target, quick=False, members=listed, options=options, fixed_time=True)
    here = plan_bench(request, Inventory(disks=(), arrays=(), privileged=True, udev=True), SystemRoot("/"))
    fleet = plan_fleet(request, [Host("store1")], ssh=False)
    assert fleet.hosts[0].steps == here.steps
