"""Pure comparisons of stored runs: ratios vs a baseline, what changed, reference tables, normalised sweeps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from mdtui.plan.levels import level_from_name
from mdtui.store.errors import CompareError
from mdtui.store.records import METRICS, MetricInfo, RunRecord, metric_info

# Repeated runs of one fio job differ by a percent or two; smaller changes are not called either way.
DEFAULT_TOLERANCE = 0.02
# Settings that differ between otherwise identical runs without saying anything about them.
IGNORED_SETTINGS = frozenset({"context.source_file", "params.name"})
_SECTIONS = ("preset", "target", "params", "array", "context")


class Verdict(StrEnum):
    BETTER = "better"
    WORSE = "worse"
    SAME = "same"  # within the tolerance
    UNKNOWN = "unknown"  # a figure is missing


def ratio(value: float | None, reference: float | None) -> float | None:
    """value ÷ reference; None when either is missing or the reference is zero."""
    if value is None or reference is None or reference == 0:
        return None
    return value / reference


def verdict(metric: MetricInfo, value: float | None, reference: float | None, tolerance: float) -> Verdict:
    """Whether ``value`` improves on ``reference`` for this metric (higher or lower is better)."""
    if value is None or reference is None:
        return Verdict.UNKNOWN
    if reference == 0:
        if value == 0:
            return Verdict.SAME
        return Verdict.BETTER if metric.higher_is_better else Verdict.WORSE
    change = value / reference - 1
    # The epsilon keeps 102 vs 100 at a 2% tolerance "same" despite 1.02 - 1 rounding above 0.02.
    if abs(change) <= tolerance + 1e-9:
        return Verdict.SAME
    improved = change > 0 if metric.higher_is_better else change < 0
    return Verdict.BETTER if improved else Verdict.WORSE


@dataclass(frozen=True)
class MetricRow:
    """One metric of a comparison: the baseline's value and each candidate's, ratio and verdict."""

    metric: MetricInfo
    baseline: float | None
    values: tuple[float | None, ...]  # one per candidate, in order
    ratios: tuple[float | None, ...]
    verdicts: tuple[Verdict, ...]


@dataclass(frozen=True)
class ConfigDifference:
    """A setting that is not the same in every compared run (dotted key: "array.level", "params.bs")."""

    key: str
    values: tuple[Any, ...]  # one per run, baseline first; None where the run did not record it


@dataclass(frozen=True)
class Comparison:
    baseline: RunRecord
    candidates: tuple[RunRecord, ...]
    differences: tuple[ConfigDifference, ...]
    rows: tuple[MetricRow, ...]
    tolerance: float

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        return (self.baseline, *self.candidates)


def _summary(items: list[str]) -> str:
    """["a", "b", "a"] → "2 × a, 1 × b"; the same disks in another order summarise the same."""
    counts = Counter(items)
    return ", ".join(f"{count} × {item}" for item, count in sorted(counts.items()))


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}", inner, out)
    elif isinstance(value, (list, tuple)):
        # Kept as a list (compared by value): shown as "a, b" in tables and as a JSON list in exports.
        out[prefix] = list(value)
    else:
        out[prefix] = value


def run_settings(run: RunRecord) -> dict[str, Any]:
    """Everything that describes how a run was made, as flat dotted keys."""
    settings: dict[str, Any] = {"preset": run.preset, "target": run.target}
    _flatten("params", run.params, settings)
    array = dict(run.array)
    members = array.pop("members", None)
    _flatten("array", array, settings)
    if isinstance(members, list):
        # Whole member dicts would differ on every serial; what matters is how many, which models, which links.
        disks = [m for m in members if isinstance(m, Mapping) and not m.get("spare")]
        settings["array.members"] = len(disks)
        for field in ("model", "link", "serial"):
            found = [str(m[field]) for m in disks if m.get(field)]
            if found:
                settings[f"array.member_{field}s"] = _summary(found) if field != "serial" else ", ".join(sorted(found))
    _flatten("context", run.context, settings)
    return {key: value for key, value in settings.items() if key not in IGNORED_SETTINGS}


def config_differences(runs: Sequence[RunRecord]) -> tuple[ConfigDifference, ...]:
    """Settings whose value is not the same in all ``runs``, in a stable order (preset, params, array, context)."""
    all_settings = [run_settings(run) for run in runs]
    keys: list[str] = []
    for settings in all_settings:
        keys.extend(key for key in settings if key not in keys)
    # A key only a later run has still belongs with its section, not after the system context.
    keys.sort(key=lambda key: _SECTIONS.index(key.split(".")[0]) if key.split(".")[0] in _SECTIONS else len(_SECTIONS))
    differences = []
    for key in keys:
        values = tuple(settings.get(key) for settings in all_settings)
        if any(value != values[0] for value in values[1:]):
            differences.append(ConfigDifference(key, values))
    return tuple(differences)


def _metrics(names: Sequence[str] | None) -> tuple[MetricInfo, ...]:
    if names is None:
        return METRICS
    try:
        return tuple(metric_info(name) for name in names)
    except ValueError as exc:
        raise CompareError(str(exc)) from None


def in_time_order(runs: Iterable[RunRecord]) -> list[RunRecord]:
    """Oldest first (by start, then ID): the order a before/after comparison reads in."""
    return sorted(runs, key=lambda run: (run.started_at, run.id))


def default_baseline(runs: Iterable[RunRecord]) -> RunRecord:
    """The run the others are compared against when the user chose none: the oldest, so that a ratio above 1
    of a higher-is-better figure means the later run (the change) did better. ValueError when ``runs`` is empty."""
    ordered = in_time_order(runs)
    if not ordered:
        raise ValueError("no runs to pick a baseline from")
    return ordered[0]


TimeRole = Literal["before", "after", "between"]


def time_roles(baseline: RunRecord, candidates: Sequence[RunRecord]) -> tuple[TimeRole, ...]:
    """Each run's place in time, baseline first: a candidate made before or after the baseline; the baseline
    "before" when every other run came after it, "after" when every one came before it, else "between"."""

    def later(run: RunRecord) -> bool:
        return (run.started_at, run.id) > (baseline.started_at, baseline.id)

    others: tuple[TimeRole, ...] = tuple("after" if later(run) else "before" for run in candidates)
    own: TimeRole = (
        "before" if all(r == "after" for r in others) else "after" if all(r == "before" for r in others) else "between"
    )
    return (own, *others)


def compare(
    baseline: RunRecord,
    candidates: Sequence[RunRecord],
    *,
    metrics: Sequence[str] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    skip_empty: bool = True,
) -> Comparison:
    """Each candidate against the baseline, metric by metric.

    ``skip_empty`` drops metrics no run measured or that are zero everywhere (the write side of a
    read-only job), which would only add rows of dashes.
    """
    if not candidates:
        raise CompareError("a comparison needs at least one run besides the baseline")
    rows = []
    for metric in _metrics(metrics):
        base = baseline.metrics.get(metric.name)
        values = tuple(run.metrics.get(metric.name) for run in candidates)
        if skip_empty and not any((base, *values)):
            continue
        rows.append(
            MetricRow(
                metric=metric,
                baseline=base,
                values=values,
                ratios=tuple(ratio(value, base) for value in values),
                verdicts=tuple(verdict(metric, value, base, tolerance) for value in values),
            )
        )
    return Comparison(
        baseline=baseline,
        candidates=tuple(candidates),
        differences=config_differences([baseline, *candidates]),
        rows=tuple(rows),
        tolerance=tolerance,
    )


@dataclass(frozen=True)
class RatioRow:
    run: RunRecord
    value: float | None
    ratios: tuple[float | None, ...]  # one per reference


@dataclass(frozen=True)
class RatioTable:
    """One metric for many runs as ratios of references (finding 4, docs/findings.md: vs single disk, vs RAID0)."""

    metric: MetricInfo
    references: tuple[RunRecord, ...]
    rows: tuple[RatioRow, ...]


def ratio_table(runs: Sequence[RunRecord], references: Sequence[RunRecord], metric: str) -> RatioTable:
    info = _metrics([metric])[0]
    if not references:
        raise CompareError("a ratio table needs at least one reference run")
    reference_values = [ref.metrics.get(info.name) for ref in references]
    rows = []
    for run in runs:
        value = run.metrics.get(info.name)
        rows.append(RatioRow(run, value, tuple(ratio(value, ref) for ref in reference_values)))
    return RatioTable(info, tuple(references), tuple(rows))


def data_disks(run: RunRecord) -> float:
    """Members' worth of data in the run's array; 1 for a run on a raw device (no array recorded)."""
    array = run.array
    if not array:
        return 1.0
    level_name = array.get("level")
    if not level_name:
        raise CompareError(f"run {run.title} records an array without its RAID level; cannot count data disks")
    members = array.get("raid_disks")
    if not members and isinstance(array.get("members"), list):
        members = sum(1 for m in array["members"] if isinstance(m, Mapping) and not m.get("spare"))
    if not members:
        raise CompareError(f"run {run.title} records no member count for its {level_name}; cannot count data disks")
    # mdadm and sysfs spell raid10 layouts "near=2": the level reads either spelling (levels.normalise_layout).
    layout = array.get("layout") if isinstance(array.get("layout"), str) else None
    try:
        return float(level_from_name(str(level_name)).data_disks(int(members), layout))
    except ValueError as exc:
        raise CompareError(f"run {run.title}: {exc}") from None


@dataclass(frozen=True)
class NormalisedRow:
    run: RunRecord
    value: float | None
    data_disks: float
    normalised: float | None  # value ÷ (device speed × data disks)


@dataclass(frozen=True)
class NormalisedTable:
    """A sweep normalised as in finding 5 (docs/findings.md): 1.0 means every data disk ran at the reference's speed."""

    metric: MetricInfo
    device_speed: float  # in the metric's unit
    device_run: RunRecord | None  # the run the speed came from, when it came from one
    rows: tuple[NormalisedRow, ...]
    differences: tuple[ConfigDifference, ...]  # what varies between the rows, to tell them apart


def normalise(
    runs: Sequence[RunRecord],
    device: RunRecord | float,
    *,
    metric: str = "read_bw_bytes_per_s",
    data_disks_by_run: Mapping[int, float] | None = None,
) -> NormalisedTable:
    """Each run's figure ÷ (the baseline device's figure × the run's data disks).

    ``device`` is a run on one raw disk (its own figure for the metric is used) or a speed in the
    metric's unit. ``data_disks_by_run`` overrides the count derived from a run's array configuration.
    """
    info = _metrics([metric])[0]
    if isinstance(device, RunRecord):
        speed = device.metrics.get(info.name)
        if speed is None:
            raise CompareError(f"run {device.title} has no {info.label} figure to normalise by")
        device_run: RunRecord | None = device
    else:
        speed, device_run = float(device), None
    if speed <= 0:
        raise CompareError(f"the baseline device speed must be positive, not {speed:g}")
    overrides = data_disks_by_run or {}
    rows = []
    for run in runs:
        disks = float(overrides[run.id]) if run.id in overrides else data_disks(run)
        value = run.metrics.get(info.name)
        normalised = None if value is None or disks <= 0 else value / (speed * disks)
        rows.append(NormalisedRow(run, value, disks, normalised))
    return NormalisedTable(info, speed, device_run, tuple(rows), config_differences(runs) if len(runs) > 1 else ())
