"""Existing md arrays as the kernel reports them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEX = re.compile(r"[0-9a-fA-F]")


@dataclass(frozen=True)
class ArrayMember:
    """One component device of an md array."""

    name: str  # kernel name of the component, e.g. "sdb1" or "nvme0n1"
    slot: int | None  # role number in the array; None for spares and unknown
    states: tuple[str, ...] = ()  # kernel words: in_sync, faulty, spare, write_mostly, blocked, ...

    @property
    def faulty(self) -> bool:
        return "faulty" in self.states

    @property
    def spare(self) -> bool:
        return "spare" in self.states


@dataclass(frozen=True)
class SyncStatus:
    """A running (or pending) resync, recovery, check, repair or reshape."""

    action: str  # resync, recover, check, repair, reshape
    state: str = "running"  # running, pending, delayed
    done_sectors: int | None = None
    total_sectors: int | None = None
    speed_bytes_per_s: int | None = None
    eta_seconds: float | None = None

    @property
    def fraction(self) -> float | None:
        if self.done_sectors is None or not self.total_sectors:
            return None
        return self.done_sectors / self.total_sectors


@dataclass(frozen=True)
class MdArray:
    name: str  # "md0"
    state: str  # active, inactive, read-only, auto-read-only, clean, ...
    level: str | None  # raid0, raid1, raid4, raid5, raid6, raid10, linear, or None when inactive
    members: tuple[ArrayMember, ...] = ()
    raid_disks: int | None = None
    size_bytes: int | None = None
    component_bytes: int | None = None  # what each member gives the array (md/component_size)
    chunk_bytes: int | None = None
    layout: str | None = None  # left-symmetric, near=2, far=2, ... as mdadm names it
    metadata: str | None = None  # 1.2, 1.0, 0.90, external:imsm, none (built arrays)
    bitmap: str | None = None
    uuid: str | None = None
    degraded: int = 0
    sync: SyncStatus | None = None

    @property
    def dev_path(self) -> str:
        return f"/dev/{self.name}"

    @property
    def state_text(self) -> str:
        """md's state with how many members are missing: "clean, degraded 1" (the scan table's and the app's)."""
        return self.state + (f", degraded {self.degraded}" if self.degraded else "")


def normalize_uuid(text: str | None) -> str | None:
    """An md UUID as its 32 lower-case hex digits, whatever the punctuation (mdadm's 8:8:8:8, sysfs's
    8-4-4-4-12); None when it is not one. The one spelling for comparing UUIDs and naming files after them."""
    if not text:
        return None
    digits = "".join(_HEX.findall(text)).lower()
    return digits if len(digits) == 32 else None
