"""`mdtui persist`, `mdtui repair`, `mdtui scrub`: keep an array across reboots, failures and bit rot."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from mdtui.cli.common import confirm, md_device, print_json, show_plan
from mdtui.errors import MdtuiError
from mdtui.format import plural

if TYPE_CHECKING:
    from mdtui.model.array import MdArray
    from mdtui.plan.sync_time import SyncTime
    from mdtui.probe.root import SystemRoot
    from mdtui.store.records import RunRecord
    from mdtui.tune.boost import BoostPlan

# How long to wait for md to start a recovery or check after the command that asks for it.
START_WAIT_S = 5.0
BOOST_HELP = (
    "raise the array's md/sync_speed_min and sync_speed_max for this {what} (what it costs foreground I/O is shown "
    "first); put back when it ends, when you stop following it, or at the next mdtui start if mdtui is killed. "
    "--full-speed is the old name"
)


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
    plan = plan_persist(md_device(args.device), root=system, conf_path=args.conf)
    report: dict = {
        "device": plan.device,
        "array_line": plan.brief,
        "conf": plan.edit.path,
        "diff": plan.edit.diff(),
        "initramfs": None if args.no_initramfs else list(plan.initramfs_argv),
    }
    if show_plan(args, describe_persist(plan), report):
        return 0
    if plan.edit.changed:
        confirmed = confirm(args, f"write {plan.edit.path} (the diff above)", plan.confirmation)
        if confirmed is None:
            print("Cancelled; nothing was written.")
            return 1
        write_conf(plan, confirmed=confirmed, root=system)
        report["wrote"] = plan.edit.path
        if not args.json:
            print(f"wrote {plan.edit.path}")
    if args.no_initramfs:
        if args.json:
            print_json(report)
        return 0
    confirmed = confirm(args, f"run {' '.join(plan.initramfs_argv)}", plan.confirmation)
    if confirmed is None:
        print(f"Cancelled; the initramfs still has the old {plan.edit.path} (run {' '.join(plan.initramfs_argv)}).")
        return 1

    def show(text: str) -> None:
        out = sys.stderr if args.json else sys.stdout
        out.write(text)
        out.flush()

    result = refresh_initramfs(plan, confirmed=confirmed, on_output=show)
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
    repair.add_argument("--boost", "--full-speed", action="store_true", help=BOOST_HELP.format(what="rebuild"))
    repair.add_argument("--json", action="store_true", help="print the plan (and what ran) as JSON")

    locate = sub.add_parser(
        "locate",
        help="show what identifies a disk (serial, WWN, port, enclosure slot) and blink its LED, then turn it off",
    )
    locate.add_argument("disk", metavar="DISK", help="sdc, /dev/sdc or a /dev/disk/by-id path")
    locate.add_argument(
        "--seconds", type=float, metavar="S", help="blink for S seconds (default: until Enter, Ctrl-C or SIGTERM)"
    )
    locate.add_argument("--dry-run", action="store_true", help="show the disk and how its LED would blink")
    locate.add_argument("--json", action="store_true", help="print the identity and the plan as JSON")

    scrub = sub.add_parser(
        "scrub", help="check (or --repair) an array's redundancy; show mismatch_cnt and the schedule"
    )
    scrub.add_argument("device", metavar="ARRAY", nargs="?", help="/dev/md0 or md0 (none: only show the schedule)")
    scrub.add_argument("--repair", action="store_true", help="rewrite mismatched copies/parity instead of counting")
    scrub.add_argument("--no-follow", action="store_true", help="start it and return")
    scrub.add_argument("--boost", "--full-speed", action="store_true", help=BOOST_HELP.format(what="pass"))
    scrub.add_argument("--yes", action="store_true", help="do not ask for confirmation (repair)")
    scrub.add_argument("--dry-run", action="store_true", help="print what would be written to start it, and stop")
    scrub.add_argument("--json", action="store_true", help="print the outcome as JSON")


def member_runs() -> list[RunRecord]:
    """The stored member-matrix runs the predictions read (none when there is no results database)."""
    from mdtui.bench.member_figures import load_member_runs
    from mdtui.store.errors import StoreError

    try:
        return load_member_runs(None)
    except StoreError as exc:
        print(f"mdtui: no member figures for the prediction: {exc}", file=sys.stderr)
        return []


def _follow(device: str, args: argparse.Namespace, system: SystemRoot, predicted: SyncTime | None = None) -> dict:
    """Follow a resync/recovery/check to its end: progress, speed and md's ETA beside the prediction and what
    bounds it now, on one line; the measured time is kept for the report."""
    from mdtui.bench.sync_forecast import sync_view
    from mdtui.execute.mdadm import find_array, follow_sync

    seen: dict = {"actions": []}
    started: list[float] = []

    def show(array: MdArray) -> None:
        if array.sync is not None and array.sync.action not in seen["actions"]:
            seen["actions"].append(array.sync.action)
        if array.sync is not None and array.sync.state == "running" and not started:
            started.append(time.monotonic())
        view = sync_view(system, array, predicted=predicted)
        if view is not None:
            seen["bound"] = view.bound
            if not args.json:
                print("\r\x1b[K" + view.line(), end="", flush=True)

    # md starts the recovery or check a moment after the command returns: wait for it to show (or for the
    # array to be whole, a tiny one may finish first) before following it to the end.
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        now = find_array(system, device)
        if now is None or now.sync is not None or (not now.degraded and not getattr(args, "expect_sync", False)):
            break
        time.sleep(0.2)
    final = follow_sync(device, root=system, on_update=show)
    if not args.json and seen["actions"]:
        print()
    if started:
        seen["measured_seconds"] = round(time.monotonic() - started[0], 1)
    seen["degraded"] = final.degraded if final is not None else None
    return seen


def follow_pass(
    device: str,
    args: argparse.Namespace,
    system: SystemRoot,
    *,
    predicted: SyncTime | None = None,
    boost: BoostPlan | None = None,
) -> tuple[dict, int]:
    """Follow a pass to its end (see _follow), with its boost applied for as long as it is followed: the array's
    sync_speed_min/max go back when the pass ends, when following stops (Ctrl-C, SIGTERM, SIGHUP: exit 128+N), or
    at the next mdtui start after a SIGKILL (the knob journal). (report, exit code)."""
    from mdtui.cli.common import StoppedBySignal, signal_exit_code, stops_raise
    from mdtui.tune.boost import SyncBoost

    out = sys.stderr if args.json else sys.stdout
    if boost is None:
        return _follow(device, args, system, predicted), 0
    sync_boost = SyncBoost(system, boost)
    code = 0
    report: dict = {}
    try:
        with stops_raise(), sync_boost:
            print(f"{boost.array}: boosted to {boost.kib_s:,} KiB/s for this pass", file=out)
            report = _follow(device, args, system, predicted)
    except KeyboardInterrupt:
        report["stopped"], code = "Ctrl-C", 130
    except StoppedBySignal as exc:
        report["stopped"], code = str(exc), signal_exit_code(exc.signal)
    finally:
        for item in sync_boost.restored:
            print(f"{boost.array}: {item.text}", file=out)
    report["boost"] = {
        "kib_s": boost.kib_s,
        "restored": [{"knob": r.change.knob, "ok": r.ok, "text": r.text} for r in sync_boost.restored],
    }
    if code:
        print(f"stopped following {device} ({report['stopped']}); md goes on with the pass at its own limits", file=out)
    return report, code


def boost_in_plan(
    system: SystemRoot, array: MdArray, predicted: SyncTime | None, lines: list[str], report: dict
) -> BoostPlan:
    """The boost for the pass ``predicted`` on ``array`` (tune.boost.plan_boost), said in the plan's ``lines``
    (the cost first) and its ``report``."""
    from mdtui.tune.boost import plan_boost

    boost = plan_boost(system, array, predicted)
    lines += ["  with --boost:", *("    " + line for line in boost.cost_lines())]
    report["boost"] = boost.as_json()
    return boost


def cmd_repair(args: argparse.Namespace) -> int:
    from mdtui.bench.sync_forecast import repair_forecast
    from mdtui.cli.common import find_disk
    from mdtui.execute.mdadm import array_uuid, find_array
    from mdtui.keep.repair import describe_repair, execute_repair, plan_repair, with_identity
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot

    system = SystemRoot(args.root)
    device = md_device(args.device)
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    inventory = scan(args.root)
    action, member, disk_text = _action(args)
    disk = find_disk(inventory, disk_text, args.root) if disk_text else None
    plan = plan_repair(
        array,
        action,
        member=member,
        disk=disk,
        uuid=array_uuid(array.dev_path) if system.is_live else None,
        component_bytes=array.component_bytes,
    )
    # Before a member is failed, removed or replaced: what tells its drive from the others, at the machine.
    plan = with_identity(plan, system, inventory)
    identity = plan.identity
    predicted, label = repair_forecast(
        system, array, inventory, member_runs(), action, member=plan.member, disk=disk.name if disk else None
    )
    lines = describe_repair(plan, predicted, label)
    report: dict = {
        "plan": [list(step.argv) for step in plan.steps],
        "warnings": list(plan.warnings),
        # The rebuild this repair starts (or, for a failed member, the one that must follow).
        "predicted": predicted.as_json() if predicted is not None else None,
        "identity": identity.as_json() if identity is not None else None,
    }
    boost = None
    if args.boost:
        if args.no_follow or not plan.follows_recovery:
            raise MdtuiError(
                "--boost lasts while mdtui follows the rebuild: it needs a rebuild to follow (no --no-follow)"
            )
        boost = boost_in_plan(system, array, predicted, lines, report)
    if show_plan(args, lines, report):
        return 0
    what = f"{action} on {array.dev_path}" + (f" and overwrite {plan.overwritten}" if plan.overwritten else "")
    confirmed = confirm(args, what + (" (boosted)" if boost else ""), plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was run.")
        return 1
    results = execute_repair(plan, confirmed=confirmed, root=system)
    report["ran"] = [{"argv": list(r.argv), "returncode": r.returncode} for r in results]
    if not args.json:
        print(f"{action} on {array.dev_path}: done")
    code = 0
    if plan.follows_recovery and not args.no_follow:
        args.expect_sync = plan.action == "replace"
        report["recovery"], code = follow_pass(array.dev_path, args, system, predicted=predicted, boost=boost)
        if not args.json and not code:
            state = report["recovery"]["degraded"]
            print("recovery finished" + (f"; {array.name} still misses {plural(state, 'member')}" if state else ""))
    if args.json:
        print_json(report)
    return code


def cmd_locate(args: argparse.Namespace) -> int:
    """Identify a disk and blink its locate LED: on, then off when the time is up, on Enter, Ctrl-C, SIGTERM or
    SIGHUP (a SIGKILL leaves it blinking: `mdtui locate DISK --seconds 0` turns it off)."""
    from mdtui.cli.common import StoppedBySignal, find_disk, signal_exit_code, stops_raise
    from mdtui.keep.locate import Locating, identify, plan_locate
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot, require_live

    system = SystemRoot(args.root)
    disk = find_disk(scan(args.root), args.disk, args.root)
    identity = identify(system, disk)
    report: dict = {"identity": identity.as_json()}
    lines = identity.lines()
    try:
        plan = plan_locate(system, disk)
    except MdtuiError as exc:
        report["locate"] = None
        if args.json:
            print_json(report)
        else:
            print("\n".join(lines))
        raise exc
    report["locate"] = {"how": plan.how, "shown": plan.shown(), "on": list(plan.on_argv), "off": list(plan.off_argv)}
    lines += [f"locate LED through {plan.how}:", *("  " + line for line in plan.shown())]
    if show_plan(args, lines, report):
        return 0
    require_live(system, "blinking a locate LED")
    if args.seconds is None and not sys.stdin.isatty():
        raise MdtuiError("not at a terminal: give --seconds S for how long it blinks")
    code = 0
    try:
        with stops_raise(), Locating(system, plan):
            if args.seconds is not None:
                time.sleep(max(args.seconds, 0.0))
            else:
                input(f"{disk.name} blinks; press Enter to turn it off ")
    except KeyboardInterrupt:
        code = 130
    except StoppedBySignal as exc:
        code = signal_exit_code(exc.signal)
    report["turned_off"] = True
    if args.json:
        print_json(report)
    else:
        print(f"{disk.name}'s locate LED is off again")
    return code


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
    from mdtui.bench.sync_forecast import scrub_time
    from mdtui.execute.mdadm import find_array
    from mdtui.keep.scrub import (
        describe_schedule,
        describe_scrub,
        mismatch_sectors,
        plan_scrub,
        read_schedule,
    )
    from mdtui.keep.scrub_history import ScrubHistory, begin_scrub, mismatch_meaning, trend
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot

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
    device = md_device(args.device)
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    plan = plan_scrub(array, "repair" if args.repair else "check", root=system)
    predicted = scrub_time(system, array, scan(args.root), member_runs(), repair=args.repair)
    report.update({"array": array.name, "action": plan.action, "write": plan.shown})
    report["predicted"] = predicted.as_json() if predicted is not None else None
    lines = describe_scrub(plan, predicted)
    boost = None
    if args.boost:
        if args.no_follow:
            raise MdtuiError("--boost lasts while mdtui follows the pass: drop --no-follow")
        boost = boost_in_plan(system, array, predicted, lines, report)
    if show_plan(args, lines, report):
        return 0
    # A check only reads; a repair rewrites whatever disagrees, so it is confirmed like any write; a boost is
    # a knob change of the array, confirmed like one.
    confirmed = None
    if plan.writes:
        what = f"repair (rewrite) mismatches on {array.name}" + (" (boosted)" if boost else "")
        confirmed = confirm(args, what, plan.confirmation)
        if confirmed is None:
            print("Cancelled; nothing was started.")
            return 1
    elif boost is not None and confirm(args, f"boost the check of {array.name}", boost.confirmation) is None:
        print("Cancelled; nothing was started.")
        return 1
    history = ScrubHistory()
    opened = begin_scrub(plan, array, history, confirmed=confirmed, root=system)
    if args.no_follow:
        if args.json:
            print_json(report)
        return 0
    args.expect_sync = True
    report["followed"], code = follow_pass(array.dev_path, args, system, predicted=predicted, boost=boost)
    if code:  # the pass goes on: the row stays open until a later look sees it end
        if args.json:
            print_json(report)
        return code
    report["mismatch_sectors"] = mismatch_sectors(array.name, system)
    history.record_end(opened, time.time(), report["mismatch_sectors"])
    passes = history.passes(array)
    report["trend"] = trend(passes)
    report["meaning"] = mismatch_meaning(array.level, report["mismatch_sectors"])
    if args.json:
        print_json(report)
    else:
        print(f"{plan.action} of {array.name} finished: mismatch_cnt {report['mismatch_sectors']}")
        print(f"  {report['meaning']}")
        print(f"  history: {report['trend']} (mdtui scrub-schedule lists every pass)")
    return code
