"""The health of an array and its members: failed and missing members, the last check's mismatch count, and
each member's SMART (mdtui.probe.smart)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.probe.kernel_log import kernel_messages
from mdtui.probe.root import SystemRoot
from mdtui.probe.smart import SmartHealth, read_smart_all

# mismatch_cnt counts 512-byte sectors; md caps what it can count far below this.
MISMATCH_LIMIT = 1 << 48
# What md's raid1/raid10/raid456 personalities log when they drop a member ("md/raid:md0: Disk failure on
# nvme1n1, disabling device."): the only place a hot-unplugged member is still named once udev removed it.
# Matched only at the start of a message (probe.kernel_log.kernel_messages), never inside another one.
_DISK_FAILURE = re.compile(r"md/raid\d*:(md[\w/]+): Disk failure on (\S+?), disabling device\.")


def failures_in_kernel_log(text: str | None) -> dict[str, tuple[str, ...]]:
    """Members each array lost, in order, from the kernel log."""
    found: dict[str, list[str]] = {}
    for _, message in kernel_messages(text or ""):
        if (failure := _DISK_FAILURE.match(message)) is None:
            continue
        array, member = failure.groups()
        names = found.setdefault(array, [])
        if member not in names:
            names.append(member)
    return {array: tuple(names) for array, names in found.items()}


@dataclass(frozen=True)
class ArrayHealth:
    name: str
    degraded: int  # members the array lacks
    failed: tuple[str, ...]  # members marked faulty
    spares: tuple[str, ...]
    mismatch_sectors: int | None  # md/mismatch_cnt
    last_check: str | None  # md/last_sync_action: check, repair, resync, recover, idle
    sync_action: str | None  # md/sync_action now
    member_disks: tuple[str, ...] = ()  # the disks under the members (nvme0n1 for nvme0n1p1)
    lost: tuple[str, ...] = ()  # members the kernel log says failed that are no longer in the array


@dataclass(frozen=True)
class Health:
    arrays: tuple[ArrayHealth, ...] = ()
    smart: Mapping[str, SmartHealth] = field(default_factory=dict)  # keyed by disk name (nvme0n1)

    def array(self, name: str) -> ArrayHealth | None:
        return next((a for a in self.arrays if a.name == name), None)


def _text(root: SystemRoot, path: str) -> str | None:
    value = root.read_text(path)
    return value.strip() if value is not None and value.strip() else None


def array_health(
    root: SystemRoot, array: MdArray, inventory: Inventory | None = None, failures: Sequence[str] = ()
) -> ArrayHealth:
    md = f"/sys/block/{array.name}/md"
    disks = []
    for member in array.members:
        disk = _disk_of(inventory, member.name) if inventory is not None else None
        disks.append(disk or member.name)
    return ArrayHealth(
        name=array.name,
        degraded=array.degraded,
        failed=tuple(m.name for m in array.members if m.faulty),
        spares=tuple(m.name for m in array.members if m.spare and not m.faulty),
        mismatch_sectors=root.read_int(f"{md}/mismatch_cnt", hi=MISMATCH_LIMIT),
        last_check=_text(root, f"{md}/last_sync_action"),
        sync_action=_text(root, f"{md}/sync_action"),
        member_disks=tuple(dict.fromkeys(disks)),
        lost=tuple(name for name in failures if name not in {m.name for m in array.members}) if array.degraded else (),
    )


def _disk_of(inventory: Inventory, name: str) -> str | None:
    disk = inventory.disk_of(name)
    return disk.name if disk is not None else None


def read_health(
    root: SystemRoot,
    arrays: Sequence[MdArray],
    *,
    inventory: Inventory | None = None,
    smart: bool = True,
    smart_disks: Iterable[str] = (),
    kernel_log: str | None = None,
) -> Health:
    """Every array's health and, live and with ``smart``, SMART of their member disks (and ``smart_disks``)."""
    failures = failures_in_kernel_log(kernel_log)
    healths = tuple(array_health(root, array, inventory, failures.get(array.name, ())) for array in arrays)
    readings: dict[str, SmartHealth] = {}
    if smart and root.is_live:
        names = [d for h in healths for d in h.member_disks] + list(smart_disks)
        by_path = read_smart_all(f"/dev/{name}" for name in dict.fromkeys(names))
        readings = {path.removeprefix("/dev/"): health for path, health in by_path.items()}
    return Health(healths, readings)
