"""Rules about CPU frequency: the powersave governor and low clocks while I/O runs (finding 2)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from mdtui.advise.findings import Evidence, Finding, Severity
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.format import plural
from mdtui.model.snapshot import Snapshot
from mdtui.store.records import RunRecord

# Finding 2 (docs/findings.md): the CPU never rose above 2.3 of 4.2 GHz (0.55) under powersave during the runs.
LOW_FREQUENCY_FRACTION = 0.6


MIN_LOADED_SNAPSHOTS = 3


# A snapshot counts as "under load" when the devices moved at least this much (a benchmark, not idle noise).
LOAD_BYTES_PER_S = 10e6


GOVERNOR_WHY = (
    "Finding 2 (docs/findings.md): a RAID10 of four SATA SSDs did 669/605 MB/s (sync 512 KiB random "
    "read/write, one job) under intel_pstate powersave against 780/750 MB/s under performance, the spread "
    "between runs grew from ~35 to ~50 MB/s, and the CPU never rose above 2.3 of 4.2 GHz."
)


def _loaded(snapshot: Snapshot, windows: Sequence[tuple[float, float]]) -> bool:
    if any(start <= snapshot.timestamp <= end for start, end in windows):
        return True
    moved = sum((d.read_bytes_per_s or 0.0) + (d.write_bytes_per_s or 0.0) for d in snapshot.devices)
    return moved >= LOAD_BYTES_PER_S


def _run_windows(runs: Sequence[RunRecord]) -> list[tuple[float, float]]:
    return [(r.started_at.timestamp(), r.ended_at.timestamp()) for r in runs if r.ended_at is not None]


def _frequency_fraction(snapshot: Snapshot) -> float | None:
    fractions = [
        core.freq_mhz / core.max_freq_mhz
        for core in snapshot.cpu.cores
        if core.freq_mhz is not None and core.max_freq_mhz
    ]
    return statistics.fmean(fractions) if fractions else None


def rule_governor(inp: AdviceInput) -> list[Finding]:
    """powersave on any core, or frequencies far below the maximum while I/O ran."""
    if not inp.snapshots:
        return []
    findings = []
    cpu = inp.snapshots[-1].cpu
    if cpu.cpufreq_available and "powersave" in cpu.governors:
        on_powersave = [c for c in cpu.cores if c.governor == "powersave"]
        evidence = [
            Evidence("cores on powersave", f"{len(on_powersave)} of {len(cpu.cores)}"),
            Evidence("driver", cpu.driver or "unknown"),
        ]
        if cpu.pstate_status:
            evidence.append(Evidence(f"{cpu.pstate_driver} mode", cpu.pstate_status))
        if (fraction := _frequency_fraction(inp.snapshots[-1])) is not None:
            evidence.append(Evidence("current frequency / maximum", round(fraction * 100, 1), "%"))
        findings.append(
            Finding(
                id="governor-powersave",
                severity=Severity.WARNING,
                title=f"CPU governor is powersave on {len(on_powersave)} of {plural(len(cpu.cores), 'core')}",
                evidence=tuple(evidence),
                why=GOVERNOR_WHY,
                what_to_do=(
                    "Measure what it costs here with the governor A/B run; for benchmarks and storage servers "
                    "set every core to performance (cpupower frequency-set -g performance)."
                ),
                experiment="governor-ab",
            )
        )
    windows = _run_windows(inp.runs)
    loaded = [s for s in inp.snapshots if _loaded(s, windows)]
    fractions = [f for s in loaded if (f := _frequency_fraction(s)) is not None]
    if len(fractions) >= MIN_LOADED_SNAPSHOTS and (median := statistics.median(fractions)) < LOW_FREQUENCY_FRACTION:
        max_mhz = max((c.max_freq_mhz for s in loaded for c in s.cpu.cores if c.max_freq_mhz), default=0.0)
        under_load = (
            Evidence("samples under load", len(fractions)),
            Evidence("median frequency / maximum", round(median * 100, 1), "%"),
            Evidence("maximum frequency", round(max_mhz), "MHz"),
            Evidence("governors", ", ".join(cpu.governors) or "unknown"),
        )
        findings.append(
            Finding(
                id="cpu-frequency-low",
                severity=Severity.WARNING,
                title=f"CPUs ran at {median * 100:.0f}% of their maximum frequency while I/O ran",
                evidence=under_load,
                why=GOVERNOR_WHY,
                what_to_do=(
                    "Latency-bound I/O (one job, queue depth 1) waits on a slow core between requests; run "
                    "the governor A/B to see how much performance gives back."
                ),
                experiment="governor-ab",
            )
        )
    return findings
