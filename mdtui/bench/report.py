"""The weakest-link report: each member alone, all together and the array, and what explains the array."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from mdtui.bench.plan import BenchPlan
from mdtui.bench.progress import StepOutcome
from mdtui.format import rate_mb_s, times
from mdtui.model.job import JobStatus

# Weakest-link verdicts. A member under 0.8 × the others' median is an outlier; an array within ±25 % of
# slowest × N runs at the slowest member's pace; members together under 0.85 × their sum alone share a limit.
OUTLIER_RATIO = 0.8


STRIPE_TOLERANCE = 0.25


SHARED_LIMIT_RATIO = 0.85


@dataclass(frozen=True)
class MemberFigure:
    device: str
    alone_bytes_per_s: float | None
    together_bytes_per_s: float | None


@dataclass(frozen=True)
class WeakestLinkReport:
    """Each member alone and together against the array (docs/findings.md, finding 1: a stripe runs at slowest × N)."""

    array: str
    level: str | None
    members: tuple[MemberFigure, ...]
    array_bytes_per_s: float | None

    @property
    def slowest(self) -> MemberFigure | None:
        measured = [m for m in self.members if m.alone_bytes_per_s is not None]
        return min(measured, key=lambda m: m.alone_bytes_per_s or 0.0) if measured else None

    @property
    def alone_sum_bytes_per_s(self) -> float | None:
        if any(m.alone_bytes_per_s is None for m in self.members):
            return None
        return sum(m.alone_bytes_per_s or 0.0 for m in self.members)

    @property
    def together_sum_bytes_per_s(self) -> float | None:
        if any(m.together_bytes_per_s is None for m in self.members):
            return None
        return sum(m.together_bytes_per_s or 0.0 for m in self.members)

    @property
    def predicted_bytes_per_s(self) -> float | None:
        """Slowest member × N: what a stripe over these members can read at most."""
        slowest = self.slowest
        if slowest is None or slowest.alone_bytes_per_s is None or self.alone_sum_bytes_per_s is None:
            return None
        return slowest.alone_bytes_per_s * len(self.members)

    @property
    def vs_predicted(self) -> float | None:
        return _ratio(self.array_bytes_per_s, self.predicted_bytes_per_s)

    @property
    def vs_sum(self) -> float | None:
        return _ratio(self.array_bytes_per_s, self.alone_sum_bytes_per_s)

    def slowest_vs_others(self) -> float | None:
        """The slowest member's rate ÷ the median of the others'."""
        slowest = self.slowest
        others = [m.alone_bytes_per_s for m in self.members if m is not slowest and m.alone_bytes_per_s is not None]
        if slowest is None or not others:
            return None
        return _ratio(slowest.alone_bytes_per_s, median(others))

    def findings(self) -> tuple[str, ...]:
        slowest = self.slowest
        if slowest is None:
            return ("No member was measured alone, so there is no weakest link to name.",)
        n = len(self.members)
        lines = []
        vs_others = self.slowest_vs_others()
        outlier = vs_others is not None and vs_others < OUTLIER_RATIO
        sentence = f"Slowest member: {slowest.device} at {rate_mb_s(slowest.alone_bytes_per_s)} alone"
        if vs_others is not None:
            sentence += f", {times(vs_others)} the median of the others"
        lines.append(sentence + (": it holds the array back." if outlier else "."))
        if self.array_bytes_per_s is not None and self.predicted_bytes_per_s is not None:
            lines.append(
                f"{self.array} read {rate_mb_s(self.array_bytes_per_s)}: {times(self.vs_predicted)} slowest × {n} "
                f"({rate_mb_s(self.predicted_bytes_per_s)}) and {times(self.vs_sum)} the members' sum alone "
                f"({rate_mb_s(self.alone_sum_bytes_per_s)})."
            )
            vs_predicted = self.vs_predicted or 0.0
            if outlier and abs(vs_predicted - 1) <= STRIPE_TOLERANCE:
                lines.append(
                    f"The array runs at its slowest member's pace: look at {slowest.device} (its link, slot or "
                    "health). In the field one drive in a PCIe 1.0 slot held a RAID0 of four at 832 × 4 MB/s."
                )
            elif vs_predicted < 1 - STRIPE_TOLERANCE:
                lines.append(
                    "The array reads below slowest × N: md may need more parallelism (more jobs or a deeper "
                    "queue) to saturate, or this level does not spread reads over every member."
                )
        together, alone = self.together_sum_bytes_per_s, self.alone_sum_bytes_per_s
        if together is not None and alone and together < SHARED_LIMIT_RATIO * alone:
            lines.append(
                f"All members at once read {rate_mb_s(together)}, {times(together / alone)} their sum alone: a "
                "shared limit (HBA, PCIe switch, CPU) caps them together."
            )
        if self.level not in (None, "raid0"):
            lines.append(f"For {self.level}, slowest × N is an upper bound: not every member serves every read.")
        return tuple(lines)


def _ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or not reference:
        return None
    return value / reference


def weakest_link_report(plan: BenchPlan, outcomes: Sequence[StepOutcome]) -> WeakestLinkReport:
    """Read the steps weakest_link() builds: each member alone, all together, then the array."""
    count = len(plan.members)
    alone: dict[str, float] = {}
    together: dict[str, float] = {}
    array_rate: float | None = None
    for outcome in outcomes:
        if outcome.status is not JobStatus.COMPLETE:
            continue
        rates = outcome.target_rates()
        if outcome.index < count:
            alone.update(rates)
        elif outcome.index == count:
            together.update(rates)
        else:
            array_rate = rates.get(plan.target.path)
    members = tuple(MemberFigure(m.path, alone.get(m.path), together.get(m.path)) for m in plan.members)
    level = plan.target.array.level if plan.target.array is not None else None
    return WeakestLinkReport(plan.target.path, level, members, array_rate)
