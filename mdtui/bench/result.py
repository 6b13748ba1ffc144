"""What a benchmark gives back: each step's outcome, the check pass, the weakest-link report, the time series, notes,
and the runs the results store could not take."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mdtui.bench.check import CheckOutcome
from mdtui.bench.plan import BenchPlan
from mdtui.bench.progress import (
    StepOutcome,
)
from mdtui.bench.report import WeakestLinkReport
from mdtui.store.records import RunStatus, SamplePoint


@dataclass(frozen=True)
class BenchResult:
    plan: BenchPlan
    status: RunStatus
    steps: tuple[StepOutcome, ...]
    context: dict[str, Any]
    started_at: datetime
    duration_s: float
    samples: tuple[SamplePoint, ...] = ()  # t_s since the bench started
    check: CheckOutcome | None = None
    weakest_link: WeakestLinkReport | None = None
    error: str = ""
    notes: tuple[str, ...] = ()
    # Runs the results database could not take: spooled beside it, or (when even that failed) here, as the
    # spool's JSON documents, for the caller to print.
    spooled: tuple[Path, ...] = ()
    unsaved: tuple[dict[str, Any], ...] = ()

    @property
    def stored(self) -> bool:
        """Whether every run went into the results database whole."""
        return not self.spooled and not self.unsaved

    @property
    def partial(self) -> bool:
        """True when not every step ran to its end: the figures cover what ran."""
        return self.status is not RunStatus.COMPLETE or len(self.steps) < len(self.plan.steps)

    @property
    def run_ids(self) -> tuple[int, ...]:
        ids = [o.run_id for o in self.steps if o.run_id is not None]
        if self.check is not None and self.check.run_id is not None:
            ids.append(self.check.run_id)
        return tuple(ids)
