"""What the advisor says: findings (severity, evidence, why, what to do) and the workloads it advises for."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from mdtui.errors import MdtuiError
from mdtui.model.names import kernel_name_key


class Topic(StrEnum):
    """What a finding is about: how fast the disks and arrays are, or whether the array survives (reboots,
    failing members, nobody told). A scenario's "top finding" is the top one of its topic."""

    PERFORMANCE = "performance"
    KEEPING = "keeping"


class Stake(StrEnum):
    """What a finding puts at stake, the first key findings are ordered by: the data (an array that may not
    survive or come back), then speed the array is losing now, then advice (what would be better)."""

    DATA = "data at risk"
    SPEED = "lost speed"
    ADVICE = "advice"

    @property
    def rank(self) -> int:
        """Lower comes first."""
        return (Stake.DATA, Stake.SPEED, Stake.ADVICE).index(self)


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """Higher is worse; findings are listed worst first."""
        return (Severity.INFO, Severity.WARNING, Severity.CRITICAL).index(self)

    @property
    def mark(self) -> str:
        return {"info": "ℹ", "warning": "⚠", "critical": "✖"}[self.value]


@dataclass(frozen=True)
class Evidence:
    """One number behind a finding, with what it is and its unit ("MB/s", "%", "IOPS", "KiB", "")."""

    label: str
    value: float | int | str
    unit: str = ""

    def __str__(self) -> str:
        if isinstance(self.value, float):
            shown = f"{self.value:,.2f}" if abs(self.value) < 10 else f"{self.value:,.0f}"
        elif isinstance(self.value, int):
            shown = f"{self.value:,}"
        else:
            shown = self.value
        return f"{self.label}: {shown}{' ' + self.unit if self.unit else ''}"


# Experiments a finding can point to (mdtui.advise.experiments runs them) and the presets it can name.
EXPERIMENT_TITLES: dict[str, str] = {
    "weakest-link": "Find the weakest link (each member alone, all together, the array)",
    "governor-ab": "CPU governor A/B (current governor vs performance)",
    "parallelism-sweep": "Parallelism sweep (numjobs 1, 4, 16, 64)",
    "chunk-sweep": "Chunk sweep (create, measure, tear down, next chunk)",
    "level-compare": "Level comparison on the same members (RAID0/10/5/6, disk-mark matrix)",
    "parity-cost": "Parity CPU cost (64 KiB writes with md thread CPU)",
    "knob-sweep": "Knob sweep (one run per value of an md knob, originals restored)",
}


@dataclass(frozen=True)
class Finding:
    """One thing worth knowing, the numbers that triggered it, why it matters and what to do.

    ``id`` is stable across runs for the same cause ("slow-member:md0"), so a UI can keep its place.
    ``why`` cites the measured effect from the field findings (docs/findings.md) with their numbers.
    ``ruled_out`` names the other explanations the figures exclude, each with the figure that does it.
    ``explains`` holds the ids of findings this one's cause accounts for: the advisor folds them into it
    (one cause, not several symptoms) and lists a cause before findings of the same severity.
    ``members`` names the members the finding blames (plan/member_verdict.py's verdict), for scripts.
    ``data_at_risk`` marks a finding whose stake is the data whatever its topic (a failing disk that also
    explains a slow member).
    """

    id: str
    severity: Severity
    title: str
    evidence: tuple[Evidence, ...]
    why: str
    what_to_do: str
    experiment: str | None = None
    ruled_out: tuple[str, ...] = ()
    explains: tuple[str, ...] = ()
    topic: Topic = Topic.PERFORMANCE
    members: tuple[str, ...] = ()
    data_at_risk: bool = False

    def __post_init__(self) -> None:
        if self.experiment is not None and self.experiment not in EXPERIMENT_TITLES:
            raise ValueError(f"finding {self.id}: unknown experiment {self.experiment!r}")

    @property
    def stake(self) -> Stake:
        """Keeping findings put the data at risk; performance findings cost speed; either, when only worth
        knowing (info), is advice."""
        if self.data_at_risk:
            return Stake.DATA
        if self.severity is Severity.INFO:
            return Stake.ADVICE
        return Stake.DATA if self.topic is Topic.KEEPING else Stake.SPEED


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """One cause, then its consequences: findings another one explains are folded into it; then by what is at
    stake (data at risk, lost speed, advice), worst first within each, causes before the rest at the same
    severity, then by id in the kernel's order (md2 before md10), so output is stable."""
    found = list(findings)
    explained = {explained_id for finding in found for explained_id in finding.explains if explained_id != finding.id}
    kept = [finding for finding in found if finding.id not in explained]
    return tuple(
        sorted(
            kept,
            key=lambda f: (f.stake.rank, -f.severity.rank, 0 if f.explains else 1, kernel_name_key(f.id)),
        )
    )


class Pattern(StrEnum):
    SMALL_RANDOM = "small-random"  # 4-64 KiB requests at random offsets
    LARGE_SEQUENTIAL = "large-sequential"  # MiB-sized streams, one or a few at a time
    CONCURRENT = "concurrent"  # many independent streams/readers at once


@dataclass(frozen=True)
class Workload:
    """What the array is for, as the guide asks it, and the I/O that implies."""

    key: str
    title: str
    patterns: frozenset[Pattern]
    write_heavy: bool
    suggested_level: str  # a first suggestion the plan step starts from; the findings explain it
    suggested_chunk_kib: int

    @property
    def small_random_writes(self) -> bool:
        return Pattern.SMALL_RANDOM in self.patterns and self.write_heavy


WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "vm-images",
        "VM images: many guests doing small random I/O at once",
        frozenset({Pattern.SMALL_RANDOM, Pattern.CONCURRENT}),
        True,
        "raid10",
        512,
    ),
    Workload(
        "database",
        "Database: small random reads and writes (pages of 8-16 KiB), latency matters",
        frozenset({Pattern.SMALL_RANDOM}),
        True,
        "raid10",
        64,
    ),
    Workload(
        "backups",
        "Backups: large sequential writes, one or two streams, capacity matters",
        frozenset({Pattern.LARGE_SEQUENTIAL}),
        True,
        "raid6",
        2048,
    ),
    Workload(
        "scratch",
        "Scratch: fastest large I/O, the data can be lost",
        frozenset({Pattern.LARGE_SEQUENTIAL, Pattern.CONCURRENT}),
        True,
        "raid0",
        512,
    ),
)


class UnknownWorkload(MdtuiError):
    """A workload name the advisor does not know."""


def workload(key: str) -> Workload:
    for candidate in WORKLOADS:
        if candidate.key == key:
            return candidate
    known = ", ".join(w.key for w in WORKLOADS)
    raise UnknownWorkload(f"unknown workload {key!r}; choose one of {known}")


def short_title(finding: Finding) -> str:
    """The title's first clause, how a list or a pointer names a finding to a reader ("md0 is not in
    /etc/mdadm.conf"; "sda: link trained at 3 Gbps but the port supports 6 Gbps" when the first clause is only
    the device): its id ("boot-unlisted:md0") is for programs that keep their place, never for the admin."""
    clauses = finding.title.split(": ")
    return clauses[0] if " " in clauses[0] else ": ".join(clauses[:2])


def why_text(finding: Finding, told: dict[str, str] | None = None) -> str:
    """The finding's why, or, when ``told`` (why -> short title of the finding shown with it, filled as findings
    are shown) holds the same text, a pointer to that finding: a host's 32 arrays missing from mdadm.conf, or
    its 46 slow members and downgraded links, share one explanation each, given once."""
    if told is None:
        return finding.why
    first = told.setdefault(finding.why, short_title(finding))
    return finding.why if first == short_title(finding) else f'as for "{first}" above'


def finding_lines(finding: Finding, told: dict[str, str] | None = None) -> list[str]:
    """A finding as plain lines: the title with its severity, then evidence, why, what to do, the experiment.

    ``told``: see :func:`why_text`; pass one dict for a whole list of findings."""
    lines = [f"{finding.severity.mark} {finding.severity.value.upper()}: {finding.title}"]
    if finding.evidence:
        lines.append("  evidence: " + "; ".join(str(item) for item in finding.evidence))
    lines.append(f"  why: {why_text(finding, told)}")
    lines.extend(f"  rules out: {text}" for text in finding.ruled_out)
    lines.append(f"  what to do: {finding.what_to_do}")
    if finding.experiment is not None:
        lines.append(f"  experiment: {EXPERIMENT_TITLES[finding.experiment]} [{finding.experiment}]")
    return lines
