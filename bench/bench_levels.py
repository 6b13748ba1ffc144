"""`mdtui predict` against the lab: levels 0, 1, 5, 6, 10 over four members, predicted vs measured per workload.

Boots one QEMU guest (tests/lab) with four NVMe throttled by bandwidth AND IOPS (20 MB/s, 500 IOPS each:
the members are the bound, not the emulator: at 1,000 IOPS an array's 8 jobs x QD32 left TCG's CPU the bound
with another guest on the host) and four unthrottled NVMe (there md or the emulator's CPU is
the bound). For each set: the member-matrix preset on the first member (steady state), reused for all four
since their throttles are identical; then per level `mdtui predict --json --members 4 --member-figures ...`
against the same five workloads measured on the array (member-matrix's five jobs as custom runs on
/dev/md0, 6 s each, since member-matrix refuses an array; the array is created with --assume-clean and no
bitmap, and stopped after). Each array step also prints what the members did (their /sys/block/*/stat
before and after): MB read and written, and requests, so a parity write that reads shows it. raid5 and raid6
repeat the sequential write with stripe_cache_size raised from md's 256 to 4096.

Run: ``.venv/bin/python -m bench.bench_levels [--throttled-only] [--steady] [--levels 0,5]
[--workloads rand_write_iops,...]`` (the throttled set alone takes about 25 minutes on a busy 2-core host
under TCG, most of it mdtui and fio starting). ``--steady``: each array step runs up to 20 s and ends once
fio calls it steady, reporting the steady window's mean as the member figures do (a fixed 5 s step's mean
carries the ramp of 8 jobs starting under TCG). Absolute
speeds mean little under emulation: read measured / predicted within one run.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import Any

from mdtui.plan import md_model
from mdtui.plan.figures import parse_member_figures
from mdtui.plan.levels import level_from_name
from tests.lab.harness import Guest, Machine, boot, create_md0, mdtui_json, nvme

MEMBER_BPS = 20_000_000  # 20 MB/s per member ...
MEMBER_IOPS = 500  # ... and 500 IOPS: both far below what TCG moves with 8 jobs x QD32 on md, so the throttle binds
DB = "/tmp/mdtui-bench-levels.db"
LEVELS = ("0", "1", "5", "6", "10")
STEP_S = 5  # seconds per measured array step: five steps per level (each mdtui start costs more under TCG)
STEADY_STEP_S = 20  # with --steady: the step's ceiling; it ends once steady
BIG_STRIPE_CACHE = 4096  # pages per member; md's default is 256
THROTTLED = tuple(
    dataclasses.replace(nvme(f"PACED{i}", "256M", bps_total=MEMBER_BPS), iops_total=MEMBER_IOPS) for i in range(4)
)
FREE = tuple(nvme(f"FREE{i}", "256M") for i in range(4))
MACHINE = Machine(name="bench-levels", cpus=2, memory_mb=1024, disks=(*THROTTLED, *FREE))

# (predict --json key, member-matrix step index, the same job as custom preset options, unit)
WORKLOADS: tuple[tuple[str, int, tuple[str, ...], str], ...] = (
    ("seq_read_mb_s", 0, ("--rw", "read", "--bs", "1m", "--iodepth", "8", "--numjobs", "8"), "MB/s"),
    ("seq_write_mb_s", 1, ("--rw", "write", "--bs", "1m", "--iodepth", "8", "--numjobs", "8"), "MB/s"),
    ("rand_read_iops", 2, ("--rw", "randread", "--bs", "4k", "--iodepth", "32", "--numjobs", "8"), "IOPS"),
    ("rand_write_iops", 3, ("--rw", "randwrite", "--bs", "4k", "--iodepth", "32", "--numjobs", "8"), "IOPS"),
    ("q1_read_latency_us", 4, ("--rw", "randread", "--bs", "4k", "--iodepth", "1", "--numjobs", "1"), "µs"),
)


def mdtui(guest: Guest, *args: str, timeout: float = 900) -> dict[str, Any]:
    return mdtui_json(guest, *args, env={"MDTUI_DB": DB}, timeout=timeout)


def measured(step: dict[str, Any], key: str) -> float | None:
    if key.startswith("seq_read"):
        return step["read_bytes_per_s"] / 1e6
    if key.startswith("seq_write"):
        return step["write_bytes_per_s"] / 1e6
    if key.endswith("iops"):
        return float(step["iops"])
    latency = step["metrics"].get("read_lat_mean_ns")
    return latency / 1e3 if latency else None


def member_stat(guest: Guest, devices: list[str]) -> list[list[int]]:
    """Each member's /sys/block/<dev>/stat fields (reads, read merges, read sectors, ..., write sectors, ...)."""
    names = [device.rsplit("/", 1)[-1] for device in devices]
    text = guest.sh(" ; ".join(f"cat /sys/block/{name}/stat" for name in names)).stdout
    return [[int(field) for field in line.split()] for line in text.splitlines() if line.strip()]


def member_traffic(before: list[list[int]], after: list[list[int]]) -> str:
    """What the members did between two stats: MB read / written (512-byte sectors) and requests."""
    delta = [[a - b for a, b in zip(x, y, strict=False)] for x, y in zip(after, before, strict=True)]
    read_mb = sum(d[2] for d in delta) * 512 / 1e6
    write_mb = sum(d[6] for d in delta) * 512 / 1e6
    reads, writes = sum(d[0] for d in delta), sum(d[4] for d in delta)
    return f"members read {read_mb:.1f} MB in {reads} req, wrote {write_mb:.1f} MB in {writes} req"


def option(name: str) -> str | None:
    """The value after ``name`` on the command line, if given."""
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv[:-1] else None


def array_step(guest: Guest, devices: list[str], job: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    before = member_stat(guest, devices)
    timing = ("--runtime", str(STEADY_STEP_S)) if "--steady" in sys.argv else ("--runtime", str(STEP_S))
    step: dict[str, Any] = mdtui(
        guest, "bench", "--preset", "custom", "--target", "/dev/md0", *job, *timing, "--json", "--yes"
    )["steps"][0]
    return step, member_traffic(before, member_stat(guest, devices))


def matrix(guest: Guest, target: str, *extra: str) -> list[dict[str, Any]]:
    document = mdtui(guest, "bench", "--preset", "member-matrix", "--target", target, "--json", "--yes", *extra)
    steps: list[dict[str, Any]] = document["steps"]
    return steps


def figures_text(steps: list[dict[str, Any]]) -> str:
    """The member's figures as `mdtui predict --member-figures` takes them."""
    seq_read, seq_write, rand_read, rand_write, q1 = (measured(steps[i], key) for key, i, _, _ in WORKLOADS)
    return (
        f"seq-read={seq_read:.1f}MB/s,seq-write={seq_write:.1f}MB/s,rand-read={rand_read:.0f},"
        f"rand-write={rand_write:.0f},q1-read={q1:.0f}us,rotational=no"
    )


def level_table(guest: Guest, title: str, serials: tuple[str, ...]) -> None:
    first = guest.device(serials[0])
    member = matrix(guest, first)
    member_figures = figures_text(member)
    print(f"\n{title}: one member ({first}, member-matrix, steady) reused for all four: {member_figures}")
    for step in member:
        print(f"  member {step['label']}: {step['duration_s']:.0f} s")
    print(f"  {'level':<6} {'workload':<18} {'predicted':>10} {'measured':>10} {'meas/pred':>9}  bound")
    levels = (option("--levels") or ",".join(LEVELS)).split(",")
    keys = (option("--workloads") or ",".join(key for key, _, _, _ in WORKLOADS)).split(",")
    chosen = [workload for workload in WORKLOADS if workload[0] in keys]
    for level in levels:
        prediction = mdtui(
            guest, "predict", "--level", level, "--members", "4", "--member-figures", member_figures, "--json"
        )
        devices = create_md0(guest, level, serials)
        extra: list[str] = []
        try:
            # member-matrix refuses an array (its figures are a member's), so each of its jobs runs as custom.
            steps = [array_step(guest, devices, job) for _, _, job, _ in chosen]
            if level in ("5", "6") and "seq_write_mb_s" in keys:
                guest.sh(f"echo {BIG_STRIPE_CACHE} > /sys/block/md0/md/stripe_cache_size")
                step, traffic = array_step(guest, devices, WORKLOADS[1][2])
                model = md_model.predict(
                    level_from_name(level),
                    [parse_member_figures(member_figures)] * len(serials),
                    stripe_cache_size=BIG_STRIPE_CACHE,
                ).seq_write_bytes_per_s
                value = measured(step, "seq_write_mb_s") or 0
                expected = (model.value or 0) / 1e6
                extra.append(
                    f"  raid{level:<2} seq write, stripe_cache_size {BIG_STRIPE_CACHE}: predicted {expected:.1f}, "
                    f"measured {value:.1f} MB/s, {value / expected if expected else 0:.2f}, {model.bound}; {traffic}"
                )
        finally:
            guest.reset_md()
        for (key, _, _, unit), (step, traffic) in zip(chosen, steps, strict=True):
            predicted = prediction["predicted"][key]
            got = measured(step, key)
            ratio = f"{got / predicted:9.2f}" if predicted and got is not None else "        -"
            shown = f"{predicted:>10.1f}" if predicted is not None else f"{'unknown':>10}"
            print(f"  raid{level:<2} {key:<18} {shown} {got or 0:>10.1f} {ratio}  {prediction['bounds'][key]} "
                  f"[{unit}]; {traffic}")  # fmt: skip
        for line in extra:
            print(line)
        sys.stdout.flush()


def main() -> None:
    started = time.monotonic()
    guest = boot(MACHINE, boot_timeout=300)
    try:
        print(f"booted in {guest.boot_seconds:.0f} s")
        # The guest kernel's own parity benchmark: md's parity CPU under this emulator.
        print(guest.sh("dmesg | grep -E 'raid6: |xor: ' || true").stdout.rstrip())
        guest.run(["rm", "-f", DB, DB + "-wal", DB + "-shm"])
        level_table(
            guest,
            f"members throttled to {MEMBER_BPS / 1e6:.0f} MB/s and {MEMBER_IOPS:,} IOPS (the members are the bound)",
            tuple(d.serial for d in THROTTLED),
        )
        if "--throttled-only" not in sys.argv:
            level_table(guest, "members unthrottled (md or the emulator is the bound)", tuple(d.serial for d in FREE))
    finally:
        guest.close()
    print(f"\ntotal {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
