"""`mdtui doctor`: what this host gives mdtui and what each missing piece costs, one line each."""

from __future__ import annotations

import argparse

from mdtui import __version__
from mdtui.advise.doctor import doctor_checks, doctor_lines
from mdtui.cli.common import print_json
from mdtui.probe.root import SystemRoot


def add_doctor_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "doctor",
        help="what this host gives mdtui (tools, md driver, root, cpufreq, state) and what each missing piece costs",
        description="Check what mdtui can use here: mdadm, fio, smartctl and udev with their versions, the md "
        "driver and its personalities, root, cpufreq, where state and results are kept, and the Textual version. "
        "With --root DIR the md driver, udev database and cpufreq are read from the tree.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def cmd_doctor(args: argparse.Namespace) -> int:
    """Always 0: a missing piece is information (each line says what it costs), not a failure of doctor."""
    checks = doctor_checks(SystemRoot(args.root))
    if args.json:
        document = {
            "version": __version__,
            "root": args.root,
            "checks": [{"name": c.name, "status": str(c.status), "found": c.found, "cost": c.cost} for c in checks],
        }
        print_json(document)
        return 0
    print(f"mdtui {__version__} · root {args.root}")
    print("\n".join(doctor_lines(checks)))
    return 0
