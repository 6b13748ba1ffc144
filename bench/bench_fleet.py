"""Orchestration cost of a fleet: a short read on N real `fio --server` processes on 127.0.0.1.

    python -m bench.bench_fleet [--hosts 32] [--runtime 2]

Prints the wall time of the whole fleet against the job's runtime (what mdtui and fio's client/server
exchange add), and mdtui's own CPU (user+sys of this process; the fio clients are children and counted
apart, as are the servers, which stand in for the remote hosts).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from pathlib import Path

from bench.fio_servers import start_servers
from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.fleet.hosts import parse_host
from mdtui.fleet.plan import plan_fleet
from mdtui.fleet.session import run_fleet
from mdtui.model.job import IoEngine, RwMode
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore

TARGET_BYTES = 4 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hosts", type=int, default=32)
    parser.add_argument("--runtime", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mdtui-bench-fleet-") as directory:
        tmp = Path(directory)
        target = tmp / "small.dat"
        with target.open("wb") as handle:
            handle.truncate(TARGET_BYTES)
        servers = start_servers(args.hosts, tmp)
        try:
            options = JobOptions(
                rw=RwMode.READ, block_size_bytes=64 << 10, runtime_s=args.runtime, ioengine=IoEngine.SYNC, direct=False
            )
            hosts = [parse_host(s.address) for s in servers]
            self_before = resource.getrusage(resource.RUSAGE_SELF)
            children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            plan = plan_fleet(BenchRequest("custom", str(target), options=options), hosts, slack_s=60)
            with ResultsStore(tmp / "results.db") as store:
                result = asyncio.run(run_fleet(plan, store=store))
            wall = time.monotonic() - started
            self_after = resource.getrusage(resource.RUSAGE_SELF)
            children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            for server in servers:
                server.stop()
    mdtui_cpu = (self_after.ru_utime - self_before.ru_utime) + (self_after.ru_stime - self_before.ru_stime)
    client_cpu = (children_after.ru_utime - children_before.ru_utime) + (
        children_after.ru_stime - children_before.ru_stime
    )
    complete = sum(1 for h in result.hosts if h.status is RunStatus.COMPLETE)
    print(f"hosts: {args.hosts} fio servers on 127.0.0.1, {complete} complete, job runtime {args.runtime} s")
    print(f"fleet wall time: {wall:.2f} s (orchestration beyond the runtime: {wall - args.runtime:.2f} s)")
    print(f"mdtui CPU (user+sys of this process): {mdtui_cpu:.2f} s")
    print(f"fio client processes' CPU (children): {client_cpu:.2f} s")
    for host in result.hosts:
        if host.status is not RunStatus.COMPLETE:
            print(f"  {host.host}: {host.status.value}: {host.error}")


if __name__ == "__main__":
    main()
