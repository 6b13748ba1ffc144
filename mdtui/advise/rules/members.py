"""Rules about members and their links: the slowest member sets the array's pace (finding 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, MemberSet, factor_text, mb_text, mbps, member_sets
from mdtui.model.disk import Disk
from mdtui.model.link import LinkKind
from mdtui.plan.create import SLOW_MEMBER_RATIO

# A downgrade that costs this share of the array's throughput is critical, not just a warning.
CRITICAL_COST_FRACTION = 0.25


WEAKEST_LINK_WHY = (
    "A stripe runs at its slowest member × N (docs/findings.md, finding 1: one NVMe drive in a PCIe 1.0 slot "
    "read 832 MB/s against ~1,650 MB/s for its peers, and the RAID0 of four read 3,322 MB/s = 832 × 4 while the "
    "raw drives together read 5,645 MB/s)."
)


def _link_speeds(disks: Sequence[Disk]) -> list[tuple[Disk, int]]:
    return [(d, bw) for d in disks if d.link is not None and (bw := d.link.bandwidth_bytes_per_s) is not None]


def _fix_hint(disk: Disk) -> str:
    assert disk.link is not None
    if disk.link.kind is LinkKind.PCIE:
        if disk.link.slot_limited:
            return f"move {disk.name} to a slot that runs {disk.link.describe_max()}"
        return f"reseat {disk.name} or check the slot's link settings (it should train at {disk.link.describe_max()})"
    return f"check {disk.name}'s cable, port and backplane (the port supports {disk.link.describe_max()})"


@dataclass(frozen=True)
class _SlowMembers:
    slow: tuple[Disk, ...]
    slowest_bytes_per_s: int
    next_bytes_per_s: int


def _slow_members(group: MemberSet) -> _SlowMembers | None:
    """The slowest members by link when they are clearly slower than the next one (as plan_create warns)."""
    speeds = _link_speeds(group.disks)
    if len(speeds) < 2 or group.level.name == "linear":
        return None
    slowest = min(bw for _, bw in speeds)
    faster = [bw for _, bw in speeds if bw > slowest]
    if not faster or slowest >= SLOW_MEMBER_RATIO * min(faster):
        return None
    return _SlowMembers(tuple(d for d, bw in speeds if bw == slowest), slowest, min(faster))


def rule_slow_members(inp: AdviceInput) -> list[Finding]:
    """A member on a downgraded or slower link than its peers, and what it costs: slowest × N vs peers × N."""
    findings = []
    for group in member_sets(inp):
        found = _slow_members(group)
        if found is None:
            continue
        slow, slowest, next_speed = found.slow, found.slowest_bytes_per_s, found.next_bytes_per_s
        factor = group.read_factor
        now, possible = factor * slowest, factor * next_speed
        cost = (possible - now) / possible
        downgraded = [d for d in slow if d.link is not None and d.link.downgraded]
        severity = Severity.CRITICAL if downgraded and cost >= CRITICAL_COST_FRACTION else Severity.WARNING
        names = ", ".join(d.name for d in slow)
        evidence = [
            Evidence(f"slowest member{'s' if len(slow) > 1 else ''} ({names})", mbps(slowest), "MB/s link"),
            Evidence("next slowest member", mbps(next_speed), "MB/s link"),
            Evidence("members", group.member_count),
            Evidence(f"{group.level.name} read factor", factor),
            Evidence("array at slowest × factor", mbps(now), "MB/s"),
            Evidence(f"array without the slow member{'s' if len(slow) > 1 else ''}", mbps(possible), "MB/s"),
            Evidence("throughput lost", round(cost * 100, 1), "%"),
        ]
        if downgraded:
            fixes = "; ".join(_fix_hint(d) for d in downgraded)
            what = f"{fixes[0].upper()}{fixes[1:]}, or leave it out; then confirm with the weakest-link run."
        else:
            what = (
                f"Build {group.name} from disks of one speed class, or accept {mb_text(now)}; link bandwidth is an "
                "upper bound, so confirm with the weakest-link run (each member alone, all together, the array)."
            )
        findings.append(
            Finding(
                id=f"slow-member:{group.name}",
                severity=severity,
                title=f"{names} limit{'s' if len(slow) == 1 else ''} {group.name} to {factor_text(factor)} × "
                f"{mb_text(slowest)} = {mb_text(now)} (peers allow {mb_text(possible)})",
                evidence=tuple(evidence),
                why=WEAKEST_LINK_WHY,
                what_to_do=what,
                experiment="weakest-link",
                # The slow members' own link findings are this cause seen disk by disk.
                explains=tuple(f"link-downgraded:{d.name}" for d in slow),
            )
        )
    return findings


def rule_downgraded_links(inp: AdviceInput) -> list[Finding]:
    """Every disk whose link trained below its maximum, with what it costs the array it is in (if any)."""
    groups = member_sets(inp)
    # Members the slow-member finding already names, with what they cost.
    covered = {(group.name, d.name) for group in groups if (found := _slow_members(group)) for d in found.slow}
    disks: dict[str, Disk] = {}
    for group in groups:
        disks.update((d.name, d) for d in group.disks)
    if inp.inventory is not None:
        disks.update((d.name, d) for d in inp.inventory.disks if d.name not in disks)
    findings = []
    for disk in disks.values():
        link = disk.link
        if link is None or not link.downgraded:
            continue
        now_bw, max_bw = link.bandwidth_bytes_per_s, link.max_bandwidth_bytes_per_s
        evidence = [
            Evidence("link now", link.describe_current()),
            Evidence("link maximum", link.describe_max()),
            Evidence("usable now", mbps(now_bw or 0), "MB/s"),
            Evidence("usable at maximum", mbps(max_bw or 0), "MB/s"),
        ]
        severity = Severity.WARNING
        title = f"{disk.name}: {link.finding()}"
        skip = False
        for group in groups:
            if disk not in group.disks:
                continue
            if (group.name, disk.name) in covered:
                skip = True  # the slow-member finding already names it with its cost
                break
            speeds = dict((d.name, bw) for d, bw in _link_speeds(group.disks))
            if len(speeds) < 2 or max_bw is None:
                continue
            now = group.read_factor * min(speeds.values())
            speeds[disk.name] = max_bw
            fixed = group.read_factor * min(speeds.values())
            evidence += [
                Evidence(f"{group.name} now", mbps(now), "MB/s"),
                Evidence(f"{group.name} with {disk.name} at its maximum", mbps(fixed), "MB/s"),
            ]
            if fixed <= now:
                severity = Severity.INFO
                title += f"; it costs {group.name} nothing yet (other members are slower still)"
        if skip:
            continue
        findings.append(
            Finding(
                id=f"link-downgraded:{disk.name}",
                severity=severity,
                title=title,
                evidence=tuple(evidence),
                why=WEAKEST_LINK_WHY,
                what_to_do=f"{_fix_hint(disk)[0].upper()}{_fix_hint(disk)[1:]}; then measure it alone with the "
                "weakest-link run.",
                experiment="weakest-link",
            )
        )
    return findings
