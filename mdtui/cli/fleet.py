"""`mdtui bench --host ...`: a preset on many hosts through fio's client/server mode; `mdtui results fleet`."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from typing import Any, TextIO

from mdtui.bench.requests import BenchRequest
from mdtui.bench.session import StopRequest
from mdtui.cli.common import confirm, print_json, signal_exit_code, stop_reason, stop_signals
from mdtui.cli.progress import LinePrinter
from mdtui.errors import PlanError
from mdtui.fleet.compare import export_fleet, fleet_ids, fleet_tables
from mdtui.fleet.hosts import Host, parse_host, read_hosts_file, unique_hosts
from mdtui.fleet.plan import FleetPlan, plan_fleet
from mdtui.fleet.session import FleetEvent, FleetResult, HostStepFinished, HostStepStarted, run_fleet
from mdtui.format import plural, rate_mb_s
from mdtui.model.job import JobStatus
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore

EXIT_FAILED = 1
EXIT_CANCELLED = 130


def add_fleet_arguments(parser: argparse.ArgumentParser) -> None:
    """The many-hosts options of `mdtui bench`."""
    group = parser.add_argument_group(
        "many hosts (fio --server on each; fio's server has no authentication: bind it to loopback and "
        "use the SSH tunnel --tunnel prints)"
    )
    group.add_argument(
        "--host", action="append", default=[], metavar="HOST[:PORT]", help="run on this fio server (repeatable)"
    )
    group.add_argument("--hosts", metavar="FILE", help="hosts to run on, one HOST[:PORT] a line")
    group.add_argument("--serial", action="store_true", help="one host at a time (default: all at once)")
    group.add_argument(
        "--host-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a host may take beyond a step's runtime before it counts as not answering (default 30)",
    )
    group.add_argument(
        "--no-ssh", action="store_true", help="do not run `ssh HOST mdtui scan --json` (writes are then refused)"
    )
    group.add_argument("--tunnel", action="store_true", help="print the SSH tunnel command for each host and exit")


def wants_fleet(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "host", None) or getattr(args, "hosts", None))


def _hosts(args: argparse.Namespace) -> tuple[Host, ...]:
    hosts = [parse_host(text) for text in args.host]
    if args.hosts:
        hosts += read_hosts_file(args.hosts)
    return unique_hosts(hosts)


class FleetPrinter(LinePrinter):
    """A line per host event, and on a terminal a status line with every running host's elapsed time."""

    def __init__(self, out: TextIO, live: bool) -> None:
        super().__init__(out, live)
        self.running: dict[str, tuple[str, float, float | None]] = {}

    def tick(self) -> None:
        if not self.live or not self.running:
            return
        now = time.monotonic()
        parts = [
            f"{host} {title} {now - since:.0f}/{expected:.0f} s" if expected else f"{host} {title} {now - since:.0f} s"
            for host, (title, since, expected) in self.running.items()
        ]
        self.live_line(" | ".join(parts)[:200])

    def __call__(self, event: FleetEvent) -> None:
        if isinstance(event, HostStepStarted):
            self.running[event.host] = (event.title, time.monotonic(), event.expected_s)
            self.say(f"[{event.host}] [{event.index + 1}/{event.count}] {event.title} started")
        elif isinstance(event, HostStepFinished):
            self.running.pop(event.host, None)
            metrics = event.metrics
            rate = (metrics.read_bw_bytes_per_s or 0.0) + (metrics.write_bw_bytes_per_s or 0.0)
            iops = (metrics.read_iops or 0.0) + (metrics.write_iops or 0.0)
            status = "" if event.status is JobStatus.COMPLETE else f" ({event.status.value}: {event.error})"
            figures = f"{rate_mb_s(rate)}, {iops:,.0f} IOPS" if rate or iops else "no figures"
            self.say(f"[{event.host}] [{event.index + 1}/{event.count}] {event.title}: {figures}{status}")


def render_fleet_result(result: FleetResult, db_path: str) -> str:
    lines = [f"fleet {result.fleet_id}: {plural(len(result.hosts), 'host')} in {result.duration_s:.1f} s"]
    for host in result.hosts:
        ids = ", ".join(f"#{i}" for i in host.run_ids) or "none"
        state = host.status.value if not host.error else f"{host.status.value}: {host.error}"
        lines.append(f"  {host.host}: {state} (runs {ids})")
    lines += [f"note: {note}" for note in result.notes]
    failed = result.failed
    if failed:
        lines.append(
            f"{plural(len(failed), 'host')} failed: {', '.join(h.host for h in failed)}; "
            "the other hosts' runs are stored"
        )
    lines.append(f"compare: mdtui results fleet {result.fleet_id} (database {db_path})")
    return "\n".join(lines)


def result_json(result: FleetResult) -> dict[str, Any]:
    return {
        "fleet": result.fleet_id,
        "preset": result.plan.preset_key,
        "target": result.plan.request.target,
        "status": result.status.value,
        "duration_s": result.duration_s,
        "hosts": [
            {
                "host": host.host,
                "status": host.status.value,
                "error": host.error,
                "steps": [
                    {
                        "step": step.title,
                        "status": step.status.value,
                        "run_id": step.run_id,
                        "error": step.error,
                        "metrics": step.metrics.as_dict(),
                        "argv": [list(r.argv) for r in step.results],
                    }
                    for step in host.steps
                ],
            }
            for host in result.hosts
        ],
        "notes": list(result.notes),
    }


def _confirm(plan: FleetPlan, args: argparse.Namespace) -> str | None:
    """The confirmation phrase the user typed (or --yes stands for); None when they declined."""
    what = f"overwrite {plan.request.target} on {plural(len(plan.hosts), 'host')}"
    return confirm(args, what, plan.confirmation)


async def _run(
    plan: FleetPlan, store: ResultsStore, confirmed: str | None, printer: FleetPrinter, stopped_by: list[signal.Signals]
) -> FleetResult:
    loop = asyncio.get_running_loop()
    cancel = StopRequest()

    def stop(sig: signal.Signals) -> None:
        if not cancel.is_set():
            stopped_by.append(sig)
            cancel.request(stop_reason(sig))
            printer.say(f"{stop_reason(sig)}: stopping every host; the figures so far are kept")

    async def ticker() -> None:
        while True:
            await asyncio.sleep(1.0)
            printer.tick()

    signals = stop_signals()
    for sig in signals:
        loop.add_signal_handler(sig, stop, sig)
    ticking = asyncio.create_task(ticker())
    try:
        return await run_fleet(plan, store=store, confirmed=confirmed, on_event=printer, cancel=cancel)
    finally:
        ticking.cancel()
        for sig in signals:
            loop.remove_signal_handler(sig)


def run_fleet_cli(args: argparse.Namespace, request: BenchRequest) -> int:
    """Exit 0 when every host completed, 1 when a host failed (the others' runs are stored), 128+signal."""
    hosts = _hosts(args)
    if args.tunnel:
        for host in hosts:
            print(f"{host.label}: {host.tunnel_command()}   # then --host 127.0.0.1:{host.port}")
        return 0
    if not 0 < args.host_timeout < 86400:
        raise PlanError("--host-timeout takes seconds above 0")
    plan = plan_fleet(request, hosts, serial=args.serial, ssh=not args.no_ssh, slack_s=args.host_timeout)
    out = sys.stderr if args.json else sys.stdout
    print("\n".join(plan.describe()), file=out)
    plan.ensure_allowed()
    confirmed = None
    if plan.writes:
        confirmed = _confirm(plan, args)
        if confirmed is None:
            print("Cancelled; nothing was run.", file=out)
            return EXIT_FAILED
    printer = FleetPrinter(out, live=out.isatty())
    stopped_by: list[signal.Signals] = []
    with ResultsStore(args.db) as store:
        result = asyncio.run(_run(plan, store, confirmed, printer, stopped_by))
        printer.say(render_fleet_result(result, str(store.path)))
    if args.json:
        print_json(result_json(result), default=str)
    if result.status is RunStatus.CANCELLED:
        return signal_exit_code(stopped_by[0]) if stopped_by else EXIT_CANCELLED
    return 0 if result.status is RunStatus.COMPLETE else EXIT_FAILED


# -- mdtui results fleet -------------------------------------------------------------------------------


def fleet_report(store: ResultsStore, fleet_id: str | None, metric: str | None, fmt: str) -> str:
    runs = store.list_runs()
    ids = fleet_ids(runs)
    if not ids:
        raise PlanError(f"no fleet runs in {store.path}: run `mdtui bench --host HOST ...` first")
    chosen = fleet_id or ids[0]
    if chosen not in ids:
        raise PlanError(f"no fleet {chosen} in {store.path}; fleets: {', '.join(ids[:10])}")
    return export_fleet(fleet_tables(runs, chosen, metric), fmt)
