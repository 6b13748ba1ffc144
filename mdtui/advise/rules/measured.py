"""Rules from what was measured: a member slow alone in a weakest-link run (busy members, and the same job
on each member, are in rules/member_runs.py).

These name a slow member whatever makes it slow (a worn or hot SSD, an SMR disk, a failing drive, a busy
HBA, a bad link): the figures, not the link speeds, decide. A link that explains the figure is folded in.
"""

from __future__ import annotations

import statistics

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, MemberAlone, WeakestLinkFigures, disk_of, mb_text, mbps
from mdtui.advise.rules.members import CRITICAL_COST_FRACTION, WEAKEST_LINK_WHY
from mdtui.advise.rules.resync import device_name, resync_run_ids
from mdtui.format import times
from mdtui.model.disk import Disk

# A member reading under this share of its peers' median alone is slow. The field's case (finding 1) was
# 832 against ~1650 MB/s, 0.50; members of one model differ by up to ~25% in the lab, so 0.6 keeps that
# quiet while catching a drive at half speed.
SLOW_ALONE_RATIO = 0.6
# The array "runs at its slowest member's pace" when it read within ±15% of slowest × N.
PACE_TOLERANCE = 0.15


def member_link(disk: Disk | None, peers: list[Disk]) -> tuple[str | None, bool]:
    """What a member's link says, and whether it explains a slow figure (a downgrade or a slower link)."""
    if disk is None or disk.link is None:
        return None, False
    link = disk.link
    mine = link.bandwidth_bytes_per_s
    theirs = [p.link.bandwidth_bytes_per_s for p in peers if p.link is not None and p.link.bandwidth_bytes_per_s]
    slower = mine is not None and bool(theirs) and mine < 0.8 * statistics.median(theirs)
    if link.downgraded or slower:
        return f"{disk.name}'s link trained at {link.describe_current()} (max {link.describe_max()})", True
    return f"{disk.name}'s link ({link.describe_current()}) is like its peers'", False


def measured_slow_members(figures: WeakestLinkFigures) -> tuple[tuple[MemberAlone, ...], float] | None:
    """Members that read clearly slower alone than the median of the others, and the median of the rest."""
    if len(figures.alone) < 2:
        return None
    slow = tuple(
        member
        for member in figures.alone
        if (others := [m.read_bytes_per_s for m in figures.alone if m is not member])
        and member.read_bytes_per_s < SLOW_ALONE_RATIO * statistics.median(others)
    )
    peers = [m.read_bytes_per_s for m in figures.alone if m not in slow]
    if not slow or not peers or statistics.median(peers) <= 0:
        return None
    return slow, statistics.median(peers)


def runs_at_slowest_pace(figures: WeakestLinkFigures) -> bool:
    """Whether slowest × N accounts for the array's figure (within ±15%)."""
    bound = figures.slowest_times_n_bytes_per_s
    return bool(bound) and abs(figures.array_bytes_per_s / bound - 1) <= PACE_TOLERANCE  # type: ignore[operator]


def rule_measured_slow_member(inp: AdviceInput) -> list[Finding]:
    """A member slow alone in a weakest-link run: who, measured how, against whom, what it costs the array."""
    findings = []
    seen: set[str] = set()
    during_resync = resync_run_ids(inp)
    for figures in sorted(inp.weakest_link, key=lambda f: -f.run_id):  # the newest run per array speaks
        array = device_name(figures.array)
        if array in seen:
            continue
        seen.add(array)
        ids = {figures.run_id, *(m.run_id for m in figures.alone)}
        if ids & during_resync:
            continue  # a resync explains these figures before anything else (rules/resync.py)
        found = measured_slow_members(figures)
        if found is None:
            continue
        slow_members, median = found
        slow = min(slow_members, key=lambda m: m.read_bytes_per_s)
        names = ", ".join(m.name for m in slow_members)
        n = len(figures.alone)
        pace, possible = slow.read_bytes_per_s * n, median * n
        cost = 1 - pace / possible
        others = [m for m in figures.alone if m not in slow_members]
        peers = [d for m in others if (d := disk_of(inp.inventory, m.name)) is not None]
        links = [member_link(disk_of(inp.inventory, m.name), peers) for m in slow_members]
        link_explains = bool(links) and all(explains for _, explains in links)
        link_text = "; ".join(text for text, _ in links if text) or None
        at_pace = runs_at_slowest_pace(figures)
        if figures.array_bytes_per_s > (1 + PACE_TOLERANCE) * pace:
            # The array itself read more than these members alone would allow: their figures were not what
            # limits it (a step disturbed by other load), so the array's own figure rules the claim out.
            continue
        # Far below its pace the array is held by something else first (too few jobs in flight): then the
        # slow member is worth knowing but not the cause of the figure, and the parallelism finding leads.
        below_pace = not at_pace
        run_ids = [m.run_id for m in figures.alone]
        if figures.together_run_id is not None:
            run_ids.append(figures.together_run_id)
        run_ids.append(figures.run_id)
        evidence = [
            Evidence("runs", ", ".join(f"#{i}" for i in run_ids)),
            *(Evidence(f"{m.name} alone", mbps(m.read_bytes_per_s), "MB/s") for m in figures.alone),
            Evidence("median of the others alone", mbps(median), "MB/s"),
            Evidence(f"slowest × {n}", mbps(pace), "MB/s"),
            Evidence(f"{array} read", mbps(figures.array_bytes_per_s), "MB/s"),
            Evidence(f"peers × {n}", mbps(possible), "MB/s"),
            Evidence("throughput lost", round(cost * 100, 1), "%"),
        ]
        ruled_out = []
        if at_pace:
            ruled_out.append(
                f"too little parallelism: {array} read {times(figures.array_bytes_per_s / pace)} slowest × {n}, "
                "so more jobs would not raise it"
            )
        if link_text is not None and not link_explains:
            ruled_out.append(f"the link: {link_text}")
        one = len(slow_members) == 1
        title = (
            f"{names} read{'s' if one else ''} {mb_text(slow.read_bytes_per_s)} alone, "
            f"{times(slow.read_bytes_per_s / median)} {'its' if one else 'their'} peers ({mb_text(median)})"
        )
        title += (
            f": {array} runs at {'its' if one else 'their'} pace ({mb_text(figures.array_bytes_per_s)} = "
            f"{times(figures.array_bytes_per_s / pace)} slowest × {n}; peers allow {mb_text(possible)})"
            if at_pace
            else f": {array} could read at most {mb_text(pace)} (peers allow {mb_text(possible)}), but read only "
            f"{mb_text(figures.array_bytes_per_s)}: something else holds it first"
        )
        checks = f"SMART health, temperature and media errors (smartctl -a /dev/{slow.name}), firmware"
        what = (
            f"Fix the link first ({link_text}): slot, cable, backplane; then check {checks}."
            if link_explains and link_text
            else f"Check {names}: {checks}, then link, slot and cable. Replace or leave out what is slow in "
            f"{array}; run the weakest-link preset again to prove the fix."
        )
        findings.append(
            Finding(
                id=f"measured-slow-member:{array}",
                severity=(
                    Severity.INFO
                    if below_pace
                    else Severity.CRITICAL
                    if cost >= CRITICAL_COST_FRACTION
                    else Severity.WARNING
                ),
                title=title,
                evidence=tuple(evidence),
                why=WEAKEST_LINK_WHY,
                what_to_do=what,
                experiment="weakest-link",
                ruled_out=tuple(ruled_out),
                # The same cause seen through links, through parallelism and through live busy%: one finding.
                explains=() if below_pace else (
                    f"parallelism:{array}",
                    f"slow-member:{array}",
                    *(f"link-downgraded:{m.name}" for m in slow_members),
                    *(f"busy-member:{array}:{m.name}" for m in slow_members),
                ),
            )
        )
    return findings
