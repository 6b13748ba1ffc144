"""Sampler overhead: CPU time per sample with 8, 64 and 256 synthetic block devices and on this host."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mdtui.probe.root import SystemRoot
from mdtui.sample.sampler import Sampler

try:
    from bench.bigtree import sd_name
except ImportError:  # run by path (python bench/bench_sampler.py)
    from bigtree import sd_name  # type: ignore[no-redef]

# CPU per sample by device count: 0.5 ms with 64 devices is 0.05 % of a core at 1 s, 0.2 % at 0.25 s.
TARGETS = {64: 0.0005, 256: 0.002}
CPUS = 16  # a synthetic host's CPU count, each with /proc/stat and cpufreq like a real Intel box


def diskstats_text(names: list[str], tick: int) -> str:
    lines = []
    for number, name in enumerate(names):
        base = (number + 1) * 1000 + tick * 37
        reads = (base, 3, base * 8, base // 2)
        writes = (base, 1, base * 16, base // 3)
        counters = (*reads, *writes, number % 4, base // 4, base, 0, 0, 0, 0, base, 5)
        lines.append(f"{8 + number // 16:4d} {(number % 16) * 16:7d} {name} {' '.join(map(str, counters))}\n")
    return "".join(lines)


def proc_stat_text(tick: int) -> str:
    lines = [f"cpu  {tick * CPUS * 30} 0 {tick * CPUS * 10} {tick * CPUS * 55} {tick * CPUS * 5} 0 0 0 0 0\n"]
    lines += [f"cpu{cpu} {tick * 30} 0 {tick * 10} {tick * 55} {tick * 5} 0 0 0 0 0\n" for cpu in range(CPUS)]
    lines.append("intr " + " 0" * 512 + "\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n")
    return "".join(lines)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build_tree(base: Path, count: int) -> list[str]:
    """A /proc and /sys with count disks, CPUS CPUs with cpufreq, and one raid6 array with its thread."""
    names = [sd_name(i) for i in range(count)]
    for number, name in enumerate(names):
        block = base / "sys" / "block" / name
        write(block / "dev", f"{8 + number // 16}:{(number % 16) * 16}\n")
        write(block / "size", "7814037168\n")
        write(block / "queue" / "rotational", "0\n")
    write(base / "proc" / "diskstats", diskstats_text(names, 0))
    write(base / "proc" / "stat", proc_stat_text(0))
    for cpu in range(CPUS):
        policy = base / "sys" / "devices" / "system" / "cpu" / "cpufreq" / f"policy{cpu}"
        for file, value in (
            ("affected_cpus", str(cpu)),
            ("scaling_cur_freq", "2400000"),
            ("scaling_governor", "powersave"),
            ("scaling_driver", "intel_pstate"),
            ("cpuinfo_max_freq", "4200000"),
            ("cpuinfo_min_freq", "800000"),
            ("scaling_max_freq", "4200000"),
            ("scaling_min_freq", "800000"),
            ("energy_performance_preference", "balance_performance"),
        ):
            write(policy / file, value + "\n")
    write(base / "sys" / "devices" / "system" / "cpu" / "intel_pstate" / "status", "active\n")
    members = " ".join(f"{name}[{i}]" for i, name in enumerate(names[:4]))
    write(
        base / "proc" / "mdstat",
        "Personalities : [raid6] [raid5] [raid4]\n"
        f"md0 : active raid6 {members}\n"
        "      2093056 blocks super 1.2 level 6, 512k chunk, algorithm 2 [4/4] [UUUU]\n\nunused devices: <none>\n",
    )
    write(base / "proc" / "4321" / "comm", "md0_raid6\n")
    write(base / "proc" / "4321" / "stat", "4321 (md0_raid6) S 2" + " 0" * 9 + " 12 345" + " 0" * 23 + " 3" + " 0" * 13)
    return names


def measure(sampler: Sampler, samples: int, rounds: int, between: Callable[[int], None] | None = None) -> list[float]:
    """CPU seconds (user + system, so the kernel's work producing /proc counts) per sample(), one mean per round.

    The caller reports the best and the median round: other processes on a shared machine only ever
    add time, so the best round is the sampler's own cost and the median shows the noise.
    """
    # Samples are stamped as 1 s apart, so the settings refresh (every 5 s) and the md thread rescan
    # (every 30 s) cost what they would at the default interval, though the loop runs flat out.
    sampler.sample(now=0.0)  # the first sample finds devices and threads; it is not a steady-state tick
    means = []
    tick = 0
    for _ in range(rounds):
        spent = 0.0
        for _ in range(samples):
            tick += 1
            if between is not None:
                between(tick)  # advancing the synthetic counters is not the sampler's cost
            started = time.process_time()
            sampler.sample(now=float(tick))
            spent += time.process_time() - started
        means.append(spent / samples)
    return means


def describe(means: list[float]) -> str:
    return f"best {min(means) * 1e6:7.1f} µs, median {statistics.median(means) * 1e6:7.1f} µs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=500, help="samples per round (default 500)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per measurement (default 5)")
    args = parser.parse_args(argv)

    print(f"sampler CPU time per sample (time.process_time, user + system), {args.rounds} rounds of {args.samples}")
    print("samples stamped 1 s apart; every synthetic device's counters change each tick (the worst case)")
    met = True
    with tempfile.TemporaryDirectory(prefix="mdtui-bench-") as directory:
        for count in (8, 64, 256):
            base = Path(directory) / f"devices-{count}"
            names = build_tree(base, count)
            diskstats, stat = base / "proc" / "diskstats", base / "proc" / "stat"

            def advance(tick: int, names: list[str] = names, diskstats: Path = diskstats, stat: Path = stat) -> None:
                diskstats.write_text(diskstats_text(names, tick))
                stat.write_text(proc_stat_text(tick))

            sampler = Sampler(SystemRoot(base), history_length=args.samples)
            means = measure(sampler, args.samples, args.rounds, advance)
            snapshot = sampler.history.latest()
            assert snapshot is not None and len(snapshot.devices) == count
            verdict = ""
            if count in TARGETS:
                # Judged on the median round, as bench_bighost judges its sampler figures: the best round
                # alone read "met" for a median above the target on a slow minute.
                hit = statistics.median(means) <= TARGETS[count]
                met = met and hit
                verdict = f"  target <= {TARGETS[count] * 1e3:g} ms (median): {'met' if hit else 'MISSED'}"
            print(f"  synthetic, {count:3d} devices, {CPUS} CPUs: {describe(means)}{verdict}")

    sampler = Sampler(SystemRoot("/"), history_length=args.samples)
    means = measure(sampler, args.samples, args.rounds)
    snapshot = sampler.history.latest()
    assert snapshot is not None
    cpufreq = "available" if snapshot.cpu.cpufreq_available else "not available"
    print(
        f"  live host, {len(snapshot.devices)} active devices, {os.cpu_count()} CPUs, "
        f"{len(snapshot.arrays)} md arrays, cpufreq {cpufreq}: {describe(means)}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
