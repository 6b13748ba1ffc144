"""A stored step that hit its time ceiling with its figure still moving: what that figure is worth.

fio judges each step of the steady-state presets (--steadystate); a step still moving at its ceiling stored
a figure that is not the sustained one. Writes that are still falling are the classic case: a drive's (or a
controller's) write cache takes them at its own speed until it fills, so the figure overstates what the
drive sustains. So is a write step whose confirmation fell after fio had called it steady (its cache held
longer than fio's window). The newest such step per target and direction speaks; steps run for a fixed time were
never judged and say nothing here.
"""

from __future__ import annotations

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, mbps
from mdtui.advise.rules.resync import device_name
from mdtui.model.job import RwMode, SteadyOutcome
from mdtui.store.records import RunRecord, RunStatus

WRITE_WHY = (
    "A drive's write cache (SLC cache on flash, a controller's battery-backed cache, a throttled virtual "
    "disk's burst allowance) takes writes at its own speed until it is full; the figure measured while it "
    "fills can be twice the sustained one. fio watched the figure over its window and it was still moving "
    "when the step reached its ceiling, so the stored figure is an upper bound."
)
FELL_WHY = (
    "fio called the step steady after a window whose figure was flat, and the same writes, run on for a "
    "confirmation, then came in lower. A write cache that holds longer than fio's ramp and window looks flat "
    "while it lasts: the window saw the cache's speed, the confirmation saw it run out."
)
READ_WHY = (
    "A read figure that never settles is usually something else sharing the device (a resync, another "
    "process), a cache warming (the page cache without direct I/O, a drive's read cache) or a device "
    "throttling itself (heat, a burst allowance running out). The stored figure is not one a repeat run "
    "would reproduce."
)


def _writes(run: RunRecord) -> bool:
    try:
        return RwMode(str(run.params.get("rw", ""))).writes
    except ValueError:
        return run.metrics.write_bw_bytes_per_s is not None and run.metrics.read_bw_bytes_per_s is None


def _movement(criterion: str, measured: str) -> str:
    """ "falling" or "rising" from a slope criterion's signed last window; "moving" for a deviation."""
    if "_slope" not in criterion:
        return "moving"
    text = measured.strip()
    if text.startswith("-"):
        return "falling"
    return "rising" if text[:1].isdigit() or text.startswith("+") else "moving"


def rule_unsteady_steps(inp: AdviceInput) -> list[Finding]:
    """The newest unsteady step per target and direction: what its figure means, with the run, the step, the
    criterion and the time behind it."""
    newest: dict[tuple[str, bool], tuple[RunRecord, SteadyOutcome]] = {}
    for run in inp.runs:
        outcome = run.steady
        if run.status is not RunStatus.COMPLETE or outcome is None or outcome.attained:
            continue
        key = (device_name(run.target) if run.target else "?", _writes(run))
        if key not in newest or run.id > newest[key][0].id:
            newest[key] = (run, outcome)
    return [_finding(run, outcome, target, writes) for (target, writes), (run, outcome) in sorted(newest.items())]


def _finding(run: RunRecord, outcome: SteadyOutcome, target: str, writes: bool) -> Finding:
    after = f"{outcome.after_s:.0f} s" if outcome.after_s is not None else "its ceiling"
    movement = _movement(outcome.criterion, outcome.measured)
    step = str(run.params.get("step") or run.preset)
    figure = run.metrics.write_bw_bytes_per_s if writes else run.metrics.read_bw_bytes_per_s
    evidence = [
        Evidence("run", run.title),
        Evidence("step", step),
        Evidence("criterion", outcome.criterion),
        Evidence("ran", round(outcome.after_s, 1) if outcome.after_s is not None else "unknown", "s"),
        Evidence("last window", outcome.measured or "unknown"),
    ]
    if figure is not None:
        evidence.append(Evidence("stored figure", mbps(figure), "MB/s"))
    if outcome.fell:
        evidence.append(Evidence("fell after looking steady", round(outcome.fell_percent or 0.0, 1), "%"))
        return Finding(
            id=f"unsteady-write:{target}",
            severity=Severity.WARNING,
            title=(
                f"{target}: writes fell {outcome.fell_percent:.0f}% after looking steady ({run.title} {step}): "
                "a write cache running out, most likely; the stored figure is the one after the fall"
            ),
            evidence=tuple(evidence),
            why=FELL_WHY,
            what_to_do=(
                "Read the stored (later, lower) figure as closer to the drive's sustained speed than the one fio "
                "first called steady, and still an upper bound if it had not settled again. To measure the "
                "sustained one, fill the cache first (write the whole target once) and run the step again."
            ),
        )
    if writes:
        cache = "the figure is not the sustained one"
        if movement == "falling":
            cache = "the drive's cache is absorbing them; the steady figure is lower"
        return Finding(
            id=f"unsteady-write:{target}",
            severity=Severity.WARNING,
            title=f"{target}: writes still {movement} after {after} ({run.title} {step}): {cache}",
            evidence=tuple(evidence),
            why=WRITE_WHY,
            what_to_do=(
                "Read this write figure as an upper bound, not the drive's sustained speed. To measure the "
                "sustained one, fill the cache first (write the whole target once, as the storage industry's "
                "test specification preconditions drives) and run the step again; if it still does not "
                "settle, that movement is how the drive behaves under sustained writes."
            ),
        )
    return Finding(
        id=f"unsteady-read:{target}",
        severity=Severity.INFO,
        title=f"{target}: reads still {movement} after {after} ({run.title} {step}): the figure is not the "
        "sustained one",
        evidence=tuple(evidence),
        why=READ_WHY,
        what_to_do=(
            "Run the step again with nothing else on the device (mdtui watch shows what else reads it) and "
            "compare; a figure that settles then was disturbed, one that never does is the device's own."
        ),
    )
