"""Measured slow members from stored runs other than weakest-link: the same job run on each member, and the
per-device time series every run on an array stores.

Both name a slow member whatever makes it slow, like rules/measured.py; a weakest-link run of the same array,
when there is one, speaks instead (it also measures the array itself).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, disk_of, level_layout, mb_text, mbps
from mdtui.advise.rules.measured import stripe_of
from mdtui.advise.rules.members import WEAKEST_LINK_WHY
from mdtui.advise.rules.resync import device_name, resync_run_ids
from mdtui.advise.rules.spread import own_figures, ratios_text, spread_title
from mdtui.model.array import MdArray
from mdtui.plan.member_verdict import Judged, judge, links_of, slower_than_peers
from mdtui.sample.members import BUSY_MARGIN_PERCENT, BUSY_MIN_PERCENT, MemberLoad, standouts
from mdtui.store.records import RunRecord, RunStatus

WEAKEST_LINK_PRESET = "weakest-link"
# The job options that must agree for two runs to be "the same job"; targets and offsets may differ.
SAME_JOB_KEYS = ("tool", "rw", "bs", "iodepth", "numjobs", "ioengine", "direct", "step")
# An array moving less than this in a stored sample was idle then: its members' busy% says nothing.
LOADED_BYTES_PER_S = 10e6
# A member busy this share of the time has no headroom: the array's stripes wait on it. Below it, a member
# busier than its peers (50% against 30%, a drive beside a busy neighbour) still keeps up with them.
SATURATED_PERCENT = 90.0


@dataclass(frozen=True)
class MemberRun:
    disk: str  # the member's whole disk, "nvme0n1"
    bytes_per_s: float
    run: RunRecord


def _job_key(run: RunRecord) -> tuple[Any, ...]:
    return (run.preset, *(str(run.params.get(key)) for key in SAME_JOB_KEYS))


def _figure(run: RunRecord) -> tuple[str, float] | None:
    """("read"/"write", bytes/s) of a run: the direction it moved most."""
    read, write = run.metrics.read_bw_bytes_per_s or 0.0, run.metrics.write_bw_bytes_per_s or 0.0
    if read <= 0 and write <= 0:
        return None
    return ("read", read) if read >= write else ("write", write)


def _member_disks(inp: AdviceInput, array: MdArray) -> dict[str, str]:
    """Whole disk name → member name, for the active members of an array."""
    found = {}
    for member in array.members:
        if member.spare or member.faulty:
            continue
        disk = disk_of(inp.inventory, member.name)
        found[disk.name if disk is not None else member.name] = member.name
    return found


def _weakest_link_arrays(inp: AdviceInput) -> set[str]:
    return {device_name(f.array) for f in inp.weakest_link}


def _same_job_groups(inp: AdviceInput, disks: dict[str, str]) -> list[tuple[str, dict[str, list[MemberRun]]]]:
    """Complete runs of one job on the members grouped by job and direction ("read"/"write"): disk → its runs,
    oldest first (the newest is the member's figure, the others its repeats)."""
    during_resync = resync_run_ids(inp)
    groups: dict[tuple[Any, ...], dict[str, list[MemberRun]]] = {}
    for run in sorted(inp.runs, key=lambda r: r.id):
        if run.status is not RunStatus.COMPLETE or run.preset == WEAKEST_LINK_PRESET or run.id in during_resync:
            continue
        target = device_name(run.target or "")
        disk = disk_of(inp.inventory, target)
        name = disk.name if disk is not None else target
        if name not in disks or (figure := _figure(run)) is None:
            continue
        groups.setdefault((*_job_key(run), figure[0]), {}).setdefault(name, []).append(MemberRun(name, figure[1], run))
    return [(key[-1], by_disk) for key, by_disk in groups.items() if len(by_disk) >= 2]


def rule_same_job_on_members(inp: AdviceInput) -> list[Finding]:
    """The same job run on each member of an array, one member clearly slower than the others: named when the
    gap is beyond the run-to-run scatter (or its link explains it), otherwise spread with a repeat offered."""
    if inp.inventory is None or not inp.runs:
        return []
    findings = []
    covered = _weakest_link_arrays(inp)
    for array in inp.inventory.arrays:
        if array.name in covered:
            continue  # the weakest-link run of this array speaks (rules/measured.py)
        disks = _member_disks(inp, array)
        resolved = level_layout(array)
        stripe = stripe_of(inp, resolved[0].name if resolved else None, len(disks), list(disks))
        best: tuple[float, str, Judged, list[MemberRun], dict[str, tuple[str | None, bool]]] | None = None
        for direction, runs in _same_job_groups(inp, disks):
            newest = {name: member_runs[-1] for name, member_runs in runs.items()}
            figures = {name: run.bytes_per_s for name, run in newest.items()}
            slower = slower_than_peers(figures)
            if not slower:
                continue
            links = links_of(figures, {name: disk_of(inp.inventory, name) for name in figures})
            judged = judge(
                figures,
                stripe,
                array=None,
                repeats={name: [(m.bytes_per_s, m.run.id) for m in member_runs] for name, member_runs in runs.items()},
                link_explains={name for name, (_, explains) in links.items() if explains},
            )
            assert judged is not None  # the same figures, only sorted with their repeats
            ratio = min(judged.ratio(name) for name in slower)
            if best is None or ratio < best[0]:
                best = (ratio, direction, judged, list(newest.values()), links)
        if best is None:
            continue
        _, direction, judged, members, links = best
        if judged.named:
            findings.append(_same_job_finding(array, direction, judged, members, links))
        if judged.unsure:
            findings.append(_same_job_spread(array, direction, judged, members))
    return findings


def _job_text(run: RunRecord) -> str:
    return run.preset + (f" ({run.params['step']})" if run.params.get("step") else "")


def _same_job_finding(
    array: MdArray,
    direction: str,
    judged: Judged,
    members: list[MemberRun],
    links: dict[str, tuple[str | None, bool]],
) -> Finding:
    named = judged.named
    slowest = min(named, key=lambda name: judged.figures[name])
    named_links = [links[name] for name in named if name in links]
    link_explains = bool(named_links) and all(explains for _, explains in named_links)
    texts = "; ".join(text for text, _ in named_links if text) or None
    factor = judged.stripe.factor_text
    pace, possible = judged.pace(slowest), judged.stripe.pace(judged.peers)
    run = next(m.run for m in members if m.disk == slowest)
    checks = f"SMART health, temperature and media errors (smartctl -a /dev/{slowest}), firmware"
    ruled_out = [] if texts is None or link_explains else [f"the link: {texts}"]
    one = len(named) == 1
    return Finding(
        id=f"measured-slow-member:{array.name}",
        severity=Severity.WARNING,
        title=(
            f"{own_figures(judged, named, direction)} with the same job as {'its' if one else 'their'} peers, "
            f"{ratios_text(judged, named, 'their median')}"
            f": {array.name} can move at most about {mb_text(pace)} (peers allow {mb_text(possible)})"
        ),
        evidence=(
            Evidence("job", _job_text(run)),
            Evidence("runs", ", ".join(f"#{m.run.id}" for m in sorted(members, key=lambda m: m.run.id))),
            *(Evidence(f"{m.disk} {direction}", mbps(m.bytes_per_s), "MB/s") for m in members),
            Evidence("median of the others", mbps(judged.peers), "MB/s"),
            Evidence(f"slowest × {factor}", mbps(pace), "MB/s"),
            Evidence(f"peers × {factor}", mbps(possible), "MB/s"),
            Evidence("run-to-run scatter", judged.scatter_text(named)),
        ),
        why=WEAKEST_LINK_WHY,
        what_to_do=(
            f"Fix the link first ({texts}): slot, cable, backplane; then check {checks}."
            if link_explains and texts
            else f"Check {', '.join(named)}: {checks}, then link, slot and cable. Then run the weakest-link preset "
            f"on {array.name}: it measures each member alone and the array, and shows what the slow one costs."
        ),
        experiment="weakest-link",
        ruled_out=tuple(ruled_out),
        explains=(
            f"slow-member:{array.name}",
            *(f"link-downgraded:{name}" for name in named),
            *(f"busy-member:{array.name}:{name}" for name in named),
        ),
        members=named,
    )


def _same_job_spread(array: MdArray, direction: str, judged: Judged, members: list[MemberRun]) -> Finding:
    run = members[0].run
    return Finding(
        id=f"member-spread:{array.name}",
        severity=Severity.INFO,
        title=spread_title(judged, None, f"{direction} with the same job"),
        evidence=(
            Evidence("job", _job_text(run)),
            Evidence("runs", ", ".join(f"#{m.run.id}" for m in sorted(members, key=lambda m: m.run.id))),
            *(Evidence(f"{m.disk} {direction}", mbps(m.bytes_per_s), "MB/s") for m in members),
            Evidence("median of the others", mbps(judged.peers), "MB/s"),
            Evidence("run-to-run scatter", judged.scatter_text(judged.unsure)),
        ),
        why=WEAKEST_LINK_WHY,
        what_to_do=(
            f"Run the same job on {', '.join(judged.unsure)} again (or the weakest-link preset on {array.name}, which "
            "also measures the array): a gap within the run-to-run scatter is not a verdict."
        ),
        experiment="weakest-link",
    )


@dataclass(frozen=True)
class StoredStandout:
    """A member that stood out in the time series a run on its array stored."""

    array: str
    member: str
    run_id: int
    samples: int  # samples where it stood out
    loaded: int  # samples where the array moved data
    busy: float  # its median busy% when it stood out
    peers_busy: float  # the peers' median busy% then


def stored_standouts(inp: AdviceInput) -> list[StoredStandout]:
    """Members busier than their peers in most loaded samples of the newest complete run on each array."""
    during_resync = resync_run_ids(inp)
    newest: dict[str, RunRecord] = {}
    for run in sorted(inp.runs, key=lambda r: r.id):
        members = run.array.get("members") if run.array else None
        if run.status is RunStatus.COMPLETE and members and run.samples and run.id not in during_resync:
            newest[device_name(run.target or "")] = run
    found = []
    for array, run in sorted(newest.items()):
        names = [m.get("name") for m in run.array.get("members", []) if m.get("name") and not m.get("spare")]
        found.extend(_standouts_in(array, run, [n for n in names if isinstance(n, str)]))
    return found


def _standouts_in(array: str, run: RunRecord, names: Sequence[str]) -> list[StoredStandout]:
    if len(names) < 2:
        return []
    loaded = 0
    hits: dict[str, list[tuple[float, float]]] = {}
    for point in run.samples:
        values = point.values
        moved = values.get(f"{array}.read_bytes_per_s", 0.0) + values.get(f"{array}.write_bytes_per_s", 0.0)
        busy = {n: values[f"{n}.util_pct"] for n in names if f"{n}.util_pct" in values}
        if moved < LOADED_BYTES_PER_S or len(busy) < 2:
            continue
        loaded += 1
        for name, value in busy.items():
            median = statistics.median(v for other, v in busy.items() if other != name)
            if value >= BUSY_MIN_PERCENT and value >= median + BUSY_MARGIN_PERCENT:
                hits.setdefault(name, []).append((value, median))
    return [
        StoredStandout(
            array=array,
            member=name,
            run_id=run.id,
            samples=len(pairs),
            loaded=loaded,
            busy=statistics.median(v for v, _ in pairs),
            peers_busy=statistics.median(m for _, m in pairs),
        )
        for name, pairs in sorted(hits.items())
        if len(pairs) * 2 >= loaded  # in most loaded samples, not once
    ]


def _live_standouts(inp: AdviceInput) -> dict[tuple[str, str], tuple[list[str], int, float | None]]:
    """(array, member) → (why it stood out in each live sample, samples with the array loaded, its median busy%
    in those samples, None when not measured)."""
    counts: dict[tuple[str, str], list[str]] = {}
    busy: dict[tuple[str, str], list[float]] = {}
    loaded_by_array: dict[str, int] = {}
    for snapshot in inp.snapshots:
        for array in snapshot.arrays:
            total = snapshot.device(array.name)
            moved = (total.read_bytes_per_s or 0.0) + (total.write_bytes_per_s or 0.0) if total else 0.0
            if moved < LOADED_BYTES_PER_S or array.sync is not None:
                continue
            loaded_by_array[array.name] = loaded_by_array.get(array.name, 0) + 1
            members = [MemberLoad(m.name, "member", snapshot.device(m.name)) for m in array.members if not m.spare]
            for name, why in standouts(members).items():
                counts.setdefault((array.name, name), []).append(why)
                rates = snapshot.device(name)
                if rates is not None and rates.utilisation_percent is not None:
                    busy.setdefault((array.name, name), []).append(rates.utilisation_percent)
    return {
        key: (reasons, loaded_by_array[key[0]], statistics.median(busy[key]) if busy.get(key) else None)
        for key, reasons in counts.items()
        if len(reasons) * 2 >= loaded_by_array[key[0]]  # in most loaded samples, not once
    }


def rule_busy_member(inp: AdviceInput) -> list[Finding]:
    """A member that stands out (busy or slow per request) from its peers while its array works: sampled live,
    or in the per-device time series of the newest run stored on that array. Both sources are one finding."""
    live = _live_standouts(inp)
    stored = {(s.array, s.member): s for s in stored_standouts(inp)}
    findings = []
    for array, member in sorted({*live, *stored}):
        evidence: list[Evidence] = []
        seen = []
        busiest: list[float] = []
        if (array, member) in live:
            reasons, loaded, live_busy = live[array, member]
            seen.append(reasons[-1])
            if live_busy is not None:
                busiest.append(live_busy)
            evidence += [
                Evidence("live samples where it stood out", len(reasons)),
                Evidence(f"live samples with {array} loaded", loaded),
                Evidence("latest", reasons[-1]),
            ]
        if (array, member) in stored:
            s = stored[array, member]
            seen.append(f"busy {s.busy:.0f}% vs {s.peers_busy:.0f}% for its peers in run #{s.run_id}")
            busiest.append(s.busy)
            evidence += [
                Evidence("run", f"#{s.run_id}"),
                Evidence("samples of the run where it stood out", s.samples),
                Evidence(f"samples of the run with {array} loaded", s.loaded),
                Evidence(f"{member} busy (median)", round(s.busy, 1), "%"),
                Evidence("its peers busy (median)", round(s.peers_busy, 1), "%"),
            ]
        # Busier than its peers is spread until the member has no headroom left: only then do the stripes wait
        # on it. A member slow per request with no busy% measured keeps the warning (each request waits on it).
        headroom = bool(busiest) and max(busiest) < SATURATED_PERCENT
        if headroom:
            evidence.append(Evidence(f"{member} busy at most", round(max(busiest), 1), "%"))
        findings.append(
            Finding(
                id=f"busy-member:{array}:{member}",
                severity=Severity.INFO if headroom else Severity.WARNING,
                title=(
                    f"{member} stands out while {array} works ({'; '.join(seen)}), but at {max(busiest):.0f}% busy "
                    f"it has headroom: spread, not what sets {array}'s pace"
                    if headroom
                    else f"{member} stands out while {array} works ({'; '.join(seen)}): it sets the array's pace"
                ),
                evidence=tuple(evidence),
                why=WEAKEST_LINK_WHY,
                what_to_do=(
                    f"Measure it: the weakest-link preset reads each member of {array} alone. Then check {member}'s "
                    f"SMART health and temperature (smartctl -a /dev/{member}), firmware, link and slot."
                ),
                experiment="weakest-link",
            )
        )
    return findings
