"""`mdtui bench`: run a preset on an array, a disk or a file, with live progress, and store every step."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import textwrap
from typing import TextIO

from mdtui.bench.check import CheckUpdate
from mdtui.bench.output import RESULT_COLUMNS, result_rows, result_to_json
from mdtui.bench.plan import BenchPlan, plan_bench
from mdtui.bench.progress import BenchEvent, StepFinished, StepStarted, StepUpdate
from mdtui.bench.requests import BenchRequest, JobOptions, parse_size
from mdtui.bench.result import BenchResult
from mdtui.bench.session import StopRequest, run_bench
from mdtui.cli.common import (
    Terminal,
    confirm,
    ignore_late_signals,
    print_json,
    signal_exit_code,
    signals_restored,
    stop_reason,
    stop_signals,
)
from mdtui.cli.fleet import add_fleet_arguments, run_fleet_cli, wants_fleet
from mdtui.cli.progress import LinePrinter
from mdtui.errors import PlanError
from mdtui.execute.presets import PRESETS
from mdtui.execute.record import step_title
from mdtui.execute.runners import STALL_INTERVALS
from mdtui.format import duration, rate_mb_s
from mdtui.model.inventory import Inventory
from mdtui.model.job import IoEngine, RwMode
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.database import default_db_path
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore

EXIT_FAILED = 1
EXIT_CANCELLED = 130  # as a shell reports a command stopped by Ctrl-C; SIGHUP gives 129, SIGTERM 143


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except PlanError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def _members(text: str) -> tuple[str, ...]:
    members = tuple(part.strip() for part in text.split(",") if part.strip())
    if not members:
        raise argparse.ArgumentTypeError("--members takes devices separated by commas: nvme0n1,nvme1n1")
    return members


def add_bench_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench` on the top-level `mdtui` subparsers."""
    parser = subparsers.add_parser(
        "bench",
        help="run a benchmark preset (weakest link, disk-mark, parity cost ...) and store the results",
        description="Run a benchmark preset and store each step as a run (see `mdtui results`). Jobs that "
        "write need a confirmation naming the target and never run on a mounted or in-use device.",
    )
    parser.add_argument("--list", action="store_true", help="list the presets and what each one measures")
    parser.add_argument("--preset", metavar="NAME", help="preset to run: " + ", ".join(p.key for p in PRESETS))
    parser.add_argument("--target", metavar="DEV", help="md array (md0), disk (sdb, /dev/disk/by-id/...) or file")
    parser.add_argument("--members", type=_members, default=(), metavar="DEV,...", help="weakest-link: these members")
    parser.add_argument("--quick", action="store_true", help="short steps: a first look in about a minute")
    parser.add_argument(
        "--fixed-time",
        action="store_true",
        help="run every step its whole runtime instead of ending it once steady (for comparisons with older runs)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON (progress goes to stderr)")
    parser.add_argument("--yes", action="store_true", help="confirm a write benchmark without asking")
    parser.add_argument("--db", metavar="PATH", help=f"results database (default: $MDTUI_DB, else {default_db_path()})")
    parser.add_argument(
        "--stall-timeout",
        type=_seconds,
        metavar="S",
        help=f"kill a job that prints no status report for S seconds (default {STALL_INTERVALS} status intervals)",
    )
    job = parser.add_argument_group(
        "job options (custom preset; --runtime, --size, --iodepth and --numjobs also override other presets)"
    )
    job.add_argument("--rw", choices=[m.value for m in RwMode], help="I/O pattern (default read)")
    job.add_argument("--bs", type=_size, metavar="SIZE", help="block size, e.g. 4k, 1m (default 4k)")
    job.add_argument("--iodepth", type=_positive, metavar="N", help="queue depth per job (default 1)")
    job.add_argument("--numjobs", type=_positive, metavar="N", help="parallel jobs (default 1)")
    job.add_argument("--runtime", type=_positive, metavar="S", help="seconds per step (custom default 30)")
    job.add_argument("--size", type=_size, metavar="SIZE", help="bytes per job instead of a runtime, e.g. 512m")
    job.add_argument("--ioengine", choices=[e.value for e in IoEngine], help="default libaio")
    job.add_argument("--direct", action=argparse.BooleanOptionalAction, default=None, help="O_DIRECT (default on)")
    job.add_argument("--offset", type=_size, metavar="SIZE", help="start this far into the target")
    add_fleet_arguments(parser)


def list_presets(out: TextIO) -> None:
    for preset in PRESETS:
        kind = "writes" if preset.writes else "read-only"
        print(f"{preset.key}  ({preset.title}; {kind})", file=out)
        print(textwrap.fill(preset.doc, width=100, initial_indent="    ", subsequent_indent="    "), file=out)
        print(file=out)


def request_from_args(args: argparse.Namespace) -> BenchRequest:
    if not args.preset or not args.target:
        raise PlanError("give --preset NAME and --target DEV (mdtui bench --list shows the presets)")
    options = JobOptions(
        rw=RwMode(args.rw) if args.rw else None,
        block_size_bytes=args.bs,
        iodepth=args.iodepth,
        numjobs=args.numjobs,
        runtime_s=args.runtime,
        size_bytes=args.size,
        ioengine=IoEngine(args.ioengine) if args.ioengine else None,
        direct=args.direct,
        offset_bytes=args.offset,
    )
    return BenchRequest(
        args.preset,
        args.target,
        quick=args.quick,
        members=tuple(args.members),
        options=options,
        fixed_time=args.fixed_time,
    )


def step_update_line(event: StepUpdate) -> str:
    """The status line of a running step: its rates, then how it ends (steady in ~N s, or a countdown)."""
    if event.steady_note is not None:
        # A step that ends once steady has no fixed end: its ceiling bounds it, and the whole run.
        ends = f"  {event.steady_note}"
        remaining = f"  run at most {duration(event.remaining_s)}" if event.remaining_s is not None else ""
    else:
        ends = f" / {event.elapsed_s + event.step_remaining_s:.0f} s" if event.step_remaining_s else ""
        remaining = f"  remaining {duration(event.remaining_s)}" if event.remaining_s is not None else ""
    return (
        f"[{event.index + 1}/{event.count}] {event.label}  {rate_mb_s(event.bytes_per_s)}  "
        f"{event.iops:,.0f} IOPS  {event.elapsed_s:.0f} s{ends}{remaining}"
    )


class ProgressPrinter(LinePrinter):
    """Benchmark progress: the running step on the status line, and a line per finished step everywhere."""

    def __call__(self, event: BenchEvent) -> None:
        if isinstance(event, StepStarted):
            expected = f", {event.expected_s:.0f} s" if event.expected_s else ""
            self.live_line(f"[{event.index + 1}/{event.count}] {event.label}{expected} …")
        elif isinstance(event, StepUpdate):
            self.live_line(step_update_line(event))
        elif isinstance(event, StepFinished):
            outcome = event.outcome
            cpu = f", md threads {outcome.md_thread_cpu_pct:.1f}% CPU" if outcome.md_thread_cpu_pct is not None else ""
            status = "" if outcome.status.value == "complete" else f" ({outcome.status.value})"
            self.say(
                f"[{outcome.index + 1}/{event.count}] {step_title(outcome.step)}: "
                f"{rate_mb_s(outcome.bytes_per_s)}, {outcome.iops or 0:,.0f} IOPS{cpu}{outcome.steady_words}{status}"
            )
        elif isinstance(event, CheckUpdate):
            done = f"{event.fraction * 100:.1f}%" if event.fraction is not None else "starting"
            remaining = f", remaining {duration(event.remaining_s)}" if event.remaining_s is not None else ""
            self.live_line(
                f"check pass {done} at {rate_mb_s(event.speed_bytes_per_s)}, {event.elapsed_s:.0f} s{remaining}"
            )


def render_result(result: BenchResult, db_path: str) -> str:
    rows = [RESULT_COLUMNS, *result_rows(result)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(RESULT_COLUMNS))]
    right = {0, 2, 3, 4, 5}
    lines = [
        "  ".join(row[i].rjust(widths[i]) if i in right else row[i].ljust(widths[i]) for i in range(len(row))).rstrip()
        for row in rows
    ]
    report = result.weakest_link
    if report is not None:
        lines.append("")
        for member in report.members:
            together = f", together {rate_mb_s(member.together_bytes_per_s)}" if member.together_bytes_per_s else ""
            alone = rate_mb_s(member.alone_bytes_per_s) if member.alone_bytes_per_s is not None else "not measured"
            lines.append(f"  {member.device}: alone {alone}{together}")
        lines += [f"→ {finding}" for finding in report.findings()]
    check = result.check
    if check is not None and check.mismatch_sectors is not None and not check.skipped:
        lines.append(f"check pass: {check.mismatch_sectors} mismatched sectors (mismatch_cnt)")
    if check is not None and check.skipped:
        lines.append(f"check pass skipped: {check.skipped}")
    lines += [f"⚠ {warning}" for warning in result.plan.warnings]
    lines += [f"note: {note}" for note in result.notes]
    ids = result.run_ids
    if ids:
        stored = "stored as" if result.stored else "begun in the database as"
        runs = "run" if len(ids) == 1 else "runs"
        lines.append(f"{stored} {runs} {', '.join(f'#{i}' for i in ids)} in {db_path} (mdtui results show ID)")
    if result.status is RunStatus.CANCELLED:
        lines.append("cancelled: the figures above cover the part that ran; the stored runs are marked cancelled")
    elif result.status is RunStatus.FAILED:
        lines.append(f"failed: {result.error}")
    return "\n".join(lines)


def _confirm(plan: BenchPlan, args: argparse.Namespace) -> str | None:
    """The confirmation phrase the user typed (or --yes stands for); None when they declined."""
    return confirm(args, f"overwrite {plan.target.path}", plan.confirmation)


async def _run(
    plan: BenchPlan,
    root: SystemRoot,
    store: ResultsStore,
    confirmed: str | None,
    printer: ProgressPrinter,
    inventory: Inventory,
    *,
    stopped_by: list[signal.Signals],
    stall_timeout_s: float | None = None,
) -> BenchResult:
    """Run the plan; SIGINT, SIGTERM and SIGHUP stop it the same way (the first one is put in ``stopped_by``).

    Only a second Ctrl-C abandons the wait for fio's figures: a dropped SSH session may deliver SIGHUP
    twice (from the shell and from the kernel), and that must not cost the figures.
    """
    loop = asyncio.get_running_loop()
    cancel = StopRequest()
    task = asyncio.current_task()
    terminal = Terminal()
    signals = stop_signals()

    def stop(sig: signal.Signals) -> None:
        if sig is signal.SIGHUP:
            terminal.hang_up()
        if cancel.is_set():
            if sig is signal.SIGINT and task is not None:
                task.cancel()  # a second Ctrl-C abandons the wait for fio to write its figures
            return
        stopped_by.append(sig)
        cancel.request(stop_reason(sig))
        again = " (press Ctrl-C again to abandon them)" if sig is signal.SIGINT else ""
        printer.say(f"{stop_reason(sig)}: stopping; the figures so far are kept{again}")

    for sig in signals:
        loop.add_signal_handler(sig, stop, sig)
    try:
        return await run_bench(
            plan,
            root=root,
            store=store,
            confirmed=confirmed,
            on_event=printer,
            cancel=cancel,
            inventory=inventory,
            stall_timeout_s=stall_timeout_s,
        )
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
        if stopped_by:
            ignore_late_signals()  # until run_bench_cli returns: printing what was stored comes next


def run_bench_cli(args: argparse.Namespace) -> int:
    """Exit code 0 complete and stored, 1 failed, declined or not stored in the database (spooled or printed),
    128 + the signal when stopped (130 Ctrl-C, 129 SIGHUP, 143 SIGTERM); a refusal raises (cli.py exits 2)."""
    with signals_restored():
        return _bench_cli(args)


def _bench_cli(args: argparse.Namespace) -> int:
    if args.list:
        list_presets(sys.stdout)
        return 0
    if wants_fleet(args):
        return run_fleet_cli(args, request_from_args(args))
    request = request_from_args(args)
    root = SystemRoot(args.root)
    inventory = scan(root)
    plan = plan_bench(request, inventory, root)
    # With --json stdout carries only the JSON document.
    out = sys.stderr if args.json else sys.stdout
    print("\n".join(plan.describe()), file=out)
    plan.ensure_allowed()
    confirmed = None
    if plan.writes:
        confirmed = _confirm(plan, args)
        if confirmed is None:
            print("Cancelled; nothing was run.", file=out)
            return EXIT_FAILED
    store = ResultsStore(args.db)
    try:
        printer = ProgressPrinter(out, live=out.isatty())
        stopped_by: list[signal.Signals] = []
        try:
            result = asyncio.run(
                _run(
                    plan,
                    root,
                    store,
                    confirmed,
                    printer,
                    inventory,
                    stopped_by=stopped_by,
                    stall_timeout_s=args.stall_timeout,
                )
            )
        except (asyncio.CancelledError, KeyboardInterrupt):
            printer.say("\nabandoned; the runs stored so far are marked cancelled")
            return EXIT_CANCELLED
        printer.say(render_result(result, str(store.path)))
    finally:
        store.close()
    if args.json:
        print_json(result_to_json(result), default=str)
    else:
        # Runs neither the database nor its spool could take: the last lines of stdout, one JSON document
        # each, for `mdtui results import` (the notes above say so).
        for document in result.unsaved:
            print(json.dumps(document, default=str))
    if result.status is RunStatus.CANCELLED:
        return signal_exit_code(stopped_by[0]) if stopped_by else EXIT_CANCELLED
    if not result.stored:
        return EXIT_FAILED  # measured, but not in the database: a script must not take it as stored
    return 0 if result.status is RunStatus.COMPLETE else EXIT_FAILED
