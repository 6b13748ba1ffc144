"""`mdtui scrub-schedule [--cron FIELDS | --timer SPEC]`: each array's next and last scrub, and changing when."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from mdtui.cli.common import confirm, print_json, show_plan


def add_schedule_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "scrub-schedule",
        help="each array's next and last scrub (mismatch_cnt, how long); --cron/--timer changes when",
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--cron", metavar="FIELDS", help="new time fields of /etc/cron.d/mdadm's checkarray line")
    what.add_argument("--timer", metavar="SPEC", help="new OnCalendar of mdcheck_start.timer (as a drop-in)")
    parser.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print it as JSON")


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def _pass(item: Any) -> dict[str, Any]:
    """A history row as JSON (ISO times, seconds)."""
    started = None if item.started is None else datetime.fromtimestamp(item.started).astimezone()
    return {
        "action": item.action,
        "level": item.level,
        "started": _when(started),
        "seconds": None if item.seconds is None else round(item.seconds, 1),
        "mismatch_sectors": item.mismatch_sectors,
        "source": item.source,
    }


def _about(predicted: dict[str, Any]) -> str:
    from mdtui.format import about

    seconds = predicted["predicted_seconds"]
    if seconds is None:
        return f"an unknown time ({predicted['bound']})"
    return f"{about(seconds)} idle (bound: {predicted['bound']})"


def cmd_schedule(args: argparse.Namespace) -> int:
    from mdtui.bench.sync_forecast import scrub_time
    from mdtui.cli.keep import member_runs
    from mdtui.keep.schedule import (
        array_scrubs,
        mechanisms,
        next_run,
        plan_cron,
        plan_timer,
        read_kernel_passes,
        verify_drop_in,
        write_schedule,
    )
    from mdtui.keep.scrub_history import ScrubHistory, mismatch_meaning, observe, trend
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot, require_live

    system = SystemRoot(args.root)
    if args.cron is None and args.timer is None:
        found = mechanisms(system)
        runs = [(m, next_run(m)) for m in found]
        nxt = min((t for _, t in runs if t is not None), default=None)
        inventory = scan(system)
        arrays = inventory.arrays
        logged = read_kernel_passes(system)
        history = ScrubHistory()
        if system.is_live:  # a captured tree's passes are another host's: never written into this one's history
            observe(system, arrays, history, logged)
        scrubs = array_scrubs(system, arrays, logged if logged is not None else None)
        members = member_runs()
        rows: list[dict[str, Any]] = []
        for s, array in zip(scrubs, arrays, strict=True):
            passes = history.passes(array) if system.is_live else []
            check = scrub_time(system, array, inventory, members)
            rows.append(
                {"array": s.array, "level": array.level, "next": _when(nxt), "last_action": s.last_action,
                 "mismatch_sectors": s.mismatch_sectors,
                 "meaning": mismatch_meaning(array.level, s.mismatch_sectors if s.last_action in ("check", "repair")
                                             else None),
                 "last_started": _when(s.last.started) if s.last else None,
                 "last_ended": _when(s.last.ended) if s.last else None,
                 "last_seconds": s.last.seconds if s.last else None,
                 "last_outcome": s.last.outcome if s.last else None,
                 "predicted": check.as_json() if check is not None else None,
                 "history": [_pass(p) for p in passes],
                 "trend": trend(passes)}
            )  # fmt: skip
        report = {
            "mechanisms": [
                {"kind": m.kind, "source": m.source, "when": m.when, "enabled": m.enabled,
                 "first_week": m.first_week, "next": _when(t)}
                for m, t in runs
            ],
            "arrays": rows,
        }  # fmt: skip
        if args.json:
            print_json(report)
            return 0
        if not found:
            print("no scheduled scrub (no checkarray cron line, no mdcheck_start.timer)")
        for m, t in runs:
            state = "enabled" if m.enabled else "not enabled"
            week = " (first week of the month only)" if m.first_week else ""
            print(f"{m.kind} {m.source}: {m.when or '?'}{week}, {state}; next: {_when(t) or 'unknown'}")
        for row in rows:
            length = "unknown" if row["last_seconds"] is None else f"{row['last_seconds']:.0f} s"
            print(
                f"{row['array']}: next {row['next'] or 'unknown'}; last {row['last_action'] or '?'} "
                f"{row['last_started'] or '(time not in the journal)'} took {length}, "
                f"mismatch_cnt {row['mismatch_sectors']}"
            )
            if row["predicted"] is not None:
                print(f"  a check takes {_about(row['predicted'])}")
            print(f"  mismatch_cnt: {row['meaning']}")
            for item in row["history"]:
                took = "still running or not seen ending" if item["seconds"] is None else f"{item['seconds']:.0f} s"
                count = (
                    "count not kept"
                    if item["mismatch_sectors"] is None
                    else f"mismatch_cnt {item['mismatch_sectors']:,}"
                )
                print(f"  {item['started'] or '?'}  {item['action']:<6} {took}, {count} ({item['source']})")
            if row["history"]:
                print(f"  trend: {row['trend']}")
        return 0
    require_live(system, "changing the scrub schedule (/etc/cron.d/mdadm or a systemd drop-in)")
    edit = plan_cron(system, args.cron) if args.cron is not None else plan_timer(system, args.timer)
    if edit.kind == "timer":
        verify_drop_in(system, edit)
    lines = [f"scrub schedule ({edit.kind}): {edit.path}"]
    lines += ["  " + row for row in edit.diff().rstrip("\n").splitlines()] or ["  no change"]
    lines += [f"  then: {' '.join(argv)}" for argv in edit.then]
    report2 = {"kind": edit.kind, "path": edit.path, "diff": edit.diff(), "verified": edit.kind == "timer"}
    if show_plan(args, lines, report2):
        return 0
    confirmed = confirm(args, f"write {edit.path} (the diff above)", edit.confirmation) if edit.changed else None
    if edit.changed and confirmed is None:
        print("Cancelled; nothing was written.")
        return 1
    wrote = write_schedule(edit, confirmed=confirmed, root=system)
    report2["wrote"] = wrote
    if args.json:
        print_json(report2)
    else:
        print(f"wrote {edit.path}" if wrote else "no change")
    return 0
