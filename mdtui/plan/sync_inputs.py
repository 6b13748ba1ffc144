"""What the sync-time model (plan/sync_time) is told: md's sync speed limits (speed_limit_min/max, an array's own
sync_speed_min/max: which one applies, what it is called, the cap and the floor they set, md's defaults where they
could not be read), each member taking part in a pass, and a reshape's geometry change."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.plan.figures import MemberFigures
from mdtui.plan.levels import RaidLevel

KIB = 1024


# md's own defaults (drivers/md/md.c: sysctl_speed_limit_min, sysctl_speed_limit_max), in KiB/s: used
# only where the running kernel's /proc/sys/dev/raid values could not be read.
KERNEL_SPEED_LIMIT_MIN_KIB = 1000


KERNEL_SPEED_LIMIT_MAX_KIB = 200000


BASIS_READ = "md's limit as read"


BASIS_DEFAULT = "md's default limit (not read from this host)"


@dataclass(frozen=True)
class SyncLimits:
    """md's sync speed limits in KiB/s: the system's and, where set, the array's own (None: "system")."""

    system_min_kib_s: int = KERNEL_SPEED_LIMIT_MIN_KIB
    system_max_kib_s: int = KERNEL_SPEED_LIMIT_MAX_KIB
    array_min_kib_s: int | None = None
    array_max_kib_s: int | None = None
    array: str = ""  # the array the limits were read for ("md0"), for naming the bound
    read: bool = True  # False: md's defaults stand in for values that could not be read

    @property
    def min_kib_s(self) -> int:
        return self.system_min_kib_s if self.array_min_kib_s is None else self.array_min_kib_s

    @property
    def max_kib_s(self) -> int:
        return self.system_max_kib_s if self.array_max_kib_s is None else self.array_max_kib_s

    @property
    def min_name(self) -> str:
        """The limit that sets the minimum: "speed_limit_min (1,000 KiB/s)" or "md0's sync_speed_min (...)"."""
        if self.array_min_kib_s is None:
            return f"speed_limit_min ({self.system_min_kib_s:,} KiB/s)"
        return f"{self._whose}sync_speed_min ({self.array_min_kib_s:,} KiB/s)"

    @property
    def max_name(self) -> str:
        if self.array_max_kib_s is None:
            return f"speed_limit_max ({self.system_max_kib_s:,} KiB/s)"
        return f"{self._whose}sync_speed_max ({self.array_max_kib_s:,} KiB/s)"

    @property
    def _whose(self) -> str:
        return f"{self.array}'s " if self.array else "the array's "

    def cap(self) -> tuple[float, str]:
        """The most md lets a sync run at, bytes of progress per second, and which limit that is.

        md compares the rate with the minimum first and sleeps above the maximum only past it, so the higher
        of the two is the cap.
        """
        if self.min_kib_s > self.max_kib_s:
            return self.min_kib_s * KIB, f"{self.min_name}, above {self.max_name}"
        return self.max_kib_s * KIB, self.max_name

    def floor(self) -> tuple[float, str]:
        """What md keeps while other I/O runs (bytes/s), and which limit that is."""
        return self.min_kib_s * KIB, self.min_name

    @property
    def basis(self) -> str:
        return BASIS_READ if self.read else BASIS_DEFAULT


@dataclass(frozen=True)
class SyncMember:
    """One member taking part in a pass: its name and its figures (None: nothing known about it)."""

    name: str
    figures: MemberFigures | None


@dataclass(frozen=True)
class GeometryChange:
    """A reshape: the array's geometry now and after (``mdadm --grow``).

    ``component_bytes`` is each member's data area in use now (md's component_size), ``new_component_bytes``
    the same after (None: unchanged). Chunk and layout changes move every stripe as a member-count change
    does; they are kept for the words.
    """

    old_level: RaidLevel
    old_members: int
    new_level: RaidLevel
    new_members: int
    component_bytes: int
    new_component_bytes: int | None = None
    old_layout: str | None = None
    new_layout: str | None = None
    old_chunk_bytes: int | None = None
    new_chunk_bytes: int | None = None
    backup_file: bool = False  # mdadm keeps a backup file for the whole reshape (no space added)
