"""`mdtui grow`: plan, confirm and run a change of an array's shape or size (plan/grow, keep/grow), follow md's
pass beside its prediction, then grow what sits on the array and bring mdadm.conf and the initramfs up to date;
`--resume` takes up a reshape a crash interrupted."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from mdtui.bench.requests import parse_size
from mdtui.cli.common import confirm, find_disk, md_device, print_json, show_plan
from mdtui.errors import MdtuiError, PlanError

if TYPE_CHECKING:
    from collections.abc import Callable

    from mdtui.model.array import MdArray
    from mdtui.plan.sync_time import SyncTime

def add_grow_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    grow = sub.add_parser(
        "grow",
        help="grow or reshape an array that holds data: add members, change level, chunk, layout or size",
        description=(
            "Plan a change of an array's shape or size: every mdadm argv in order, capacity before, during and "
            "after, fault tolerance during, whether md needs a backup file and where it goes, how long md's pass "
            "takes and what bounds it, and what sits on the array. Then, after a typed confirmation, run it, "
            "follow the pass and offer to grow the filesystem and update mdadm.conf and the initramfs."
        ),
    )
    grow.add_argument("device", metavar="ARRAY", help="/dev/md0 or md0")
    grow.add_argument("--add", nargs="+", default=[], metavar="DISK", help="new active members (the count follows)")
    grow.add_argument("--raid-devices", type=int, metavar="N", help="members after the change (fewer: a shrink)")
    grow.add_argument("--level", help="the level after: 0, 4, 5, 6, 10 (1 → 5 for a raid1 of 2)")
    grow.add_argument("--chunk", type=int, metavar="KIB", help="the chunk after, in KiB")
    grow.add_argument("--layout", help="the layout after (raid5/6: left-symmetric ...; raid10: n2, o2)")
    grow.add_argument(
        "--size", metavar="max|SIZE", help="each member's data area: max (after larger disks replaced the members), "
        "or a size such as 30G (smaller: a shrink)"
    )  # fmt: skip
    grow.add_argument("--backup-file", metavar="PATH", help="where mdadm keeps the critical section (default: "
                      "mdtui's state directory, when md needs one)")  # fmt: skip
    grow.add_argument("--filesystem", action="store_true", help="only grow what sits on the array to fill it")
    grow.add_argument("--resume", action="store_true", help="take up a reshape a crash or reboot interrupted")
    grow.add_argument("--follow", action="store_true", help="follow a reshape already running (no change)")
    grow.add_argument("--no-follow", action="store_true", help="start it and return")
    grow.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    grow.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    grow.add_argument("--json", action="store_true", help="print the plan (and what ran) as JSON")
    grow.add_argument("--db", metavar="PATH", help="results database with the members' figures (default: $MDTUI_DB)")
    grow.add_argument("--conf", metavar="PATH", help="mdadm.conf to check and update (default: the distribution's)")


def member_size(text: str) -> int:
    """--size as a number of bytes (bench.requests.parse_size: K, M, G, T binary, as everywhere); "max" apart."""
    try:
        return parse_size(text, "--size")
    except PlanError:
        raise MdtuiError(f"--size {text!r}: give max, or a size such as 30G or 512M") from None


def cmd_grow(args: argparse.Namespace) -> int:
    from mdtui.bench.member_figures import load_member_runs
    from mdtui.bench.sync_forecast import grow_inputs
    from mdtui.execute.mdadm import find_array
    from mdtui.keep.grow import plan_grow_now
    from mdtui.plan.grow_describe import describe_grow, grow_plan_dict
    from mdtui.plan.grow_request import GrowRequest
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot
    from mdtui.store.errors import StoreError

    system = SystemRoot(args.root)
    device = md_device(args.device)
    if args.resume:
        return _resume(args, system, device)
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    changes = args.add or args.raid_devices is not None or args.level or args.chunk is not None or args.layout
    if args.follow and not (changes or args.size or args.filesystem):
        return _follow_running(args, system, device)
    inventory = scan(args.root)
    added = tuple(find_disk(inventory, text, args.root) for text in args.add)
    size_max = (args.size or "").strip().lower() == "max"
    req = GrowRequest(
        add=added,
        raid_devices=args.raid_devices,
        level=args.level,
        chunk_kib=args.chunk,
        layout=args.layout,
        size_max=size_max,
        size_bytes=member_size(args.size) if args.size and not size_max else None,
        backup_file=args.backup_file,
        filesystem_only=args.filesystem,
    )
    try:
        runs = load_member_runs(args.db)
    except StoreError as exc:
        print(f"mdtui: no stored member figures for the time: {exc}", file=sys.stderr)
        runs = []
    members, limits, ceilings = grow_inputs(system, array, inventory, runs, [d.name for d in added])
    plan = plan_grow_now(system, device, req, members, limits=limits, ceilings=ceilings)
    report: dict[str, Any] = {"plan": grow_plan_dict(plan)}
    if show_plan(args, describe_grow(plan), report):
        return 0
    if plan.steps:
        written = f" and overwrite {', '.join(d.name for d in plan.new_disks)}" if plan.new_disks else ""
        confirmed = confirm(args, f"grow {plan.array}{written} (the plan above)", plan.confirmation)
        if confirmed is None:
            print("Cancelled; nothing was run.")
            return 1
        if not _run(args, system, plan, report, confirmed):
            return 2
    if plan.followup is not None and (plan.grows or args.filesystem):
        report["follow_up"] = _followup(args, plan, report.get("outcome", {}).get("reached", True))
    if plan.steps:
        report["boot"] = _boot(args, system, plan.array)
    if args.json:
        print_json(report)
    return 0


def _say(args: argparse.Namespace, text: str) -> None:
    print(text, file=sys.stderr if args.json else sys.stdout, flush=True)


def _run(args: argparse.Namespace, system: Any, plan: Any, report: dict[str, Any], confirmed: str) -> bool:
    """Run the steps and follow the pass; False when it did not end in the planned shape."""
    from mdtui.format import about
    from mdtui.keep.grow import execute_grow, follow_grow

    results = execute_grow(plan, confirmed=confirmed, system=system)
    report["ran"] = [{"argv": list(r.argv), "returncode": r.returncode} for r in results]
    _say(args, f"started: {plan.before.describe()} → {plan.after.describe()}")
    if args.no_follow:
        if plan.pass_action is not None:
            _say(args, f"md runs the {plan.pass_action} now: `mdtui grow {plan.array} --follow` follows it")
        report["outcome"] = {"followed": False}
        return True
    outcome = follow_grow(plan, system=system, on_update=_progress(args, system, lambda _array: plan.time))
    if sys.stdout.isatty() and not args.json:
        print()
    if outcome.stalled is not None:
        _say(args, outcome.stalled)
    report["outcome"] = {
        "stalled": outcome.stalled,
        "reached": outcome.reached,
        "passes": list(outcome.actions),
        "measured_seconds": round(outcome.pass_seconds, 1) if outcome.pass_seconds is not None else None,
        "predicted_seconds": plan.predicted_seconds,
    }
    if outcome.pass_seconds is not None and plan.predicted_seconds:
        ratio = outcome.pass_seconds / plan.predicted_seconds
        _say(
            args,
            f"the {'/'.join(outcome.actions)} took {outcome.pass_seconds:.0f} s; predicted "
            f"{about(plan.predicted_seconds)} ({ratio:.2f}× the prediction, bound by {plan.bound})",
        )
    if not outcome.reached:
        _say(args, f"{plan.array} does not have the planned shape yet: `mdtui scan` shows where it stands")
        return False
    _say(args, f"{plan.array} is now {plan.after.describe()}")
    return True


def _progress(args: argparse.Namespace, system: Any, predicted: Callable[[MdArray], SyncTime | None]) -> Any:
    """Progress, speed and ETA beside the prediction (``predicted``: the pass seen, predicted once before) and
    what bounds the pass now (bench.sync_forecast.sync_view, the line repair and scrub follow with), rewritten in
    place (only on a terminal)."""
    from mdtui.bench.sync_forecast import sync_view
    from mdtui.cli.progress import LinePrinter

    printer = LinePrinter(sys.stdout, live=sys.stdout.isatty() and not args.json)

    def show(array: Any) -> None:
        view = sync_view(system, array, predicted=predicted(array))
        if view is not None and view.fraction is not None:
            printer.live_line(view.line() + "   ")

    return show


def _followup(args: argparse.Namespace, plan: Any, reached: bool) -> dict[str, Any]:
    """Grow what sits on the array: its own confirmed step (or the words, when mdtui cannot run it)."""
    from mdtui.keep.grow import run_followup

    follow = plan.followup
    commands = "; ".join(" ".join(argv) for argv in follow.argvs)
    if not follow.argvs:
        _say(args, f"next: {follow.description}")
        return {"ran": False, "description": follow.description}
    if not reached:
        _say(args, f"not run, since {plan.array} is not grown yet: {commands}")
        return {"ran": False, "argv": [list(a) for a in follow.argvs]}
    if args.no_follow and plan.steps:
        _say(args, f"once the {plan.pass_action} ends: {commands}")
        return {"ran": False, "argv": [list(a) for a in follow.argvs]}
    confirmed = confirm(args, f"{follow.description} ({commands})", plan.confirmation)
    if confirmed is None:
        _say(args, f"Not grown; run it later: {commands}")
        return {"ran": False, "argv": [list(a) for a in follow.argvs]}
    results = run_followup(plan, confirmed=confirmed)
    _say(args, f"{follow.kind} on {plan.array} grown ({commands})")
    return {"ran": True, "argv": [list(r.argv) for r in results]}


def _boot(args: argparse.Namespace, system: Any, device: str) -> dict[str, Any]:
    """mdadm.conf and the initramfs: updated through persist's guarded path when stale, else said as they are."""
    from mdtui.keep.grow import boot_check

    if not system.is_live:
        return {"checked": False}
    check = boot_check(system, device, conf_path=getattr(args, "conf", None))
    for line in check.lines:
        _say(args, line)
    if check.persist is None:
        return {"stale": False, "lines": list(check.lines)}
    from mdtui.cli.keep import cmd_persist

    persist_args = argparse.Namespace(
        root=args.root, device=device, conf=getattr(args, "conf", None), no_initramfs=False, dry_run=False,
        yes=args.yes, json=False,
    )  # fmt: skip
    if args.json:
        _say(args, f"to bring them up to date: mdtui persist {device}")
        return {"stale": True, "lines": list(check.lines), "persisted": False}
    persisted = cmd_persist(persist_args) == 0
    return {"stale": True, "lines": list(check.lines), "persisted": persisted}


def _running_predictions(args: argparse.Namespace, system: Any) -> Callable[[MdArray], SyncTime | None]:
    """The pass a follow sees, predicted once per pass (bench.sync_forecast.running_pass_time) from the stored
    member figures and the disks, both read once here before the follow starts, never on each poll."""
    from mdtui.bench.member_figures import load_member_runs
    from mdtui.bench.sync_forecast import running_pass_time
    from mdtui.probe.inventory import scan
    from mdtui.store.errors import StoreError

    try:
        runs = load_member_runs(args.db)
    except StoreError as exc:
        print(f"mdtui: no stored member figures for the time: {exc}", file=sys.stderr)
        runs = []
    inventory = scan(system)
    made: dict[str, SyncTime | None] = {}

    def predicted(array: MdArray) -> SyncTime | None:
        action = array.sync.action if array.sync is not None else ""
        if action not in made:
            made[action] = running_pass_time(system, array, inventory, runs)
        return made[action]

    return predicted


def _follow_running(args: argparse.Namespace, system: Any, device: str) -> int:
    """Follow a reshape already running, beside the prediction mdtui journalled when it started it."""
    from mdtui.execute.mdadm import follow_sync
    from mdtui.keep.grow_resume import reshape_states
    from mdtui.probe.arrays import read_arrays

    arrays = read_arrays(system)
    state = next((s for s in reshape_states(system, arrays) if s.device == device), None)
    predicted = state.entry.predicted_seconds if state is not None and state.entry is not None else None
    final = follow_sync(device, root=system, on_update=_progress(args, system, _running_predictions(args, system)))
    if not args.json:
        print()
    report = {"device": device, "state": state.state if state else None, "predicted_seconds": predicted}
    report["sync"] = final.sync.action if final is not None and final.sync is not None else None
    if args.json:
        print_json(report)
    elif state is None:
        print(f"{device}: no reshape running")
    return 0


def _resume(args: argparse.Namespace, system: Any, device: str) -> int:
    from mdtui.keep.grow_resume import describe_resume, execute_resume, finish_resumed, plan_resume

    plan = plan_resume(system, device)
    report: dict[str, Any] = {"resume": [list(step.argv) for step in plan.steps], "state": plan.state.state}
    if show_plan(args, describe_resume(plan), report):
        return 0
    confirmed = confirm(args, f"resume the reshape of {plan.device} (the steps above)", plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was run.")
        return 1
    results = execute_resume(plan, confirmed=confirmed, system=system)
    report["ran"] = [{"argv": list(r.argv), "returncode": r.returncode} for r in results]
    for result in results:
        if not result.ok:
            _say(args, f"{result.argv[1]} exited {result.returncode}, but {plan.device} is running: following it")
    if not args.no_follow:
        from mdtui.execute.mdadm import follow_sync

        follow_sync(plan.device, root=system, on_update=_progress(args, system, _running_predictions(args, system)))
        if not args.json:
            print()
        report["finished"] = finish_resumed(system, plan)
        _say(
            args,
            f"{plan.device}: " + ("the reshape finished" if report["finished"] else "the reshape has not finished"),
        )
    if args.json:
        print_json(report)
    return 0
