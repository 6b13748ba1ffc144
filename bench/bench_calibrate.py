"""`mdtui calibrate` in the lab, then its predictions against raid5/6 and raid0 over four unthrottled NVMe.

Boots one QEMU guest (tests/lab) with four unthrottled NVMe: `mdtui calibrate` measures md's ceilings over
null_blk RAM members; member-matrix measures the first NVMe (reused for all four, they are alike); then
`mdtui predict --json` (now with the calibration) against the array measured with the same jobs as custom
runs on /dev/md0: raid5 and raid6 sequential and random writes, raid0's Q1 read latency. Prints a markdown
table (level, workload, predicted, measured, ratio, bound).

Run: ``.venv/bin/python -m bench.bench_calibrate`` (a few minutes under TCG). The calibration runs on RAM
devices and the array on emulated NVMe, so under TCG the emulator's CPU shares the bound with md: read the
ratio within one run, not the absolute figures.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from tests.lab.harness import Guest, Machine, boot, create_md0, mdtui_json, nvme

DB = "/tmp/mdtui-bench-calibrate.db"
STATE = "/tmp/mdtui-bench-calibrate-state"
ENV = {"MDTUI_DB": DB, "MDTUI_STATE_DIR": STATE}
STEP_S = 6
FREE = tuple(nvme(f"FREE{i}", "256M") for i in range(4))
MACHINE = Machine(name="bench-calibrate", cpus=2, memory_mb=2048, disks=FREE)

SEQ_WRITE = ("--rw", "write", "--bs", "1m", "--iodepth", "8", "--numjobs", "8")
RAND_WRITE = ("--rw", "randwrite", "--bs", "4k", "--iodepth", "32", "--numjobs", "8")
Q1_READ = ("--rw", "randread", "--bs", "4k", "--iodepth", "1", "--numjobs", "1")
# (level, predict --json key, custom job, unit)
CASES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("5", "seq_write_mb_s", SEQ_WRITE, "MB/s"),
    ("5", "rand_write_iops", RAND_WRITE, "IOPS"),
    ("6", "seq_write_mb_s", SEQ_WRITE, "MB/s"),
    ("6", "rand_write_iops", RAND_WRITE, "IOPS"),
    ("0", "q1_read_latency_us", Q1_READ, "µs"),
)


def mdtui(guest: Guest, *args: str, timeout: float = 900) -> dict[str, Any]:
    return mdtui_json(guest, *args, env=ENV, timeout=timeout)


def value_of(step: dict[str, Any], key: str) -> float | None:
    if key.startswith("seq_write"):
        return float(step["write_bytes_per_s"]) / 1e6
    if key.endswith("iops"):
        return float(step["iops"])
    latency = step["metrics"].get("read_lat_mean_ns")
    return latency / 1e3 if latency else None


def member_figures(guest: Guest, target: str) -> str:
    # --quick (a few seconds a step): under TCG md, not the member, bounds the writes compared here.
    steps = mdtui(guest, "bench", "--preset", "member-matrix", "--target", target, "--quick", "--json", "--yes")[
        "steps"
    ]
    seq_read = steps[0]["read_bytes_per_s"] / 1e6
    seq_write = steps[1]["write_bytes_per_s"] / 1e6
    q1 = steps[4]["metrics"]["read_lat_mean_ns"] / 1e3
    return (
        f"seq-read={seq_read:.1f}MB/s,seq-write={seq_write:.1f}MB/s,rand-read={steps[2]['iops']:.0f},"
        f"rand-write={steps[3]['iops']:.0f},q1-read={q1:.0f}us,rotational=no"
    )


def main() -> None:
    started = time.monotonic()
    guest = boot(MACHINE, boot_timeout=300)
    try:
        print(f"booted in {guest.boot_seconds:.0f} s")
        guest.run(["sh", "-c", "modprobe configfs; mount -t configfs none /sys/kernel/config"], check=False)
        guest.run(["rm", "-rf", DB, DB + "-wal", DB + "-shm", STATE])
        calibration = mdtui(guest, "calibrate", "--yes", "--json")
        print("calibration:", json.dumps({k: calibration[k] for k in ("levels", "layer_latency_s")}))
        figures = member_figures(guest, guest.device(FREE[0].serial))
        print(f"member (member-matrix on {FREE[0].serial}, reused for all four): {figures}\n")
        rows = [
            "| level | workload | predicted | measured | measured/predicted | bound (basis) |",
            "|---|---|---|---|---|---|",
        ]
        by_level: dict[str, list[tuple[str, tuple[str, ...], str]]] = {}
        for level, key, job, unit in CASES:
            by_level.setdefault(level, []).append((key, job, unit))
        for level, cases in by_level.items():
            prediction = mdtui(
                guest, "predict", "--level", level, "--members", "4", "--member-figures", figures, "--json"
            )
            create_md0(guest, level, tuple(d.serial for d in FREE))
            try:
                steps = [
                    mdtui(guest, "bench", "--preset", "custom", "--target", "/dev/md0", *job, "--runtime", str(STEP_S),
                          "--json", "--yes")["steps"][0]
                    for _, job, _ in cases
                ]  # fmt: skip
            finally:
                guest.reset_md()
            for (key, _, unit), step in zip(cases, steps, strict=True):
                predicted = prediction["predicted"][key]
                measured = value_of(step, key)
                ratio = f"{measured / predicted:.2f}" if predicted and measured is not None else "-"
                bound = f"{prediction['bounds'][key]} ({prediction['basis'][key]})"
                rows.append(
                    f"| raid{level} | {key} | {predicted} {unit} | {measured or 0:.1f} {unit} | {ratio} | {bound} |"
                )
            sys.stdout.flush()
        print("\n".join(rows))
    finally:
        guest.close()
    print(f"\ntotal {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
