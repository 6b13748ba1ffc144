"""Write safety: why a target may not be written, and what makes a re-planned target another device."""

from __future__ import annotations

from mdtui.bench.targets import BenchTarget, TargetKind
from mdtui.execute.mdadm import is_mounted
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot


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
        return tuple(target.disk.refusals(target.name))
    return (
        f"{target.path} is neither a whole disk nor an md array, so mdtui cannot check what uses it; "
        "write benchmarks run on free disks, unmounted arrays or files",
    )


def identity_changes(old: BenchTarget, new: BenchTarget) -> list[str]:
    """How a target found again differs from the one planned: another device, disk or array under the name."""
    problems = []
    if (old.kind, old.name) != (new.kind, new.name):
        problems.append(f"{old.path} is now {new.kind.value} {new.name}, planned as {old.kind.value} {old.name}")
    if old.disk is not None and new.disk is not None and old.disk.serial != new.disk.serial:
        problems.append(f"{old.path} now has serial {new.disk.serial}, planned {old.disk.serial}: another disk")
    if old.array is not None and new.array is not None and old.array.uuid != new.array.uuid:
        problems.append(f"{old.path} is now array {new.array.uuid}, planned {old.array.uuid}: another array")
    return problems
