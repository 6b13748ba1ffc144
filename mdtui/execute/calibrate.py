"""`mdtui calibrate`: md's own ceilings measured on this host over RAM-backed members, no disk touched.

Four null_blk devices (configfs, memory backed) of our own, md arrays over them (raid0, raid1, raid10, raid5,
raid6; 4 members, 512 KiB chunk, no bitmap, --assume-clean), and short fio runs of the predictions' own jobs
on each: with members that cost nothing, what is left is md's own ceiling for every level and workload
(sequential and random reads and writes; for raid4/5/6 the stripe thread and its parity routine) and md's
own latency per Q1 request (a raid0 read, a raid1 and a raid5 write, against one device alone).

Only what this run created is touched: configfs directories named ``mdtui-cal-<pid>-<n>`` (execute/null_blk) and
the md devices it created over them. Everything is torn down on success, on error and on SIGTERM or Ctrl-C; what
a killed run left (our prefix, its pid gone) is found and removed at the next start, and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from mdtui.actionlog import ActionLog
from mdtui.command import run_command
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError
from mdtui.execute.argv import fio_argv
from mdtui.execute.null_blk import (
    LIVE_PATHS,
    PREFIX,
    Paths,
    leftover_names,
    make_devices,
    module_available,
    remove_devices,
    require_configfs,
)
from mdtui.execute.record import tool_version
from mdtui.model.job import KIB, MIB, IoEngine, JobSpec, RwMode
from mdtui.probe.kernel_log import ParityRoutines, read_parity_routines
from mdtui.probe.root import SystemRoot
from mdtui.store.calibration import Calibration, HostId, LevelCeilings, this_host
from mdtui.store.fio_read import fio_documents

MEMBERS = 4
LEVELS = ("raid0", "raid1", "raid10", "raid5", "raid6")
PARITY = ("raid5", "raid6")
CHUNK_KIB = 512
MEMBER_MIB = 128
RUNTIME_S = 4


# --- the kernel's boot benchmark of its parity routines ----------------------------------------------


def parity_speeds(routines: ParityRoutines | None) -> tuple[float | None, float | None]:
    """(xor bytes/s for raid4/5, raid6 gen() bytes/s) from the kernel's boot benchmark; None where it says nothing.

    lib/raid6/algos.c prints MiB/s ("raid6: using algorithm avx2x4 gen() 17190 MB/s"; kernels that print no
    choice list one gen() line per candidate, the fastest then chosen); crypto/xor.c prints units of 1000 KiB/s
    ("xor: using function: avx (24000 MB/sec)"). A routine timed at 0 says nothing: not measured, not 0.
    """
    if routines is None:
        return (None, None)
    xor = routines.xor_mb_s * 1000 * KIB if routines.xor_mb_s else None
    gen = routines.raid6_gen_mb_s or max((speed for _, speed in routines.raid6_candidates), default=None)
    return (xor, gen * MIB if gen else None)


# --- the plan ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measurement:
    key: str  # "raid5 seq write", ...
    spec: JobSpec


@dataclass
class CalibrationPlan:
    pid: int
    names: tuple[str, ...]  # configfs directories
    md_device: str
    load_module: bool
    member_mib: int = MEMBER_MIB
    leftovers: tuple[str, ...] = ()
    runtime_s: int = RUNTIME_S

    @property
    def confirmation(self) -> str:
        """What the user types to let calibrate make its RAM devices and md arrays (and remove a killed one's)."""
        return "calibrate"

    def create_argv(self, level: str, members: list[str]) -> list[str]:
        argv = ["mdadm", "--create", self.md_device, "--run", "--metadata=1.2"]
        if level != "raid0":  # mdadm refuses a bitmap option for raid0, which has no resync to skip either
            argv += ["--assume-clean", "--bitmap=none"]
        argv += [f"--level={level}", f"--raid-devices={len(members)}"]
        if level != "raid1":  # mdadm refuses a chunk for raid1, which has none
            argv.append(f"--chunk={CHUNK_KIB}")
        return [*argv, *members]

    def lines(self) -> list[str]:
        members = [f"/dev/{name}" for name in self.names]
        lines = ["mdtui calibrate: md's own ceilings over RAM-backed null_blk members (no disk is touched)", ""]
        if self.leftovers:
            lines.append(f"remove what a killed calibration left: {', '.join(self.leftovers)}")
        if self.load_module:
            lines.append("modprobe null_blk nr_devices=0")
        for name in self.names:
            lines.append(
                f"mkdir {PREFIX}… /sys/kernel/config/nullb/{name}: memory_backed=1 blocksize=4096 "
                f"size={self.member_mib} (MiB) power=1"
            )
        for measurement in member_measurements(members[0], self.runtime_s):
            lines.append(f"  {measurement.key}: {' '.join(fio_argv(measurement.spec))}")
        for level in LEVELS:
            lines.append(" ".join(self.create_argv(level, members)))
            for measurement in measurements(self.md_device, members[0], level, self.runtime_s):
                lines.append(f"  {measurement.key}: {' '.join(fio_argv(measurement.spec))}")
            lines.append(f"mdadm --stop {self.md_device}")
        lines.append(f"power=0 and rmdir each /sys/kernel/config/nullb/{PREFIX}{self.pid}-N")
        lines.append(f"needs up to {MEMBERS * self.member_mib} MiB of RAM while it runs; {self.runtime_s} s a fio run")
        return lines


def member_measurements(first_member: str, runtime_s: int = RUNTIME_S) -> list[Measurement]:
    """One RAM device alone at Q1, before any array holds it (a write to a member of a running array would
    land on md's data): what md's Q1 shares are measured against."""
    return [
        Measurement("member Q1 read", _q1(first_member, "cal-member-q1", runtime_s)),
        Measurement("member Q1 write", _q1(first_member, "cal-member-q1w", runtime_s, RwMode.RANDWRITE)),
    ]


def measurements(md_device: str, first_member: str, level: str, runtime_s: int = RUNTIME_S) -> list[Measurement]:
    """The predictions' own jobs on one level's array: SEQ1MQ8T8 (each job its own region, execute.argv) and
    RND4KQ32T8, read and write; raid0's Q1 read, raid1's and raid5's Q1 write."""
    found = [
        Measurement(
            f"{level} {what}",
            JobSpec(f"cal-{level}-{short}", md_device, block, rw=rw, iodepth=depth, numjobs=8, runtime_s=runtime_s),
        )
        for what, short, rw, block, depth in (
            ("seq read", "seqr", RwMode.READ, MIB, 8),
            ("random read", "randr", RwMode.RANDREAD, 4 * KIB, 32),
            ("seq write", "seq", RwMode.WRITE, MIB, 8),
            ("random write", "rand", RwMode.RANDWRITE, 4 * KIB, 32),
        )
    ]
    if level == "raid0":
        found.append(Measurement("raid0 Q1 read", _q1(md_device, "cal-raid0-q1", runtime_s)))
    if level in ("raid1", "raid5"):
        found.append(Measurement(f"{level} Q1 write", _q1(md_device, f"cal-{level}-q1w", runtime_s, RwMode.RANDWRITE)))
    return found


def _q1(target: str, name: str, runtime_s: int, rw: RwMode = RwMode.RANDREAD) -> JobSpec:
    return JobSpec(name, target, 4 * KIB, rw=rw, iodepth=1, ioengine=IoEngine.LIBAIO, runtime_s=runtime_s)


def free_md(paths: Paths) -> str:
    """/dev/mdN for the highest N below 127 no array or device uses (mdadm hands out 127 and down itself)."""
    for number in range(126, 0, -1):
        name = f"md{number}"
        if not (paths.sys_block / name).exists() and not os.path.lexists(f"/dev/{name}"):
            return f"/dev/{name}"
    raise MdtuiError("no free /dev/mdN for the calibration arrays")


def plan_calibration(
    paths: Paths = LIVE_PATHS, pid: int | None = None, member_mib: int = MEMBER_MIB, runtime_s: int = RUNTIME_S
) -> CalibrationPlan:
    """What `mdtui calibrate` will do; MdtuiError (one line) when it cannot run here."""
    pid = os.getpid() if pid is None else pid
    module_loaded = (paths.sys_block.parent / "module" / "null_blk").exists()
    if not module_loaded and not module_available():
        raise MdtuiError("null_blk is not available (no null_blk module for this kernel): calibrate needs it")
    # configfs may itself be a module null_blk pulls in: without null_blk loaded it is checked after modprobe.
    if module_loaded:
        require_configfs(paths)
    names = tuple(f"{PREFIX}{pid}-{i}" for i in range(MEMBERS))
    leftovers = tuple(leftover_names(paths, pid))
    return CalibrationPlan(pid, names, free_md(paths), not module_loaded, member_mib, leftovers, runtime_s)


# --- running it --------------------------------------------------------------------------------------


class Interrupted(MdtuiError):
    pass


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGTERM (and SIGHUP) end the run like Ctrl-C, so the teardown in the finally below still runs."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(f"calibration stopped by signal {signal.Signals(signum).name}; what it made is removed")

    previous: dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: the caller's own handling stays
        pass
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


@dataclass
class CalibrationRun:
    figures: dict[str, float | None] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)


def _fio(spec: JobSpec) -> dict[str, Any]:
    argv = fio_argv(spec)
    result = run_command(argv, timeout_s=spec.runtime_s + 60 if spec.runtime_s else 120)
    documents = fio_documents(result.stdout)
    if not result.ok or not documents:
        raise MdtuiError(f"fio failed on {spec.target}: {(result.stderr or 'no JSON output').strip()[:200]}")
    jobs = documents[-1].get("jobs")
    if not isinstance(jobs, list) or not jobs or not isinstance(jobs[0], dict):
        raise MdtuiError(f"fio gave no job figures for {spec.target}")
    return jobs[0]


def _number(job: dict[str, Any], direction: str, *keys: str) -> float | None:
    value: Any = job.get(direction)
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return float(value)


def layer_latency(member_s: float | None, array_s: float | None) -> float | None:
    """What md adds to a Q1 request: the array's latency less the members' own; never negative, None if unknown."""
    if member_s is None or array_s is None:
        return None
    return max(0.0, array_s - member_s)


def _sum(*values: float | None) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def level_ceilings(
    figures: dict[str, float | None], xor: float | None, raid6: float | None
) -> dict[str, LevelCeilings]:
    """Each level's stored ceilings from the run's figures (keyed as the measurements are)."""
    member_read, member_write = figures.get("member Q1 read"), figures.get("member Q1 write")
    # A mirrored write waits for every copy: md's share is the array's latency less one member's write. A
    # raid5 write reads, then writes: its share is the array's less a member read and a member write.
    mirror = layer_latency(member_write, figures.get("raid1 Q1 write"))
    stripe = layer_latency(_sum(member_read, member_write), figures.get("raid5 Q1 write"))
    write_share = {"raid0": None, "raid1": mirror, "raid10": mirror, "raid5": stripe, "raid6": stripe}
    levels = {}
    for level in LEVELS:
        seq_write, rand_write = figures.get(f"{level} seq write"), figures.get(f"{level} random write")
        parity = level in PARITY
        levels[level] = LevelCeilings(
            stripe_write_bytes_per_s=seq_write if parity else None,
            stripe_small_write_iops=rand_write if parity else None,
            parity_bytes_per_s=(xor if level == "raid5" else raid6) if parity else None,
            seq_read_bytes_per_s=figures.get(f"{level} seq read"),
            rand_read_iops=figures.get(f"{level} random read"),
            seq_write_bytes_per_s=None if parity else seq_write,
            rand_write_iops=None if parity else rand_write,
            write_latency_s=write_share[level],
        )
    return levels


def execute(
    plan: CalibrationPlan,
    paths: Paths = LIVE_PATHS,
    report: Callable[[str], None] = print,
    *,
    confirmed: str | None,
    log: ActionLog | None = None,
) -> Calibration:
    """Make the RAM devices, measure each level over them, remove everything; every step that changes the
    system (the module, each device, each array made and stopped) is recorded in the action log."""
    require_confirmed(confirmed, plan.confirmation, "calibrating (null_blk devices and md arrays)")
    run = CalibrationRun()
    log = log or ActionLog()
    with _stop_on_signals():
        if plan.leftovers:
            for problem in remove_devices(paths, plan.leftovers, report, log):
                report(f"warning: {problem}")
        if plan.load_module:
            log.run(["modprobe", "null_blk", "nr_devices=0"], "calibrate: load null_blk", timeout_s=60)
            report("modprobe null_blk nr_devices=0")
            require_configfs(paths)
        try:
            try:
                members = make_devices(plan.names, plan.member_mib, paths, report, log)
            except OSError as exc:
                raise MdtuiError(f"cannot make a null_blk device: {exc.strerror or exc}") from None
            for measurement in member_measurements(members[0], plan.runtime_s):
                _measure(measurement, run, report)
            for level in LEVELS:
                log.run(plan.create_argv(level, members), f"calibrate: {level} over RAM devices", timeout_s=120)
                report(f"created {plan.md_device} ({level} over {', '.join(members)})")
                try:
                    for measurement in measurements(plan.md_device, members[0], level, plan.runtime_s):
                        _measure(measurement, run, report)
                finally:
                    log.run(["mdadm", "--stop", plan.md_device], "calibrate: stop", timeout_s=60, check=False)
                    _settle()
        except KeyboardInterrupt:
            raise Interrupted("calibration interrupted; what it made is removed") from None
        finally:
            problems = remove_devices(paths, plan.names, report, log)
            if problems:
                report("warning: " + "; ".join(problems))
    xor, raid6 = parity_speeds(read_parity_routines(SystemRoot("/")))
    host: HostId = this_host(tool_version("mdadm")[:200])
    levels = level_ceilings(run.figures, xor, raid6)
    latency = layer_latency(run.figures.get("member Q1 read"), run.figures.get("raid0 Q1 read"))
    return Calibration(host, datetime.now(UTC), levels, latency)


def _measure(measurement: Measurement, run: CalibrationRun, report: Callable[[str], None]) -> None:
    """One fio run: a Q1 job's mean latency (seconds), a random job's IOPS, a sequential job's bytes/s."""
    spec = measurement.spec
    job = _fio(spec)
    direction = "read" if spec.rw in (RwMode.READ, RwMode.RANDREAD) else "write"
    if spec.iodepth * spec.numjobs == 1:
        ns = _number(job, direction, "lat_ns", "mean")
        run.figures[measurement.key] = None if ns is None else ns * 1e-9
    elif spec.rw in (RwMode.RANDREAD, RwMode.RANDWRITE):
        run.figures[measurement.key] = _number(job, direction, "iops")
    else:
        run.figures[measurement.key] = _number(job, direction, "bw_bytes")
    report(f"  {measurement.key}: {run.figures[measurement.key]}")


def _settle() -> None:
    with contextlib.suppress(MdtuiError):
        run_command(["udevadm", "settle", "--timeout=10"], timeout_s=20)
