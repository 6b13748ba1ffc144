"""`mdtui calibrate`: measure md's own ceilings on this host (RAM-backed members) and store them."""

from __future__ import annotations

import argparse
import os
import sys
import time

from mdtui.cli.common import confirm, print_json
from mdtui.errors import MdtuiError
from mdtui.format import rate_mb_s
from mdtui.probe.root import live_refusal
from mdtui.run.calibrate import RUNTIME_S, execute, plan_calibration
from mdtui.store.calibration import save_calibration


def add_calibrate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "calibrate",
        help="measure md's own ceilings on this host (RAM-backed members, no disk touched)",
        description=(
            "Measure md's stripe thread (raid5/6 full-stripe and 4 KiB random writes), its parity routines (the "
            "kernel's boot benchmark) and the latency md adds at Q1, over four null_blk RAM devices of its own; "
            "store them for every prediction on this host. Needs root, null_blk and configfs."
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
    if not confirm(args, "make 4 null_blk RAM devices and md arrays over them", "calibrate"):
        print("Cancelled; nothing was run.")
        return 1
    started = time.monotonic()

    def report(line: str) -> None:
        # Each step with the seconds since the start: where a slow host spends them.
        print(f"{time.monotonic() - started:6.1f} s  {line}", file=sys.stderr if args.json else sys.stdout)

    calibration = execute(plan, report=report)
    where = save_calibration(calibration)
    if args.json:
        print_json(calibration.as_json() | {"stored": str(where)})
        return 0
    print("")
    for name, figures in calibration.levels.items():
        iops = figures.stripe_small_write_iops
        print(
            f"{name}: full-stripe write {_mb(figures.stripe_write_bytes_per_s)}, 4 KiB random write "
            f"{'not measured' if iops is None else f'{iops:,.0f} IOPS'}, parity {_mb(figures.parity_bytes_per_s)}"
        )
    latency = calibration.layer_latency_s
    print(f"md's added Q1 latency: {'not measured' if latency is None else f'{latency * 1e6:,.0f} µs'}")
    print(f"stored in {where}")
    return 0
