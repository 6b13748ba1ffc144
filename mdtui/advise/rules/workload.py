"""Rules about fitting the array to the workload: parallelism, level, chunk and bitmap (findings 1, 4, 5)."""

from __future__ import annotations

from mdtui.advise.findings import Evidence, Finding, Pattern, Severity, Workload
from mdtui.advise.rules.inputs import AdviceInput, MemberSet, mb_text, mbps, member_sets
from mdtui.advise.rules.measured import judge_weakest_link
from mdtui.advise.rules.members import group_sources
from mdtui.advise.rules.resync import device_name, resync_run_ids
from mdtui.errors import PlanError
from mdtui.format import iec_bytes, times
from mdtui.plan.forecast import forecast, significant
from mdtui.plan.levels import RAID0, RAID10
from mdtui.plan.md_limits import small_write_ios

# Chunk sizes the findings support (finding 5, docs/findings.md).
SEQUENTIAL_MIN_CHUNK_KIB = 512


CONCURRENT_MIN_CHUNK_KIB = 1024


SMALL_RANDOM_MIN_CHUNK_KIB = 64


# Finding 4 (docs/findings.md), random 4 KiB writes at Q32T8 on four SAS3 SSDs, IOPS.
RND4K_WRITE_IOPS = {
    "single": 169_000,
    "raid0": 613_000,
    "raid1": 154_000,
    "raid10": 276_000,
    "raid5": 58_300,
    "raid6": 65_400,
}


def rule_parallelism(inp: AdviceInput) -> list[Finding]:
    """The md device read clearly under what its members allow, alone (the model) and together, in a weakest-link
    result: too few jobs in flight (plan/member_verdict.py decides)."""
    findings = []
    during_resync = resync_run_ids(inp)
    for figures in inp.weakest_link:
        if figures.together_bytes_per_s <= 0 or figures.run_id in during_resync:
            continue  # a resync explains low figures before anything else (rules/resync.py)
        verdict, _ = judge_weakest_link(inp, figures, during_resync)
        if not verdict.short_of_parallelism:
            continue
        share = figures.array_bytes_per_s / figures.together_bytes_per_s
        bound = verdict.allowed
        evidence = [
            Evidence("run", f"#{figures.run_id}"),
            Evidence("members read together", mbps(figures.together_bytes_per_s), "MB/s"),
            Evidence(f"{device_name(figures.array)} read", mbps(figures.array_bytes_per_s), "MB/s"),
            Evidence("array / members", round(share * 100, 1), "%"),
            Evidence("numjobs", figures.numjobs if figures.numjobs is not None else "unknown"),
        ]
        ruled_out = []
        if bound:
            factor = verdict.stripe.factor_text
            evidence.append(Evidence(f"slowest alone × {factor}", mbps(bound), "MB/s"))
            ruled_out.append(
                f"a slow member: slowest × {factor} = {mb_text(bound)}, but "
                f"{device_name(figures.array)} read only {times(figures.array_bytes_per_s / bound)} of it"
            )
        findings.append(
            Finding(
                id=f"parallelism:{device_name(figures.array)}",
                severity=Severity.WARNING,
                title=(
                    f"{figures.array} read {mb_text(figures.array_bytes_per_s)}, {share * 100:.0f}% of its members "
                    f"together ({mb_text(figures.together_bytes_per_s)})"
                ),
                evidence=tuple(evidence),
                why=(
                    "An md device needs more I/O in flight than one disk to keep every member busy "
                    "(docs/findings.md, finding 1: raw drives together 6,353 MB/s, the md device 4,989 MB/s with "
                    "16 jobs and 5,872 MB/s with 64)."
                ),
                what_to_do=(
                    "Run the parallelism sweep (numjobs 1, 4, 16, 64) to see where the array saturates; if more "
                    "jobs close the gap, the array is fine and the workload needs more concurrency."
                ),
                experiment="parallelism-sweep",
                ruled_out=tuple(ruled_out),
            )
        )
    return findings


def _modelled_random_writes(inp: AdviceInput, group: MemberSet) -> tuple[float, float] | None:
    """(the group's level, raid10) random 4 KiB write IOPS the md model gives over the group's members' own figures,
    shown as `mdtui predict` shows them; None when a member was not measured (what stands in for it, its link or
    its kind of disk's field figures, is no ground for this comparison: finding 4's measured matrix is)."""
    sources = group_sources(inp, group)
    if not sources or group.member_count < RAID10.min_members or not all(s.measured for s in sources):
        return None
    try:
        here = forecast(group.level, sources, layout=group.layout, chunk_bytes=group.chunk_bytes)
        raid10 = forecast(RAID10, sources, layout=None, chunk_bytes=group.chunk_bytes)
    except (PlanError, ValueError):
        return None
    if here is None or raid10 is None:
        return None
    values = (here.rand_write_iops.rounded, raid10.rand_write_iops.rounded)
    if values[0] is None or values[1] is None or values[1] <= 0:
        return None
    return significant(values[0]), significant(values[1])


def rule_level_for_workload(inp: AdviceInput) -> list[Finding]:
    """RAID5/6 for a small-random-write workload: the expected IOPS against RAID10, the md model's over these
    members' figures where they are measured, else finding 4's (docs/findings.md)."""
    workload = inp.workload
    if workload is None or not workload.small_random_writes:
        return []
    findings = []
    for group in member_sets(inp):
        if group.level.name not in ("raid5", "raid6"):
            continue
        level_iops = RND4K_WRITE_IOPS[group.level.name]
        ratio = level_iops / RND4K_WRITE_IOPS["raid10"]
        modelled = _modelled_random_writes(inp, group)
        model_evidence: tuple[Evidence, ...] = ()
        if modelled is not None:
            # The members' own figures through the md model, as `mdtui predict` gives them: these disks, not
            # the field's.
            here, raid10 = modelled
            ratio = here / raid10
            model_evidence = (
                Evidence(f"predicted {group.level.name} random 4 KiB writes here", round(here), "IOPS"),
                Evidence("predicted raid10 random 4 KiB writes on the same members", round(raid10), "IOPS"),
            )
        reads, writes = small_write_ios(
            group.level, group.member_count, group.level.effective_layout(group.layout), 4096, group.chunk_bytes
        )
        ios = f"{reads} read{'s' if reads != 1 else ''} + {writes} writes"
        findings.append(
            Finding(
                id=f"level-small-writes:{group.name}",
                severity=Severity.WARNING,
                title=(
                    f"{group.level.name} for {workload.key}: expect about {ratio:.2f}× the random-write IOPS of "
                    "RAID10 on the same disks"
                ),
                evidence=(
                    Evidence("level", group.level.name),
                    Evidence("member I/Os per small write", ios),
                    Evidence(f"finding 4 {group.level.name} RND4KQ32T8 write", level_iops, "IOPS"),
                    Evidence("finding 4 raid10 RND4KQ32T8 write", RND4K_WRITE_IOPS["raid10"], "IOPS"),
                    *model_evidence,
                    Evidence(f"{group.level.name} / raid10", round(ratio, 2)),
                ),
                why=(
                    "Every small write to RAID5 reads old data and parity and writes both back (RAID6: three reads, "
                    "three writes); finding 4 (docs/findings.md) measured random 4 KiB writes at Q32T8 on four "
                    "SAS3 SSDs of 58.3K IOPS for RAID5 and 65.4K for RAID6 against 276K for RAID10 and 169K for "
                    "one disk."
                ),
                what_to_do=(
                    f"For {workload.title.split(':')[0].lower()}, prefer RAID10, or measure the levels on these "
                    "members with the level comparison before deciding."
                ),
                experiment="level-compare",
            )
        )
    return findings


def _chunk_finding(group: MemberSet, workload: Workload) -> tuple[str, Severity, str, str, int] | None:
    """(kind, severity, why, what, recommended KiB) when the chunk does not fit the workload, else None."""
    if group.chunk_bytes is None:
        return None
    chunk_kib = group.chunk_bytes // 1024
    parity = group.level.parity
    if Pattern.LARGE_SEQUENTIAL in workload.patterns and parity and chunk_kib < SEQUENTIAL_MIN_CHUNK_KIB:
        return (
            "large sequential streams",
            Severity.WARNING,
            "Finding 5 (docs/findings.md; three HDDs, 16 MiB direct reads, normalised to the raw disk): RAID5 "
            "read one stream at 0.95 with a 2 MiB chunk but 0.20 with a 4 KiB chunk; on RAID0 the chunk made no "
            "difference (0.96-0.97).",
            "Use a chunk of 512 KiB to 2 MiB, or run the chunk sweep with this workload's reads.",
            2048,
        )
    if Pattern.CONCURRENT in workload.patterns and parity and chunk_kib < CONCURRENT_MIN_CHUNK_KIB:
        return (
            "many concurrent readers",
            Severity.INFO,
            "Finding 5 (docs/findings.md): with five readers at once larger chunks were always better on RAID5, "
            "8 MiB reading 0.18-0.21 of the raw disk per data disk against 0.12 with 512 KiB: a reader that "
            "stays on one member seeks less.",
            "Consider a chunk of 1 MiB or more, and confirm with the chunk sweep.",
            4096,
        )
    if Pattern.SMALL_RANDOM in workload.patterns and chunk_kib < SMALL_RANDOM_MIN_CHUNK_KIB:
        return (
            "small random requests",
            Severity.WARNING,
            "A request that crosses a chunk boundary occupies two members instead of one, and with a tiny "
            "chunk most of them do; in finding 5 (docs/findings.md) RAID5 read at 0.20 of the raw disk with a "
            "4 KiB chunk.",
            "Use at least a 64 KiB chunk (database pages are 8-16 KiB); the chunk sweep shows the effect.",
            64,
        )
    return None


def rule_chunk_for_workload(inp: AdviceInput) -> list[Finding]:
    """A chunk that does not fit the stated workload: large sequential vs small random vs concurrent.

    The thresholds come from finding 5 (docs/findings.md).
    """
    workload = inp.workload
    if workload is None:
        return []
    findings = []
    for group in member_sets(inp):
        if group.level is RAID0 and Pattern.SMALL_RANDOM not in workload.patterns:
            continue  # finding 5 (docs/findings.md): on RAID0 the chunk made no difference for streaming reads
        found = _chunk_finding(group, workload)
        if found is None:
            continue
        kind, severity, why, what, recommended = found
        assert group.chunk_bytes is not None
        findings.append(
            Finding(
                id=f"chunk:{group.name}",
                severity=severity,
                title=f"{iec_bytes(group.chunk_bytes)} chunk on {group.name} does not suit {kind} ({workload.key})",
                evidence=(
                    Evidence("chunk", group.chunk_bytes // 1024, "KiB"),
                    Evidence("level", group.level.name),
                    Evidence("workload", workload.key),
                    Evidence("suggested chunk", recommended, "KiB"),
                ),
                why=why,
                what_to_do=what,
                experiment="chunk-sweep",
            )
        )
    return findings


def rule_bitmap(inp: AdviceInput) -> list[Finding]:
    """A write-intent bitmap whose chunk costs writes: what the md model predicts it costs (random 4 KiB writes at
    Q32T8, writes at Q1) against no bitmap and against mdadm's 64 MiB chunk, the costliest first; without member
    figures, a write-heavy workload still hears that a bitmap costs (unmeasured)."""
    workload = inp.workload
    costed = []
    for group in member_sets(inp):
        if group.bitmap in (None, "none") or not group.level.redundant:
            continue
        costed.append((bitmap_cost(inp, group), group))
    # The chunk that costs the workload most is named first.
    costed.sort(key=lambda item: item[0][0] if item[0] is not None else 1.0)
    findings: list[Finding] = []
    for cost, group in costed:
        if cost is None and (workload is None or not workload.write_heavy):
            continue
        if cost is not None and cost[0] > BITMAP_COST_WORTH and (workload is None or not workload.write_heavy):
            continue
        findings.append(_bitmap_finding(group, cost, workload, first=not findings))
    return findings


# A bitmap keeping more of the writes than this (predicted) is not worth a finding without a write-heavy workload.
BITMAP_COST_WORTH = 0.9
LARGE_BITMAP_CHUNK_KIB = 64 * 1024


def bitmap_cost(inp: AdviceInput, group: MemberSet) -> tuple[float, str, list[str]] | None:
    """(the share of the writes the bitmap keeps, its chunk as shown, cost lines) from the md model over the
    members' stored figures; None when a member has no figures."""
    from mdtui.bench.member_figures import member_sources
    from mdtui.plan.write_safety import SafetyChoice, SafetyCost, array_bytes_of, costs

    if len(group.disks) != group.member_count or not group.disks:
        return None
    sources = member_sources(inp.runs, group.disks)
    figures = [s.figures for s in sources if s.figures is not None]
    if len(figures) != len(sources):
        return None
    live = inp.write_safety.get(group.name)
    chunk_kib = None
    if live is not None and live.bitmap_chunk_bytes:
        chunk_kib = live.bitmap_chunk_bytes // 1024
    elif inp.plan is not None and group.planned:
        chunk_kib = inp.plan.request.bitmap_chunk_kib
    kind = "file" if (group.bitmap or "").startswith("/") else (group.bitmap or "internal")
    choice = SafetyChoice(kind if kind != "file" else group.bitmap or "file", chunk_kib)
    # The size the plan or the running array says (as `mdtui safety` and create cost it); else from the members.
    array = inp.inventory.array(group.name) if inp.inventory is not None else None
    if inp.plan is not None and group.planned:
        array_bytes = inp.plan.usable_bytes
    elif array is not None and array.size_bytes:
        array_bytes = array.size_bytes
    else:
        array_bytes = array_bytes_of([d.size_bytes for d in group.disks], group.level, group.layout)
    ceilings = sources[0].md.for_level(group.level.name)

    def cost_of(option: SafetyChoice) -> list[SafetyCost]:
        found, _ = costs(
            group.level, figures, option, layout=group.layout, chunk_bytes=group.chunk_bytes, ceilings=ceilings,
            array_bytes=array_bytes,
        )  # fmt: skip
        return found

    found = cost_of(choice)
    kept = min((c.ratio for c in found if c.ratio is not None), default=1.0)
    shown = "mdadm's default" if chunk_kib is None else iec_bytes(chunk_kib * 1024)
    lines = [cost.text() for cost in found if cost.ratio is not None and cost.ratio < 0.999]
    if chunk_kib is None or chunk_kib < LARGE_BITMAP_CHUNK_KIB:
        large = cost_of(SafetyChoice(choice.bitmap, LARGE_BITMAP_CHUNK_KIB))
        lines += [f"with a 64 MiB chunk: {c.text()}" for c in large if c.ratio is not None and c.ratio < 0.999]
    return kept, shown, lines


def _bitmap_finding(
    group: MemberSet, cost: tuple[float, str, list[str]] | None, workload: Workload | None, *, first: bool
) -> Finding:
    small_random = workload is not None and workload.small_random_writes
    evidence = [Evidence("bitmap", group.bitmap or ""), Evidence("level", group.level.name)]
    if workload is not None:
        evidence.append(Evidence("workload", workload.key))
    if cost is None:
        why = (
            "md marks a chunk dirty in the bitmap, on every member, with a cache flush, before the first write to "
            "it, which small scattered writes hit most; the members have no stored figures, so the model cannot "
            "say how much here (mdtui bench --preset member-matrix on each, before it joins an array). The finding "
            "4 figures were measured with --bitmap none (docs/findings.md)."
        )
        title = f"{group.name} has a write-intent bitmap ({group.bitmap}) and the workload is write-heavy"
    else:
        kept, shown, lines = cost
        evidence += [Evidence("bitmap_chunk", shown), Evidence("writes_kept", round(kept, 2))]
        why = (
            "md writes the bitmap (a cache flush and FUA on every member) before the first write to a clean chunk; "
            "a small chunk makes most writes find one. Predicted by the md model over the members' figures: "
            + "; ".join(lines or ["no cost to speak of"])
            + " (docs/predictions.md, write safety)."
        )
        worst = "; the costliest bitmap here" if first else ""
        title = f"{group.name}'s bitmap (chunk {shown}) keeps {kept:.0%} of its writes' speed{worst}"
    return Finding(
        id=f"bitmap:{group.name}",
        severity=Severity.WARNING if small_random or (cost is not None and cost[0] < 0.5) else Severity.INFO,
        title=title,
        evidence=tuple(evidence),
        why=why,
        what_to_do=(
            "Keep the bitmap (it turns a full resync after a crash into a short one) but give it a larger chunk: "
            f"`mdtui safety {group.name.split(' ')[0].removeprefix('/dev/')} --bitmap internal --bitmap-chunk 64M` "
            "(mdadm --grow, shown first), and measure both with `mdtui experiment write-safety`."
        ),
    )
