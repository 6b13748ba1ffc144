"""Rules over inventory, live snapshots, a create plan and stored results; each returns findings."""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mdtui.advise.findings import Evidence, Finding, Pattern, Severity, Workload, sort_findings
from mdtui.advise.kernel_log import ParityRoutines
from mdtui.format import iec_bytes
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.model.link import LinkKind
from mdtui.model.snapshot import Snapshot
from mdtui.plan.create import SLOW_MEMBER_RATIO, CreatePlan
from mdtui.plan.levels import RAID0, RaidLevel, level_from_name
from mdtui.store.records import RunRecord

# md's default stripe cache (pages per member device) for raid4/5/6.
DEFAULT_STRIPE_CACHE_PAGES = 256
PAGE_BYTES = 4096
SUGGESTED_STRIPE_CACHE_PAGES = 4096
# A downgrade that costs this share of the array's throughput is critical, not just a warning.
CRITICAL_COST_FRACTION = 0.25
# Finding 2 (docs/findings.md): the CPU never rose above 2.3 of 4.2 GHz (0.55) under powersave during the runs.
LOW_FREQUENCY_FRACTION = 0.6
MIN_LOADED_SNAPSHOTS = 3
# A snapshot counts as "under load" when the devices moved at least this much (a benchmark, not idle noise).
LOAD_BYTES_PER_S = 10e6
# An md thread this busy is the array's limit: parity is computed on one core per array.
MD_THREAD_SATURATED_PERCENT = 90.0
# Finding 1 (docs/findings.md): md needed 16-64 jobs to approach the members' sum; well under it means too
# little parallelism.
PARALLELISM_SHORTFALL = 0.8
# Chunk sizes the findings support (finding 5, docs/findings.md).
SEQUENTIAL_MIN_CHUNK_KIB = 512
CONCURRENT_MIN_CHUNK_KIB = 1024
SMALL_RANDOM_MIN_CHUNK_KIB = 64

# Finding 4 (docs/findings.md), random 4 KiB writes at Q32T8 on four SAS3 SSDs, IOPS.
RND4K_WRITE_IOPS = {"single": 169_000, "raid0": 613_000, "raid1": 154_000, "raid10": 276_000, "raid5": 58_300,
                    "raid6": 65_400}

_MDADM_RAID10_LAYOUT = re.compile(r"^(near|far|offset)=(\d)$")


@dataclass(frozen=True)
class WeakestLinkFigures:
    """A weakest-link result reduced to what the parallelism rule needs (read bytes/s of each step)."""

    run_id: int
    array: str  # "/dev/md0"
    level: str | None
    members: int
    together_bytes_per_s: float  # every member read at once
    array_bytes_per_s: float
    numjobs: int | None


@dataclass(frozen=True)
class AdviceInput:
    """Everything the rules may look at; each rule uses what is there and stays silent about the rest."""

    inventory: Inventory | None = None
    snapshots: tuple[Snapshot, ...] = ()  # oldest first, as Sampler.history holds them
    plan: CreatePlan | None = None
    runs: tuple[RunRecord, ...] = ()
    workload: Workload | None = None
    stripe_cache_pages: Mapping[str, int] = field(default_factory=dict)  # "md0" → stripe_cache_size
    parity: ParityRoutines | None = None
    benchmark_target: str | None = None  # a run about to start on this device
    weakest_link: tuple[WeakestLinkFigures, ...] = ()


@dataclass(frozen=True)
class MemberSet:
    """An array that exists or a plan's array: the unit the geometry rules reason about."""

    name: str  # "md0", or the planned device "/dev/md0 (planned)"
    level: RaidLevel
    layout: str | None
    disks: tuple[Disk, ...]  # members whose disk is known, in role order
    member_count: int
    chunk_bytes: int | None
    bitmap: str | None
    planned: bool

    @property
    def read_factor(self) -> float:
        return float(self.level.seq_read_factor(self.member_count, self.layout))


def _mbps(bytes_per_s: float) -> float:
    return round(bytes_per_s / 1e6, 1)


def _mb(bytes_per_s: float | None) -> str:
    return "unknown" if bytes_per_s is None else f"{bytes_per_s / 1e6:,.0f} MB/s"


def _factor_text(value: float) -> str:
    return f"{value:g}"


def level_layout(array: MdArray) -> tuple[RaidLevel, str | None] | None:
    """The level object and mdadm-style layout of an existing array (sysfs says "far=2", mdadm "f2")."""
    if array.level is None:
        return None
    try:
        level = level_from_name(array.level)
    except ValueError:
        return None
    layout = array.layout
    if layout and (match := _MDADM_RAID10_LAYOUT.match(layout)):
        layout = match.group(1)[0] + match.group(2)
    return level, layout


def _disk_of(inventory: Inventory, member_name: str) -> Disk | None:
    """The whole disk behind a member ("sdb1" → sdb)."""
    return inventory.disk(member_name) or next((d for d in inventory.disks if member_name in d.partitions), None)


def member_sets(inp: AdviceInput) -> list[MemberSet]:
    sets: list[MemberSet] = []
    if inp.plan is not None:
        plan = inp.plan
        sets.append(
            MemberSet(
                name=f"{plan.request.device} (planned)",
                level=plan.level,
                layout=plan.layout,
                disks=plan.request.members,
                member_count=len(plan.request.members),
                chunk_bytes=plan.chunk_bytes,
                bitmap=plan.request.bitmap,
                planned=True,
            )
        )
    if inp.inventory is not None:
        for array in inp.inventory.arrays:
            resolved = level_layout(array)
            if resolved is None:
                continue
            level, layout = resolved
            active = [m for m in array.members if not m.spare and not m.faulty]
            disks = tuple(d for m in active if (d := _disk_of(inp.inventory, m.name)) is not None)
            sets.append(
                MemberSet(
                    name=array.name,
                    level=level,
                    layout=layout,
                    disks=disks,
                    member_count=array.raid_disks or len(active),
                    chunk_bytes=array.chunk_bytes,
                    bitmap=array.bitmap,
                    planned=False,
                )
            )
    return sets


# --- links -----------------------------------------------------------------------------------------

WEAKEST_LINK_WHY = (
    "A stripe runs at its slowest member × N (docs/findings.md, finding 1: one NVMe drive in a PCIe 1.0 slot "
    "read 832 MB/s against ~1650 MB/s for its peers, and the RAID0 of four read 3322 MB/s = 832 × 4 while the "
    "raw drives together read 5645 MB/s)."
)


def _link_speeds(disks: Sequence[Disk]) -> list[tuple[Disk, int]]:
    return [(d, bw) for d in disks if d.link is not None and (bw := d.link.bandwidth_bytes_per_s) is not None]


def _fix_hint(disk: Disk) -> str:
    assert disk.link is not None
    if disk.link.kind is LinkKind.PCIE:
        if disk.link.slot_limited:
            return f"move {disk.name} to a slot that runs {disk.link.describe_max()}"
        return f"reseat {disk.name} or check the slot's link settings (it should train at {disk.link.describe_max()})"
    return f"check {disk.name}'s cable, port and backplane (the port supports {disk.link.describe_max()})"


@dataclass(frozen=True)
class _SlowMembers:
    slow: tuple[Disk, ...]
    slowest_bytes_per_s: int
    next_bytes_per_s: int


def _slow_members(group: MemberSet) -> _SlowMembers | None:
    """The slowest members by link when they are clearly slower than the next one (as plan_create warns)."""
    speeds = _link_speeds(group.disks)
    if len(speeds) < 2 or group.level.name == "linear":
        return None
    slowest = min(bw for _, bw in speeds)
    faster = [bw for _, bw in speeds if bw > slowest]
    if not faster or slowest >= SLOW_MEMBER_RATIO * min(faster):
        return None
    return _SlowMembers(tuple(d for d, bw in speeds if bw == slowest), slowest, min(faster))


def rule_slow_members(inp: AdviceInput) -> list[Finding]:
    """A member on a downgraded or slower link than its peers, and what it costs: slowest × N vs peers × N."""
    findings = []
    for group in member_sets(inp):
        found = _slow_members(group)
        if found is None:
            continue
        slow, slowest, next_speed = found.slow, found.slowest_bytes_per_s, found.next_bytes_per_s
        factor = group.read_factor
        now, possible = factor * slowest, factor * next_speed
        cost = (possible - now) / possible
        downgraded = [d for d in slow if d.link is not None and d.link.downgraded]
        severity = Severity.CRITICAL if downgraded and cost >= CRITICAL_COST_FRACTION else Severity.WARNING
        names = ", ".join(d.name for d in slow)
        evidence = [
            Evidence(f"slowest member{'s' if len(slow) > 1 else ''} ({names})", _mbps(slowest), "MB/s link"),
            Evidence("next slowest member", _mbps(next_speed), "MB/s link"),
            Evidence("members", group.member_count),
            Evidence(f"{group.level.name} read factor", factor),
            Evidence("array at slowest × factor", _mbps(now), "MB/s"),
            Evidence("array without the slow member(s)", _mbps(possible), "MB/s"),
            Evidence("throughput lost", round(cost * 100, 1), "%"),
        ]
        if downgraded:
            fixes = "; ".join(_fix_hint(d) for d in downgraded)
            what = f"{fixes[0].upper()}{fixes[1:]}, or leave it out; then confirm with the weakest-link run."
        else:
            what = (
                f"Build {group.name} from disks of one speed class, or accept {_mb(now)}; link bandwidth is an "
                "upper bound, so confirm with the weakest-link run (each member alone, all together, the array)."
            )
        findings.append(
            Finding(
                id=f"slow-member:{group.name}",
                severity=severity,
                title=f"{names} limit{'s' if len(slow) == 1 else ''} {group.name} to {_factor_text(factor)} × "
                f"{_mb(slowest)} = {_mb(now)} (peers allow {_mb(possible)})",
                evidence=tuple(evidence),
                why=WEAKEST_LINK_WHY,
                what_to_do=what,
                experiment="weakest-link",
            )
        )
    return findings


def rule_downgraded_links(inp: AdviceInput) -> list[Finding]:
    """Every disk whose link trained below its maximum, with what it costs the array it is in (if any)."""
    groups = member_sets(inp)
    # Members the slow-member finding already names, with what they cost.
    covered = {(group.name, d.name) for group in groups if (found := _slow_members(group)) for d in found.slow}
    disks: dict[str, Disk] = {}
    for group in groups:
        disks.update((d.name, d) for d in group.disks)
    if inp.inventory is not None:
        disks.update((d.name, d) for d in inp.inventory.disks if d.name not in disks)
    findings = []
    for disk in disks.values():
        link = disk.link
        if link is None or not link.downgraded:
            continue
        now_bw, max_bw = link.bandwidth_bytes_per_s, link.max_bandwidth_bytes_per_s
        evidence = [
            Evidence("link now", link.describe_current()),
            Evidence("link maximum", link.describe_max()),
            Evidence("usable now", _mbps(now_bw or 0), "MB/s"),
            Evidence("usable at maximum", _mbps(max_bw or 0), "MB/s"),
        ]
        severity = Severity.WARNING
        title = f"{disk.name}: {link.finding()}"
        skip = False
        for group in groups:
            if disk not in group.disks:
                continue
            if (group.name, disk.name) in covered:
                skip = True  # the slow-member finding already names it with its cost
                break
            speeds = dict((d.name, bw) for d, bw in _link_speeds(group.disks))
            if len(speeds) < 2 or max_bw is None:
                continue
            now = group.read_factor * min(speeds.values())
            speeds[disk.name] = max_bw
            fixed = group.read_factor * min(speeds.values())
            evidence += [
                Evidence(f"{group.name} now", _mbps(now), "MB/s"),
                Evidence(f"{group.name} with {disk.name} at its maximum", _mbps(fixed), "MB/s"),
            ]
            if fixed <= now:
                severity = Severity.INFO
                title += f"; it costs {group.name} nothing yet (other members are slower still)"
        if skip:
            continue
        findings.append(
            Finding(
                id=f"link-downgraded:{disk.name}",
                severity=severity,
                title=title,
                evidence=tuple(evidence),
                why=WEAKEST_LINK_WHY,
                what_to_do=f"{_fix_hint(disk)[0].upper()}{_fix_hint(disk)[1:]}; then measure it alone with the "
                "weakest-link run.",
                experiment="weakest-link",
            )
        )
    return findings


# --- CPU frequency ---------------------------------------------------------------------------------

GOVERNOR_WHY = (
    "Finding 2 (docs/findings.md): a RAID10 of four SATA SSDs did 669/605 MB/s (sync 512 KiB random "
    "read/write, one job) under intel_pstate powersave against 780/750 MB/s under performance, the spread "
    "between runs grew from ~35 to ~50 MB/s, and the CPU never rose above 2.3 of 4.2 GHz."
)


def _loaded(snapshot: Snapshot, windows: Sequence[tuple[float, float]]) -> bool:
    if any(start <= snapshot.timestamp <= end for start, end in windows):
        return True
    moved = sum((d.read_bytes_per_s or 0.0) + (d.write_bytes_per_s or 0.0) for d in snapshot.devices)
    return moved >= LOAD_BYTES_PER_S


def _run_windows(runs: Sequence[RunRecord]) -> list[tuple[float, float]]:
    return [(r.started_at.timestamp(), r.ended_at.timestamp()) for r in runs if r.ended_at is not None]


def _frequency_fraction(snapshot: Snapshot) -> float | None:
    fractions = [
        core.freq_mhz / core.max_freq_mhz
        for core in snapshot.cpu.cores
        if core.freq_mhz is not None and core.max_freq_mhz
    ]
    return statistics.fmean(fractions) if fractions else None


def rule_governor(inp: AdviceInput) -> list[Finding]:
    """powersave on any core, or frequencies far below the maximum while I/O ran."""
    if not inp.snapshots:
        return []
    findings = []
    cpu = inp.snapshots[-1].cpu
    if cpu.cpufreq_available and "powersave" in cpu.governors:
        on_powersave = [c for c in cpu.cores if c.governor == "powersave"]
        evidence = [
            Evidence("cores on powersave", f"{len(on_powersave)} of {len(cpu.cores)}"),
            Evidence("driver", cpu.driver or "unknown"),
        ]
        if cpu.pstate_status:
            evidence.append(Evidence(f"{cpu.pstate_driver} mode", cpu.pstate_status))
        if (fraction := _frequency_fraction(inp.snapshots[-1])) is not None:
            evidence.append(Evidence("current frequency / maximum", round(fraction * 100, 1), "%"))
        findings.append(
            Finding(
                id="governor-powersave",
                severity=Severity.WARNING,
                title=f"CPU governor is powersave on {len(on_powersave)} of {len(cpu.cores)} cores",
                evidence=tuple(evidence),
                why=GOVERNOR_WHY,
                what_to_do=(
                    "Measure what it costs here with the governor A/B run; for benchmarks and storage servers "
                    "set every core to performance (cpupower frequency-set -g performance)."
                ),
                experiment="governor-ab",
            )
        )
    windows = _run_windows(inp.runs)
    loaded = [s for s in inp.snapshots if _loaded(s, windows)]
    fractions = [f for s in loaded if (f := _frequency_fraction(s)) is not None]
    if len(fractions) >= MIN_LOADED_SNAPSHOTS and (median := statistics.median(fractions)) < LOW_FREQUENCY_FRACTION:
        max_mhz = max((c.max_freq_mhz for s in loaded for c in s.cpu.cores if c.max_freq_mhz), default=0.0)
        evidence = (
            Evidence("samples under load", len(fractions)),
            Evidence("median frequency / maximum", round(median * 100, 1), "%"),
            Evidence("maximum frequency", round(max_mhz), "MHz"),
            Evidence("governors", ", ".join(cpu.governors) or "unknown"),
        )
        findings.append(
            Finding(
                id="cpu-frequency-low",
                severity=Severity.WARNING,
                title=f"CPUs ran at {median * 100:.0f}% of their maximum frequency while I/O ran",
                evidence=evidence,
                why=GOVERNOR_WHY,
                what_to_do=(
                    "Latency-bound I/O (one job, queue depth 1) waits on a slow core between requests; run "
                    "the governor A/B to see how much performance gives back."
                ),
                experiment="governor-ab",
            )
        )
    return findings


# --- resync ----------------------------------------------------------------------------------------

RESYNC_WHY = (
    "A resync reads every member (and writes parity) while the benchmark runs, so the figures measure both; "
    "the field measurements of finding 5 (docs/findings.md) made their arrays with --build or --assume-clean "
    "so that no resync disturbed the runs."
)


def _device_name(target: str) -> str:
    return target.rstrip("/").rsplit("/", 1)[-1]


def _syncing_arrays(inp: AdviceInput) -> dict[str, MdArray]:
    arrays: dict[str, MdArray] = {}
    if inp.inventory is not None:
        arrays.update((a.name, a) for a in inp.inventory.arrays if a.sync is not None)
    if inp.snapshots:
        # The newest view wins: a resync that ended since the scan is not reported.
        latest = {a.name: a for a in inp.snapshots[-1].arrays}
        for name in list(arrays):
            if name in latest and latest[name].sync is None:
                del arrays[name]
        arrays.update((a.name, a) for a in latest.values() if a.sync is not None)
    return arrays


def rule_resync(inp: AdviceInput) -> list[Finding]:
    """An array resyncing now (critical when a benchmark is about to run on it), and stored runs that overlapped one."""
    findings = []
    target = _device_name(inp.benchmark_target) if inp.benchmark_target else None
    for name, array in sorted(_syncing_arrays(inp).items()):
        sync = array.sync
        assert sync is not None
        evidence = [Evidence("action", f"{sync.action} ({sync.state})")]
        if sync.fraction is not None:
            evidence.append(Evidence("done", round(sync.fraction * 100, 1), "%"))
        if sync.speed_bytes_per_s is not None:
            evidence.append(Evidence("sync speed", _mbps(sync.speed_bytes_per_s), "MB/s"))
        if sync.eta_seconds is not None:
            evidence.append(Evidence("time left", round(sync.eta_seconds), "s"))
        about_to_run = target == name
        findings.append(
            Finding(
                id=f"resync:{name}",
                severity=Severity.CRITICAL if about_to_run else Severity.WARNING,
                title=(
                    f"A benchmark is about to run on {name} during its {sync.action}"
                    if about_to_run
                    else f"{name} is running a {sync.action}: benchmarks on it now mislead"
                ),
                evidence=tuple(evidence),
                why=RESYNC_WHY,
                what_to_do=(
                    "Wait for it to finish (the resync view's full-speed key shortens it), or recreate the test "
                    "array with --assume-clean."
                ),
            )
        )
    findings += _runs_during_resync(inp)
    return findings


def _runs_during_resync(inp: AdviceInput) -> list[Finding]:
    findings = []
    for run in inp.runs:
        if run.ended_at is None:
            continue
        name = _device_name(run.target)
        start, end = run.started_at.timestamp(), run.ended_at.timestamp()
        seen = [
            array
            for s in inp.snapshots
            if start <= s.timestamp <= end and (array := s.array(name)) is not None and array.sync is not None
        ]
        # The benchmark engine records a sync running when the run began (mdtui.run.record.array_config).
        recorded = run.array.get("sync") if run.array else None
        if not seen and not recorded:
            continue
        speeds = [a.sync.speed_bytes_per_s for a in seen if a.sync and a.sync.speed_bytes_per_s]
        evidence = [Evidence("run", run.title)]
        if recorded:
            evidence.append(Evidence("recorded at its start", str(recorded)))
        if seen:
            evidence.append(Evidence("samples during a sync", len(seen)))
            evidence.append(Evidence("action", seen[0].sync.action if seen[0].sync else "sync"))
        if speeds:
            evidence.append(Evidence("mean sync speed", _mbps(statistics.fmean(speeds)), "MB/s"))
        findings.append(
            Finding(
                id=f"run-during-resync:{run.id}",
                severity=Severity.WARNING,
                title=f"Run {run.title} on {name} ran while {name} was resyncing; its figures are not the array's",
                evidence=tuple(evidence),
                why=RESYNC_WHY,
                what_to_do="Run it again once the resync has finished and compare the two.",
            )
        )
    return findings


# --- parallelism -----------------------------------------------------------------------------------


def rule_parallelism(inp: AdviceInput) -> list[Finding]:
    """The md device read well under its members together in a weakest-link result: too few jobs in flight."""
    findings = []
    for figures in inp.weakest_link:
        if figures.together_bytes_per_s <= 0:
            continue
        share = figures.array_bytes_per_s / figures.together_bytes_per_s
        if share >= PARALLELISM_SHORTFALL:
            continue
        evidence = (
            Evidence("run", f"#{figures.run_id}"),
            Evidence("members read together", _mbps(figures.together_bytes_per_s), "MB/s"),
            Evidence(f"{_device_name(figures.array)} read", _mbps(figures.array_bytes_per_s), "MB/s"),
            Evidence("array / members", round(share * 100, 1), "%"),
            Evidence("numjobs", figures.numjobs if figures.numjobs is not None else "unknown"),
        )
        findings.append(
            Finding(
                id=f"parallelism:{_device_name(figures.array)}",
                severity=Severity.WARNING,
                title=(
                    f"{figures.array} read {_mb(figures.array_bytes_per_s)}, {share * 100:.0f}% of its members "
                    f"together ({_mb(figures.together_bytes_per_s)})"
                ),
                evidence=evidence,
                why=(
                    "An md device needs more I/O in flight than one disk to keep every member busy "
                    "(docs/findings.md, finding 1: raw drives together 6353 MB/s, the md device 4989 MB/s with "
                    "16 jobs and 5872 MB/s with 64)."
                ),
                what_to_do=(
                    "Run the parallelism sweep (numjobs 1, 4, 16, 64) to see where the array saturates; if more "
                    "jobs close the gap, the array is fine and the workload needs more concurrency."
                ),
                experiment="parallelism-sweep",
            )
        )
    return findings


# --- level, chunk, bitmap for the workload ---------------------------------------------------------


def rule_level_for_workload(inp: AdviceInput) -> list[Finding]:
    """RAID5/6 for a small-random-write workload: the expected IOPS against RAID10 (finding 4, docs/findings.md)."""
    workload = inp.workload
    if workload is None or not workload.small_random_writes:
        return []
    findings = []
    for group in member_sets(inp):
        if group.level.name not in ("raid5", "raid6"):
            continue
        level_iops = RND4K_WRITE_IOPS[group.level.name]
        ratio = level_iops / RND4K_WRITE_IOPS["raid10"]
        reads, writes = group.level.small_write_ios(group.member_count, group.layout)
        findings.append(
            Finding(
                id=f"level-small-writes:{group.name}",
                severity=Severity.WARNING,
                title=(
                    f"{group.level.name} for {workload.key}: expect about {ratio:.2f}× the random-write IOPS of "
                    "RAID10 on the same disks"
                ),
                evidence=(
                    Evidence("level", group.level.name),
                    Evidence("member I/Os per small write", f"{reads} reads + {writes} writes"),
                    Evidence(f"finding 4 {group.level.name} RND4KQ32T8 write", level_iops, "IOPS"),
                    Evidence("finding 4 raid10 RND4KQ32T8 write", RND4K_WRITE_IOPS["raid10"], "IOPS"),
                    Evidence(f"{group.level.name} / raid10", round(ratio, 2)),
                ),
                why=(
                    "Every small write to RAID5 reads old data and parity and writes both back (RAID6: three reads, "
                    "three writes); finding 4 (docs/findings.md) measured random 4 KiB writes at Q32T8 on four "
                    "SAS3 SSDs of 58.3K IOPS for RAID5 and 65.4K for RAID6 against 276K for RAID10 and 169K for "
                    "one disk."
                ),
                what_to_do=(
                    f"For {workload.title.split(':')[0].lower()}, prefer RAID10, or measure the levels on these "
                    "members with the level comparison before deciding."
                ),
                experiment="level-compare",
            )
        )
    return findings


def _chunk_finding(group: MemberSet, workload: Workload) -> tuple[str, Severity, str, str, int] | None:
    """(kind, severity, why, what, recommended KiB) when the chunk does not fit the workload, else None."""
    if group.chunk_bytes is None:
        return None
    chunk_kib = group.chunk_bytes // 1024
    parity = group.level.parity
    if Pattern.LARGE_SEQUENTIAL in workload.patterns and parity and chunk_kib < SEQUENTIAL_MIN_CHUNK_KIB:
        return (
            "large sequential streams",
            Severity.WARNING,
            "Finding 5 (docs/findings.md; three HDDs, 16 MiB direct reads, normalised to the raw disk): RAID5 "
            "read one stream at 0.95 with a 2 MiB chunk but 0.20 with a 4 KiB chunk; on RAID0 the chunk made no "
            "difference (0.96-0.97).",
            "Use a chunk of 512 KiB to 2 MiB, or run the chunk sweep with this workload's reads.",
            2048,
        )
    if Pattern.CONCURRENT in workload.patterns and parity and chunk_kib < CONCURRENT_MIN_CHUNK_KIB:
        return (
            "many concurrent readers",
            Severity.INFO,
            "Finding 5 (docs/findings.md): with five readers at once larger chunks were always better on RAID5, "
            "8 MiB reading 0.18-0.21 of the raw disk per data disk against 0.12 with 512 KiB: a reader that "
            "stays on one member seeks less.",
            "Consider a chunk of 1 MiB or more, and confirm with the chunk sweep.",
            4096,
        )
    if Pattern.SMALL_RANDOM in workload.patterns and chunk_kib < SMALL_RANDOM_MIN_CHUNK_KIB:
        return (
            "small random requests",
            Severity.WARNING,
            "A request that crosses a chunk boundary occupies two members instead of one, and with a tiny "
            "chunk most of them do; in finding 5 (docs/findings.md) RAID5 read at 0.20 of the raw disk with a "
            "4 KiB chunk.",
            "Use at least a 64 KiB chunk (database pages are 8-16 KiB); the chunk sweep shows the effect.",
            64,
        )
    return None


def rule_chunk_for_workload(inp: AdviceInput) -> list[Finding]:
    """A chunk that does not fit the stated workload: large sequential vs small random vs concurrent.

    The thresholds come from finding 5 (docs/findings.md).
    """
    workload = inp.workload
    if workload is None:
        return []
    findings = []
    for group in member_sets(inp):
        if group.level is RAID0 and Pattern.SMALL_RANDOM not in workload.patterns:
            continue  # finding 5 (docs/findings.md): on RAID0 the chunk made no difference for streaming reads
        found = _chunk_finding(group, workload)
        if found is None:
            continue
        kind, severity, why, what, recommended = found
        assert group.chunk_bytes is not None
        findings.append(
            Finding(
                id=f"chunk:{group.name}",
                severity=severity,
                title=f"{iec_bytes(group.chunk_bytes)} chunk on {group.name} does not suit {kind} ({workload.key})",
                evidence=(
                    Evidence("chunk", group.chunk_bytes // 1024, "KiB"),
                    Evidence("level", group.level.name),
                    Evidence("workload", workload.key),
                    Evidence("suggested chunk", recommended, "KiB"),
                ),
                why=why,
                what_to_do=what,
                experiment="chunk-sweep",
            )
        )
    return findings


def rule_bitmap(inp: AdviceInput) -> list[Finding]:
    """A write-intent bitmap on a write-heavy workload: every newly dirtied region costs a bitmap update first."""
    workload = inp.workload
    if workload is None or not workload.write_heavy:
        return []
    findings = []
    for group in member_sets(inp):
        if group.bitmap in (None, "none"):
            continue
        findings.append(
            Finding(
                id=f"bitmap:{group.name}",
                severity=Severity.WARNING if workload.small_random_writes else Severity.INFO,
                title=f"{group.name} has a write-intent bitmap ({group.bitmap}) and the workload is write-heavy",
                evidence=(
                    Evidence("bitmap", group.bitmap or ""),
                    Evidence("workload", workload.key),
                    Evidence("level", group.level.name),
                ),
                why=(
                    "md marks a region dirty in the bitmap on every member before the first write to it, which "
                    "small scattered writes hit most. No figure for that cost has been measured yet, but the "
                    "finding 4 figures (RAID10 276K random 4 KiB write IOPS) were measured with --bitmap none, "
                    "so a bitmap array should not expect them (docs/findings.md, finding 4 and knob figures)."
                ),
                what_to_do=(
                    "Keep the bitmap (it turns a full resync after a crash into a short one) but give it a larger "
                    "chunk (mdadm --grow --bitmap=none, then --bitmap=internal --bitmap-chunk=64M), and measure "
                    "both ways with the same preset."
                ),
            )
        )
    return findings


# --- parity ----------------------------------------------------------------------------------------


def rule_stripe_cache(inp: AdviceInput) -> list[Finding]:
    """raid4/5/6 arrays whose stripe_cache_size is still md's default of 256 pages."""
    findings = []
    if inp.inventory is None:
        return findings
    for array in inp.inventory.arrays:
        if array.level not in ("raid4", "raid5", "raid6"):
            continue
        pages = inp.stripe_cache_pages.get(array.name)
        if pages is None or pages > DEFAULT_STRIPE_CACHE_PAGES:
            continue
        members = array.raid_disks or len(array.members)
        write_heavy = inp.workload is not None and inp.workload.write_heavy
        findings.append(
            Finding(
                id=f"stripe-cache:{array.name}",
                severity=Severity.WARNING if write_heavy else Severity.INFO,
                title=f"{array.name} ({array.level}) uses the default stripe cache of {pages} pages",
                evidence=(
                    Evidence("stripe_cache_size", pages, "pages"),
                    Evidence("memory now", iec_bytes(pages * PAGE_BYTES * members)),
                    Evidence(
                        f"memory at {SUGGESTED_STRIPE_CACHE_PAGES}",
                        iec_bytes(SUGGESTED_STRIPE_CACHE_PAGES * PAGE_BYTES * members),
                    ),
                    Evidence("members", members),
                ),
                why=(
                    "Parity writes are assembled in the stripe cache: a small one forces partial-stripe writes "
                    "that read before they write (docs/findings.md, finding 4: RAID5 wrote 985 MB/s sequentially "
                    "where one disk wrote 1123 MB/s, and 58.3K random-write IOPS against 169K). No figure for a "
                    "larger cache has been measured yet (docs/findings.md, knob figures)."
                ),
                what_to_do=(
                    f"Try echo {SUGGESTED_STRIPE_CACHE_PAGES} > /sys/block/{array.name}/md/stripe_cache_size "
                    "(it costs that many 4 KiB pages per member) and compare a parity-cost run before and after; "
                    "it resets at reboot unless set again by a udev rule."
                ),
                experiment="parity-cost",
            )
        )
    return findings


def _thread_load(inp: AdviceInput, array_name: str) -> tuple[float, float] | None:
    """(peak md thread CPU %, write bytes/s of the array at that moment) over the snapshots, when measured."""
    best: tuple[float, float] | None = None
    for snapshot in inp.snapshots:
        device = snapshot.device(array_name)
        writes = device.write_bytes_per_s if device is not None else None
        for thread in snapshot.md_threads:
            if thread.array != array_name or not thread.role.startswith("raid") or thread.cpu_percent is None:
                continue
            if best is None or thread.cpu_percent > best[0]:
                best = (thread.cpu_percent, writes or 0.0)
    return best


def _stored_thread_load(inp: AdviceInput, array_name: str) -> tuple[float, float] | None:
    """The busiest md thread a stored run on the array measured (utime+stime over the run), with its writes."""
    best: tuple[float, float] | None = None
    for run in inp.runs:
        cpu = run.metrics.md_thread_cpu_pct
        if cpu is not None and _device_name(run.target) == array_name and (best is None or cpu > best[0]):
            best = (cpu, run.metrics.write_bw_bytes_per_s or 0.0)
    return best


def rule_parity_cpu(inp: AdviceInput) -> list[Finding]:
    """The kernel's raid6/xor routines and their speeds next to the md thread's CPU under load.

    The figures come from finding 3 (docs/findings.md).
    """
    groups = [g for g in member_sets(inp) if g.level.parity]
    if not groups:
        return []
    parity = inp.parity
    findings = []
    for group in groups:
        evidence: list[Evidence] = []
        raid6 = group.level.name == "raid6"
        if parity is not None and raid6 and parity.raid6_algorithm:
            evidence.append(Evidence("raid6 algorithm", parity.raid6_algorithm))
            if parity.raid6_gen_mb_s is not None:
                evidence.append(Evidence("raid6 gen()", parity.raid6_gen_mb_s, "MB/s"))
            if parity.raid6_xor_mb_s is not None:
                evidence.append(Evidence("raid6 xor()", parity.raid6_xor_mb_s, "MB/s"))
        if parity is not None and parity.xor_function:
            evidence.append(Evidence("xor function", parity.xor_function))
            if parity.xor_mb_s is not None:
                evidence.append(Evidence("xor speed", parity.xor_mb_s, "MB/s"))
        array_name = group.name if not group.planned else ""
        load = _thread_load(inp, array_name) if array_name else None
        stored = _stored_thread_load(inp, array_name) if array_name else None
        if load is None or (stored is not None and stored[0] > load[0]):
            load = stored
        if load is not None:
            evidence += [
                Evidence(f"{array_name}_{group.level.name} thread CPU (peak)", round(load[0], 1), "% of a core"),
                Evidence("array writes at that moment", _mbps(load[1]), "MB/s"),
            ]
        if not evidence:
            continue
        no_simd = raid6 and parity is not None and parity.raid6_simd is False
        saturated = load is not None and load[0] >= MD_THREAD_SATURATED_PERCENT
        if saturated:
            severity = Severity.WARNING
            title = f"{array_name}'s parity thread is saturated ({load[0]:.0f}% of a core): the CPU limits writes"
        elif no_simd:
            severity = Severity.WARNING
            title = f"raid6 parity uses {parity.raid6_algorithm if parity else '?'}: no SIMD, parity costs double"
        else:
            severity = Severity.INFO
            algorithm = (parity.raid6_algorithm if raid6 else parity.xor_function) if parity else None
            title = f"Parity on {group.name}: {algorithm or 'kernel routine unknown'}"
            if load is not None:
                title += f", md thread at {load[0]:.0f}% of a core"
        findings.append(
            Finding(
                id=f"parity-cpu:{group.name}",
                severity=severity,
                title=title,
                evidence=tuple(evidence),
                why=(
                    "Finding 3 (docs/findings.md): a raid6 volume pushed ~400 MB/s of 64 KiB sequential writes "
                    "with its md127_raid6 thread at just under 10% of a core with AVX, ~250 MB/s at ~20% without; "
                    "reads of a clean array cost md almost nothing. The boot-time gen()/xor() figures are per "
                    "core, far above what real writes reach."
                ),
                what_to_do=(
                    "Measure it with the parity-cost run (64 KiB writes with the md thread's CPU); a saturated "
                    "thread can be helped with group_thread_cnt in /sys/block/mdX/md/ (no measured figure for it "
                    "yet: measure before and after)."
                ),
                experiment="parity-cost",
            )
        )
    return findings


RULES: tuple[Callable[[AdviceInput], list[Finding]], ...] = (
    rule_slow_members,
    rule_downgraded_links,
    rule_governor,
    rule_resync,
    rule_parallelism,
    rule_level_for_workload,
    rule_chunk_for_workload,
    rule_bitmap,
    rule_stripe_cache,
    rule_parity_cpu,
)


def advise(inp: AdviceInput) -> tuple[Finding, ...]:
    """Every rule's findings, worst first."""
    return sort_findings(finding for rule in RULES for finding in rule(inp))
