"""`mdtui persist`, `mdtui repair`, `mdtui scrub`: keep an array across reboots, failures and bit rot."""

from __future__ import annotations

import argparse
import sys
import time

from mdtui.cli.common import confirm, print_json, show_plan
from mdtui.errors import MdtuiError
from mdtui.format import plural

# How long to wait for md to start a recovery or check after the command that asks for it.
START_WAIT_S = 5.0


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
    if show_plan(args, describe_persist(plan), report):
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
            print_json(report)
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
        print_json(report)
    else:
        print(f"{plan.initramfs_argv[0]} finished in {result.duration_s:.0f} s; {plan.device} will assemble at boot")
    return 0


def add_repair_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    repair = sub.add_parser("repair", help="fail, remove, add, replace or re-add a member; follow the recovery")
    repair.add_argument("device", metavar="ARRAY", help="/dev/md0 or md0")
    what = repair.add_mutually_exclusive_group(required=True)
    what.add_argument("--fail", metavar="MEMBER", help="mark a member failed")
    what.add_argument("--remove", metavar="MEMBER", help="remove a failed or spare member (or: failed, detached)")
    what.add_argument("--add", metavar="DISK", help="add a disk (a spare, or the rebuild target when degraded)")
    what.add_argument("--replace", metavar="MEMBER", help="copy a member onto --with SPARE, keeping redundancy")
    what.add_argument("--re-add", metavar="DISK", dest="re_add", help="re-add a member that was removed")
    repair.add_argument("--with", metavar="SPARE", dest="with_disk", help="the disk --replace copies onto")
    repair.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    repair.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    repair.add_argument("--no-follow", action="store_true", help="do not wait for the recovery")
    repair.add_argument("--full-speed", action="store_true", help="let the recovery run at full speed")
    repair.add_argument("--json", action="store_true", help="print the plan (and what ran) as JSON")

    scrub = sub.add_parser(
        "scrub", help="check (or --repair) an array's redundancy; show mismatch_cnt and the schedule"
    )
    scrub.add_argument("device", metavar="ARRAY", nargs="?", help="/dev/md0 or md0 (none: only show the schedule)")
    scrub.add_argument("--repair", action="store_true", help="rewrite mismatched copies/parity instead of counting")
    scrub.add_argument("--no-follow", action="store_true", help="start it and return")
    scrub.add_argument("--full-speed", action="store_true", help="let it run at full speed")
    scrub.add_argument("--yes", action="store_true", help="do not ask for confirmation (repair)")
    scrub.add_argument("--dry-run", action="store_true", help="print what would be written to start it, and stop")
    scrub.add_argument("--json", action="store_true", help="print the outcome as JSON")


def _follow(device: str, args: argparse.Namespace, system: object) -> dict:
    """Follow a recovery/check like create follows a resync: progress, speed, ETA on one line."""
    from mdtui.cli.progress import print_sync_progress
    from mdtui.model.array import MdArray
    from mdtui.run.mdadm import find_array, follow_sync

    seen: dict = {"actions": []}

    def show(array: MdArray) -> None:
        if array.sync is not None and array.sync.action not in seen["actions"]:
            seen["actions"].append(array.sync.action)
        if not args.json:
            print_sync_progress(array)

    # md starts the recovery or check a moment after the command returns: wait for it to show (or for the
    # array to be whole, a tiny one may finish first) before following it to the end.
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        now = find_array(system, device)  # type: ignore[arg-type]
        if now is None or now.sync is not None or (not now.degraded and not getattr(args, "expect_sync", False)):
            break
        time.sleep(0.2)
    final = follow_sync(device, root=system, on_update=show)  # type: ignore[arg-type]
    if not args.json and seen["actions"]:
        print()
    seen["degraded"] = final.degraded if final is not None else None
    return seen


def cmd_repair(args: argparse.Namespace) -> int:
    from mdtui.cli.common import find_disk
    from mdtui.keep.repair import describe_repair, execute_repair, plan_repair
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot
    from mdtui.run.mdadm import array_uuid, find_array, set_full_resync_speed

    system = SystemRoot(args.root)
    device = _device(args.device)
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    inventory = scan(args.root)
    action, member, disk_text = _action(args)
    disk = find_disk(inventory, disk_text, args.root) if disk_text else None
    component_kib = system.read_int(f"/sys/block/{array.name}/md/component_size")
    plan = plan_repair(
        array,
        action,
        member=member,
        disk=disk,
        uuid=array_uuid(array.dev_path) if system.is_live else None,
        component_bytes=component_kib * 1024 if component_kib else None,
    )
    report: dict = {"plan": [list(step.argv) for step in plan.steps], "warnings": list(plan.warnings)}
    if show_plan(args, describe_repair(plan), report):
        return 0
    token = disk.name if disk is not None and action != "re-add" else array.name
    if not confirm(args, f"{action} on {array.dev_path}" + (f" and overwrite {disk.name}" if disk else ""), token):
        print("Cancelled; nothing was run.")
        return 1
    results = execute_repair(plan, confirmed=True, root=system)
    report["ran"] = [{"argv": list(r.argv), "returncode": r.returncode} for r in results]
    if not args.json:
        print(f"{action} on {array.dev_path}: done")
    if plan.follows_recovery and not args.no_follow:
        if args.full_speed:
            report["sync_speed_min_kib_s"] = set_full_resync_speed(array.dev_path, True, root=system)
        args.expect_sync = plan.action == "replace"
        report["recovery"] = _follow(array.dev_path, args, system)
        if not args.json:
            state = report["recovery"]["degraded"]
            print("recovery finished" + (f"; {array.name} still misses {plural(state, 'member')}" if state else ""))
    if args.json:
        print_json(report)
    return 0


def _action(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    """(action, member acted on, disk to write) from the mutually exclusive options."""
    if args.with_disk and not args.replace:
        raise MdtuiError("--with goes with --replace MEMBER")
    if args.fail:
        return "fail", args.fail, None
    if args.remove:
        return "remove", args.remove, None
    if args.add:
        return "add", None, args.add
    if args.replace:
        if not args.with_disk:
            raise MdtuiError("--replace MEMBER needs --with SPARE (the disk to copy onto)")
        return "replace", args.replace, args.with_disk
    return "re-add", None, args.re_add


def cmd_scrub(args: argparse.Namespace) -> int:
    from mdtui.keep.scrub import describe_schedule, mismatch_sectors, plan_scrub, read_schedule, start_scrub
    from mdtui.probe.root import SystemRoot
    from mdtui.run.mdadm import find_array, set_full_resync_speed

    system = SystemRoot(args.root)
    schedule = read_schedule(system)
    report: dict = {"schedule": [{"source": s.source, "what": s.what, "enabled": s.enabled} for s in schedule]}
    if not args.json:
        print("scheduled scrubs:")
        print("\n".join("  " + line for line in describe_schedule(schedule)))
    if args.device is None:
        if args.json:
            print_json(report)
        return 0
    device = _device(args.device)
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    plan = plan_scrub(array, "repair" if args.repair else "check", root=system)
    report.update({"array": array.name, "action": plan.action, "write": plan.shown})
    if show_plan(args, [f"{plan.action} {array.name}: {plan.shown}"], report):
        return 0
    # A check only reads; a repair rewrites whatever disagrees, so it is confirmed like any write.
    if plan.action == "repair" and not confirm(args, f"repair (rewrite) mismatches on {array.name}", array.name):
        print("Cancelled; nothing was started.")
        return 1
    start_scrub(plan, confirmed=True, root=system)
    if args.no_follow:
        if args.json:
            print_json(report)
        return 0
    if args.full_speed:
        report["sync_speed_min_kib_s"] = set_full_resync_speed(array.dev_path, True, root=system)
    args.expect_sync = True
    report["followed"] = _follow(array.dev_path, args, system)
    report["mismatch_sectors"] = mismatch_sectors(array.name, system)
    if args.json:
        print_json(report)
    else:
        print(f"{plan.action} of {array.name} finished: mismatch_cnt {report['mismatch_sectors']}")
    return 0
