"""Benchmark orchestration: resolve and check a target, run a preset's steps with live samples, report and store."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
import stat
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from statistics import median
from typing import Any

from mdtui.errors import MdtuiError, PlanError, SafetyError
from mdtui.format import rate_mb_s, times, to_jsonable
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.model.job import IoEngine, JobResult, JobSpec, JobStatus, Progress, RwMode, Tool
from mdtui.model.snapshot import Snapshot
from mdtui.probe.inventory import scan
from mdtui.probe.procstat import find_md_threads, read_pid_stat
from mdtui.probe.root import SystemRoot
from mdtui.run import record
from mdtui.run.jobs import (
    Preset,
    Step,
    custom,
    disk_mark,
    job_argv,
    offset_sweep,
    parity_cost,
    sync_random,
    weakest_link,
)
from mdtui.run.jobs import preset as find_preset
from mdtui.run.mdadm import is_mounted
from mdtui.run.process import run_step
from mdtui.run.record import step_title
from mdtui.sample.sampler import Sampler
from mdtui.store.db import ResultsStore
from mdtui.store.errors import StoreError
from mdtui.store.records import Metrics, RunSetup, RunStatus, SamplePoint

log = logging.getLogger(__name__)

CUSTOM_DEFAULT_RUNTIME_S = 30
REDUNDANT_LEVELS = frozenset({"raid1", "raid4", "raid5", "raid6", "raid10"})
CHECK_POLL_S = 0.5
SECTOR_BYTES = 512

# Weakest-link verdicts. A member under 0.8 × the others' median is an outlier; an array within ±25 % of
# slowest × N runs at the slowest member's pace; members together under 0.85 × their sum alone share a limit.
OUTLIER_RATIO = 0.8
STRIPE_TOLERANCE = 0.25
SHARED_LIMIT_RATIO = 0.85

_SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str, what: str = "size") -> int:
    """'4k', '1M', '512', '2GiB' → bytes; k, m, g, t are powers of 1024 as fio reads them."""
    match = _SIZE_RE.match(text)
    if match is None:
        raise PlanError(f"{what} {text!r} is not a size such as 4k, 1m or 512 (k, m, g: powers of 1024, as in fio)")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


# --- requests and targets --------------------------------------------------------------------------


@dataclass(frozen=True)
class JobOptions:
    """Job options for the custom preset; runtime, size, iodepth and numjobs also override the other presets."""

    rw: RwMode | None = None
    block_size_bytes: int | None = None
    iodepth: int | None = None
    numjobs: int | None = None
    runtime_s: int | None = None
    size_bytes: int | None = None
    ioengine: IoEngine | None = None
    direct: bool | None = None
    offset_bytes: int | None = None
    name: str | None = None  # the fio job name (custom only)

    def custom_only(self) -> list[str]:
        """Options that only a custom job takes, by their command-line names."""
        names = {
            "rw": "--rw",
            "block_size_bytes": "--bs",
            "ioengine": "--ioengine",
            "direct": "--direct/--no-direct",
            "offset_bytes": "--offset",
            "name": "name",
        }
        return [flag for name, flag in names.items() if getattr(self, name) is not None]


@dataclass(frozen=True)
class BenchRequest:
    preset: str
    target: str
    quick: bool = False
    members: tuple[str, ...] = ()  # weakest-link: members to measure instead of the array's own
    options: JobOptions = JobOptions()
    # Every stored step of one run carries this label (params["step"] tells the steps apart), so tools
    # that read the store can group them; empty means "<preset> <target>".
    label: str = ""


class TargetKind(StrEnum):
    ARRAY = "array"
    DISK = "disk"
    BLOCK = "block device"  # a partition, dm or other device that is neither a whole disk nor an array
    FILE = "file"


@dataclass(frozen=True)
class BenchTarget:
    path: str  # what fio or dd opens
    kind: TargetKind
    name: str  # kernel name for devices, the file name for files
    size_bytes: int | None = None
    array: MdArray | None = None
    disk: Disk | None = None
    exists: bool = True

    @property
    def device(self) -> str | None:
        """The kernel name the sampler reads rates of; None for a file."""
        return None if self.kind is TargetKind.FILE else self.name

    def describe(self) -> str:
        if self.array is not None:
            members = sum(1 for m in self.array.members if not m.spare and not m.faulty)
            return f"{self.path} ({self.array.level}, {members} members)"
        if self.disk is not None:
            ident = " ".join(part for part in (self.disk.model, self.disk.serial) if part)
            return f"{self.path} ({ident})" if ident else self.path
        if self.kind is TargetKind.FILE and not self.exists:
            return f"{self.path} (new file)"
        return f"{self.path} ({self.kind.value})"


def _dev_name(root: SystemRoot, text: str) -> str | None:
    """The kernel name behind a /dev path; by-id and /dev/md/NAME links are followed, in a captured tree too."""
    if not text.startswith("/dev/"):
        return None
    path = root.path(text)
    resolved = root.resolve(text)
    if resolved is not None and not resolved.is_dir():
        return resolved.name
    if path.is_symlink():
        # A captured tree keeps /dev/disk/by-id links whose targets (../../sdb) it does not hold.
        return os.path.basename(os.readlink(path))
    if "/by-" in text or text.startswith("/dev/md/"):
        return None
    return text.rsplit("/", 1)[-1]


def _block_target(inventory: Inventory, root: SystemRoot, name: str, path: str | None = None) -> BenchTarget | None:
    array = inventory.array(name)
    if array is not None:
        if array.level is None or array.state == "inactive":
            raise PlanError(f"{array.dev_path} is inactive; assemble it before benchmarking it")
        return BenchTarget(array.dev_path, TargetKind.ARRAY, array.name, array.size_bytes, array=array)
    disk = inventory.disk(name)
    if disk is not None:
        return BenchTarget(disk.dev_path, TargetKind.DISK, disk.name, disk.size_bytes, disk=disk)
    # /sys/class/block lists partitions too; captured trees may hold only /sys/block.
    sectors = root.read_int(f"/sys/class/block/{name}/size")
    if sectors is None:
        sectors = root.read_int(f"/sys/block/{name}/size")
    if sectors is not None:
        return BenchTarget(path or f"/dev/{name}", TargetKind.BLOCK, name, sectors * SECTOR_BYTES)
    return None


def _known(inventory: Inventory) -> str:
    arrays = ", ".join(a.name for a in inventory.arrays) or "none"
    disks = ", ".join(d.name for d in inventory.disks) or "none"
    return f"arrays: {arrays}; disks: {disks}"


def resolve_target(text: str, inventory: Inventory, root: SystemRoot) -> BenchTarget:
    """An md array, a whole disk, another block device, or a file (which fio creates when it writes)."""
    text = text.strip()
    if not text:
        raise PlanError("no target given: name an md array (md0), a disk (sdb, /dev/disk/by-id/...) or a file")
    name = text if "/" not in text else _dev_name(root, text)
    if name is not None:
        found = _block_target(inventory, root, name, text if text.startswith("/dev/") else None)
        if found is not None:
            return found
        if text.startswith("/dev/") or not Path(text).exists():
            raise PlanError(f"no md array, disk or block device {text!r} ({_known(inventory)})")
    path = Path(text).absolute()
    try:
        info = path.stat()
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise PlanError(f"{text}: no such file, and its directory {path.parent} does not exist") from None
        return BenchTarget(str(path), TargetKind.FILE, path.name, None, exists=False)
    except OSError as exc:
        raise PlanError(f"cannot look at {text}: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise PlanError(f"{text} is a directory; give a file (fio reads or writes it), a disk or an md array")
    if stat.S_ISBLK(info.st_mode):
        found = _block_target(inventory, root, Path(os.path.realpath(path)).name, str(path))
        if found is not None:
            return found
    if not stat.S_ISREG(info.st_mode):
        raise PlanError(f"{text} is neither a regular file nor a block device mdtui knows")
    return BenchTarget(str(path), TargetKind.FILE, path.name, info.st_size)


def write_refusals(target: BenchTarget, inventory: Inventory, root: SystemRoot) -> tuple[str, ...]:
    """Why a job that writes must not run on ``target``; empty when it may (after a typed confirmation)."""
    if target.kind is TargetKind.FILE:
        return ()
    if not inventory.privileged:
        return (f"writing to {target.path} needs root: without it mdtui cannot check every in-use rule",)
    if target.kind is TargetKind.ARRAY:
        assert target.array is not None
        if is_mounted(root, target.array):
            return (
                f"{target.path} is mounted or held by another device (a filesystem, partition or device-mapper "
                "on it); a write benchmark would destroy it. Unmount it first.",
            )
        return ()
    if target.kind is TargetKind.DISK:
        assert target.disk is not None
        reasons = [f"{target.name} is in use: {reason}" for reason in target.disk.in_use]
        reasons += [f"{target.name} could not be checked: {problem}" for problem in target.disk.problems]
        return tuple(reasons)
    return (
        f"{target.path} is neither a whole disk nor an md array, so mdtui cannot check what uses it; "
        "write benchmarks run on free disks, unmounted arrays or files",
    )


# --- plans -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchPlan:
    """A preset resolved on a target: the steps to run, and whether (and why not) they may write."""

    request: BenchRequest
    preset: Preset
    target: BenchTarget
    steps: tuple[Step, ...]
    members: tuple[BenchTarget, ...] = ()  # weakest-link only
    check_pass: bool = False  # parity-cost: time an md check pass after the steps
    warnings: tuple[str, ...] = ()
    refusals: tuple[str, ...] = ()  # why the writes may not run; empty when they may

    @property
    def writes(self) -> bool:
        return any(step.writes for step in self.steps)

    @property
    def label(self) -> str:
        return self.request.label or f"{self.preset.key} {self.target.name}"

    @property
    def confirmation(self) -> str:
        """What the user types (or --yes stands for) to let a write benchmark overwrite the target."""
        return self.target.path

    @property
    def expected_s(self) -> float | None:
        """Total runtime of the steps when all are time based; None when some move a fixed size."""
        total = 0.0
        for step in self.steps:
            seconds = step_runtime_s(step)
            if seconds is None:
                return None
            total += seconds
        return total

    def device_names(self) -> dict[str, str]:
        """Job target path → kernel name, for every block device the plan touches."""
        names = {t.path: t.device for t in (self.target, *self.members) if t.device is not None}
        return names

    def sampled_devices(self) -> tuple[str, ...]:
        """Devices the sampler follows: the targets and, for an array, its members."""
        names = list(self.device_names().values())
        if self.target.array is not None:
            names += [m.name for m in self.target.array.members]
        return tuple(dict.fromkeys(names))

    def ensure_allowed(self) -> None:
        if self.refusals:
            raise SafetyError(
                f"refusing to run {self.preset.key} on {self.target.path}: it writes, and\n  - "
                + "\n  - ".join(self.refusals)
            )

    def describe(self) -> list[str]:
        """The plan in lines: what runs (exact argv), on what, for how long, and whether it writes."""
        mode = ", quick" if self.request.quick else ""
        expected = f"about {self.expected_s:.0f} s" if self.expected_s is not None else "time depends on the target"
        lines = [
            f"{self.preset.key} on {self.target.describe()}{mode}: {len(self.steps)} step(s), {expected}",
            f"WRITES to {self.target.path}: its data will be overwritten" if self.writes else "read-only",
        ]
        for index, step in enumerate(self.steps, 1):
            lines.append(f"  {index}. {step_title(step)}")
            lines += [f"     {shlex.join(job_argv(spec))}" for spec in step.jobs]
        if self.check_pass:
            lines.append(f"  then a check pass: check → /sys/block/{self.target.name}/md/sync_action, until idle")
        lines += [f"⚠ {warning}" for warning in self.warnings]
        lines += [f"✖ {refusal}" for refusal in self.refusals]
        return lines


def step_runtime_s(step: Step) -> float | None:
    if all(spec.runtime_s is not None for spec in step.jobs):
        return float(max(spec.runtime_s or 0 for spec in step.jobs))
    return None


def step_bytes(step: Step) -> int | None:
    """Bytes a size-based step moves in all (fio's size is per job process)."""
    if any(spec.size_bytes is None for spec in step.jobs):
        return None
    return sum((spec.size_bytes or 0) * (spec.numjobs if spec.tool is Tool.FIO else 1) for spec in step.jobs)


def _override(steps: tuple[Step, ...], options: JobOptions, key: str) -> tuple[Step, ...]:
    """Preset steps with --runtime (time-based jobs), --size (size-based jobs), --iodepth and --numjobs set.

    Parallelism matters to a result (finding 1 in docs/findings.md: md needed 64 jobs to saturate), and a small machine
    cannot hold the field tests' 16 jobs × 12 × 4 MiB buffers per member, so both can be changed.
    """
    changed: set[str] = set()

    def adjust(spec: JobSpec) -> JobSpec:
        if spec.tool is not Tool.FIO:
            return spec
        updates: dict[str, int] = {}
        if options.runtime_s is not None and spec.time_based:
            updates["runtime_s"] = options.runtime_s
        if options.size_bytes is not None and not spec.time_based:
            updates["size_bytes"] = options.size_bytes
        if options.iodepth is not None:
            updates["iodepth"] = options.iodepth
        if options.numjobs is not None:
            updates["numjobs"] = options.numjobs
        changed.update(updates)
        return replace(spec, **updates) if updates else spec

    adjusted = tuple(replace(step, jobs=tuple(adjust(spec) for spec in step.jobs)) for step in steps)
    flags = {"runtime_s": "--runtime", "size_bytes": "--size", "iodepth": "--iodepth", "numjobs": "--numjobs"}
    for name, flag in flags.items():
        if getattr(options, name) is not None and name not in changed:
            kind = {"runtime_s": "time-based fio", "size_bytes": "size-based fio"}.get(name, "fio")
            raise PlanError(f"{key} has no {kind} steps for {flag} to change")
    return adjusted


def _members(
    request: BenchRequest, target: BenchTarget, inventory: Inventory, root: SystemRoot
) -> tuple[BenchTarget, ...]:
    if request.members:
        members = tuple(resolve_target(text, inventory, root) for text in request.members)
    elif target.array is not None:
        names = [m.name for m in target.array.members if not m.spare and not m.faulty]
        members = tuple(resolve_target(name, inventory, root) for name in names)
    else:
        raise PlanError(
            "the weakest-link run measures an array's members: give an md array as the target, or list the "
            "devices with --members"
        )
    if not members:
        raise PlanError(f"{target.path} has no active members to measure")
    if any(member.path == target.path for member in members):
        raise PlanError(f"{target.path} is both the target and one of its members")
    if len({member.path for member in members}) != len(members):
        raise PlanError("a member is listed twice")
    return members


def plan_bench(request: BenchRequest, inventory: Inventory, root: SystemRoot) -> BenchPlan:
    """Resolve the request into steps; PlanError says what to change. Refusals are recorded, not raised."""
    chosen = find_preset(request.preset)
    target = resolve_target(request.target, inventory, root)
    options = request.options
    key = chosen.key
    if key != "custom" and (extra := options.custom_only()):
        raise PlanError(
            f"{', '.join(extra)} only apply to --preset custom; other presets take --runtime, --size, --iodepth "
            "and --numjobs"
        )
    if request.members and key != "weakest-link":
        raise PlanError("--members only applies to the weakest-link preset")
    members: tuple[BenchTarget, ...] = ()
    warnings: list[str] = []
    quick = request.quick
    if key == "weakest-link":
        members = _members(request, target, inventory, root)
        steps = weakest_link([m.path for m in members], target.path, quick=quick)
    elif key == "disk-mark":
        steps = disk_mark(target.path, quick=quick)
    elif key == "sync-random":
        steps = sync_random(target.path, quick=quick)
    elif key == "parity-cost":
        if target.array is None:
            raise PlanError(
                "parity-cost measures an md array's kernel thread and check pass: give an array as the target"
            )
        steps = parity_cost(target.path, quick=quick)
    elif key == "offset-sweep":
        if not target.size_bytes:
            raise PlanError(f"the size of {target.path} is unknown, so the offsets cannot be placed")
        steps = offset_sweep(target.path, target.size_bytes, quick=quick)
    else:
        steps = custom(
            target.path,
            rw=options.rw or RwMode.READ,
            block_size_bytes=options.block_size_bytes or 4096,
            iodepth=options.iodepth or 1,
            numjobs=options.numjobs or 1,
            runtime_s=options.runtime_s
            if options.runtime_s is not None or options.size_bytes is not None
            else CUSTOM_DEFAULT_RUNTIME_S,
            size_bytes=options.size_bytes,
            ioengine=options.ioengine or IoEngine.LIBAIO,
            direct=True if options.direct is None else options.direct,
            offset_bytes=options.offset_bytes or 0,
            quick=quick,
            name=options.name or "custom",
        )
    if key != "custom":
        steps = _override(steps, options, key)

    array = target.array
    check_pass = False
    if key == "parity-cost" and array is not None:
        check_pass = array.level in REDUNDANT_LEVELS
        if not check_pass:
            warnings.append(f"{array.level} has no redundancy: no md kernel thread to measure and no check pass")
    if array is not None and array.sync is not None:
        warnings.append(
            f"{target.path} is running a {array.sync.action}: the figures measure it as much as the array"
            + ("; the check pass cannot start until it ends" if check_pass else "")
        )
    if array is not None and array.degraded:
        warnings.append(f"{target.path} is degraded ({array.degraded} missing): reads reconstruct data from parity")
    writes = any(step.writes for step in steps)
    sized = any(spec.size_bytes for step in steps for spec in step.jobs)
    if target.kind is TargetKind.FILE and not target.exists and not (writes and sized):
        raise PlanError(f"{target.path} does not exist; fio can create it only for a write job given a --size")
    if target.kind is TargetKind.FILE and target.exists:
        warnings.append("a file target measures the filesystem and page cache as well as the disk")
    refusals = write_refusals(target, inventory, root) if writes else ()
    return BenchPlan(request, chosen, target, steps, members, check_pass, tuple(warnings), refusals)


def recheck_plan(plan: BenchPlan, root: SystemRoot, privileged: bool | None = None) -> tuple[BenchPlan, Inventory]:
    """Scan again right before running: a write job refuses a target that changed identity or became busy."""
    inventory = scan(root, privileged=privileged)
    try:
        fresh = plan_bench(plan.request, inventory, root)
    except PlanError as exc:
        raise PlanError(f"{plan.target.path} changed since the plan: {exc}") from None
    if plan.writes:
        old, new = plan.target, fresh.target
        problems = []
        if (old.kind, old.name) != (new.kind, new.name):
            problems.append(f"{old.path} is now {new.kind.value} {new.name}, planned as {old.kind.value} {old.name}")
        if old.disk is not None and new.disk is not None and old.disk.serial != new.disk.serial:
            problems.append(f"{old.path} now has serial {new.disk.serial}, planned {old.disk.serial}: another disk")
        if old.array is not None and new.array is not None and old.array.uuid != new.array.uuid:
            problems.append(f"{old.path} is now array {new.array.uuid}, planned {old.array.uuid}: another array")
        problems += fresh.refusals
        if problems:
            raise SafetyError(f"refusing to write to {old.path}:\n  - " + "\n  - ".join(problems))
    return fresh, inventory


# --- md kernel-thread CPU and the check pass -------------------------------------------------------


class MdThreadMeter:
    """CPU time of an array's md kernel threads over an interval, threads that come and go included.

    A check pass starts an mdX_resync thread and ends it before the pass is seen to end, so threads are
    polled during the interval and each one's last reading kept; one first seen after start() began
    after it, so all of its time counts.
    """

    def __init__(
        self,
        root: SystemRoot,
        array: str,
        *,
        clock_ticks_per_s: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self.array = array
        self.clock_ticks_per_s = clock_ticks_per_s or os.sysconf("SC_CLK_TCK")
        self._clock = clock
        self._base: dict[tuple[int, str], int] = {}
        self._last: dict[tuple[int, str], int] = {}
        self._started = 0.0
        self._elapsed: float | None = None

    def _read(self) -> dict[tuple[int, str], int]:
        found = {}
        for thread in find_md_threads(self.root):
            if thread.array != self.array:
                continue
            pid_stat = read_pid_stat(self.root, thread.pid)
            if pid_stat is not None and pid_stat.comm == thread.name:
                found[(thread.pid, thread.name)] = pid_stat.cpu_ticks
        return found

    def start(self) -> None:
        self._base = self._read()
        self._last = dict(self._base)
        self._started = self._clock()
        self._elapsed = None

    def poll(self) -> None:
        for key, ticks in self._read().items():
            self._base.setdefault(key, 0)
            self._last[key] = ticks

    def stop(self) -> float | None:
        """Percent of one core the threads used since start(); None when the array has no md thread."""
        self.poll()
        self._elapsed = self._clock() - self._started
        return self.cpu_percent()

    def cpu_percent(self) -> float | None:
        if not self._last or not self._elapsed:
            return None
        ticks = sum(self._last[key] - self._base.get(key, 0) for key in self._last)
        return ticks / self.clock_ticks_per_s / self._elapsed * 100

    @property
    def threads(self) -> tuple[str, ...]:
        return tuple(sorted({name for _, name in self._last}))


@dataclass(frozen=True)
class CheckUpdate:
    """A check pass as last polled."""

    elapsed_s: float
    fraction: float | None
    speed_bytes_per_s: float | None

    @property
    def remaining_s(self) -> float | None:
        if not self.fraction or self.fraction >= 1:
            return None
        return self.elapsed_s * (1 - self.fraction) / self.fraction


@dataclass(frozen=True)
class CheckOutcome:
    """How long md took to read and verify every stripe, and the CPU its threads spent doing it."""

    array: str
    status: JobStatus
    duration_s: float = 0.0
    component_bytes: int | None = None  # per member, as sync_completed counts
    md_thread_cpu_pct: float | None = None
    md_threads: tuple[str, ...] = ()
    mismatch_sectors: int | None = None
    skipped: str = ""  # why no check ran
    error: str = ""
    run_id: int | None = None

    @property
    def bytes_per_s(self) -> float | None:
        """Per-member check rate, as /proc/mdstat's speed counts it."""
        if not self.component_bytes or self.duration_s <= 0 or self.status is not JobStatus.COMPLETE:
            return None
        return self.component_bytes / self.duration_s


def _sync_completed(text: str | None) -> tuple[int, int] | None:
    parts = (text or "").replace(" ", "").split("/")
    if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
        return int(parts[0]), int(parts[1])
    return None


def _write_sysfs(root: SystemRoot, path: str, value: str) -> None:
    try:
        root.path(path).write_text(value + "\n")
    except OSError as exc:
        raise MdtuiError(f"could not write {value!r} to {path}: {exc.strerror or exc}") from None


async def run_check_pass(
    root: SystemRoot,
    array: str,
    *,
    cancel: asyncio.Event | None = None,
    on_update: Callable[[CheckUpdate], None] | None = None,
    poll_s: float = CHECK_POLL_S,
) -> CheckOutcome:
    """Start `check` on an array and follow sync_action until it is idle again; cancel sets it back to idle."""
    action_path = f"/sys/block/{array}/md/sync_action"
    current = root.read_text(action_path)
    if current is None:
        return CheckOutcome(array, JobStatus.FAILED, skipped=f"{action_path} is missing: {array} has no check")
    if current != "idle":
        return CheckOutcome(array, JobStatus.FAILED, skipped=f"{array} is busy with {current}; no check pass")
    meter = MdThreadMeter(root, array)
    meter.start()
    started = time.monotonic()
    _write_sysfs(root, action_path, "check")
    total_sectors: int | None = None
    status = JobStatus.COMPLETE
    try:
        while True:
            await asyncio.sleep(poll_s)
            meter.poll()
            action = root.read_text(action_path)
            completed = _sync_completed(root.read_text(f"/sys/block/{array}/md/sync_completed"))
            speed_kib = root.read_int(f"/sys/block/{array}/md/sync_speed")
            if completed is not None:
                total_sectors = completed[1]
            if on_update is not None:
                on_update(
                    CheckUpdate(
                        elapsed_s=time.monotonic() - started,
                        fraction=completed[0] / completed[1] if completed and completed[1] else None,
                        speed_bytes_per_s=speed_kib * 1024 if speed_kib is not None else None,
                    )
                )
            if action != "check":
                break
            if cancel is not None and cancel.is_set():
                status = JobStatus.CANCELLED
                _write_sysfs(root, action_path, "idle")
    except asyncio.CancelledError:
        with contextlib.suppress(MdtuiError):
            _write_sysfs(root, action_path, "idle")
        raise
    duration = time.monotonic() - started
    cpu = meter.stop()
    if total_sectors is None:
        # The pass ended before the first poll: a small array. md_size is KiB per member.
        kib = root.read_int(f"/sys/block/{array}/md/component_size")
        total_sectors = kib * 2 if kib is not None else None
    return CheckOutcome(
        array=array,
        status=status,
        duration_s=duration,
        component_bytes=total_sectors * SECTOR_BYTES if total_sectors is not None else None,
        md_thread_cpu_pct=cpu,
        md_threads=meter.threads,
        mismatch_sectors=root.read_int(f"/sys/block/{array}/md/mismatch_cnt"),
    )


# --- progress and outcomes -------------------------------------------------------------------------


@dataclass(frozen=True)
class StepStarted:
    index: int  # 0-based
    count: int
    label: str
    targets: tuple[str, ...]
    expected_s: float | None
    run_id: int | None


@dataclass(frozen=True)
class StepUpdate:
    """A step's jobs at their latest status report, rates summed over jobs that run at once."""

    index: int
    count: int
    label: str
    elapsed_s: float
    read_bytes_per_s: float
    write_bytes_per_s: float
    read_iops: float
    write_iops: float
    step_remaining_s: float | None
    remaining_s: float | None  # all remaining steps (the check pass not included)

    @property
    def bytes_per_s(self) -> float:
        return self.read_bytes_per_s + self.write_bytes_per_s

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops


@dataclass(frozen=True)
class StepOutcome:
    index: int
    step: Step
    results: tuple[JobResult, ...]
    status: JobStatus
    started_s: float  # since the bench started
    duration_s: float
    metrics: Metrics = field(default_factory=Metrics)
    md_thread_cpu_pct: float | None = None
    md_threads: tuple[str, ...] = ()
    run_id: int | None = None

    @property
    def label(self) -> str:
        return self.step.label

    @property
    def partial(self) -> bool:
        return self.status is not JobStatus.COMPLETE or any(r.partial for r in self.results)

    @property
    def error(self) -> str:
        return "; ".join(r.error for r in self.results if r.error)

    def _sum(self, pick: Callable[[JobResult], float]) -> float | None:
        values = [pick(r) for r in self.results if r.total is not None]
        return sum(values) if values else None

    @property
    def read_bytes_per_s(self) -> float | None:
        return self._sum(lambda r: r.total.read.bytes_per_s if r.total else 0.0)

    @property
    def write_bytes_per_s(self) -> float | None:
        return self._sum(lambda r: r.total.write.bytes_per_s if r.total else 0.0)

    @property
    def bytes_per_s(self) -> float | None:
        return self._sum(lambda r: r.total.bytes_per_s if r.total else 0.0)

    @property
    def iops(self) -> float | None:
        return self._sum(lambda r: r.total.iops if r.total else 0.0)

    def target_rates(self) -> dict[str, float]:
        """Bytes/s per job target (the members of an all-at-once step)."""
        rates: dict[str, float] = {}
        for result in self.results:
            if result.total is not None:
                rates[result.spec.target] = rates.get(result.spec.target, 0.0) + result.total.bytes_per_s
        return rates


@dataclass(frozen=True)
class StepFinished:
    outcome: StepOutcome
    count: int


BenchEvent = StepStarted | StepUpdate | StepFinished | CheckUpdate
EventCallback = Callable[[BenchEvent], None]


def step_status(results: Sequence[JobResult]) -> JobStatus:
    statuses = {result.status for result in results}
    if JobStatus.CANCELLED in statuses:
        return JobStatus.CANCELLED
    if statuses - {JobStatus.COMPLETE}:
        return JobStatus.FAILED
    return JobStatus.COMPLETE


def run_status(status: JobStatus) -> RunStatus:
    return {JobStatus.COMPLETE: RunStatus.COMPLETE, JobStatus.CANCELLED: RunStatus.CANCELLED}.get(
        status, RunStatus.FAILED
    )


class StepProgress:
    """Turns each job's Progress into one StepUpdate for the step, with remaining time estimated.

    Time-based steps end at their runtime. Size-based ones end when their bytes are moved at the
    current rate; later size-based steps are estimated at the last rate seen.
    """

    STALL_S = 1.5

    def __init__(self, steps: Sequence[Step], index: int, rate_hint: float | None = None) -> None:
        self.steps = steps
        self.index = index
        self.rate_hint = rate_hint
        self._latest: dict[str, Progress] = {}
        self._counts: dict[str, int] = {}
        self._emitted_at = 0.0

    def update(self, spec: JobSpec, progress: Progress) -> StepUpdate | None:
        """The step's state after this report, once per round of reports from all of its jobs.

        Jobs that run at once report about together; one update per round keeps the summed rate
        from rising job by job within a second. A job that stops reporting (it finished) holds no
        one back for longer than STALL_S.
        """
        self._latest[spec.name] = progress
        self._counts[spec.name] = self._counts.get(spec.name, 0) + 1
        step = self.steps[self.index]
        round_done = len(self._counts) == len(step.jobs) and min(self._counts.values()) >= self._counts[spec.name]
        if not round_done and progress.elapsed_s < self._emitted_at + self.STALL_S:
            return None
        self._emitted_at = progress.elapsed_s
        latest = self._latest.values()
        elapsed = max(p.elapsed_s for p in latest)
        read_rate = sum(p.read_bytes_per_s for p in latest)
        write_rate = sum(p.write_bytes_per_s for p in latest)
        if read_rate + write_rate > 0:
            self.rate_hint = read_rate + write_rate
        step_remaining = self._step_remaining(step, elapsed, sum(p.read_bytes + p.write_bytes for p in latest))
        remaining = step_remaining
        for later in self.steps[self.index + 1 :]:
            seconds = self.expected_s(later)
            remaining = None if remaining is None or seconds is None else remaining + seconds
        return StepUpdate(
            index=self.index,
            count=len(self.steps),
            label=step_title(step),
            elapsed_s=elapsed,
            read_bytes_per_s=read_rate,
            write_bytes_per_s=write_rate,
            read_iops=sum(p.read_iops for p in latest),
            write_iops=sum(p.write_iops for p in latest),
            step_remaining_s=step_remaining,
            remaining_s=remaining,
        )

    def _step_remaining(self, step: Step, elapsed: float, done_bytes: int) -> float | None:
        runtime = step_runtime_s(step)
        if runtime is not None:
            return max(0.0, runtime - elapsed)
        total = step_bytes(step)
        if total is None or not self.rate_hint:
            return None
        return max(0.0, (total - done_bytes) / self.rate_hint)

    def expected_s(self, step: Step) -> float | None:
        runtime = step_runtime_s(step)
        if runtime is not None:
            return runtime
        total = step_bytes(step)
        return total / self.rate_hint if total is not None and self.rate_hint else None


# --- the weakest-link report -----------------------------------------------------------------------


@dataclass(frozen=True)
class MemberFigure:
    device: str
    alone_bytes_per_s: float | None
    together_bytes_per_s: float | None


@dataclass(frozen=True)
class WeakestLinkReport:
    """Each member alone and together against the array (docs/findings.md, finding 1: a stripe runs at slowest × N)."""

    array: str
    level: str | None
    members: tuple[MemberFigure, ...]
    array_bytes_per_s: float | None

    @property
    def slowest(self) -> MemberFigure | None:
        measured = [m for m in self.members if m.alone_bytes_per_s is not None]
        return min(measured, key=lambda m: m.alone_bytes_per_s or 0.0) if measured else None

    @property
    def alone_sum_bytes_per_s(self) -> float | None:
        if any(m.alone_bytes_per_s is None for m in self.members):
            return None
        return sum(m.alone_bytes_per_s or 0.0 for m in self.members)

    @property
    def together_sum_bytes_per_s(self) -> float | None:
        if any(m.together_bytes_per_s is None for m in self.members):
            return None
        return sum(m.together_bytes_per_s or 0.0 for m in self.members)

    @property
    def predicted_bytes_per_s(self) -> float | None:
        """Slowest member × N: what a stripe over these members can read at most."""
        slowest = self.slowest
        if slowest is None or slowest.alone_bytes_per_s is None or self.alone_sum_bytes_per_s is None:
            return None
        return slowest.alone_bytes_per_s * len(self.members)

    @property
    def vs_predicted(self) -> float | None:
        return _ratio(self.array_bytes_per_s, self.predicted_bytes_per_s)

    @property
    def vs_sum(self) -> float | None:
        return _ratio(self.array_bytes_per_s, self.alone_sum_bytes_per_s)

    def slowest_vs_others(self) -> float | None:
        """The slowest member's rate ÷ the median of the others'."""
        slowest = self.slowest
        others = [m.alone_bytes_per_s for m in self.members if m is not slowest and m.alone_bytes_per_s is not None]
        if slowest is None or not others:
            return None
        return _ratio(slowest.alone_bytes_per_s, median(others))

    def findings(self) -> tuple[str, ...]:
        slowest = self.slowest
        if slowest is None:
            return ("No member was measured alone, so there is no weakest link to name.",)
        n = len(self.members)
        lines = []
        vs_others = self.slowest_vs_others()
        outlier = vs_others is not None and vs_others < OUTLIER_RATIO
        sentence = f"Slowest member: {slowest.device} at {rate_mb_s(slowest.alone_bytes_per_s)} alone"
        if vs_others is not None:
            sentence += f", {times(vs_others)} the median of the others"
        lines.append(sentence + (": it holds the array back." if outlier else "."))
        if self.array_bytes_per_s is not None and self.predicted_bytes_per_s is not None:
            lines.append(
                f"{self.array} read {rate_mb_s(self.array_bytes_per_s)}: {times(self.vs_predicted)} slowest × {n} "
                f"({rate_mb_s(self.predicted_bytes_per_s)}) and {times(self.vs_sum)} the members' sum alone "
                f"({rate_mb_s(self.alone_sum_bytes_per_s)})."
            )
            vs_predicted = self.vs_predicted or 0.0
            if outlier and abs(vs_predicted - 1) <= STRIPE_TOLERANCE:
                lines.append(
                    f"The array runs at its slowest member's pace: look at {slowest.device} (its link, slot or "
                    "health). In the field one drive in a PCIe 1.0 slot held a RAID0 of four at 832 × 4 MB/s."
                )
            elif vs_predicted < 1 - STRIPE_TOLERANCE:
                lines.append(
                    "The array reads below slowest × N: md may need more parallelism (more jobs or a deeper "
                    "queue) to saturate, or this level does not spread reads over every member."
                )
        together, alone = self.together_sum_bytes_per_s, self.alone_sum_bytes_per_s
        if together is not None and alone and together < SHARED_LIMIT_RATIO * alone:
            lines.append(
                f"All members at once read {rate_mb_s(together)}, {times(together / alone)} their sum alone: a "
                "shared limit (HBA, PCIe switch, CPU) caps them together."
            )
        if self.level not in (None, "raid0"):
            lines.append(f"For {self.level}, slowest × N is an upper bound: not every member serves every read.")
        return tuple(lines)


def _ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or not reference:
        return None
    return value / reference


def weakest_link_report(plan: BenchPlan, outcomes: Sequence[StepOutcome]) -> WeakestLinkReport:
    """Read the steps weakest_link() builds: each member alone, all together, then the array."""
    count = len(plan.members)
    alone: dict[str, float] = {}
    together: dict[str, float] = {}
    array_rate: float | None = None
    for outcome in outcomes:
        if outcome.status is not JobStatus.COMPLETE:
            continue
        rates = outcome.target_rates()
        if outcome.index < count:
            alone.update(rates)
        elif outcome.index == count:
            together.update(rates)
        else:
            array_rate = rates.get(plan.target.path)
    members = tuple(MemberFigure(m.path, alone.get(m.path), together.get(m.path)) for m in plan.members)
    level = plan.target.array.level if plan.target.array is not None else None
    return WeakestLinkReport(plan.target.path, level, members, array_rate)


# --- running ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchResult:
    plan: BenchPlan
    status: RunStatus
    steps: tuple[StepOutcome, ...]
    context: dict[str, Any]
    started_at: datetime
    duration_s: float
    samples: tuple[SamplePoint, ...] = ()  # t_s since the bench started
    check: CheckOutcome | None = None
    weakest_link: WeakestLinkReport | None = None
    error: str = ""
    notes: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        """True when not every step ran to its end: the figures cover what ran."""
        return self.status is not RunStatus.COMPLETE or len(self.steps) < len(self.plan.steps)

    @property
    def run_ids(self) -> tuple[int, ...]:
        ids = [o.run_id for o in self.steps if o.run_id is not None]
        if self.check is not None and self.check.run_id is not None:
            ids.append(self.check.run_id)
        return tuple(ids)


def sample_values(
    snapshot: Snapshot, devices: Sequence[str], focus: Sequence[str], array: str | None
) -> dict[str, float]:
    """One sampler tick as stored values; unknown rates are left out.

    Each device's rates, the focus devices' sums under the store's metric names (so the results
    views can plot them), CPU load and frequency, and the array's md thread CPU.
    """
    values: dict[str, float] = {}
    totals: dict[str, float] = {}
    for name in devices:
        rates = snapshot.device(name)
        if rates is None:
            continue
        for key, metric, value in (
            ("read_bytes_per_s", "read_bw_bytes_per_s", rates.read_bytes_per_s),
            ("write_bytes_per_s", "write_bw_bytes_per_s", rates.write_bytes_per_s),
            ("read_iops", "read_iops", rates.read_iops),
            ("write_iops", "write_iops", rates.write_iops),
            ("util_pct", None, rates.utilisation_percent),
        ):
            if value is None:
                continue
            values[f"{name}.{key}"] = value
            if metric is not None and name in focus:
                totals[metric] = totals.get(metric, 0.0) + value
    values.update(totals)
    cpu = snapshot.cpu
    if cpu.total_busy_percent is not None:
        values["cpu_busy_pct"] = cpu.total_busy_percent
    if cpu.iowait_percent is not None:
        values["cpu_iowait_pct"] = cpu.iowait_percent
    frequencies = [core.freq_mhz for core in cpu.cores if core.freq_mhz is not None]
    if frequencies:
        values["cpu_mhz_mean"] = sum(frequencies) / len(frequencies)
    for thread in snapshot.md_threads:
        if (array is None or thread.array == array) and thread.cpu_percent is not None:
            values[f"{thread.name}.cpu_pct"] = thread.cpu_percent
    return values


@dataclass
class _Current:
    """The store run samples go to now."""

    run_id: int | None
    started_wall: float
    focus: tuple[str, ...]


@dataclass
class _Session:
    plan: BenchPlan
    inventory: Inventory
    root: SystemRoot
    store: ResultsStore | None
    context: dict[str, Any]
    on_event: EventCallback | None
    cancel: asyncio.Event
    sample_interval_s: float | None
    started_wall: float = field(default_factory=time.time)
    started_mono: float = field(default_factory=time.monotonic)
    samples: list[SamplePoint] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    current: _Current | None = None
    sampler: Sampler | None = None  # set while the time series is being sampled

    def emit(self, event: BenchEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _progress(self, tracker: StepProgress, spec: JobSpec, progress: Progress) -> None:
        update = tracker.update(spec, progress)
        if update is not None:
            self.emit(update)

    # -- store -------------------------------------------------------------------------------------

    def _record(self, action: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A store call; a store that fails loses the record, not the measurement.

        Beginning and finishing a run are called on the loop, not in a thread: an await there would be a
        point where a cancel could leave a run begun but never finished.
        """
        if self.store is None:
            return None
        try:
            return call(*args, **kwargs)
        except StoreError as exc:
            note = f"could not {action} in the results store: {exc}"
            if note not in self.notes:
                self.notes.append(note)
            log.warning(note)
            return None

    def _setup(self, step: Step, index: int) -> RunSetup:
        plan = self.plan
        targets = tuple(dict.fromkeys(spec.target for spec in step.jobs))
        on_array = plan.target.array is not None and targets == (plan.target.path,)
        names = plan.device_names()
        disks = [d for t in targets if (d := self.inventory.disk(names.get(t, ""))) is not None]
        context = dict(self.context)
        if disks:
            context["devices"] = [record.disk_config(d) for d in disks]
        if plan.target.array is not None and not on_array:
            context["member_of"] = plan.target.array.name
        params = {**record.step_params(step), "quick": plan.request.quick, "step_index": index + 1}
        params["steps"] = len(plan.steps)
        return RunSetup(
            preset=plan.preset.key,
            params=params,
            target=", ".join(targets),
            array=record.array_config(plan.target.array, self.inventory) if on_array and plan.target.array else {},
            context=context,
            label=plan.label,
        )

    # -- sampling ----------------------------------------------------------------------------------

    async def _on_snapshot(self, snapshot: Snapshot) -> None:
        current = self.current
        array = self.plan.target.array.name if self.plan.target.array is not None else None
        focus = current.focus if current is not None else ()
        values = sample_values(snapshot, self.plan.sampled_devices(), focus, array)
        self.samples.append(SamplePoint(snapshot.timestamp - self.started_wall, values))
        if current is not None and current.run_id is not None and self.store is not None:
            point = SamplePoint(snapshot.timestamp - current.started_wall, values)
            await asyncio.to_thread(self._record, "store samples", self.store.append_samples, current.run_id, [point])

    async def _closing_sample(self) -> None:
        """One more sample as a step ends, so a step shorter than the interval still has its rates."""
        sampler = self.sampler
        if sampler is None:
            return
        try:
            snapshot = await asyncio.to_thread(sampler.sample)
            await self._on_snapshot(snapshot)
        except Exception as exc:  # the step's figures come from fio; the time series is a bonus
            log.warning("closing sample failed: %s", exc)

    async def _sample(self) -> None:
        try:
            with Sampler(self.root, devices=self.plan.sampled_devices()) as sampler:
                self.sampler = sampler
                await sampler.run(self.sample_interval_s or 1.0, self._on_snapshot)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the benchmark goes on without a time series
            log.exception("sampling failed")
            self.notes.append(f"sampling stopped: {exc}")

    # -- steps -------------------------------------------------------------------------------------

    def _begin(self, setup: RunSetup, focus: tuple[str, ...]) -> int | None:
        run_id = self._record("record the run", self.store.begin_run, setup) if self.store else None
        self.current = _Current(run_id, time.time(), focus)
        return run_id

    def _abandon(self, run_id: int | None, exc: BaseException) -> None:
        """End a run whose step did not return: stopped by a cancel, or broken by an error."""
        if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
            self._finish(run_id, RunStatus.CANCELLED, error="cancelled: the benchmark was stopped")
        else:
            self._finish(run_id, RunStatus.FAILED, error=str(exc) or type(exc).__name__)

    def _finish(self, run_id: int | None, status: RunStatus, **kwargs: Any) -> None:
        self.current = None
        if run_id is not None and self.store is not None:
            self._record("finish the run", self.store.finish_run, run_id, status, **kwargs)

    async def run_step(self, index: int, rate_hint: float | None) -> StepOutcome:
        plan = self.plan
        step = plan.steps[index]
        names = plan.device_names()
        focus = tuple(names[spec.target] for spec in step.jobs if spec.target in names)
        run_id = self._begin(self._setup(step, index), focus)
        try:
            targets = tuple(dict.fromkeys(spec.target for spec in step.jobs))
            progress = StepProgress(plan.steps, index, rate_hint)
            expected = progress.expected_s(step)
            self.emit(StepStarted(index, len(plan.steps), step_title(step), targets, expected, run_id))
            meter = None
            if step.measure_md_cpu and plan.target.array is not None:
                meter = MdThreadMeter(self.root, plan.target.array.name)
                meter.start()
            started = time.monotonic()
            results = await run_step(step, lambda spec, p: self._progress(progress, spec, p), cancel=self.cancel)
            duration = time.monotonic() - started
            await self._closing_sample()
            cpu = meter.stop() if meter is not None else None
            status = step_status(results)
            metrics = record.metrics_from_results(results, md_thread_cpu_pct=cpu)
            outcome = StepOutcome(
                index=index,
                step=step,
                results=results,
                status=status,
                started_s=started - self.started_mono,
                duration_s=duration,
                metrics=metrics,
                md_thread_cpu_pct=cpu,
                md_threads=meter.threads if meter is not None else (),
                run_id=run_id,
            )
        except BaseException as exc:
            self._abandon(run_id, exc)
            raise
        error = outcome.error
        if status is JobStatus.CANCELLED:
            error = "cancelled: the figures cover the part that ran" + (f"; {error}" if error else "")
        self._finish(
            run_id, run_status(status), metrics=metrics, fio_json=record.fio_json_of(results), error=error
        )
        self.emit(StepFinished(outcome, len(plan.steps)))
        return outcome

    async def run_check(self) -> CheckOutcome:
        plan = self.plan
        assert plan.target.array is not None
        name = plan.target.array.name
        setup = RunSetup(
            preset=plan.preset.key,
            params={"step": "check pass", "action": "check", "quick": plan.request.quick},
            target=plan.target.path,
            array=record.array_config(plan.target.array, self.inventory),
            context=dict(self.context),
            label=plan.label,
        )
        run_id = self._begin(setup, (name,))
        try:
            outcome = await run_check_pass(self.root, name, cancel=self.cancel, on_update=self.emit)
        except MdtuiError as exc:
            outcome = CheckOutcome(name, JobStatus.FAILED, error=str(exc))
        except BaseException as exc:
            self._abandon(run_id, exc)
            raise
        outcome = replace(outcome, run_id=run_id)
        error = outcome.error or outcome.skipped
        if outcome.status is JobStatus.CANCELLED:
            error = "cancelled: the check was set back to idle before it finished"
        metrics = Metrics(md_thread_cpu_pct=outcome.md_thread_cpu_pct)
        self._finish(run_id, run_status(outcome.status), metrics=metrics, error=error)
        return outcome

    async def run(self) -> BenchResult:
        plan = self.plan
        sampler = asyncio.create_task(self._sample()) if self.sample_interval_s else None
        outcomes: list[StepOutcome] = []
        check: CheckOutcome | None = None
        status = RunStatus.COMPLETE
        error = ""
        try:
            rate_hint: float | None = None
            for index in range(len(plan.steps)):
                if self.cancel.is_set():
                    status = RunStatus.CANCELLED
                    break
                outcome = await self.run_step(index, rate_hint)
                outcomes.append(outcome)
                rate_hint = outcome.bytes_per_s or rate_hint
                if outcome.status is not JobStatus.COMPLETE:
                    status = run_status(outcome.status)
                    error = outcome.error
                    break
            if status is RunStatus.COMPLETE and plan.check_pass:
                if self.cancel.is_set():
                    status = RunStatus.CANCELLED
                else:
                    check = await self.run_check()
                    if check.status is not JobStatus.COMPLETE:
                        status = run_status(check.status)
                        error = check.error or check.skipped
        finally:
            if sampler is not None:
                sampler.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sampler
        report = weakest_link_report(plan, outcomes) if plan.preset.key == "weakest-link" else None
        if status is RunStatus.CANCELLED and not error:
            error = "cancelled"
        return BenchResult(
            plan=plan,
            status=status,
            steps=tuple(outcomes),
            context=self.context,
            started_at=datetime.fromtimestamp(self.started_wall, UTC),
            duration_s=time.monotonic() - self.started_mono,
            samples=tuple(self.samples),
            check=check,
            weakest_link=report,
            error=error,
            notes=tuple(self.notes),
        )


async def run_bench(
    plan: BenchPlan,
    *,
    root: SystemRoot,
    store: ResultsStore | None,
    confirmed: str | None = None,
    privileged: bool | None = None,
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
    sample_interval_s: float | None = 1.0,
    inventory: Inventory | None = None,
) -> BenchResult:
    """Run a plan's steps one after another and store each as a run (begun before it starts, finished after).

    A plan that writes runs only when ``confirmed`` names its target, and only if a fresh scan right
    before starting still allows it (SafetyError otherwise). A read-only plan runs on ``inventory``, the
    scan it was just made from, when given (a scan costs seconds on a slow machine), else on a fresh one.
    Setting ``cancel`` stops the running jobs (their figures so far are kept and the stored run marked
    cancelled) and starts no further step.
    """
    if plan.writes and (confirmed or "").strip() != plan.confirmation:
        raise SafetyError(
            f"{plan.preset.key} overwrites {plan.target.path}: confirm by naming it "
            f"(type {plan.confirmation}, or pass --yes)"
        )
    context_task = asyncio.create_task(asyncio.to_thread(record.system_context, root))
    try:
        if plan.writes or inventory is None:
            plan, inventory = await asyncio.to_thread(recheck_plan, plan, root, privileged)
        context = await context_task
    finally:
        context_task.cancel()
    session = _Session(
        plan=plan,
        inventory=inventory,
        root=root,
        store=store,
        context=context,
        on_event=on_event,
        cancel=cancel or asyncio.Event(),
        sample_interval_s=sample_interval_s,
    )
    return await session.run()


def preset_runner(
    root: SystemRoot,
    store: ResultsStore,
    *,
    confirmed: Sequence[str] = (),
    privileged: bool | None = None,
    cancel: threading.Event | None = None,
    on_event: EventCallback | None = None,
) -> Callable[..., int]:
    """A blocking ``run(preset_key, target, *, quick, label, members=(), **job_options) -> run ID``.

    For callers that chain runs (the advisor's experiments). Job options are JobOptions fields
    (block_size_bytes=, numjobs=, runtime_s=, name= ...). Writes run only on targets listed in
    ``confirmed``. It returns the ID of the last stored step (the array step of a weakest-link run);
    every step of the run is stored with ``label``. A run that does not complete raises MdtuiError.
    """
    known = {f.name for f in fields(JobOptions)}

    def run(
        preset_key: str, target: str, *, quick: bool, label: str, members: Sequence[str] = (), **options: Any
    ) -> int:
        unknown = sorted(set(options) - known)
        if unknown:
            raise PlanError(f"unknown job options {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        request = BenchRequest(preset_key, target, quick, tuple(members), JobOptions(**options), label)
        plan = plan_bench(request, scan(root, privileged=privileged), root)
        plan.ensure_allowed()

        async def go() -> BenchResult:
            stop = asyncio.Event()

            async def watch() -> None:
                # The caller's cancel is a thread event; this loop polls it into the asyncio one.
                while cancel is not None and not cancel.is_set():
                    await asyncio.sleep(0.2)
                stop.set()

            watcher = asyncio.create_task(watch()) if cancel is not None else None
            try:
                return await run_bench(
                    plan,
                    root=root,
                    store=store,
                    confirmed=plan.confirmation if plan.confirmation in confirmed else None,
                    privileged=privileged,
                    on_event=on_event,
                    cancel=stop,
                )
            finally:
                if watcher is not None:
                    watcher.cancel()

        result = asyncio.run(go())
        if result.status is not RunStatus.COMPLETE:
            raise MdtuiError(f"{preset_key} on {target} {result.status.value}: {result.error or 'no figures'}")
        if not result.run_ids:
            raise MdtuiError(f"{preset_key} on {target} stored nothing: {'; '.join(result.notes) or 'no store'}")
        return [o.run_id for o in result.steps if o.run_id is not None][-1]

    return run


# --- tables ------------------------------------------------------------------------------------------

RESULT_COLUMNS = ("#", "step", "read", "write", "IOPS", "md CPU", "status")


def _rate_cell(value: float | None) -> str:
    return rate_mb_s(value) if value else "-"


def _status_cell(status: JobStatus, partial: bool) -> str:
    if status is JobStatus.COMPLETE:
        return "partial" if partial else "ok"
    return status.value


def result_rows(result: BenchResult) -> list[tuple[str, ...]]:
    """One row per step (RESULT_COLUMNS), steps that never ran included, and the check pass last."""
    rows = []
    for outcome in result.steps:
        cpu = outcome.md_thread_cpu_pct
        rows.append(
            (
                str(outcome.index + 1),
                step_title(outcome.step),
                _rate_cell(outcome.read_bytes_per_s),
                _rate_cell(outcome.write_bytes_per_s),
                f"{outcome.iops:,.0f}" if outcome.iops else "-",
                f"{cpu:.1f}%" if cpu is not None else "-",
                _status_cell(outcome.status, outcome.partial),
            )
        )
    for index in range(len(result.steps), len(result.plan.steps)):
        rows.append((str(index + 1), step_title(result.plan.steps[index]), "-", "-", "-", "-", "not run"))
    check = result.check
    if check is not None:
        rate = check.bytes_per_s
        cpu = check.md_thread_cpu_pct
        status = "skipped" if check.skipped else _status_cell(check.status, False)
        rows.append(
            (
                "",
                f"check pass ({check.duration_s:.1f} s)" if not check.skipped else "check pass",
                f"{rate_mb_s(rate)}/member" if rate else "-",
                "-",
                "-",
                f"{cpu:.1f}%" if cpu is not None else "-",
                status,
            )
        )
    return rows


# --- JSON --------------------------------------------------------------------------------------------


def _job_json(result: JobResult) -> dict[str, Any]:
    total = result.total
    return {
        "name": result.spec.name,
        "target": result.spec.target,
        "argv": list(result.argv),
        "status": result.status.value,
        "partial": result.partial,
        "returncode": result.returncode,
        "duration_s": result.duration_s,
        "read_bytes_per_s": total.read.bytes_per_s if total else None,
        "write_bytes_per_s": total.write.bytes_per_s if total else None,
        "read_iops": total.read.iops if total else None,
        "write_iops": total.write.iops if total else None,
        "error": result.error,
    }


def result_to_json(result: BenchResult) -> dict[str, Any]:
    """The whole result for scripts: plan, every step with its jobs, reports, context and samples."""
    plan = result.plan
    out: dict[str, Any] = {
        "preset": plan.preset.key,
        "target": plan.target.path,
        "target_kind": plan.target.kind.value,
        "quick": plan.request.quick,
        "writes": plan.writes,
        "status": result.status.value,
        "partial": result.partial,
        "error": result.error,
        "started_at": result.started_at.isoformat(),
        "duration_s": result.duration_s,
        "run_ids": list(result.run_ids),
        "warnings": list(plan.warnings),
        "notes": list(result.notes),
        "steps": [
            {
                "index": o.index + 1,
                "label": step_title(o.step),
                "status": o.status.value,
                "partial": o.partial,
                "run_id": o.run_id,
                "started_s": o.started_s,
                "duration_s": o.duration_s,
                "bytes_per_s": o.bytes_per_s,
                "read_bytes_per_s": o.read_bytes_per_s,
                "write_bytes_per_s": o.write_bytes_per_s,
                "iops": o.iops,
                "md_thread_cpu_pct": o.md_thread_cpu_pct,
                "md_threads": list(o.md_threads),
                "metrics": o.metrics.as_dict(),
                "jobs": [_job_json(r) for r in o.results],
            }
            for o in result.steps
        ],
        "not_run": [step_title(step) for step in plan.steps[len(result.steps) :]],
        "context": result.context,
        "samples": [{"t_s": p.t_s, **p.values} for p in result.samples],
    }
    if plan.target.array is not None:
        out["array"] = record.array_config(plan.target.array)
    if result.check is not None:
        check = result.check
        out["check"] = {**to_jsonable(check), "bytes_per_s": check.bytes_per_s}
    if result.weakest_link is not None:
        report = result.weakest_link
        slowest = report.slowest
        out["weakest_link"] = {
            "members": to_jsonable(report.members),
            "slowest": slowest.device if slowest else None,
            "slowest_bytes_per_s": slowest.alone_bytes_per_s if slowest else None,
            "alone_sum_bytes_per_s": report.alone_sum_bytes_per_s,
            "together_sum_bytes_per_s": report.together_sum_bytes_per_s,
            "array_bytes_per_s": report.array_bytes_per_s,
            "slowest_times_n_bytes_per_s": report.predicted_bytes_per_s,
            "array_vs_slowest_times_n": report.vs_predicted,
            "array_vs_sum": report.vs_sum,
            "findings": list(report.findings()),
        }
    return out
