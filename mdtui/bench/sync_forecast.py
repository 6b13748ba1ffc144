"""How long a pass over a real or planned array takes: its geometry, md's limits read from the system and its
members' stored figures (bench/member_figures) through the sync-time model (plan/sync_time)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.bench.member_figures import sequential_figures
from mdtui.execute.mdadm import bitmap_dirty_fraction
from mdtui.format import duration, rate_mb_s
from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.inventory import Inventory
from mdtui.plan.create import CreatePlan
from mdtui.plan.forecast import CeilingsChoice
from mdtui.plan.levels import RaidLevel, running_level
from mdtui.plan.md_limits import MdCeilings
from mdtui.plan.sync_inputs import SyncLimits, SyncMember
from mdtui.plan.sync_time import CHECK, RECOVER, REPAIR, RESHAPE, RESYNC, SyncTime, create_sync_time, sync_time
from mdtui.plan.sync_words import bound_now, remaining_seconds
from mdtui.probe.root import SystemRoot
from mdtui.store.calibration import host_ceilings
from mdtui.store.records import RunRecord
from mdtui.tune.read import read_sync_limits


def array_level(array: MdArray) -> tuple[RaidLevel | None, str | None]:
    """The array's level object and its layout in the level's spelling (raid10 "near=2" → "n2")."""
    return running_level(array.level, array.layout)


def sync_member(runs: Sequence[RunRecord], inventory: Inventory | None, name: str) -> SyncMember:
    """A member (or disk) by kernel name, with its sequential figures from the store or its link."""
    disk = inventory.disk_of(name) if inventory is not None else None
    return SyncMember(name, sequential_figures(runs, name, disk))


def _in_sync(array: MdArray) -> list[ArrayMember]:
    """Members md reads from: active, not failed, in slot order (the array's own sort)."""
    return [m for m in array.members if m.slot is not None and not m.faulty and "in_sync" in m.states]


def _being_written(array: MdArray) -> list[ArrayMember]:
    """Members a running rebuild writes: a slot but not in sync yet, or a --replace's replacement."""
    return [
        m
        for m in array.members
        if not m.faulty and ("replacement" in m.states or (m.slot is not None and "in_sync" not in m.states))
    ]


@dataclass(frozen=True)
class _Inputs:
    """What every pass over one array is timed from, read once: its geometry, md's limits for it, this host's
    ceilings, its members in sync (slot order) with their figures, and what a rebuild's targets are read from."""

    level: RaidLevel
    layout: str | None
    component_bytes: int
    limits: SyncLimits
    host: CeilingsChoice
    in_sync: dict[str, SyncMember]
    inventory: Inventory | None
    runs: Sequence[RunRecord]


def _inputs(
    root: SystemRoot,
    array: MdArray,
    inventory: Inventory | None,
    runs: Sequence[RunRecord],
    host: CeilingsChoice | None = None,
) -> _Inputs | None:
    """None when the array has no redundancy or its geometry cannot be read; ``host`` the ceilings already read."""
    level, layout = array_level(array)
    if level is None or not level.redundant or not array.component_bytes:
        return None
    return _Inputs(
        level,
        layout,
        array.component_bytes,
        read_sync_limits(root, array.name),
        host if host is not None else host_ceilings(),
        {m.name: sync_member(runs, inventory, m.name) for m in _in_sync(array)},
        inventory,
        runs,
    )


def _time(
    inputs: _Inputs, array: MdArray, action: str, targets: Sequence[str] = (), dirty_fraction: float | None = None
) -> SyncTime | None:
    sources = list(inputs.in_sync.values())
    written = [sync_member(inputs.runs, inputs.inventory, name) for name in targets]
    if not sources or (action == RECOVER and not written):
        return None
    return sync_time(
        action,
        inputs.level,
        sources,
        targets=written,
        component_bytes=inputs.component_bytes,
        limits=inputs.limits,
        layout=inputs.layout,
        array_bytes=array.size_bytes,
        dirty_fraction=dirty_fraction,
        ceilings=inputs.host.for_level(inputs.level.name),
    )


def pass_time(
    root: SystemRoot,
    array: MdArray,
    inventory: Inventory | None,
    runs: Sequence[RunRecord],
    action: str,
    *,
    targets: Sequence[str] = (),
    dirty_fraction: float | None = None,
) -> SyncTime | None:
    """How long ``action`` (resync, recover, check, repair) takes on ``array`` now; ``targets`` the members or
    disks a rebuild writes. None when the array has no redundancy or its geometry cannot be read."""
    inputs = None if action == RESHAPE else _inputs(root, array, inventory, runs)
    return None if inputs is None else _time(inputs, array, action, targets, dirty_fraction)


def repair_time(
    root: SystemRoot,
    array: MdArray,
    inventory: Inventory | None,
    runs: Sequence[RunRecord],
    action: str,
    *,
    member: str | None = None,
    disk: str | None = None,
) -> SyncTime | None:
    """The rebuild a repair action starts, predicted: ``add`` to a degraded array and ``replace`` write the whole
    of ``disk``; ``re-add`` only what the array's write-intent bitmap marks dirty since the member left. None when
    the action starts no rebuild (fail, remove, a spare added to a whole array)."""
    if disk is None or action not in ("add", "replace", "re-add"):
        return None
    if action == "add" and not array.degraded:
        return None
    dirty = None
    if action == "re-add" and array.bitmap not in (None, "none"):
        source = next((m.name for m in _in_sync(array)), None)
        dirty = bitmap_dirty_fraction(root, source) if source is not None else None
    return pass_time(root, array, inventory, runs, RECOVER, targets=[disk], dirty_fraction=dirty)


def repair_forecast(
    root: SystemRoot,
    array: MdArray,
    inventory: Inventory | None,
    runs: Sequence[RunRecord],
    action: str,
    *,
    member: str | None = None,
    disk: str | None = None,
) -> tuple[SyncTime | None, str]:
    """What a repair's plan says of time, and how to name it: the rebuild it starts (repair_time), or for a member
    failed the rebuild onto a new disk that must follow."""
    started = repair_time(root, array, inventory, runs, action, member=member, disk=disk)
    if started is not None:
        return started, started.words
    if action == "fail" and member is not None:
        after = rebuild_if_one_fails(root, array, inventory, runs, member)
        if after is not None:
            return after[0], "then a rebuild onto a new disk"
    return None, ""


def _running_action(array: MdArray) -> str | None:
    """The pass running now when the model times it (resync, rebuild, check, repair; never a reshape)."""
    action = array.sync.action if array.sync is not None else None
    return action if action in (RESYNC, RECOVER, CHECK, REPAIR) else None


def _running(inputs: _Inputs, array: MdArray) -> SyncTime | None:
    action = _running_action(array)
    if action is None:
        return None
    targets = [m.name for m in _being_written(array)] if action == RECOVER else []
    return _time(inputs, array, action, targets)


def running_pass_time(
    root: SystemRoot, array: MdArray, inventory: Inventory | None, runs: Sequence[RunRecord]
) -> SyncTime | None:
    """The whole of the pass running now, predicted as if it started now (resync, rebuild, check, repair)."""
    inputs = _inputs(root, array, inventory, runs) if _running_action(array) is not None else None
    return None if inputs is None else _running(inputs, array)


def _rebuild(inputs: _Inputs, array: MdArray, failing: str | None = None) -> tuple[SyncTime, str] | None:
    members = inputs.in_sync
    if len(members) < 2:
        return None
    worst: tuple[SyncTime, str] | None = None
    for failed in members.values():
        if failing is not None and failed.name != failing:
            continue
        replacement = SyncMember(f"a disk like {failed.name}", failed.figures)
        answer = sync_time(
            RECOVER,
            inputs.level,
            [m for name, m in members.items() if name != failed.name],
            targets=[replacement],
            component_bytes=inputs.component_bytes,
            limits=inputs.limits,
            layout=inputs.layout,
            array_bytes=array.size_bytes,
            ceilings=inputs.host.for_level(inputs.level.name),
        )
        if worst is None or _longer(answer, worst[0]):
            worst = (answer, failed.name)
    return worst


def rebuild_if_one_fails(
    root: SystemRoot,
    array: MdArray,
    inventory: Inventory | None,
    runs: Sequence[RunRecord],
    failing: str | None = None,
) -> tuple[SyncTime, str] | None:
    """How long a rebuild takes if a member fails now and a disk like it replaces it: the longest over the
    members (which one fails is not known), or for ``failing`` alone; and the member that gives it."""
    inputs = _inputs(root, array, inventory, runs)
    return None if inputs is None else _rebuild(inputs, array, failing)


def _longer(answer: SyncTime, than: SyncTime) -> bool:
    """An unknown time counts as longer: the answer must not hide a member without figures."""
    if answer.predicted_seconds is None:
        return than.predicted_seconds is not None
    return than.predicted_seconds is not None and answer.predicted_seconds > than.predicted_seconds


def scrub_time(
    root: SystemRoot, array: MdArray, inventory: Inventory | None, runs: Sequence[RunRecord], *, repair: bool = False
) -> SyncTime | None:
    """How long a check (or repair) pass over ``array`` takes."""
    return pass_time(root, array, inventory, runs, REPAIR if repair else CHECK)


def create_time(root: SystemRoot, plan: CreatePlan, runs: Sequence[RunRecord]) -> SyncTime | None:
    """How long the initial resync of a planned array takes (None when mdadm starts none, or the size is
    unknown). The system's limits apply: the array has none of its own yet."""
    if plan.usable_bytes is None or not plan.data_disks:
        return None
    component = int(plan.usable_bytes / plan.data_disks)
    members = [SyncMember(d.name, sequential_figures(runs, d.name, d)) for d in plan.request.members]
    return create_sync_time(
        plan.level,
        members,
        component_bytes=component,
        limits=read_sync_limits(root),
        layout=plan.layout,
        array_bytes=plan.usable_bytes,
        assume_clean=plan.request.assume_clean,
        build=plan.request.build,
        ceilings=host_ceilings().for_level(plan.level.name),
    )


# Other I/O on the array itself, per second, above which md counts it busy and yields its sync: md's is_mddev_idle
# calls a member busy past 64 sectors (32 KiB) of I/O that was not its own sync since it last looked.
FOREGROUND_IO_BYTES_PER_S = 32 * 1024


def foreground_io(read_bytes_per_s: float | None, write_bytes_per_s: float | None) -> bool | None:
    """Whether the array's own traffic (what its users read and write, never the sync) keeps md yielding."""
    if read_bytes_per_s is None and write_bytes_per_s is None:
        return None
    return (read_bytes_per_s or 0.0) + (write_bytes_per_s or 0.0) > FOREGROUND_IO_BYTES_PER_S


@dataclass(frozen=True)
class SyncView:
    """A running pass as md reports it beside its prediction, and what holds it now."""

    array: str
    action: str
    fraction: float | None
    rate_bytes_per_s: float | None  # md's sync_speed
    eta_seconds: float | None  # md's own: what is left at the current rate
    predicted: SyncTime | None  # the whole pass, predicted as if it started now
    predicted_left_seconds: float | None
    bound: str

    def line(self) -> str:
        """ "recover  42.0% at 120 MB/s, ETA 3m10s · predicted 8m10s (4m44s left) · bound: ..." """
        done = "?" if self.fraction is None else f"{self.fraction * 100:5.1f}%"
        text = f"{self.action} {done} at {rate_mb_s(self.rate_bytes_per_s)}, ETA {duration(self.eta_seconds)}"
        return f"{text} · {self.prediction_line()}"

    def prediction_line(self) -> str:
        """The prediction beside md's figures and what bounds the pass now: "predicted 8m10s (4m44s left) · ..."."""
        text = ""
        if self.predicted is not None and self.predicted.predicted_seconds is not None:
            text = f"predicted {duration(self.predicted.predicted_seconds)}"
            if self.predicted_left_seconds is not None:
                text += f" ({duration(self.predicted_left_seconds)} left)"
            text += " · "
        return f"{text}bound: {self.bound}"

    def as_json(self) -> dict[str, object]:
        return {
            "array": self.array,
            "action": self.action,
            "progress_ratio": self.fraction,
            "rate_bytes_per_s": self.rate_bytes_per_s,
            "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds, 1),
            "predicted_seconds": None if self.predicted is None else self.predicted.as_json()["predicted_seconds"],
            "predicted_left_seconds": None
            if self.predicted_left_seconds is None
            else round(self.predicted_left_seconds, 1),
            "bound": self.bound,
        }


def sync_view(
    root: SystemRoot, array: MdArray, *, predicted: SyncTime | None = None, foreground_io: bool | None = None
) -> SyncView | None:
    """The pass running on ``array`` now beside its prediction, made once by the caller (running_pass_time, or
    the plan's) and never here: ``predicted`` None is "not predicted (yet)". None when no pass runs."""
    sync = array.sync
    if sync is None:
        return None
    limits = read_sync_limits(root, array.name)
    rate = float(sync.speed_bytes_per_s) if sync.speed_bytes_per_s is not None else None
    if sync.state != "running":
        bound = f"{sync.state}: md has not started it (another array on the same disks syncs first)"
    else:
        bound = bound_now(rate, limits, predicted, foreground_io=foreground_io)
    return SyncView(
        array.name,
        sync.action,
        sync.fraction,
        rate,
        sync.eta_seconds,
        predicted,
        remaining_seconds(predicted, sync.fraction),
        bound,
    )


@dataclass(frozen=True)
class ArrayForecast:
    """What the sync-time model says of one array now: the pass running (predicted whole), a rebuild if a member
    failed now (and which member gives the longest), a check pass."""

    running: SyncTime | None = None
    rebuild: SyncTime | None = None
    rebuild_member: str | None = None
    check: SyncTime | None = None


def forecast_arrays(root: SystemRoot, inventory: Inventory, runs: Sequence[RunRecord]) -> dict[str, ArrayForecast]:
    """Every array's forecast from the member-matrix runs among ``runs``: each array's limits and members read once
    for its three answers, this host's ceilings once for all."""
    found = {}
    host: CeilingsChoice | None = None
    for array in inventory.arrays:
        inputs = _inputs(root, array, inventory, runs, host)
        if inputs is None:
            found[array.name] = ArrayForecast()
            continue
        host = inputs.host
        rebuild = _rebuild(inputs, array)
        found[array.name] = ArrayForecast(
            _running(inputs, array),
            rebuild[0] if rebuild else None,
            rebuild[1] if rebuild else None,
            _time(inputs, array, CHECK),
        )
    return found


def grow_inputs(
    root: SystemRoot, array: MdArray, inventory: Inventory | None, runs: Sequence[RunRecord], added: Sequence[str] = ()
) -> tuple[dict[str, SyncMember], SyncLimits, MdCeilings]:
    """What the sync-time model needs to time a grow of ``array`` (plan/grow): every member's and every added
    disk's figures by name, md's limits for the array, md's ceilings for its level."""
    names = [m.name for m in array.members if not m.faulty] + list(added)
    members = {name: sync_member(runs, inventory, name) for name in dict.fromkeys(names)}
    level, _layout = array_level(array)
    return members, read_sync_limits(root, array.name), host_ceilings().for_level(level.name if level else "")
