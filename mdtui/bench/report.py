"""The weakest-link report: each member alone, all together and the array, and what explains the array, in the
words of the one member verdict (plan/member_verdict.py) the advisor renders too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from mdtui.bench.plan import BenchPlan
from mdtui.bench.progress import StepOutcome
from mdtui.format import rate_mb_s, times
from mdtui.model.disk import Disk
from mdtui.model.job import JobStatus
from mdtui.plan.member_verdict import WeakestLinkVerdict, array_stripe, links_of, weakest_link_verdict
from mdtui.store.calibration import host_ceilings


@dataclass(frozen=True)
class MemberFigure:
    device: str
    alone_bytes_per_s: float | None
    together_bytes_per_s: float | None
    name: str = ""  # the kernel name the verdict and the advisor use ("nvme3n1"); the device path's last part


@dataclass(frozen=True)
class WeakestLinkReport:
    """Each member alone and together against the array (docs/findings.md, finding 1: a stripe runs at slowest × N)."""

    array: str
    level: str | None
    members: tuple[MemberFigure, ...]
    array_bytes_per_s: float | None
    verdict: WeakestLinkVerdict | None = None  # None until every member was measured alone

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
        """What the md model gives with every member at its own figure alone: slowest × N for a stripe."""
        return self.verdict.allowed if self.verdict is not None else None

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

    def _path(self, name: str) -> str:
        return next((m.device for m in self.members if m.name == name), name)

    def verdict_json(self) -> dict[str, object] | None:
        """The verdict as `bench --json` carries it: members by kernel name, as `advise --json` names them."""
        verdict = self.verdict
        if verdict is None:
            return None
        judged = verdict.judged
        return {
            "named": list(verdict.named),
            "unsure": list(judged.unsure) if judged is not None else [],
            "spread": list(judged.spread) if judged is not None else [],
            "stripe_factor": verdict.stripe.factor,
            "shared_limit": verdict.shared_limit,
            "short_of_parallelism": verdict.short_of_parallelism,
        }

    def findings(self) -> tuple[str, ...]:
        slowest = self.slowest
        if slowest is None:
            return ("No member was measured alone, so there is no weakest link to name.",)
        verdict = self.verdict
        judged = verdict.judged if verdict is not None else None
        lines = []
        vs_others = self.slowest_vs_others()
        sentence = f"Slowest member: {slowest.device} at {rate_mb_s(slowest.alone_bytes_per_s)} alone"
        if vs_others is not None:
            sentence += f", {times(vs_others)} the median of the others"
        if judged is not None and slowest.name in judged.named:
            sentence += ": it holds the array back."
        elif judged is not None and slowest.name in judged.unsure:
            scatter = judged.scatter_text([slowest.name])
            sentence += f": the array runs at its pace, but within the scatter ({scatter}); repeat the run to judge."
        elif judged is not None and slowest.name in judged.spread:
            sentence += ": slower than its peers, but not what limits the array now (spread)."
        else:
            sentence += "."
        lines.append(sentence)
        others = [name for name in (judged.named if judged is not None else ()) if name != slowest.name]
        if others:
            lines.append(f"Also holding the array back: {', '.join(self._path(name) for name in others)}.")
        if verdict is not None and self.array_bytes_per_s is not None and self.predicted_bytes_per_s is not None:
            factor = verdict.stripe.factor_text
            lines.append(
                f"{self.array} read {rate_mb_s(self.array_bytes_per_s)}: {times(self.vs_predicted)} slowest × {factor} "
                f"({rate_mb_s(self.predicted_bytes_per_s)}) and {times(self.vs_sum)} the members' sum alone "
                f"({rate_mb_s(self.alone_sum_bytes_per_s)})."
            )
            if verdict.named:
                lines.append(
                    f"The array runs at its slowest member's pace: look at "
                    f"{', '.join(self._path(name) for name in verdict.named)} (its link, slot or health). In the "
                    "field one drive in a PCIe 1.0 slot held a RAID0 of four at 832 × 4 MB/s."
                )
            elif verdict.short_of_parallelism:
                lines.append(
                    f"The array reads below what its members allow alone (slowest × {factor}) and together: md may "
                    "need more parallelism (more jobs or a deeper queue) to saturate."
                )
        together, alone = self.together_sum_bytes_per_s, self.alone_sum_bytes_per_s
        if verdict is not None and verdict.shared_limit and together is not None and alone:
            lines.append(
                f"All members at once read {rate_mb_s(together)}, {times(together / alone)} their sum alone: a "
                "shared limit (HBA, PCIe switch, CPU) caps them together."
            )
        return tuple(lines)


def _ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or not reference:
        return None
    return value / reference


def weakest_link_report(plan: BenchPlan, outcomes: Sequence[StepOutcome]) -> WeakestLinkReport:
    """Read the steps weakest_link() builds: each member alone, all together, then the array, and judge them."""
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
    members = tuple(
        MemberFigure(m.path, alone.get(m.path), together.get(m.path), m.name) for m in plan.members
    )
    level = plan.target.array.level if plan.target.array is not None else None
    report = WeakestLinkReport(plan.target.path, level, members, array_rate)
    figures = {m.name: m.alone_bytes_per_s for m in members if m.alone_bytes_per_s is not None}
    if not members or len(figures) != len(members):
        return report
    disks: dict[str, Disk | None] = {m.name: m.disk for m in plan.members}
    stripe = array_stripe(level, len(members), disks.values(), host_ceilings())
    links = links_of(figures, disks)
    verdict = weakest_link_verdict(
        figures,
        stripe,
        together=report.together_sum_bytes_per_s,
        array=array_rate,
        link_explains={name for name, (_, explains) in links.items() if explains},
    )
    return WeakestLinkReport(plan.target.path, level, members, array_rate, verdict)
