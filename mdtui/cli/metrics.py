"""`mdtui metrics [--textfile DIR]`: what mdtui knows, as Prometheus text exposition."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mdtui.errors import MdtuiError
from mdtui.store.database import default_db_path

if TYPE_CHECKING:
    from mdtui.keep.metrics import ArrayTimes
    from mdtui.model.inventory import Inventory
    from mdtui.plan.sync_time import SyncTime
    from mdtui.probe.root import SystemRoot
    from mdtui.store.records import RunRecord

# Enough stored runs to find the newest of each array and preset on a host that benchmarks often.
RECENT_RUNS = 2000


def add_metrics_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "metrics", help="print what mdtui knows (degraded, links, SMART, knobs, benchmarks) for Prometheus"
    )
    parser.add_argument(
        "--textfile",
        metavar="DIR",
        help="write DIR/mdtui.prom atomically (node_exporter's --collector.textfile.directory)",
    )
    parser.add_argument("--no-smart", action="store_true", help="do not run smartctl")
    parser.add_argument("--db", metavar="PATH", help=f"results database (default: $MDTUI_DB, else {default_db_path()})")


def _runs(path: str | None) -> list:
    from mdtui.store.errors import StoreError, StoreMissingError
    from mdtui.store.runs import ResultsStore

    try:
        with ResultsStore(path, create=False) as store:
            return store.list_runs(limit=RECENT_RUNS)
    except StoreMissingError:
        return []
    except StoreError as exc:
        # The other figures are still worth exporting; the benchmark ones are left out and it is said why.
        print(f"mdtui: benchmark figures left out: {exc}", file=sys.stderr)
        return []


def array_times(system: SystemRoot, inventory: Inventory, runs: Sequence[RunRecord]) -> dict[str, ArrayTimes]:
    """Each array's predicted running pass, rebuild and check (bench/sync_forecast), as the export takes them."""
    from mdtui.bench.sync_forecast import forecast_arrays
    from mdtui.keep.metrics import ArrayTimes

    def seconds(answer: SyncTime | None) -> tuple[float | None, str]:
        return (answer.predicted_seconds, answer.bound) if answer is not None else (None, "")

    return {
        name: ArrayTimes(*seconds(found.running), *seconds(found.rebuild), *seconds(found.check))
        for name, found in forecast_arrays(system, inventory, runs).items()
    }


def cmd_metrics(args: argparse.Namespace) -> int:
    from mdtui.keep.metrics import collect, render, write_textfile
    from mdtui.probe.inventory import scan
    from mdtui.probe.root import SystemRoot

    system = SystemRoot(args.root)
    if args.textfile and not system.is_live:
        raise MdtuiError(
            f"--textfile with --root {args.root} would publish a captured tree's figures as this host's; "
            "print them instead"
        )
    inventory = scan(system)
    runs = _runs(args.db)
    text = render(
        collect(system, inventory, smart=not args.no_smart, runs=runs, times=array_times(system, inventory, runs))
    )
    if args.textfile:
        target = write_textfile(args.textfile, text)
        print(f"wrote {target}")
    else:
        sys.stdout.write(text)
    return 0
