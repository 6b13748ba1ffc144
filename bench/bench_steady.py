"""Steady state against fixed time in the lab: wall time and each figure's ratio, and a member with a write burst.

Boots one QEMU guest (tests/lab) with four NVMe members throttled to 40 MB/s each, so the figures are the
throttle and not the emulator, plus two NVMe throttled to 20 MB/s with a burst to 60 MB/s (QEMU's
``throttling.bps-total-max``, max-length 15 s, then 4 s), standing in for drives
whose write cache holds a faster figure for a while.

1. weakest-link and disk-mark on a raid0 of the four members, ``--fixed-time`` then steady (the default):
   wall time of each run and, per step, steady / fixed (reads should be within ±5 %).
2. parity-cost (its first step is a 64 KiB sequential write) on a raid1 of the two burst drives, fixed-time
   (30 s) then steady, the throttle's burst reset before each: the fixed figure, the steady figure, the
   sustained throttle, and whether the steady run says it reached steady state.

3. ``--levels-only``: ``mdtui experiment levels --preset parity-cost`` (levels 0, 10, 5, 6) over the four
   paced members, ``--fixed-time`` then steady: wall time and each stored figure's ratio.

Run: ``.venv/bin/python -m bench.bench_steady`` (``--burst-only``: part 2 alone, ``--levels-only``: part 3
alone; a few minutes each on a busy 2-core host under TCG). Absolute speeds mean little under emulation:
read the ratios within one run.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import time
from typing import Any

from tests.lab.harness import Guest, Machine, boot, create_md0, nvme

MEMBER_BPS = 40_000_000  # 40 MB/s per member: far below what TCG moves, so the throttle is the bound
BURST_BPS = 20_000_000  # the burst drives' sustained throttle
BURST_MAX_BPS = 60_000_000  # their burst, 3x the sustained figure ...
BURST_SECONDS = 15  # ... with this max-length: about 22 s at the full burst rate (see main)
# 4 s ends (about 6 s in) before the write criterion's 5 s ramp + 10 s window; 40 s is meant to outlast the
# ramp, the window and the confirmation (in the lab it ran out inside the confirmation: docs/performance.md).
BURST_LENGTHS = (BURST_SECONDS, 4, 40)
DB = "/tmp/mdtui-bench-steady.db"
READ_TOLERANCE = 0.05  # the claim: a steady read figure within ±5 % of the fixed-time one

MEMBERS = tuple(nvme(f"PACED{i}", "256M", bps_total=MEMBER_BPS) for i in range(4))
BURSTS = tuple(
    dataclasses.replace(
        nvme(f"BURST{i}", "128M", bps_total=BURST_BPS),
        bps_total_max=BURST_MAX_BPS,
        bps_total_max_length=BURST_SECONDS,
    )
    for i in range(2)
)
MACHINE = Machine(name="bench-steady", cpus=2, memory_mb=1024, disks=(*MEMBERS, *BURSTS))

# The progress line of a finished step on stderr: "[3/6] label: 40.1 MB/s, 0 IOPS, steady after 7 s".
_FINISHED = re.compile(r"^\[(\d+)/\d+\] (.*?): .*?(, steady after.*|, NOT steady.*)?$")


def bench(guest: Guest, *args: str, timeout: float = 1500) -> tuple[dict[str, Any], float, dict[int, str]]:
    """One `mdtui bench --json` run: its document, its wall time, and each step's steady words (by index)."""
    started = time.monotonic()
    result = guest.run(
        [guest.python_exe, "-m", "mdtui", "bench", *args, "--json", "--yes"],
        env={"MDTUI_DB": DB},
        timeout=timeout,
        check=False,
    )
    wall = time.monotonic() - started
    if result.rc != 0:
        raise SystemExit(f"mdtui bench {' '.join(args)}: rc {result.rc}\n{result.stderr[-2000:]}")
    words: dict[int, str] = {}
    for line in result.stderr.replace("\r", "\n").splitlines():
        match = _FINISHED.match(line.strip())
        if match:
            words[int(match.group(1))] = (match.group(3) or "").lstrip(", ")
    document: dict[str, Any] = json.loads(result.stdout)
    return document, wall, words


def figure(step: dict[str, Any]) -> tuple[float | None, str]:
    """The step's headline figure: IOPS for 4 KiB steps, MB/s otherwise."""
    if "4K" in step["label"] or "random" in step["label"]:
        return step["iops"], "IOPS"
    value = step["bytes_per_s"]
    return (value / 1e6 if value is not None else None), "MB/s"


def compare(guest: Guest, preset: str, extra: tuple[str, ...]) -> None:
    fixed, fixed_wall, _ = bench(guest, "--preset", preset, "--target", "/dev/md0", *extra, "--fixed-time")
    steady, steady_wall, words = bench(guest, "--preset", preset, "--target", "/dev/md0", *extra)
    print(f"\n{preset} on raid0 of 4 × {MEMBER_BPS / 1e6:.0f} MB/s: wall fixed {fixed_wall:.0f} s, "
          f"steady {steady_wall:.0f} s ({steady_wall / fixed_wall:.2f} ×)")  # fmt: skip
    print(f"  {'step':<28} {'fixed':>10} {'steady':>10} {'ratio':>6}  {'':4} steady run")
    for a, b in zip(fixed["steps"], steady["steps"], strict=True):
        value_a, unit = figure(a)
        value_b, _ = figure(b)
        ratio = value_b / value_a if value_a and value_b is not None else None
        reads = "write" not in a["label"]
        flag = "" if ratio is None or not reads else ("ok" if abs(ratio - 1) <= READ_TOLERANCE else "OUT")
        ratio_text = f"{ratio:6.3f}" if ratio is not None else "     -"
        print(f"  {a['label']:<28} {value_a or 0:>10.1f} {value_b or 0:>10.1f} {ratio_text}  {flag:<4} "
              f"{b['duration_s']:.0f} s, {words.get(b['index'], '?')} [{unit}]")  # fmt: skip


def reset_burst(guest: Guest, seconds: int) -> None:
    """Set the burst drives' throttle again (burst length ``seconds``): QEMU empties its buckets, so each run
    starts with a full burst."""
    for i, disk in enumerate(MACHINE.disks):
        if disk.bps_total_max:
            guest.qmp(
                "block_set_io_throttle",
                device=f"d{i}",
                bps=disk.bps_total, bps_rd=0, bps_wr=0, iops=0, iops_rd=0, iops_wr=0,
                bps_max=disk.bps_total_max, bps_max_length=seconds,
            )  # fmt: skip


def burst(guest: Guest, seconds: int) -> None:
    runs = {}
    for mode, extra in (("fixed", ("--fixed-time",)), ("steady", ())):
        reset_burst(guest, seconds)
        runs[mode] = bench(guest, "--preset", "parity-cost", "--target", "/dev/md0", *extra)
    fixed_doc, fixed_wall, _ = runs["fixed"]
    steady_doc, steady_wall, words = runs["steady"]
    write_fixed, write_steady = fixed_doc["steps"][0], steady_doc["steps"][0]
    fixed_mb = write_fixed["write_bytes_per_s"] / 1e6
    steady_mb = write_steady["write_bytes_per_s"] / 1e6
    sustained = BURST_BPS / 1e6
    print(f"\nburst: raid1 of 2 drives throttled to {sustained:.0f} MB/s with a burst to {BURST_MAX_BPS / 1e6:.0f} "
          f"MB/s, max-length {seconds} s; parity-cost's 64 KiB sequential write step")  # fmt: skip
    print(f"  fixed-time ({write_fixed['duration_s']:.0f} s): {fixed_mb:.1f} MB/s "
          f"= {fixed_mb / sustained:.2f} × sustained")  # fmt: skip
    print(f"  steady ({write_steady['duration_s']:.0f} s): {steady_mb:.1f} MB/s "
          f"= {steady_mb / sustained:.2f} × sustained; {words.get(1, '?') or 'no steady words'}")  # fmt: skip
    print(f"  sustained throttle {sustained:.0f} MB/s; wall fixed {fixed_wall:.0f} s, steady {steady_wall:.0f} s")


LEVELS_PRESET = "parity-cost"  # one write and one read step per level: the level comparison's own question
_LEVEL_FIGURES = """
import json
from mdtui.store.runs import ResultsStore
with ResultsStore({db!r}) as store:
    rows = []
    for run in store.get_runs({ids!r}):
        steady = run.steady
        rows.append({{
            "level": run.array.get("level"), "step": str(run.params.get("step") or run.preset),
            "figure": run.metrics.write_bw_bytes_per_s or run.metrics.read_bw_bytes_per_s,
            "seconds": (run.ended_at - run.started_at).total_seconds() if run.ended_at else None,
            "steady": None if steady is None else [steady.attained, steady.after_s, steady.fell_percent],
        }})
    print(json.dumps(rows))
"""


def experiment(guest: Guest, *extra: str) -> tuple[list[dict[str, Any]], float]:
    """One `mdtui experiment levels` over the four paced members: each stored step's figure, and the wall time."""
    members = [guest.device(d.serial) for d in MEMBERS]
    started = time.monotonic()
    result = guest.run(
        [guest.python_exe, "-m", "mdtui", "experiment", "levels", "--preset", LEVELS_PRESET, *members,
         "--device", "/dev/md0", "--json", "--yes", *extra],
        env={"MDTUI_DB": DB}, timeout=3000, check=False,
    )  # fmt: skip
    wall = time.monotonic() - started
    if result.rc != 0:
        raise SystemExit(f"mdtui experiment levels {' '.join(extra)}: rc {result.rc}\n{result.stderr[-2000:]}")
    ids = [i for point in json.loads(result.stdout)["points"] for i in point["run_ids"]]
    rows = guest.python(_LEVEL_FIGURES.format(db=DB, ids=ids)).stdout
    return json.loads(rows.strip().splitlines()[-1]), wall


def levels(guest: Guest) -> None:
    """The level comparison, fixed-time against steady, same members: wall time and each figure's ratio."""
    fixed, fixed_wall = experiment(guest, "--fixed-time")
    steady, steady_wall = experiment(guest)
    print(f"\nexperiment levels --preset {LEVELS_PRESET} on 4 × {MEMBER_BPS / 1e6:.0f} MB/s: wall fixed "
          f"{fixed_wall:.0f} s, steady {steady_wall:.0f} s ({steady_wall / fixed_wall:.2f} ×)")  # fmt: skip
    print(f"  {'level':<7} {'step':<24} {'fixed MB/s':>10} {'steady':>10} {'ratio':>6}  steady run")
    for a, b in zip(fixed, steady, strict=True):
        ratio = b["figure"] / a["figure"] if a["figure"] and b["figure"] is not None else None
        state = b["steady"]
        words = "not judged" if state is None else (
            f"{b['seconds']:.0f} s, " + ("steady" if state[0] else "NOT steady")
            + (f", fell {state[2]:.0f}%" if state[2] is not None and state[2] > 5 else "")
        )  # fmt: skip
        ratio_text = f"{ratio:6.3f}" if ratio is not None else "     -"
        print(f"  {a['level']:<7} {a['step']:<24} {(a['figure'] or 0) / 1e6:>10.1f} {(b['figure'] or 0) / 1e6:>10.1f} "
              f"{ratio_text}  {words}")  # fmt: skip


def main() -> None:
    started = time.monotonic()
    guest = boot(MACHINE, boot_timeout=300)
    try:
        print(f"booted in {guest.boot_seconds:.0f} s")
        guest.run(["rm", "-f", DB, DB + "-wal", DB + "-shm"])
        if "--levels-only" in sys.argv:
            levels(guest)
            return
        if "--burst-only" not in sys.argv:
            create_md0(guest, "0", tuple(d.serial for d in MEMBERS))
            # 2 jobs × QD4 × 4 MiB: the preset's 16 × 12 buffers per member do not fit the guest's memory.
            compare(guest, "weakest-link", ("--numjobs", "2", "--iodepth", "4"))
            compare(guest, "disk-mark", ())
            guest.reset_md()
        create_md0(guest, "1", tuple(d.serial for d in BURSTS))
        # QEMU's bucket holds bps_max × max-length and drains at bps_total, so at the full burst rate the
        # burst lasts max-length × max / (max - sustained): 1.5 × max-length here.
        for seconds in BURST_LENGTHS:
            burst(guest, seconds)
    finally:
        guest.close()
    print(f"\ntotal {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
