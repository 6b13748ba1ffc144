"""`mdtui doctor`: what this host gives mdtui and what each missing piece costs, one line each."""

from __future__ import annotations

import argparse
from pathlib import Path

from mdtui import __version__
from mdtui.cli.common import print_json
from mdtui.errors import MdtuiError
from mdtui.probe.host import Check, Status, host_checks
from mdtui.probe.owner import state_dir
from mdtui.probe.root import SystemRoot
from mdtui.store.database import checked_default_db_path


def add_doctor_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "doctor",
        help="what this host gives mdtui (tools, md driver, root, cpufreq, state) and what each missing piece costs",
        description="Check what mdtui can use here: mdadm, fio, smartctl and udev with their versions, the md "
        "driver and its personalities, root, cpufreq, where state and results are kept, and the Textual version. "
        "With --root DIR the md driver, udev database and cpufreq are read from the tree.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def _locations() -> list[tuple[str, Path | MdtuiError, str]]:
    found: list[tuple[str, Path | MdtuiError, str]] = []
    for name, where, what in (
        ("state", state_dir, "guide, experiment and knob journals"),
        ("results", checked_default_db_path, "benchmark results"),
    ):
        try:
            found.append((name, where(), what))
        except MdtuiError as exc:
            found.append((name, exc, what))
    return found


def render_checks(checks: list[Check]) -> str:
    width = max(len(check.name) for check in checks)
    return "\n".join(check.line(width) for check in checks)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Always 0: a missing piece is information (each line says what it costs), not a failure of doctor."""
    checks = host_checks(SystemRoot(args.root), _locations())
    if args.json:
        document = {
            "version": __version__,
            "root": args.root,
            "checks": [{"name": c.name, "status": str(c.status), "found": c.found, "cost": c.cost} for c in checks],
        }
        print_json(document)
        return 0
    print(f"mdtui {__version__} · root {args.root}")
    print(render_checks(checks))
    missing = sum(check.status is not Status.OK for check in checks)
    print(f"{missing} of {len(checks)} need attention" if missing else "everything mdtui uses is here")
    return 0
