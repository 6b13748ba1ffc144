"""`mdtui calibrate`: measure md's own ceilings on this host (RAM-backed members) and store them."""

from __future__ import annotations

import argparse
import os
import sys
import time

from mdtui.cli.common import confirm, print_json
from mdtui.errors import MdtuiError
from mdtui.execute.calibrate import RUNTIME_S, execute, plan_calibration
from mdtui.format import rate_mb_s
from mdtui.probe.root import live_refusal
from mdtui.store.calibration import save_calibration


def add_calibrate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "calibrate",
        help="measure md's own ceilings on this host (RAM-backed members, no disk touched)",
        description=(
            "Measure md's own ceilings for every level (raid0, raid1, raid10, raid5, raid6: sequential 1 MiB and "
            "random 4 KiB reads and writes at the predictions' saturating depths; for raid5/6 the stripe thread), "
            "its parity routines (the kernel's boot benchmark) and the latency md adds to a Q1 read and write, over "
            "four null_blk RAM devices of its own; store them for every prediction on this host (CPU and kernel). "
            "Needs root, null_blk and configfs."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the calibration as JSON")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--dry-run", action="store_true", help="show the plan and stop")
    parser.add_argument(
        "--seconds", type=_seconds, default=RUNTIME_S, metavar="S", help=f"each fio run's length (default {RUNTIME_S})"
    )


def _seconds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if not 1 <= value <= 60:
        raise argparse.ArgumentTypeError("give 1 to 60 seconds")
    return value


def _mb(value: float | None) -> str:
    return "not measured" if value is None else rate_mb_s(value)


def cmd_calibrate(args: argparse.Namespace) -> int:
    refusal = live_refusal(getattr(args, "root", "/"), "calibrating (null_blk devices and md arrays)")
    if refusal is not None:
        raise MdtuiError(refusal)
    if os.geteuid() != 0:
        raise MdtuiError("calibrate makes null_blk devices and md arrays: run it as root")
    plan = plan_calibration(runtime_s=args.seconds)
    lines = plan.lines()
    if not args.json:
        print("\n".join(lines))
    if args.dry_run:
        if args.json:
            print_json({"plan": lines})
        return 0
    confirmed = confirm(args, "make 4 null_blk RAM devices and md arrays over them", plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was run.")
        return 1
    started = time.monotonic()

    def report(line: str) -> None:
        # Each step with the seconds since the start: where a slow host spends them.
        print(f"{time.monotonic() - started:6.1f} s  {line}", file=sys.stderr if args.json else sys.stdout)

    calibration = execute(plan, report=report, confirmed=confirmed)
    where = save_calibration(calibration)
    if args.json:
        print_json(calibration.as_json() | {"stored": str(where)})
        return 0
    print("")
    for name, figures in calibration.levels.items():
        parity = figures.stripe_write_bytes_per_s is not None or figures.stripe_small_write_iops is not None
        seq_write = figures.stripe_write_bytes_per_s if parity else figures.seq_write_bytes_per_s
        rand_write = figures.stripe_small_write_iops if parity else figures.rand_write_iops
        line = (
            f"{name}: read {_mb(figures.seq_read_bytes_per_s)}, {_iops(figures.rand_read_iops)}; "
            f"write {_mb(seq_write)}, {_iops(rand_write)}"
        )
        if parity:
            line += f"; parity {_mb(figures.parity_bytes_per_s)}"
        if figures.write_latency_s is not None:
            line += f"; md's Q1 write share {_us(figures.write_latency_s)}"
        print(line)
    print(f"md's added Q1 read latency: {_us(calibration.layer_latency_s)}")
    print(f"stored in {where}")
    return 0


def _iops(value: float | None) -> str:
    return "not measured" if value is None else f"{value:,.0f} IOPS"


def _us(value: float | None) -> str:
    return "not measured" if value is None else f"{value * 1e6:,.0f} µs"
