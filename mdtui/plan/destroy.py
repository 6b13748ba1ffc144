"""Plan tearing down an array mdtui made: stop it, then clear md superblocks and signatures off members."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.plan.rejected import PlanRejected


@dataclass(frozen=True)
class DestroyStep:
    argv: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class DestroyPlan:
    """Steps in the order they must run; every step after the stop erases a member's identity."""

    array: str  # "/dev/md0"
    member_paths: tuple[str, ...]
    steps: tuple[DestroyStep, ...]
    warnings: tuple[str, ...] = ()

    @property
    def argvs(self) -> tuple[tuple[str, ...], ...]:
        return tuple(step.argv for step in self.steps)

    @property
    def confirmation(self) -> str:
        """What the user types to stop the array and wipe its members: the array's device."""
        return self.array


def plan_destroy(
    array: MdArray,
    members: Sequence[Disk] | None,
    mounted: bool,
    created_by_tool: bool,
) -> DestroyPlan:
    """Plan `mdadm --stop`, then `mdadm --zero-superblock` and `wipefs --all` per member.

    ``members`` are the member disks as scanned (their by-id paths are used); None takes the member
    names the kernel reports for the array. Refuses (PlanRejected) a mounted array and any array the
    tool did not create: it may hold someone's data, and mdtui only tears down its own test arrays.
    """
    problems: list[str] = []
    if mounted:
        problems.append(f"{array.dev_path} is mounted; unmount it first")
    if not created_by_tool:
        problems.append(
            f"{array.dev_path} was not created by mdtui and may hold data; mdtui only destroys its own "
            "test arrays (stop and wipe it by hand if you are sure)"
        )
    kernel_names = {member.name for member in array.members}
    if members is None:
        paths = tuple(f"/dev/{name}" for name in sorted(kernel_names))
    else:
        strangers = [d.name for d in members if kernel_names and d.name not in kernel_names]
        if strangers:
            problems.append(
                f"{', '.join(strangers)} {'is' if len(strangers) == 1 else 'are'} not a member of "
                f"{array.name} (members: {', '.join(sorted(kernel_names))}); refusing to wipe "
                f"{'it' if len(strangers) == 1 else 'them'}"
            )
        paths = tuple(d.by_id_path or d.dev_path for d in members)
    if not paths:
        problems.append(f"no members of {array.dev_path} are known; rescan before destroying it")
    if problems:
        raise PlanRejected(f"destroy {array.dev_path}", problems)

    steps = [DestroyStep(("mdadm", "--stop", array.dev_path), f"stop {array.dev_path}")]
    # An array made with --build has no superblock, and --zero-superblock fails on a device without one.
    has_superblock = array.metadata != "none"
    for path in paths:
        if has_superblock:
            steps.append(DestroyStep(("mdadm", "--zero-superblock", path), f"erase the md superblock on {path}"))
        steps.append(DestroyStep(("wipefs", "--all", path), f"erase remaining signatures (filesystems) on {path}"))
    warnings: list[str] = []
    if array.sync is not None:
        warnings.append(f"{array.dev_path} is running a {array.sync.action}; stopping it abandons that")
    return DestroyPlan(array=array.dev_path, member_paths=paths, steps=tuple(steps), warnings=tuple(warnings))
