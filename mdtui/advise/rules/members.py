"""Rules about members and their links: the slowest member sets the array's pace (finding 1), in the md model's
figures (plan/member_verdict.py decides which member is slow)."""

from __future__ import annotations

from dataclasses import replace

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, MemberSet, mb_text, mbps, member_sets
from mdtui.bench.member_figures import member_sources
from mdtui.errors import PlanError
from mdtui.model.disk import Disk
from mdtui.model.link import LinkKind
from mdtui.plan.figures import FIELD, GIVEN, LINK, MEASURED, Figure
from mdtui.plan.forecast import CeilingsChoice, MemberSource, forecast, shown, significant, unmeasured_source
from mdtui.plan.member_bounds import PLATTER_BYTES_PER_S, device_ceiling, link_limits
from mdtui.plan.member_verdict import SEQ_READ, SlowMembers, slow_members
from mdtui.store.calibration import host_ceilings

# A downgrade that costs this share of the array's throughput is critical, not just a warning.
CRITICAL_COST_FRACTION = 0.25


WEAKEST_LINK_WHY = (
    "A stripe runs at its slowest member × N (docs/findings.md, finding 1: one NVMe drive in a PCIe 1.0 slot "
    "read 832 MB/s against ~1,650 MB/s for its peers, and the RAID0 of four read 3,322 MB/s = 832 × 4 while the "
    "raw drives together read 5,645 MB/s)."
)
PLATTER_WHY = (
    "A link is a limit only where the device could go faster than it. A hard disk reads at most what its platter "
    f"gives, about {PLATTER_BYTES_PER_S / 1e6:,.0f} MB/s at its outer tracks (docs/findings.md, finding 5: 4 TB "
    "disks read about 200 MiB/s at offset 0), less than a 3 Gbit link carries."
)


def _fix_hint(disk: Disk) -> str:
    assert disk.link is not None
    if disk.link.kind is LinkKind.PCIE:
        if disk.link.slot_limited:
            return f"move {disk.name} to a slot that runs {disk.link.describe_max()}"
        return f"reseat {disk.name} or check the slot's link settings (it should train at {disk.link.describe_max()})"
    return f"check {disk.name}'s cable, port and backplane (the port supports {disk.link.describe_max()})"


def figure_mb(figure: Figure) -> float | str:
    """A model figure in MB/s as `mdtui predict` shows it (two significant figures), for evidence."""
    rounded = figure.rounded
    return "unknown" if rounded is None else round(significant(rounded) / 1e6, 1)


def bound_text(figure: Figure) -> str:
    """A figure's bound for a title: "slowest × 4" where the members bound it, else the model's own words."""
    inner = figure.bound.removeprefix("members (").removesuffix(")")
    return inner if figure.bound.startswith("members (") else figure.bound


def group_sources(inp: AdviceInput, group: MemberSet, md: CeilingsChoice | None = None) -> list[MemberSource] | None:
    """The members' figures as `mdtui predict` takes them: a plan's own, or each member's stored member-matrix
    figures, else what bounds it (its link, or a hard disk's platter). None when a member's disk is unknown."""
    if group.planned and inp.plan is not None:
        return list(inp.plan.sources)
    if len(group.disks) != group.member_count:
        return None
    return member_sources(inp.runs, group.disks, md)


def _slow(inp: AdviceInput, group: MemberSet, md: CeilingsChoice) -> SlowMembers | None:
    if group.level.name == "linear":
        return None
    sources = group_sources(inp, group, md)
    if sources is None:
        return None
    try:
        return slow_members(group.level, sources, layout=group.layout, chunk_bytes=group.chunk_bytes)
    except (PlanError, ValueError):
        return None  # a member count or layout the model has no figure for


def rule_slow_members(inp: AdviceInput) -> list[Finding]:
    """A member whose own figure (measured, or its link) holds its array below what its peers allow, with the
    model's figures as `mdtui predict` gives them (plan/member_verdict.slow_members decides)."""
    findings = []
    md = host_ceilings()
    for group in member_sets(inp):
        found = _slow(inp, group, md)
        if found is None:
            continue
        disks = {d.name: d for d in group.disks}
        slow = [disks[name] for name in found.names if name in disks]
        now, possible = found.now.seq_read_bytes_per_s, found.possible.seq_read_bytes_per_s
        downgraded = [d for d in slow if d.link is not None and d.link.downgraded and found.bases[d.name] == LINK]
        severity = Severity.CRITICAL if downgraded and found.cost >= CRITICAL_COST_FRACTION else Severity.WARNING
        if any(found.bases[name] == FIELD for name in found.names):
            # A platter's field figure is a stated estimate, not this disk's: worth knowing, not an alarm.
            severity = Severity.INFO
        names = ", ".join(found.names)
        peers = {name: value for name, value in found.figures.items() if name not in found.names}
        next_name = min(peers, key=lambda name: peers[name])
        plural = "s" if len(found.names) > 1 else ""
        evidence = [
            *(
                Evidence(f"slow member {name} ({found.bases[name]})", mbps(found.figures[name]), "MB/s")
                for name in found.names
            ),
            Evidence(f"next slowest member {next_name} ({found.bases[next_name]})", mbps(peers[next_name]), "MB/s"),
            Evidence("members", group.member_count),
            Evidence(f"{group.name} sequential read now", figure_mb(now), "MB/s"),
            Evidence("bound", f"{now.bound} ({now.basis})"),
            Evidence(f"with the slow member{plural} as fast as {next_name}", figure_mb(possible), "MB/s"),
            Evidence("throughput lost", round(found.cost * 100, 1), "%"),
        ]
        if downgraded:
            fixes = "; ".join(_fix_hint(d) for d in downgraded)
            what = f"{fixes[0].upper()}{fixes[1:]}, or leave it out; then confirm with the weakest-link run."
        else:
            measured = all(found.bases[name] in (MEASURED, GIVEN) for name in found.names)
            what = f"Build {group.name} from disks of one speed class, or accept {shown(now, SEQ_READ)}" + (
                "; confirm with the weakest-link run (each member alone, all together, the array)."
                if measured
                else "; a link is only an upper bound, so measure with the weakest-link run (each member alone, all "
                "together, the array)."
            )
        findings.append(
            Finding(
                id=f"slow-member:{group.name}",
                severity=severity,
                title=f"{names} limit{'s' if len(found.names) == 1 else ''} {group.name} to {shown(now, SEQ_READ)} "
                f"of sequential reads, {bound_text(now)} (the others allow {shown(possible, SEQ_READ)})",
                evidence=tuple(evidence),
                why=WEAKEST_LINK_WHY,
                what_to_do=what,
                experiment="weakest-link",
                # The slow members' own link findings are this cause seen disk by disk.
                explains=tuple(f"link-downgraded:{name}" for name in found.names),
                members=found.names,
            )
        )
    return findings


def _disk_source(inp: AdviceInput, group: MemberSet, name: str, md: CeilingsChoice) -> MemberSource | None:
    sources = group_sources(inp, group, md)
    return next((s for s in sources or () if s.name == name), None)


def rule_downgraded_links(inp: AdviceInput) -> list[Finding]:
    """Every disk whose link trained below its maximum, with what it costs the array it is in (if any): nothing
    where the device itself is slower than the link (a hard disk's platter; member_bounds.link_limits decides)."""
    groups = member_sets(inp)
    md = host_ceilings()
    # Members the slow-member finding already names, with what they cost.
    covered = {(group.name, name) for group in groups if (found := _slow(inp, group, md)) for name in found.names}
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
        if not link_limits(now_bw, disk.rotational):
            ceiling = device_ceiling(disk.rotational) or 0.0
            evidence.append(Evidence("a hard disk's platter reads at most", mbps(ceiling), f"MB/s ({FIELD})"))
            findings.append(
                Finding(
                    id=f"link-downgraded:{disk.name}",
                    severity=Severity.INFO,
                    title=f"{title}; it costs nothing: a hard disk's platter reads about {mb_text(ceiling)}, less "
                    "than the link carries even now",
                    evidence=tuple(evidence),
                    why=PLATTER_WHY,
                    what_to_do=f"Nothing for speed; {_fix_hint(disk)} when you are next at the machine (a link that "
                    "trained down can be a failing cable or port).",
                )
            )
            continue
        skip = False
        for group in groups:
            if disk not in group.disks:
                continue
            if (group.name, disk.name) in covered:
                skip = True  # the slow-member finding already names it with its cost
                break
            source = _disk_source(inp, group, disk.name, md)
            sources = group_sources(inp, group, md)
            if source is None or sources is None or source.measured or len(sources) < 2:
                continue  # a measured member's figure is its own, whatever its link: the measured rules judge it
            fixed_source = unmeasured_source(disk.name, replace(link, current_rate=link.max_rate,
                                                                current_width=link.max_width), disk.rotational,
                                             missing=source.missing, md=source.md)  # fmt: skip
            try:
                now = forecast(group.level, sources, layout=group.layout, chunk_bytes=group.chunk_bytes)
                fixed = forecast(
                    group.level,
                    [fixed_source if s.name == disk.name else s for s in sources],
                    layout=group.layout,
                    chunk_bytes=group.chunk_bytes,
                )
            except (PlanError, ValueError):
                continue
            if now is None or fixed is None:
                continue
            now_read, fixed_read = now.seq_read_bytes_per_s, fixed.seq_read_bytes_per_s
            evidence += [
                Evidence(f"{group.name} now", figure_mb(now_read), "MB/s"),
                Evidence(f"{group.name} with {disk.name} at its maximum", figure_mb(fixed_read), "MB/s"),
            ]
            if (fixed_read.value or 0.0) <= (now_read.value or 0.0):
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
