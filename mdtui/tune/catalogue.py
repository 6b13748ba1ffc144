"""The knobs mdtui knows: where each lives, what it accepts, what it changes, what it costs, what to try.

Three scopes: ``md`` attributes of one array (/sys/block/mdX/md/...), ``queue`` attributes of a block
device's request queue (the array's own and each member's), and ``global`` md limits under
/proc/sys/dev/raid. A knob's field figure cites docs/findings.md, or says that none has been measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mdtui.ascii_numbers import parse_float, parse_int
from mdtui.errors import PlanError
from mdtui.format import plural

PAGE_BYTES = 4096
PARITY_LEVELS = frozenset({"raid4", "raid5", "raid6"})
NO_FIGURE = "no measured figure yet"
KNOB_FIGURES = "docs/findings.md, knob figures"

# md's own limits (drivers/md/raid5.c, md.c): stripe_cache_size 17..32768 pages, group_thread_cnt up to 8192.
STRIPE_CACHE_MIN = 17
STRIPE_CACHE_MAX = 32768
STRIPE_CACHE_DEFAULT = 256
STRIPE_CACHE_SUGGESTED = 4096
GROUP_THREADS_MAX = 8192
GROUP_THREADS_SUGGESTED = 4
# A speed limit is KiB/s in an int; the kernel accepts up to INT_MAX.
SPEED_MAX = (1 << 31) - 1
SAFE_MODE_MAX_S = 3600.0
READ_AHEAD_MAX_KB = 1 << 30
NR_REQUESTS_MAX = 1 << 20
MAX_SECTORS_MAX_KB = 1 << 24
# Read ahead for streaming reads from an array: at least this much, and two full stripes when larger.
READ_AHEAD_STREAM_MIN_KB = 4096


class Scope(StrEnum):
    MD = "md"  # /sys/block/<array>/md/<attribute>
    QUEUE = "queue"  # /sys/block/<array>/queue/<attribute>
    MEMBER = "member"  # /sys/block/<member>/queue/<attribute>, each member of the array
    GLOBAL = "global"  # /proc/sys/dev/raid/<attribute>


class Workload(StrEnum):
    GENERAL = "general"
    SEQUENTIAL_WRITE = "sequential-write"
    SEQUENTIAL_READ = "sequential-read"
    RANDOM = "random"


@dataclass(frozen=True)
class ArrayShape:
    """What a suggestion depends on: the array's level and members, the CPU count and the workload."""

    level: str | None
    members: int
    chunk_bytes: int | None = None
    rotational: bool | None = None  # True when any member spins; None when unknown
    nvme: bool = False  # every member is NVMe
    cpus: int = 1
    workload: Workload = Workload.GENERAL

    @property
    def data_disks(self) -> int:
        parity = {"raid4": 1, "raid5": 1, "raid6": 2}.get(self.level or "", 0)
        return max(self.members - parity, 1)


@dataclass(frozen=True)
class Suggestion:
    value: str | None  # None: leave it as it is
    why: str


@dataclass(frozen=True)
class Knob:
    name: str  # as the user names it: "stripe_cache_size", "read_ahead_kb", "member:scheduler"
    scope: Scope
    attribute: str  # the file below its directory: "stripe_cache_size", "read_ahead_kb"
    what: str  # what it changes
    kind: str = "int"  # "int", "seconds", "speed" (an int or "system"), "choice"
    lo: int | None = None
    hi: int | None = None
    unit: str = ""
    levels: frozenset[str] | None = None  # None: every level (md knobs the personality offers)
    default: str | None = None
    field: str = NO_FIGURE  # what the field reports about it: docs/findings.md, or no figure
    persistable: bool = True  # a udev rule can set it (global limits belong in sysctl.d)

    @property
    def range_text(self) -> str:
        if self.kind == "choice":
            return "one of the listed schedulers"
        if self.kind == "seconds":
            return f"0-{SAFE_MODE_MAX_S:g} s"
        low = "" if self.lo is None else f"{self.lo:,}"
        high = "" if self.hi is None else f"{self.hi:,}"
        text = f"{low}-{high}{' ' + self.unit if self.unit else ''}"
        return text + (" or system" if self.kind == "speed" else "")

    def applies_to(self, level: str | None) -> bool:
        return self.levels is None or (level or "") in self.levels

    def system_path(self, device: str) -> str:
        if self.scope is Scope.GLOBAL:
            return f"/proc/sys/dev/raid/{self.attribute}"
        directory = "md" if self.scope is Scope.MD else "queue"
        return f"/sys/block/{device}/{directory}/{self.attribute}"

    def check_value(self, text: str, choices: tuple[str, ...] = ()) -> str:
        """The value as it is written to the file; PlanError naming the range for a bad one."""
        value = text.strip()
        problem = f"{self.name} {text!r} is out of range: {self.range_text}"
        if self.kind == "choice":
            if choices and value not in choices:
                raise PlanError(f"{self.name} {text!r} is not offered here: {', '.join(choices)}")
            if not value or not value.replace("-", "").replace("_", "").isalnum():
                raise PlanError(problem)
            return value
        if self.kind == "seconds":
            seconds = parse_float(value, hi=SAFE_MODE_MAX_S)
            if seconds is None:
                raise PlanError(problem)
            return f"{seconds:g}"
        if self.kind == "speed" and value == "system":
            return value
        number = parse_int(value, lo=self.lo or 0, hi=self.hi if self.hi is not None else SPEED_MAX)
        if number is None:
            raise PlanError(problem)
        return str(number)

    def memory_bytes(self, value: str | None, shape: ArrayShape) -> int | None:
        """What a value costs in memory, where it costs anything worth naming (the stripe cache)."""
        if self.name != "stripe_cache_size" or value is None:
            return None
        pages = parse_int(value, hi=STRIPE_CACHE_MAX)
        return None if pages is None else pages * PAGE_BYTES * max(shape.members, 1)

    def suggest(self, shape: ArrayShape, current: str | None) -> Suggestion:
        return _SUGGEST.get(self.name, _leave)(self, shape, current)


def _leave(knob: Knob, shape: ArrayShape, current: str | None) -> Suggestion:
    return Suggestion(None, "no workload here is known to gain from changing it")


def _stripe_cache(knob: Knob, shape: ArrayShape, current: str | None) -> Suggestion:
    memory = STRIPE_CACHE_SUGGESTED * PAGE_BYTES * max(shape.members, 1)
    if shape.workload is Workload.SEQUENTIAL_READ:
        return Suggestion(None, "reads do not go through the stripe cache (except degraded): leave it")
    return Suggestion(
        str(STRIPE_CACHE_SUGGESTED),
        f"parity writes are assembled here; {STRIPE_CACHE_SUGGESTED} costs {memory // (1 << 20)} MiB "
        "on this array: a sweep of the values measures what it gains here",
    )


def _group_threads(knob: Knob, shape: ArrayShape, current: str | None) -> Suggestion:
    if shape.rotational:
        return Suggestion("0", "spinning members are the limit, not the md thread: keep one thread")
    if shape.cpus < 4:
        return Suggestion("0", f"{plural(shape.cpus, 'CPU')}: extra parity threads only compete with the jobs")
    return Suggestion(
        str(GROUP_THREADS_SUGGESTED),
        "fast members can outrun one md thread on parity writes: try 4 and watch md thread CPU",
    )


def _read_ahead(knob: Knob, shape: ArrayShape, current: str | None) -> Suggestion:
    if knob.scope is Scope.MEMBER:
        return Suggestion(None, "md reads members through its own queue: a member's read ahead does not apply")
    if shape.workload is not Workload.SEQUENTIAL_READ:
        return Suggestion(None, "leave it unless the array serves streaming reads")
    stripe_kb = (shape.chunk_bytes or 0) // 1024 * shape.data_disks
    return Suggestion(
        str(max(READ_AHEAD_STREAM_MIN_KB, 2 * stripe_kb)), "streaming reads: at least two full stripes ahead"
    )


def _scheduler(knob: Knob, shape: ArrayShape, current: str | None) -> Suggestion:
    if knob.scope is Scope.QUEUE:
        return Suggestion(None, "md is bio-based: it has no scheduler of its own to choose")
    if shape.rotational:
        return Suggestion("mq-deadline", "spinning members: mq-deadline bounds seek-starved requests")
    return Suggestion("none", "flash members: the device schedules better than the kernel can")


_SUGGEST = {
    "stripe_cache_size": _stripe_cache,
    "group_thread_cnt": _group_threads,
    "read_ahead_kb": _read_ahead,
    "member:read_ahead_kb": _read_ahead,
    "member:scheduler": _scheduler,
    "scheduler": _scheduler,
}


KNOBS: tuple[Knob, ...] = (
    Knob(
        "stripe_cache_size", Scope.MD, "stripe_cache_size",
        "stripes md keeps in memory to assemble parity writes (pages per member); more lets more writes "
        "become full stripes. Costs pages × 4 KiB × members",
        lo=STRIPE_CACHE_MIN, hi=STRIPE_CACHE_MAX, unit="pages", levels=PARITY_LEVELS,
        default=str(STRIPE_CACHE_DEFAULT),
        field=f"{KNOB_FIGURES}: 4096 vs 256 gave 1.99×, 1.23×, 0.94× and 1.32× the writes in four lab sessions "
        "(raid5, emulated NVMe under TCG, a shared host): size of the gain not settled, none for real hardware",
    ),
    Knob(
        "group_thread_cnt", Scope.MD, "group_thread_cnt",
        "extra kernel threads that handle stripes besides mdX_raidN (per CPU group); 0 is one thread",
        lo=0, hi=GROUP_THREADS_MAX, unit="threads", levels=PARITY_LEVELS, default="0",
        field=f"{KNOB_FIGURES}: 4 vs 0 gave 1.19×, 1.13×, 0.63× and 1.17× in four lab sessions (two emulated "
        "vCPUs): no figure yet for real hardware",
    ),
    Knob(
        "sync_speed_min", Scope.MD, "sync_speed_min",
        "the resync/rebuild rate md keeps up even while other I/O runs (this array; system = the global limit)",
        kind="speed", lo=0, hi=SPEED_MAX, unit="KiB/s", default="system",
    ),
    Knob(
        "sync_speed_max", Scope.MD, "sync_speed_max",
        "the most a resync/rebuild of this array may take (system = the global limit)",
        kind="speed", lo=0, hi=SPEED_MAX, unit="KiB/s", default="system",
    ),
    Knob(
        "preread_bypass_threshold", Scope.MD, "preread_bypass_threshold",
        "how many full-stripe writes may go ahead of a stripe that waits to read (partial writes)",
        lo=0, hi=STRIPE_CACHE_MAX, unit="stripes", levels=PARITY_LEVELS, default="1",
    ),
    Knob(
        "rmw_level", Scope.MD, "rmw_level",
        "how raid5 updates parity on partial writes: 0 reconstruct only, 1 read-modify-write when cheaper, "
        "2 prefer read-modify-write",
        lo=0, hi=2, levels=PARITY_LEVELS, default="1",
    ),
    Knob(
        "safe_mode_delay", Scope.MD, "safe_mode_delay",
        "idle seconds before md marks the array clean (a crash inside it means a resync)",
        kind="seconds", default="0.2",
    ),
    Knob(
        "read_ahead_kb", Scope.QUEUE, "read_ahead_kb",
        "how far the page cache reads ahead of buffered sequential reads of the array",
        lo=0, hi=READ_AHEAD_MAX_KB, unit="KiB",
    ),
    Knob(
        "scheduler", Scope.QUEUE, "scheduler", "the I/O scheduler of the array's queue", kind="choice",
    ),
    Knob(
        "nr_requests", Scope.QUEUE, "nr_requests", "requests the queue may hold", lo=4, hi=NR_REQUESTS_MAX,
    ),
    Knob(
        "max_sectors_kb", Scope.QUEUE, "max_sectors_kb",
        "the largest request the queue sends down (max_hw_sectors_kb is the ceiling)",
        lo=4, hi=MAX_SECTORS_MAX_KB, unit="KiB",
    ),
    Knob(
        "member:read_ahead_kb", Scope.MEMBER, "read_ahead_kb",
        "read ahead of each member's own queue (buffered reads of the member itself)",
        lo=0, hi=READ_AHEAD_MAX_KB, unit="KiB",
    ),
    Knob(
        "member:scheduler", Scope.MEMBER, "scheduler", "the I/O scheduler of each member", kind="choice",
    ),
    Knob(
        "member:nr_requests", Scope.MEMBER, "nr_requests", "requests each member's queue may hold",
        lo=4, hi=NR_REQUESTS_MAX,
    ),
    Knob(
        "member:max_sectors_kb", Scope.MEMBER, "max_sectors_kb",
        "the largest request sent to each member (max_hw_sectors_kb is the ceiling)",
        lo=4, hi=MAX_SECTORS_MAX_KB, unit="KiB",
    ),
    Knob(
        "speed_limit_min", Scope.GLOBAL, "speed_limit_min",
        "the resync rate every array keeps up under load, unless its own sync_speed_min says otherwise",
        kind="int", lo=0, hi=SPEED_MAX, unit="KiB/s", default="1000", persistable=False,
    ),
    Knob(
        "speed_limit_max", Scope.GLOBAL, "speed_limit_max",
        "the most any resync may take, unless an array's own sync_speed_max says otherwise",
        kind="int", lo=0, hi=SPEED_MAX, unit="KiB/s", default="200000", persistable=False,
    ),
)
KNOBS_BY_NAME: dict[str, Knob] = {knob.name: knob for knob in KNOBS}


def knob_named(name: str) -> Knob:
    """The knob called ``name``; PlanError listing the known names otherwise."""
    knob = KNOBS_BY_NAME.get(name.strip())
    if knob is None:
        raise PlanError(f"no knob {name!r}; known knobs: {', '.join(KNOBS_BY_NAME)}")
    return knob

