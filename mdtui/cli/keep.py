"""`mdtui persist`, `mdtui repair`, `mdtui scrub`: keep an array across reboots, failures and bit rot."""

from __future__ import annotations

import argparse
import json
import sys

from mdtui.cli.common import confirm


def _device(text: str) -> str:
    return text if text.startswith("/dev/") else f"/dev/{text}"


def add_keep_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `persist`, `repair` and `scrub` on the top-level `mdtui` subparsers."""
    persist = sub.add_parser(
        "persist",
        help="add the array's ARRAY line to mdadm.conf and refresh the initramfs (it comes back after a reboot)",
    )
    persist.add_argument("device", metavar="ARRAY", help="/dev/md0 or md0")
    persist.add_argument("--conf", metavar="PATH", help="mdadm.conf to edit (default: the distribution's own)")
    persist.add_argument("--no-initramfs", action="store_true", help="only edit mdadm.conf")
    persist.add_argument("--dry-run", action="store_true", help="print the diff and the command, change nothing")
    persist.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    persist.add_argument("--json", action="store_true", help="print the plan (and what ran) as JSON")


def cmd_persist(args: argparse.Namespace) -> int:
    from mdtui.keep.persist import describe_persist, plan_persist, refresh_initramfs, write_conf
    from mdtui.probe.root import SystemRoot

    system = SystemRoot(args.root)
    plan = plan_persist(_device(args.device), root=system, conf_path=args.conf)
    report: dict = {
        "device": plan.device,
        "array_line": plan.brief,
        "conf": plan.edit.path,
        "diff": plan.edit.diff(),
        "initramfs": None if args.no_initramfs else list(plan.initramfs_argv),
    }
    if not args.json:
        print("\n".join(describe_persist(plan)))
    if args.dry_run:
        if args.json:
            print(json.dumps(report, indent=2))
        return 0
    token = plan.device.removeprefix("/dev/")
    if plan.edit.changed:
        if not confirm(args, f"write {plan.edit.path} (the diff above)", token):
            print("Cancelled; nothing was written.")
            return 1
        write_conf(plan, confirmed=True, root=system)
        report["wrote"] = plan.edit.path
        if not args.json:
            print(f"wrote {plan.edit.path}")
    if args.no_initramfs:
        if args.json:
            print(json.dumps(report, indent=2))
        return 0
    if not confirm(args, f"run {' '.join(plan.initramfs_argv)}", token):
        print(f"Cancelled; the initramfs still has the old {plan.edit.path} (run {' '.join(plan.initramfs_argv)}).")
        return 1

    def show(text: str) -> None:
        out = sys.stderr if args.json else sys.stdout
        out.write(text)
        out.flush()

    result = refresh_initramfs(plan, confirmed=True, on_output=show)
    report["initramfs_seconds"] = round(result.duration_s, 1)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{plan.initramfs_argv[0]} finished in {result.duration_s:.0f} s; {plan.device} will assemble at boot")
    return 0
