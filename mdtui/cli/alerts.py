"""`mdtui alerts [--mail ADDR | --program PATH]`: who is told when an array fails, and telling someone."""

from __future__ import annotations

import argparse

from mdtui.cli.common import confirm, print_json, show_plan


def add_alerts_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "alerts", help="who is told when an array fails (MAILADDR, PROGRAM, the monitor); --mail/--program sets it"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--mail", metavar="ADDR", help="send mdadm's alerts to ADDR (MAILADDR in mdadm.conf)")
    where.add_argument("--program", metavar="PATH", help="run PATH on each event (PROGRAM in mdadm.conf)")
    parser.add_argument("--conf", metavar="PATH", help="mdadm.conf to edit (default: the distribution's own)")
    parser.add_argument("--no-test", action="store_true", help="do not send a test alert afterwards")
    parser.add_argument("--dry-run", action="store_true", help="print the diff and the commands, change nothing")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the state (or the plan and what ran) as JSON")


def cmd_alerts(args: argparse.Namespace) -> int:
    from mdtui.keep.alerts import plan_alerts, read_alerts, send_test, start_monitor, write_alerts_conf
    from mdtui.probe.root import SystemRoot, require_live

    system = SystemRoot(args.root)
    if args.mail is None and args.program is None:
        state = read_alerts(system, args.conf)
        if args.json:
            service = state.service
            print_json(
                {
                    "conf": state.conf_path,
                    "mailaddr": state.mailaddr,
                    "program": state.program,
                    "monitor_pids": list(state.monitor_pids),
                    "mailer": state.mailer,
                    "service": None if service is None else vars(service),
                }
            )
        else:
            print("\n".join(state.lines))
        return 0
    require_live(system, "setting alerts (mdadm.conf, the monitor service, a test alert)")
    plan = plan_alerts(system, mail=args.mail, program=args.program, conf_path=args.conf)
    report: dict = {"conf": plan.edit.path, "diff": plan.edit.diff(), "start": [list(a) for a in plan.start]}
    if show_plan(args, plan.describe(), report):
        return 0
    confirmed = confirm(args, f"write {plan.edit.path} and (re)start the monitor", plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was written.")
        return 1
    if write_alerts_conf(plan, confirmed=confirmed, root=system):
        report["wrote"] = plan.edit.path
        if not args.json:
            print(f"wrote {plan.edit.path}")
    start_monitor(plan, confirmed=confirmed)
    state = read_alerts(system, args.conf)
    report["monitor_pids"] = list(state.monitor_pids)
    if not args.json:
        print("\n".join(state.lines))
    if not args.no_test:
        test = send_test(state.program, mailaddr=state.mailaddr, mailer=state.mailer)
        report["test"] = {
            "argv": list(test.result.argv),
            "returncode": test.result.returncode,
            "program_runs": [{"status": s, "arguments": w} for s, w in test.program_runs],
        }
        if not args.json:
            print("\n".join(test.lines()))
    if args.json:
        print_json(report)
    return 0
