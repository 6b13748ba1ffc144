"""Carry out create and destroy plans: identity re-checked right before running, every command logged."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult, run_command
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError, SafetyError
from mdtui.execute.state import ArrayRegistry, CreatedArray, TemporaryArrayJournal
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk, InUseKind, InUseReason
from mdtui.plan.create import CreatePlan, member_path
from mdtui.plan.destroy import DestroyPlan
from mdtui.probe.arrays import read_arrays
from mdtui.probe.disks import DiskProber
from mdtui.probe.mounts import Mount, read_mounts, read_swaps
from mdtui.probe.root import SystemRoot
from mdtui.probe.safety import bitmap_file_problems


@dataclass(frozen=True)
class CreateOutcome:
    device: str
    uuid: str | None
    results: tuple[CommandResult, ...]
    array: MdArray | None  # as the kernel reports it right after creation


def resolve_member(root: SystemRoot, path: str) -> str | None:
    """Kernel name a member path points at now (/dev/disk/by-id/... → sdb), or None if it is gone."""
    target = root.resolve(path)
    if target is None:
        return None
    return target.name


def recheck_members(plan: CreatePlan, root: SystemRoot | None = None) -> list[Disk]:
    """Probe every planned member again and refuse if any changed identity or became busy.

    Between planning and running a disk can be swapped, renamed (sdb becomes sdc after a hotplug),
    mounted or grabbed by another array; running on stale identities is how data gets lost.
    """
    system = root or SystemRoot("/")
    prober = DiskProber(system)
    candidates = set(prober.candidates())
    problems: list[str] = []
    current_disks: list[Disk] = []
    journal = (plan.request.journal,) if plan.request.journal is not None else ()
    for planned in (*plan.request.members, *plan.request.spares, *journal):
        current, found = recheck_disk(system, prober, candidates, planned)
        problems += found
        if current is not None:
            current_disks.append(current)
    if plan.request.bitmap.startswith("/"):
        problems += bitmap_file_problems(system, plan.request.bitmap, [d.name for d in current_disks])
    if problems:
        raise SafetyError("refusing to create the array:\n  - " + "\n  - ".join(problems))
    # The journal device was checked like a member; the array's members and spares are what is returned.
    return current_disks[: len(current_disks) - len(journal)]


def recheck_disk(
    system: SystemRoot, prober: DiskProber, candidates: set[str], planned: Disk
) -> tuple[Disk | None, list[str]]:
    """A disk about to be written, probed again by its planned path: (the disk now, or None when it is gone;
    every reason not to write it: another identity, another size, in use by any rule, not fully checked)."""
    path = member_path(planned)
    name = resolve_member(system, path)
    if name is None or name not in candidates:
        return None, [f"{path} is gone (planned as {planned.name}); rescan and plan again"]
    problems = []
    current = prober.probe(name)
    if planned.serial and current.serial != planned.serial:
        problems.append(
            f"{path} now has serial {current.serial or 'unknown'}, planned {planned.serial}: a different disk"
        )
    if planned.size_bytes is not None and current.size_bytes != planned.size_bytes:
        problems.append(f"{path} changed size since the plan ({current.size_bytes} vs {planned.size_bytes} bytes)")
    if name != planned.name:
        problems.append(f"{path} is now {name}, planned as {planned.name}; rescan and plan again")
    problems += current.refusals(f"{path} ({name})")
    return current, problems


def array_uuid(device: str) -> str | None:
    """The md UUID from `mdadm --detail --export`, or None for superblock-less (built) arrays."""
    try:
        result = run_command(["mdadm", "--detail", "--export", device], timeout_s=30)
    except MdtuiError:
        return None
    for line in result.stdout.splitlines():
        if line.startswith("MD_UUID="):
            uuid = line.split("=", 1)[1].strip()
            # A built array reports an all-zero UUID: it has no superblock to hold one.
            return uuid if uuid.strip("0:") else None
    return None


def execute_create(
    plan: CreatePlan,
    *,
    confirmed: str | None,
    root: SystemRoot | None = None,
    log: ActionLog | None = None,
    registry: ArrayRegistry | None = None,
) -> CreateOutcome:
    """Run a create plan the user confirmed (``confirmed``: what they typed, plan.confirmation); the array is
    recorded as mdtui's own for a later teardown."""
    require_confirmed(confirmed, plan.confirmation, f"creating {plan.request.device}")
    system = root or SystemRoot("/")
    log = log or ActionLog()
    registry = registry or ArrayRegistry()
    current = recheck_members(plan, system)
    device = plan.request.device
    if system.path(device).exists() and _array_name(system, device) in {a.name for a in read_arrays(system)}:
        raise SafetyError(f"{device} already exists; pick another device name or stop that array first")
    result = log.run(plan.argv, f"create {device}")
    uuid = array_uuid(device)
    registry.add(
        CreatedArray(
            device=device,
            uuid=uuid,
            member_serials=tuple(d.serial or "" for d in current),
            member_paths=plan.member_paths + plan.spare_paths,
            created_at=time.time(),
            member_names=tuple(d.name for d in current),
        )
    )
    return CreateOutcome(device, uuid, (result,), find_array(system, device))


def _array_name(root: SystemRoot, device: str) -> str:
    """md0 for /dev/md0, and the kernel name behind a /dev/md/NAME link."""
    target = root.resolve(device)
    return target.name if target is not None else os.path.basename(device)


def find_array(root: SystemRoot, device: str) -> MdArray | None:
    name = _array_name(root, device)
    return next((a for a in read_arrays(root) if a.name == name), None)


def array_in_use(
    root: SystemRoot,
    array: MdArray,
    mounts: Sequence[Mount] | None = None,
    swaps: Sequence[str] | None = None,
) -> tuple[InUseReason, ...]:
    """Why writing over the array itself would destroy something: its mounts, swap, and what it holds.

    ``mounts`` and ``swaps``: the tables read once for many arrays (a host of 20,000 arrays).
    """
    majmin = root.read_text(f"/sys/block/{array.name}/dev")
    names = (array.dev_path, f"/dev/md/{array.name}")
    reasons = [
        InUseReason(InUseKind.MOUNTED, f"mounted at {mount.mount_point} ({mount.fs_type})")
        for mount in (read_mounts(root) if mounts is None else mounts)
        if mount.source in names or (majmin and mount.major_minor == majmin)
    ]
    reasons += [
        InUseReason(InUseKind.SWAP, f"{swap} is swap")
        for swap in (read_swaps(root) if swaps is None else swaps)
        if swap in names
    ]
    # A partition of the array or a dm device on top of it is in use just the same.
    reasons += [
        InUseReason(InUseKind.HOLDER, f"held by {holder}")
        for holder in root.listdir(f"/sys/block/{array.name}/holders")
    ]
    return tuple(reasons)


def is_mounted(root: SystemRoot, array: MdArray) -> bool:
    return bool(array_in_use(root, array))


def created_by_mdtui(array: MdArray, registry: ArrayRegistry | None = None) -> bool:
    registry = registry or ArrayRegistry()
    uuid = (array_uuid(array.dev_path) or array.uuid) if array.metadata != "none" else None
    return registry.owner_entry(array, uuid) is not None


def execute_destroy(
    plan: DestroyPlan,
    *,
    confirmed: str | None,
    root: SystemRoot | None = None,
    log: ActionLog | None = None,
    registry: ArrayRegistry | None = None,
    journal: TemporaryArrayJournal | None = None,
) -> tuple[CommandResult, ...]:
    """Stop the array and wipe its members, after checking again that nothing mounted it meanwhile.

    ``confirmed`` is what the user typed (plan.confirmation). A journal entry of a killed experiment for this
    array (mdtui.execute.leftovers) goes with it.
    """
    require_confirmed(confirmed, plan.confirmation, f"stopping {plan.array} and wiping its members")
    system = root or SystemRoot("/")
    log = log or ActionLog()
    registry = registry or ArrayRegistry()
    array = find_array(system, plan.array)
    if array is not None and is_mounted(system, array):
        raise SafetyError(f"{plan.array} is mounted or held by another device now; unmount it first")
    uuid = array_uuid(plan.array) if array is not None and array.metadata != "none" else None
    results = []
    for step in plan.steps:
        results.append(log.run(step.argv, step.description))
    registry.remove(plan.array, uuid)
    (journal or TemporaryArrayJournal()).forget(plan.array)
    return tuple(results)


def follow_sync(
    device: str,
    *,
    root: SystemRoot | None = None,
    on_update: Callable[[MdArray], None] | None = None,
    poll_s: float = 1.0,
    timeout_s: float | None = None,
) -> MdArray | None:
    """Poll an array until no resync/recovery runs (or the timeout passes); report each state seen."""
    system = root or SystemRoot("/")
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        array = find_array(system, device)
        if array is not None and on_update is not None:
            on_update(array)
        if array is None or array.sync is None:
            return array
        if deadline is not None and time.monotonic() >= deadline:
            return array
        time.sleep(poll_s)


# mdadm --examine-bitmap's count of the bitmap's chunks and the dirty ones ("Bitmap : 16 bits (chunks), 3 dirty").
_BITMAP_BITS = re.compile(r"Bitmap\s*:\s*(\d{1,20}) bits \(chunks\),\s*(\d{1,20}) dirty")


def parse_bitmap_dirty(text: str) -> float | None:
    """The share of a write-intent bitmap's chunks marked dirty, from `mdadm --examine-bitmap`'s report."""
    match = _BITMAP_BITS.search(text)
    if match is None:
        return None
    bits, dirty = int(match.group(1)), int(match.group(2))
    if bits <= 0 or dirty > bits:
        return None
    return dirty / bits


def bitmap_dirty_fraction(root: SystemRoot, member: str) -> float | None:
    """The share of the array's bitmap marked dirty, read from an in-sync ``member`` ("sdb1"): what a re-added
    member must resync. None on a captured tree, without a bitmap, or when mdadm says nothing usable."""
    if not root.is_live:
        return None
    result = run_command(["mdadm", "--examine-bitmap", f"/dev/{member}"], timeout_s=30)
    return parse_bitmap_dirty(result.stdout) if result.ok else None
