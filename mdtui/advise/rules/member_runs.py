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
from mdtui.advise.rules.inputs import AdviceInput, disk_of, mb_text, mbps
from mdtui.advise.rules.measured import SLOW_ALONE_RATIO, member_link
from mdtui.advise.rules.members import WEAKEST_LINK_WHY
from mdtui.advise.rules.resync import device_name, resync_run_ids
from mdtui.format import times
from mdtui.model.array import MdArray
from mdtui.sample.dashboard import BUSY_MARGIN_PERCENT, BUSY_MIN_PERCENT, MemberLoad, standouts
from mdtui.store.records import RunRecord, RunStatus

WEAKEST_LINK_PRESET = "weakest-link"
# The job options that must agree for two runs to be "the same job"; targets and offsets may differ.
SAME_JOB_KEYS = ("tool", "rw", "bs", "iodepth", "numjobs", "ioengine", "direct", "step")
# An array moving less than this in a stored sample was idle then: its members' busy% says nothing.
LOADED_BYTES_PER_S = 10e6


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


def _same_job_groups(inp: AdviceInput, disks: dict[str, str]) -> list[tuple[str, list[MemberRun]]]:
    """Complete runs of one job on the members, newest per member, grouped by job; "read"/"write" with each."""
    during_resync = resync_run_ids(inp)
    groups: dict[tuple[Any, ...], dict[str, MemberRun]] = {}  # job key + direction → disk → its newest run
    for run in sorted(inp.runs, key=lambda r: r.id):
        if run.status is not RunStatus.COMPLETE or run.preset == WEAKEST_LINK_PRESET or run.id in during_resync:
            continue
        target = device_name(run.target or "")
        disk = disk_of(inp.inventory, target)
        name = disk.name if disk is not None else target
        if name not in disks or (figure := _figure(run)) is None:
            continue
        groups.setdefault((*_job_key(run), figure[0]), {})[name] = MemberRun(name, figure[1], run)  # newest wins
    return [(key[-1], list(by_disk.values())) for key, by_disk in groups.items() if len(by_disk) >= 2]


def rule_same_job_on_members(inp: AdviceInput) -> list[Finding]:
    """The same job run on each member of an array, one member clearly slower than the others."""
    if inp.inventory is None or not inp.runs:
        return []
    findings = []
    covered = _weakest_link_arrays(inp)
    for array in inp.inventory.arrays:
        if array.name in covered:
            continue  # the weakest-link run of this array speaks (rules/measured.py)
        disks = _member_disks(inp, array)
        best: tuple[float, str, list[MemberRun], list[MemberRun], float] | None = None
        for direction, members in _same_job_groups(inp, disks):
            slow = [
                m for m in members
                if m.bytes_per_s < SLOW_ALONE_RATIO * statistics.median(o.bytes_per_s for o in members if o is not m)
            ]  # fmt: skip
            peers = [m for m in members if m not in slow]
            if not slow or not peers:
                continue
            median = statistics.median(m.bytes_per_s for m in peers)
            ratio = min(m.bytes_per_s for m in slow) / median
            if best is None or ratio < best[0]:
                best = (ratio, direction, slow, members, median)
        if best is None:
            continue
        ratio, direction, slow, members, median = best
        findings.append(_same_job_finding(inp, array, direction, slow, members, median, len(disks)))
    return findings


def _same_job_finding(
    inp: AdviceInput,
    array: MdArray,
    direction: str,
    slow: list[MemberRun],
    members: list[MemberRun],
    median: float,
    n: int,
) -> Finding:
    slowest = min(slow, key=lambda m: m.bytes_per_s)
    names = ", ".join(m.disk for m in slow)
    one = len(slow) == 1
    peers = [d for m in members if m not in slow and (d := disk_of(inp.inventory, m.disk)) is not None]
    links = [member_link(disk_of(inp.inventory, m.disk), peers) for m in slow]
    link_explains = bool(links) and all(explains for _, explains in links)
    texts = "; ".join(text for text, _ in links if text) or None
    pace, possible = slowest.bytes_per_s * n, median * n
    job = slowest.run.preset + (f" ({slowest.run.params['step']})" if slowest.run.params.get("step") else "")
    checks = f"SMART health, temperature and media errors (smartctl -a /dev/{slowest.disk}), firmware"
    ruled_out = [] if texts is None or link_explains else [f"the link: {texts}"]
    return Finding(
        id=f"measured-slow-member:{array.name}",
        severity=Severity.WARNING,
        title=(
            f"{names} {direction}{'s' if one else ''} {mb_text(slowest.bytes_per_s)} with the same job as "
            f"{'its' if one else 'their'} peers, {times(slowest.bytes_per_s / median)} their median "
            f"({mb_text(median)}): {array.name} can move at most about {mb_text(pace)} "
            f"(peers allow {mb_text(possible)})"
        ),
        evidence=(
            Evidence("job", job),
            Evidence("runs", ", ".join(f"#{m.run.id}" for m in sorted(members, key=lambda m: m.run.id))),
            *(Evidence(f"{m.disk} {direction}", mbps(m.bytes_per_s), "MB/s") for m in members),
            Evidence("median of the others", mbps(median), "MB/s"),
            Evidence(f"slowest × {n}", mbps(pace), "MB/s"),
            Evidence(f"peers × {n}", mbps(possible), "MB/s"),
        ),
        why=WEAKEST_LINK_WHY,
        what_to_do=(
            f"Fix the link first ({texts}): slot, cable, backplane; then check {checks}."
            if link_explains and texts
            else f"Check {names}: {checks}, then link, slot and cable. Then run the weakest-link preset on "
            f"{array.name}: it measures each member alone and the array, and shows what the slow one costs."
        ),
        experiment="weakest-link",
        ruled_out=tuple(ruled_out),
        explains=(
            f"slow-member:{array.name}",
            *(f"link-downgraded:{m.disk}" for m in slow),
            *(f"busy-member:{array.name}:{m.disk}" for m in slow),
        ),
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


def _live_standouts(inp: AdviceInput) -> dict[tuple[str, str], tuple[list[str], int]]:
    """(array, member) → (why it stood out in each live sample, samples with the array loaded)."""
    counts: dict[tuple[str, str], list[str]] = {}
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
    return {
        key: (reasons, loaded_by_array[key[0]])
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
        if (array, member) in live:
            reasons, loaded = live[array, member]
            seen.append(reasons[-1])
            evidence += [
                Evidence("live samples where it stood out", len(reasons)),
                Evidence(f"live samples with {array} loaded", loaded),
                Evidence("latest", reasons[-1]),
            ]
        if (array, member) in stored:
            s = stored[array, member]
            seen.append(f"busy {s.busy:.0f}% vs {s.peers_busy:.0f}% for its peers in run #{s.run_id}")
            evidence += [
                Evidence("run", f"#{s.run_id}"),
                Evidence("samples of the run where it stood out", s.samples),
                Evidence(f"samples of the run with {array} loaded", s.loaded),
                Evidence(f"{member} busy (median)", round(s.busy, 1), "%"),
                Evidence("its peers busy (median)", round(s.peers_busy, 1), "%"),
            ]
        findings.append(
            Finding(
                id=f"busy-member:{array}:{member}",
                severity=Severity.WARNING,
                title=f"{member} stands out while {array} works ({'; '.join(seen)}): it sets the array's pace",
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
