"""`mdtui advise`: findings about links, CPU, resyncs, geometry and parity, each with its evidence and what to do."""

from __future__ import annotations

import argparse
import sys

from mdtui.advise.about import NO_FINDINGS
from mdtui.advise.findings import WORKLOADS, Finding, finding_lines, workload
from mdtui.advise.host import host_findings
from mdtui.cli.common import print_json
from mdtui.errors import MdtuiError
from mdtui.format import to_jsonable
from mdtui.probe.root import SystemRoot
from mdtui.store.database import default_db_path


def add_advise_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "advise",
        help="findings: slow or downgraded links, CPU governor, resyncs, chunk/level for a workload, parity",
        description=(
            "Look at the disks, arrays, CPU, kernel log and stored results and say what limits the arrays, "
            "with the numbers that show it, why it matters (the measured effect) and what to try."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--workload",
        choices=[w.key for w in WORKLOADS],
        help="what the arrays are for; enables the level, chunk and bitmap advice",
    )
    parser.add_argument("--target", metavar="DEVICE", help="a device about to be benchmarked (/dev/md0)")
    parser.add_argument(
        "--samples", type=int, metavar="N", help="live samples to take one second apart (default 2 live, 1 captured)"
    )
    parser.add_argument("--db", metavar="PATH", help=f"results database (default: $MDTUI_DB, else {default_db_path()})")


def render(findings: tuple[Finding, ...]) -> str:
    if not findings:
        return NO_FINDINGS
    told: dict[str, str] = {}  # each explanation in full once, then "as for <finding> above"
    blocks = ["\n".join(finding_lines(finding, told)) for finding in findings]
    return "\n\n".join(blocks)


def run_advise(args: argparse.Namespace) -> int:
    try:
        if args.samples is not None and args.samples < 0:
            raise MdtuiError(f"--samples must be 0 or more, not {args.samples}")
        chosen = workload(args.workload) if args.workload else None
        findings = host_findings(
            SystemRoot(args.root), db=args.db, workload=chosen, target=args.target, samples=args.samples
        )
    except MdtuiError as exc:
        print(f"mdtui: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print_json({"workload": args.workload, "findings": to_jsonable(findings)})
    else:
        print(render(findings))
    return 0
