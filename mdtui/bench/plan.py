"""A benchmark plan: the preset's steps for a target with the user's overrides, and the re-plan right before running."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import Any

from mdtui.bench.requests import CUSTOM_DEFAULT_RUNTIME_S, BenchRequest, JobOptions
from mdtui.bench.safety import identity_changes, write_refusals
from mdtui.bench.targets import BenchTarget, TargetKind, resolve_target
from mdtui.errors import PlanError, SafetyError
from mdtui.execute.argv import job_argv
from mdtui.execute.presets import PRESETS, Preset, PresetTarget, Step
from mdtui.execute.presets import preset as find_preset
from mdtui.execute.record import step_title
from mdtui.format import plural
from mdtui.model.inventory import Inventory
from mdtui.model.job import IoEngine, JobSpec, RwMode, Tool
from mdtui.plan.levels import level_from_name
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot

REDUNDANT_LEVELS = frozenset({"raid1", "raid4", "raid5", "raid6", "raid10"})


def degraded_reads(level: str | None) -> str:
    """What reads of a degraded array of ``level`` measure (the level's own words: parity or copies)."""
    try:
        return level_from_name(level or "").degraded_reads_text()
    except ValueError:
        return "reads are served by the members left"


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
            f"{self.preset.key} on {self.target.describe()}{mode}: {plural(len(self.steps), 'step')}, {expected}",
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
        runtime_s, size_bytes, steady = spec.runtime_s, spec.size_bytes, spec.steady
        iodepth, numjobs = spec.iodepth, spec.numjobs
        if options.runtime_s is not None and spec.time_based:
            # A runtime asked for is the step's length: it runs that long, steady or not (--fixed-time's way).
            runtime_s, steady = options.runtime_s, None
            changed.add("runtime_s")
        if options.size_bytes is not None and not spec.time_based:
            size_bytes = options.size_bytes
            changed.add("size_bytes")
        if options.iodepth is not None:
            iodepth = options.iodepth
            changed.add("iodepth")
        if options.numjobs is not None:
            numjobs = options.numjobs
            changed.add("numjobs")
        return replace(
            spec, runtime_s=runtime_s, size_bytes=size_bytes, steady=steady, iodepth=iodepth, numjobs=numjobs
        )

    adjusted = tuple(replace(step, jobs=tuple(adjust(spec) for spec in step.jobs)) for step in steps)
    flags = {"runtime_s": "--runtime", "size_bytes": "--size", "iodepth": "--iodepth", "numjobs": "--numjobs"}
    for name, flag in flags.items():
        if getattr(options, name) is not None and name not in changed:
            kind = {"runtime_s": "time-based fio", "size_bytes": "size-based fio"}.get(name, "fio")
            raise PlanError(f"{key} has no {kind} steps for {flag} to change")
    return adjusted


def custom_job(options: JobOptions) -> dict[str, Any]:
    """The custom preset's one job (execute.presets.custom's keywords), from the user's job options and defaults."""
    return {
        "rw": options.rw or RwMode.READ,
        "block_size_bytes": options.block_size_bytes or 4096,
        "iodepth": options.iodepth or 1,
        "numjobs": options.numjobs or 1,
        "runtime_s": options.runtime_s
        if options.runtime_s is not None or options.size_bytes is not None
        else CUSTOM_DEFAULT_RUNTIME_S,
        "size_bytes": options.size_bytes,
        "ioengine": options.ioengine or IoEngine.LIBAIO,
        "direct": True if options.direct is None else options.direct,
        "offset_bytes": options.offset_bytes or 0,
        "name": options.name or "custom",
    }


def preset_steps(chosen: Preset, target: PresetTarget, options: JobOptions) -> tuple[Step, ...]:
    """A preset's steps with the user's options, for every planner (this host's and mdtui.fleet's): the
    registry's steps, then --runtime, --size, --iodepth and --numjobs; the custom preset's job from them."""
    if not chosen.overridable:
        return chosen.steps(replace(target, job=custom_job(options)))
    if extra := options.custom_only():
        raise PlanError(
            f"{', '.join(extra)} only apply to --preset custom; other presets take --runtime, --size, --iodepth "
            "and --numjobs"
        )
    return _override(chosen.steps(target), options, chosen.key)


def members_presets() -> str:
    """The presets that take --members, as the error names them."""
    return " and ".join(f"the {p.key} preset" for p in PRESETS if p.needs_members)


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
    if request.members and not chosen.needs_members:
        raise PlanError(f"--members only applies to {members_presets()}")
    members: tuple[BenchTarget, ...] = ()
    warnings: list[str] = []
    if chosen.needs_members:
        members = _members(request, target, inventory, root)
    if chosen.needs_array and target.array is None:
        raise PlanError(chosen.needs_array)
    if chosen.refuses_array and target.array is not None:
        raise PlanError(chosen.refuses_array)
    on = PresetTarget(
        target.path,
        members=tuple(m.path for m in members),
        size_bytes=target.size_bytes,
        quick=request.quick,
        steady=not request.fixed_time,
    )
    steps = preset_steps(chosen, on, request.options)

    array = target.array
    check_pass = False
    if chosen.key == "parity-cost" and array is not None:
        check_pass = array.level in REDUNDANT_LEVELS
        if not check_pass:
            warnings.append(f"{array.level} has no redundancy: no md kernel thread to measure and no check pass")
    if array is not None and array.sync is not None:
        warnings.append(
            f"{target.path} is running a {array.sync.action}: the figures measure it as much as the array"
            + ("; the check pass cannot start until it ends" if check_pass else "")
        )
    if array is not None and array.degraded:
        warnings.append(f"{target.path} is degraded ({array.degraded} missing): {degraded_reads(array.level)}")
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
        problems = identity_changes(plan.target, fresh.target) + list(fresh.refusals)
        if problems:
            raise SafetyError(f"refusing to write to {plan.target.path}:\n  - " + "\n  - ".join(problems))
    return fresh, inventory
