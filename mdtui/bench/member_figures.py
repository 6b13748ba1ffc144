"""Each member's figures as the member-matrix preset stored them, read back for predictions, with their age."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mdtui.execute.presets import MEMBER_MATRIX_TESTS
from mdtui.model.disk import Disk
from mdtui.plan.figures import MEASURED, MemberFigures
from mdtui.plan.forecast import FORECAST_NAMES, CeilingsChoice, MemberSource, unmeasured_source
from mdtui.plan.member_bounds import unmeasured_figures, with_unmeasured
from mdtui.store.calibration import host_ceilings
from mdtui.store.errors import StoreError, StoreMissingError
from mdtui.store.records import RunRecord, RunStatus
from mdtui.store.runs import ResultsStore

log = logging.getLogger(__name__)

MEMBER_MATRIX_PRESET = "member-matrix"
# Step label (as stored in params["step"]) → (MemberFigures field, stored metric, scale to the field's unit).
_STEP_FIGURES: dict[str, tuple[str, str, float]] = {
    MEMBER_MATRIX_TESTS[0][0]: ("seq_read_bytes_per_s", "read_bw_bytes_per_s", 1.0),
    MEMBER_MATRIX_TESTS[1][0]: ("seq_write_bytes_per_s", "write_bw_bytes_per_s", 1.0),
    MEMBER_MATRIX_TESTS[2][0]: ("rand_read_iops", "read_iops", 1.0),
    MEMBER_MATRIX_TESTS[3][0]: ("rand_write_iops", "write_iops", 1.0),
    MEMBER_MATRIX_TESTS[4][0]: ("q1_read_latency_s", "read_lat_mean_ns", 1e-9),
    MEMBER_MATRIX_TESTS[5][0]: ("q1_write_latency_s", "write_lat_mean_ns", 1e-9),
}
# The figures a member must have for a prediction (the forecast's workloads); the Q1 write latency came later
# to the member matrix, so a member measured before it still predicts, its Q1 write figure unknown.
FIGURE_NAMES = FORECAST_NAMES


def device_name(path: str) -> str:
    """/dev/sdb → sdb; a file keeps its last path component."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def measure_hint(device: str) -> str:
    return f"mdtui bench --preset member-matrix --target /dev/{device}"


def age_text(measured_at: datetime | None, now: datetime | None = None) -> str:
    """The age of a figure: "measured 3 d ago", "measured 5 h ago", "measured just now"."""
    if measured_at is None:
        return "not measured"
    seconds = max(0.0, ((now or datetime.now(UTC)) - measured_at).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"measured {int(seconds // size)} {unit} ago"
    return "measured just now"


@dataclass(frozen=True)
class StoredMember:
    """One member's latest figure of each workload; ``missing`` names the workloads never measured."""

    device: str
    figures: MemberFigures
    measured_at: datetime | None  # the oldest figure used: the whole set is at least that old
    missing: tuple[str, ...]
    run_ids: tuple[int, ...]

    def age(self, now: datetime | None = None) -> str:
        return age_text(self.measured_at, now)

    def missing_text(self) -> str:
        """Why this member cannot be predicted from, and how to measure it; empty when nothing is missing."""
        if not self.missing:
            return ""
        if len(self.missing) == len(FIGURE_NAMES):
            return f"{self.device} has no member figures: measure it alone with `{measure_hint(self.device)}`"
        what = ", ".join(FIGURE_NAMES[name] for name in self.missing)
        return f"{self.device} has no measured {what}: measure it alone with `{measure_hint(self.device)}`"


def stored_member(runs: Sequence[RunRecord], device: str, rotational: bool | None = None) -> StoredMember:
    """The newest complete member-matrix figure of each workload measured on ``device``."""
    name = device_name(device)
    latest: dict[str, RunRecord] = {}
    for run in runs:
        step = run.params.get("step")
        if (
            run.preset != MEMBER_MATRIX_PRESET
            or run.status is not RunStatus.COMPLETE
            or not isinstance(step, str)
            or step not in _STEP_FIGURES
            or device_name(run.target) != name
        ):
            continue
        field_name, metric, _ = _STEP_FIGURES[step]
        if run.metrics.get(metric) is None:
            continue
        if field_name not in latest or run.started_at > latest[field_name].started_at:
            latest[field_name] = run
    values: dict[str, float] = {}
    for field_name, run in latest.items():
        _, metric, scale = next(v for v in _STEP_FIGURES.values() if v[0] == field_name)
        value = run.metrics.get(metric)
        if value is not None:
            values[field_name] = value * scale
    figures = MemberFigures(
        seq_read_bytes_per_s=values.get("seq_read_bytes_per_s"),
        seq_write_bytes_per_s=values.get("seq_write_bytes_per_s"),
        rand_read_iops=values.get("rand_read_iops"),
        rand_write_iops=values.get("rand_write_iops"),
        q1_read_latency_s=values.get("q1_read_latency_s"),
        rotational=rotational,
        basis=MEASURED,
        q1_write_latency_s=values.get("q1_write_latency_s"),
    )
    missing = tuple(name for name in FIGURE_NAMES if name not in values)
    oldest = min((run.started_at for run in latest.values()), default=None)
    return StoredMember(name, figures, oldest, missing, tuple(sorted(run.id for run in latest.values())))


def link_figures(disk: Disk) -> MemberFigures:
    """A member nobody measured: what bounds it, as the model decides it once (member_bounds.unmeasured_figures: its
    link where the link limits the device, else a platter's figure; its kind of disk's field figures for random
    I/O and latency); the sequential figures stay unknown without either."""
    link = disk.link
    bandwidth = link.bandwidth_bytes_per_s if link is not None else None
    return unmeasured_figures(bandwidth, disk.rotational, link.kind if link is not None else None)


def sequential_figures(runs: Sequence[RunRecord], name: str, disk: Disk | None) -> MemberFigures | None:
    """A member's sequential read and write for the sync-time model, as member_sources gives them to predict: the
    member-matrix's stored figures, each gap filled from its link (``link_figures``, with_unmeasured); None when
    a sequential figure stays unknown.

    ``name`` is the device the figures were stored under (the member, "sdb1", or its disk); ``disk`` the whole
    disk behind it, whose figures and link stand in."""
    stored = stored_member(runs, name, disk.rotational if disk is not None else None)
    if _sequential_known(stored.figures):
        return stored.figures
    if disk is not None and disk.name != device_name(name):
        whole = stored_member(runs, disk.name, disk.rotational)
        if _sequential_known(whole.figures):
            return whole.figures
    if disk is None:
        return None
    bound = link_figures(disk)
    figures = with_unmeasured(stored.figures, bound) if stored.run_ids else bound
    return figures if _sequential_known(figures) else None


def _sequential_known(figures: MemberFigures) -> bool:
    return figures.seq_read_bytes_per_s is not None and figures.seq_write_bytes_per_s is not None


def stored_members(
    runs: Sequence[RunRecord], devices: Sequence[str], rotational: Sequence[bool | None] | None = None
) -> list[StoredMember]:
    flags = list(rotational) if rotational is not None else [None] * len(devices)
    return [stored_member(runs, device, flag) for device, flag in zip(devices, flags, strict=True)]


def load_member_runs(db: str | None) -> list[RunRecord]:
    """Every stored member-matrix run (a listing, no samples); none when there is no database yet."""
    try:
        with ResultsStore(db, create=False) as store:
            return [run for run in store.list_runs() if run.preset == MEMBER_MATRIX_PRESET]
    except StoreMissingError:
        return []


def stored_member_runs(db: str | Path | None) -> list[RunRecord]:
    """load_member_runs for a prediction shown beside something else (the app's forecasts, plans and tables): a
    database that cannot be read leaves the prediction without member figures, never the screen broken."""
    try:
        return load_member_runs(str(db) if db is not None else None)
    except StoreError as exc:
        log.warning("no stored member figures: %s", exc)
        return []


def member_sources(
    runs: Sequence[RunRecord], disks: Sequence[Disk], md: CeilingsChoice | None = None
) -> list[MemberSource]:
    """Each planned member's stored figures for the model; a member not (fully) measured gets what bounds it
    (forecast.unmeasured_source: its link, or a hard disk's platter) and says how to measure it. md's ceilings
    are this host's calibration when there is one for it (store.calibration), else the field's."""
    choice = md if md is not None else host_ceilings()
    sources = []
    for disk in disks:
        stored = stored_member(runs, disk.name, disk.rotational)
        if stored.missing:
            sources.append(
                unmeasured_source(
                    disk.name,
                    disk.link,
                    disk.rotational,
                    missing=stored.missing_text(),
                    never_measured=not stored.run_ids,
                    md=choice,
                    stored=stored.figures if stored.run_ids else None,
                    stored_note=stored.age(),
                )
            )
        else:
            sources.append(MemberSource(disk.name, stored.figures, stored.age(), md=choice))
    return sources
