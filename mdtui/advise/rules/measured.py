"""Rules from what was measured: a member slow alone in a weakest-link run (busy members, and the same job
on each member, are in rules/member_runs.py).

These name a slow member whatever makes it slow (a worn or hot SSD, an SMR disk, a failing drive, a busy
HBA, a bad link): the figures, not the link speeds, decide, and only when the array's own figure blames the
member (plan/member_verdict.py); members merely slower than their peers are spread. A link that explains the figure
is folded in.
"""

from __future__ import annotations

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, WeakestLinkFigures, disk_of, mb_text, mbps
from mdtui.advise.rules.members import CRITICAL_COST_FRACTION, WEAKEST_LINK_WHY
from mdtui.advise.rules.resync import device_name, resync_run_ids
from mdtui.advise.rules.spread import own_figures, ratios_text, spread_title
from mdtui.format import times
from mdtui.plan.member_verdict import (
    Judged,
    Stripe,
    WeakestLinkVerdict,
    array_stripe,
    at_pace,
    links_of,
    weakest_link_verdict,
)
from mdtui.store.calibration import host_ceilings

__all__ = ["judge_weakest_link", "rule_measured_slow_member", "rule_shared_limit", "stripe_of"]


def stripe_of(inp: AdviceInput, level_name: str | None, members: int, names: list[str]) -> Stripe:
    """How the array's read follows its members' (plan/member_verdict.array_stripe)."""
    return array_stripe(level_name, members, (disk_of(inp.inventory, name) for name in names), host_ceilings())


def alone_repeats(inp: AdviceInput, array: str, during_resync: set[int]) -> dict[str, list[tuple[float, int]]]:
    """Every stored weakest-link figure of each member of ``array`` read alone: (bytes/s, run id), for the
    run-to-run scatter of the same member."""
    found: dict[str, list[tuple[float, int]]] = {}
    for figures in inp.weakest_link:
        if device_name(figures.array) != array:
            continue
        for member in figures.alone:
            if member.run_id not in during_resync:
                found.setdefault(member.name, []).append((member.read_bytes_per_s, member.run_id))
    return found


def rule_measured_slow_member(inp: AdviceInput) -> list[Finding]:
    """A member slow alone in a weakest-link run that the array's own figure blames: who, with its own figure,
    against whom, what it costs; members slower than their peers that do not explain the array are spread."""
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
        verdict, links = judge_weakest_link(inp, figures, during_resync)
        judged = verdict.judged
        if judged is None:
            continue
        run_ids = [m.run_id for m in figures.alone]
        if figures.together_run_id is not None:
            run_ids.append(figures.together_run_id)
        run_ids.append(figures.run_id)
        if judged.named:
            findings.append(_named_finding(figures, judged, array, run_ids, links))
        if judged.unsure or judged.spread:
            findings.append(_spread_finding(figures, judged, array, run_ids))
    return findings


def judge_weakest_link(
    inp: AdviceInput, figures: WeakestLinkFigures, during_resync: set[int]
) -> tuple[WeakestLinkVerdict, dict[str, tuple[str | None, bool]]]:
    """A weakest-link run's verdict (plan/member_verdict.py) with each member's stored repeats and links, and
    what each slower member's link says."""
    alone = {m.name: m.read_bytes_per_s for m in figures.alone}
    links = links_of(alone, {name: disk_of(inp.inventory, name) for name in alone})
    verdict = weakest_link_verdict(
        alone,
        stripe_of(inp, figures.level, len(figures.alone), list(alone)),
        together=figures.together_bytes_per_s,
        array=figures.array_bytes_per_s,
        repeats=alone_repeats(inp, device_name(figures.array), during_resync),
        link_explains={name for name, (_, explains) in links.items() if explains},
    )
    return verdict, links


def _named_finding(
    figures: WeakestLinkFigures,
    judged: Judged,
    array: str,
    run_ids: list[int],
    links: dict[str, tuple[str | None, bool]],
) -> Finding:
    named = judged.named
    factor = judged.stripe.factor_text
    slowest = min(named, key=lambda name: judged.figures[name])
    pace = judged.pace(slowest)
    peers_pace = judged.stripe.pace(judged.peers)
    possible = judged.others_floor or peers_pace
    cost = 1 - pace / possible
    named_links = [links[name] for name in named if name in links]
    link_explains = bool(named_links) and all(explains for _, explains in named_links)
    link_text = "; ".join(text for text, _ in named_links if text) or None
    evidence = [
        Evidence("runs", ", ".join(f"#{i}" for i in run_ids)),
        *(Evidence(f"{m.name} alone", mbps(m.read_bytes_per_s), "MB/s") for m in figures.alone),
        Evidence("median of the peers alone", mbps(judged.peers), "MB/s"),
        Evidence(f"slowest × {factor}", mbps(pace), "MB/s"),
        Evidence(f"{array} read", mbps(figures.array_bytes_per_s), "MB/s"),
        Evidence(f"peers × {factor}", mbps(peers_pace), "MB/s"),
        Evidence(f"the others' slowest × {factor}", mbps(possible), "MB/s"),
        Evidence("throughput lost", round(cost * 100, 1), "%"),
        Evidence("run-to-run scatter", judged.scatter_text(named)),
    ]
    ruled_out = [
        f"too little parallelism: {array} read {times(figures.array_bytes_per_s / pace)} slowest × {factor}, "
        "so more jobs would not raise it"
    ]
    if link_text is not None and not link_explains:
        ruled_out.append(f"the link: {link_text}")
    one = len(named) == 1
    title = (
        f"{own_figures(judged, named, 'read')} alone, {ratios_text(judged, named)}: {array} runs at "
        f"{'its' if one else 'their'} pace ({mb_text(figures.array_bytes_per_s)} = "
        f"{times(figures.array_bytes_per_s / pace)} slowest × {factor}; the others allow {mb_text(possible)})"
    )
    names = ", ".join(named)
    checks = f"SMART health, temperature and media errors (smartctl -a /dev/{slowest}), firmware"
    what = (
        f"Fix the link first ({link_text}): slot, cable, backplane; then check {checks}."
        if link_explains and link_text
        else f"Check {names}: {checks}, then link, slot and cable. Replace or leave out what is slow in "
        f"{array}; run the weakest-link preset again to prove the fix."
    )
    return Finding(
        id=f"measured-slow-member:{array}",
        severity=Severity.CRITICAL if cost >= CRITICAL_COST_FRACTION else Severity.WARNING,
        title=title,
        evidence=tuple(evidence),
        why=WEAKEST_LINK_WHY,
        what_to_do=what,
        experiment="weakest-link",
        ruled_out=tuple(ruled_out),
        # The same cause seen through links, through parallelism and through live busy%: one finding.
        explains=(
            f"parallelism:{array}",
            f"slow-member:{array}",
            *(f"link-downgraded:{name}" for name in named),
            *(f"busy-member:{array}:{name}" for name in named),
        ),
        members=named,
    )


def _spread_finding(figures: WeakestLinkFigures, judged: Judged, array: str, run_ids: list[int]) -> Finding:
    listed = [*judged.unsure, *judged.spread]
    noisy = any(judged.within_noise(name) for name in listed)
    below = [name for name in judged.spread if figures.array_bytes_per_s < judged.pace(name)]
    evidence = [
        Evidence("runs", ", ".join(f"#{i}" for i in run_ids)),
        *(Evidence(f"{name} alone", mbps(judged.figures[name]), "MB/s") for name in listed),
        Evidence("median of the peers alone", mbps(judged.peers), "MB/s"),
        Evidence(f"{array} read", mbps(figures.array_bytes_per_s), "MB/s"),
        Evidence("run-to-run scatter", judged.scatter_text(listed)),
    ]
    if noisy:
        what = (
            f"Repeat the weakest-link run on {array}: a gap within the run-to-run scatter is not a verdict; a member "
            "that reads slowly again, beyond the scatter its repeats show, is then named."
        )
    elif below and not judged.named:
        what = (
            f"{array} read below even these members' pace: something else holds it first (see the other findings); "
            f"check {', '.join(listed)} after that."
        )
    else:
        what = (
            f"Nothing to fix for {array} now; {', '.join(listed)} would limit it next: check "
            f"{'it' if len(listed) == 1 else 'them'} (SMART, temperature, firmware) before replacing a faster member."
        )
    return Finding(
        id=f"member-spread:{array}",
        severity=Severity.INFO,
        title=spread_title(judged, array, "read alone"),
        evidence=tuple(evidence),
        why=WEAKEST_LINK_WHY,
        what_to_do=what,
        experiment="weakest-link",
    )


def rule_shared_limit(inp: AdviceInput) -> list[Finding]:
    """The members read together clearly less than their sums alone in the newest weakest-link run of an array
    (plan/member_verdict.py): something they share caps them. A warning where that cap is what the array ran
    at; a note where something else held the array lower still."""
    findings = []
    seen: set[str] = set()
    during_resync = resync_run_ids(inp)
    for figures in sorted(inp.weakest_link, key=lambda f: -f.run_id):
        array = device_name(figures.array)
        if array in seen:
            continue
        seen.add(array)
        if {figures.run_id, *(m.run_id for m in figures.alone)} & during_resync or not figures.alone:
            continue
        verdict, _ = judge_weakest_link(inp, figures, during_resync)
        alone = verdict.alone_sum
        if not verdict.shared_limit or alone is None:
            continue
        together = figures.together_bytes_per_s
        capped = verdict.allowed is not None and together < verdict.allowed and at_pace(
            figures.array_bytes_per_s, together
        )
        findings.append(
            Finding(
                id=f"shared-limit:{array}",
                severity=Severity.WARNING if capped else Severity.INFO,
                title=(
                    f"{array}'s members read {mb_text(together)} all at once, {times(together / alone)} their sum "
                    f"alone ({mb_text(alone)}): something they share caps them"
                    + (f", and {array} runs at that cap" if capped else f"; {array} read less still")
                ),
                evidence=(
                    Evidence("run", f"#{figures.run_id}"),
                    Evidence("members alone, summed", mbps(alone), "MB/s"),
                    Evidence("members at once", mbps(together), "MB/s"),
                    Evidence(f"{array} read", mbps(figures.array_bytes_per_s), "MB/s"),
                ),
                why=(
                    "Members behind one HBA, PCIe switch or root port, or one CPU moving their I/O, cannot all run "
                    "at their own speed at once: the array gets what they share, not the sum of its members. "
                    "Where nothing is shared they add up (docs/findings.md, finding 1: the four raw drives together "
                    "read 5,645 MB/s, about their sum alone, 832 + 3 × ~1,650 MB/s)."
                ),
                what_to_do=(
                    "Find what the members share (lspci -tv for a switch or root port, the HBA's own link, the CPU "
                    "busy during the run) and spread the members over more of it; the weakest-link run proves it."
                ),
                experiment="weakest-link",
            )
        )
    return findings
