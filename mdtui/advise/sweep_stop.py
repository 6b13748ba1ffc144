"""When a sweep along one dimension (numjobs, chunk size, a knob's values) may stop before its last point.

The rule, as the experiments print it when they use it: once the best point so far is followed by two points
that each fell from the one before and both lie more than the noise band below the best, the sweep stops. A
figure along one of these dimensions rises to a peak (a device saturating, a chunk matching the I/O) and then
falls; one that has fallen twice in a row, each time clearly below its best, does not climb back past it at
the next, larger value. Two falls, not one, so a single noisy point never ends a sweep; the band is wider
than the percent or two repeated runs of one step differ by. A point without a figure never stops a sweep.
``--full-sweep`` (and ``--fixed-time``, for comparisons with sweeps made before this rule) run every point.
"""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.store.runs import ResultsStore

# Repeated runs of one fio step differ by a percent or two (store.compare.DEFAULT_TOLERANCE); 5 % is clear of it.
SWEEP_NOISE_BAND = 0.05
SWEEP_STOP_RULE = (
    "a sweep stops once the two points after its best each fell from the one before and both are more than "
    f"{SWEEP_NOISE_BAND:.0%} below the best"
)


def sweep_stop_reason(
    labels: Sequence[str],
    figures: Sequence[float | None],
    *,
    higher_is_better: bool = True,
    band: float = SWEEP_NOISE_BAND,
) -> str | None:
    """Why the sweep can stop after its latest point, or None to go on.

    ``figures`` are the points measured so far, in sweep order, one per label, in the metric's unit.
    """
    if len(figures) != len(labels):
        raise ValueError("one figure per sweep point")
    if len(figures) < 3 or any(figure is None for figure in figures):
        return None
    # Scored so that higher is better either way (latency: lower is better).
    scores = [float(f) if higher_is_better else -float(f) for f in figures if f is not None]
    best = max(range(len(scores)), key=lambda i: scores[i])
    if best > len(scores) - 3:
        return None
    before, middle, last = scores[-3:]
    if not (middle < before and last < middle):
        return None
    threshold = scores[best] - band * abs(scores[best])
    if middle >= threshold or last >= threshold:
        return None
    worst = abs(scores[best] - scores[-1]) / abs(scores[best]) if scores[best] else 0.0
    return (
        f"stopped after {labels[-1]}: {labels[-2]} and {labels[-1]} each fell from the point before, "
        f"{worst:.0%} below the best ({labels[best]}), more than the {band:.0%} noise band. The rule: "
        f"{SWEEP_STOP_RULE} (--full-sweep runs every point)"
    )


def point_figure(values: Sequence[float | None]) -> float | None:
    """A sweep point's figure from its runs' values: their mean; None when no run measured it."""
    measured = [value for value in values if value is not None]
    return sum(measured) / len(measured) if measured else None


def sweep_stop(
    store: ResultsStore, points: Sequence[tuple[str, Sequence[int]]], metric: str, *, higher_is_better: bool = True
) -> str | None:
    """sweep_stop_reason over stored points: (label, run IDs) each, judged by ``metric`` (the mean of its runs)."""
    figures = [point_figure([run.metrics.get(metric) for run in store.get_runs(list(ids))]) for _, ids in points]
    return sweep_stop_reason([label for label, _ in points], figures, higher_is_better=higher_is_better)


def skipped_note(labels: Sequence[str]) -> str:
    return f"not run (the sweep stopped early): {', '.join(labels)}"
