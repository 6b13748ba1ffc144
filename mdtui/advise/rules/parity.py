"""Rules about parity arrays: the stripe cache and the md thread's CPU (finding 3)."""

from __future__ import annotations

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput, mbps, member_sets
from mdtui.advise.rules.resync import device_name
from mdtui.format import iec_bytes
from mdtui.plan.md_limits import DEFAULT_STRIPE_CACHE, STRIPE_UNIT_BYTES

# md's default stripe cache (stripe heads, one 4 KiB page per member each) is the model's (plan/md_limits.py).
DEFAULT_STRIPE_CACHE_PAGES = DEFAULT_STRIPE_CACHE
PAGE_BYTES = STRIPE_UNIT_BYTES


SUGGESTED_STRIPE_CACHE_PAGES = 4096


# An md thread this busy is the array's limit: parity is computed on one core per array.
MD_THREAD_SATURATED_PERCENT = 90.0


def rule_stripe_cache(inp: AdviceInput) -> list[Finding]:
    """raid4/5/6 arrays whose stripe_cache_size is still md's default of 256 pages."""
    findings: list[Finding] = []
    if inp.inventory is None:
        return findings
    for array in inp.inventory.arrays:
        if array.level not in ("raid4", "raid5", "raid6"):
            continue
        pages = inp.stripe_cache_pages.get(array.name)
        if pages is None or pages > DEFAULT_STRIPE_CACHE_PAGES:
            continue
        members = array.raid_disks or len(array.members)
        write_heavy = inp.workload is not None and inp.workload.write_heavy
        findings.append(
            Finding(
                id=f"stripe-cache:{array.name}",
                severity=Severity.WARNING if write_heavy else Severity.INFO,
                title=f"{array.name} ({array.level}) uses the default stripe cache of {pages} pages",
                evidence=(
                    Evidence("stripe_cache_size", pages, "pages"),
                    Evidence("memory now", iec_bytes(pages * PAGE_BYTES * members)),
                    Evidence(
                        f"memory at {SUGGESTED_STRIPE_CACHE_PAGES}",
                        iec_bytes(SUGGESTED_STRIPE_CACHE_PAGES * PAGE_BYTES * members),
                    ),
                    Evidence("members", members),
                ),
                why=(
                    "Parity writes are assembled in the stripe cache: a small one forces partial-stripe writes "
                    "that read before they write (docs/findings.md, finding 4: RAID5 wrote 985 MB/s sequentially "
                    "where one disk wrote 1,123 MB/s, and 58.3K random-write IOPS against 169K). No figure for a "
                    "larger cache is settled yet: in the lab 4096 gave 0.94× to 1.99× the writes of 256 over four "
                    "sessions under emulation (docs/findings.md, knob figures): measure it here."
                ),
                what_to_do=(
                    f"Measure it here: mdtui experiment knob --knob stripe_cache_size --values "
                    f"{pages},{SUGGESTED_STRIPE_CACHE_PAGES} --target {array.name} --preset custom --rw write "
                    f"--bs 1m (one run per value, the original put back; {SUGGESTED_STRIPE_CACHE_PAGES} costs that "
                    "many 4 KiB pages per member). Keep the winner across reboots with mdtui tune --apply."
                ),
                experiment="knob-sweep",
            )
        )
    return findings


def _thread_load(inp: AdviceInput, array_name: str) -> tuple[float, float] | None:
    """(peak md thread CPU %, write bytes/s of the array at that moment) over the snapshots, when measured."""
    best: tuple[float, float] | None = None
    for snapshot in inp.snapshots:
        device = snapshot.device(array_name)
        writes = device.write_bytes_per_s if device is not None else None
        for thread in snapshot.md_threads:
            if thread.array != array_name or not thread.role.startswith("raid") or thread.cpu_percent is None:
                continue
            if best is None or thread.cpu_percent > best[0]:
                best = (thread.cpu_percent, writes or 0.0)
    return best


def _stored_thread_load(inp: AdviceInput, array_name: str) -> tuple[float, float] | None:
    """The busiest md thread a stored run on the array measured (utime+stime over the run), with its writes."""
    best: tuple[float, float] | None = None
    for run in inp.runs:
        cpu = run.metrics.md_thread_cpu_pct
        if cpu is not None and device_name(run.target) == array_name and (best is None or cpu > best[0]):
            best = (cpu, run.metrics.write_bw_bytes_per_s or 0.0)
    return best


def rule_parity_cpu(inp: AdviceInput) -> list[Finding]:
    """The kernel's raid6/xor routines and their speeds next to the md thread's CPU under load.

    The figures come from finding 3 (docs/findings.md).
    """
    groups = [g for g in member_sets(inp) if g.level.parity]
    if not groups:
        return []
    parity = inp.parity
    findings = []
    for group in groups:
        evidence: list[Evidence] = []
        raid6 = group.level.name == "raid6"
        if parity is not None and raid6 and parity.raid6_algorithm:
            evidence.append(Evidence("raid6 algorithm", parity.raid6_algorithm))
            if parity.raid6_gen_mb_s is not None:
                evidence.append(Evidence("raid6 gen()", parity.raid6_gen_mb_s, "MB/s"))
            if parity.raid6_xor_mb_s is not None:
                evidence.append(Evidence("raid6 xor()", parity.raid6_xor_mb_s, "MB/s"))
        if parity is not None and parity.xor_function:
            evidence.append(Evidence("xor function", parity.xor_function))
            if parity.xor_mb_s is not None:
                evidence.append(Evidence("xor speed", parity.xor_mb_s, "MB/s"))
        array_name = group.name if not group.planned else ""
        load = _thread_load(inp, array_name) if array_name else None
        stored = _stored_thread_load(inp, array_name) if array_name else None
        if load is None or (stored is not None and stored[0] > load[0]):
            load = stored
        if load is not None:
            evidence += [
                Evidence(f"{array_name}_{group.level.name} thread CPU (peak)", round(load[0], 1), "% of a core"),
                Evidence("array writes at that moment", mbps(load[1]), "MB/s"),
            ]
        if not evidence:
            continue
        no_simd = raid6 and parity is not None and parity.raid6_simd is False
        if load is not None and load[0] >= MD_THREAD_SATURATED_PERCENT:
            severity = Severity.WARNING
            title = f"{array_name}'s parity thread is saturated ({load[0]:.0f}% of a core): the CPU limits writes"
        elif no_simd:
            severity = Severity.WARNING
            title = f"raid6 parity uses {parity.raid6_algorithm if parity else '?'}: no SIMD, parity costs double"
        else:
            severity = Severity.INFO
            algorithm = (parity.raid6_algorithm if raid6 else parity.xor_function) if parity else None
            title = f"Parity on {group.name}: {algorithm or 'kernel routine unknown'}"
            if load is not None:
                title += f", md thread at {load[0]:.0f}% of a core"
        findings.append(
            Finding(
                id=f"parity-cpu:{group.name}",
                severity=severity,
                title=title,
                evidence=tuple(evidence),
                why=(
                    "Finding 3 (docs/findings.md): a raid6 volume pushed ~400 MB/s of 64 KiB sequential writes "
                    "with its md127_raid6 thread at just under 10% of a core with AVX, ~250 MB/s at ~20% without; "
                    "reads of a clean array cost md almost nothing. The boot-time gen()/xor() figures are per "
                    "core, far above what real writes reach."
                ),
                what_to_do=(
                    "Measure it with the parity-cost run (64 KiB writes with the md thread's CPU); a saturated "
                    "thread can be helped with group_thread_cnt in /sys/block/mdX/md/ (no measured figure for it "
                    "yet: measure before and after)."
                ),
                experiment="parity-cost",
            )
        )
    return findings
