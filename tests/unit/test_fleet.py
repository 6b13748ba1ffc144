"""Many hosts (issue 18): presets on real `fio --server` processes on 127.0.0.1, through `fio --client`.

Each server is a real fio server on its own port with files in a tmp dir as targets; faults are done to
the real servers (SIGKILL mid-run, SIGSTOP so it never answers, a port nobody listens on). The remote
in-use rules run on the inventory `mdtui scan --json` prints for a captured tree.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fio_servers import FioServer, free_port, start_servers

from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.errors import PlanError, SafetyError
from mdtui.fleet.client import client_argv, job_file
from mdtui.fleet.compare import fleet_tables
from mdtui.fleet.hosts import Host, parse_host, read_hosts_file
from mdtui.fleet.plan import plan_fleet
from mdtui.fleet.remote import RemoteInventory, check_target
from mdtui.fleet.session import FleetResult, run_fleet
from mdtui.model.job import IoEngine, JobSpec, RwMode
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore

REPO = Path(__file__).resolve().parents[2]
TARGET_BYTES = 32 << 20
RUNTIME_S = 2
KILL_AFTER_S = 1.0  # into a 4 s run: the killed host is mid-run, the others go on
FLEET_DEADLINE_S = 60  # no fleet test may hang: asyncio.wait_for around each run
HOST_SLACK_S = 3.0  # a stopped server counts as not answering this long after the runtime
FLOAT_EQUAL = 1e-9


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[FioServer]]:
    running = start_servers(3, tmp_path)
    try:
        yield running
    finally:
        for server in running:
            server.stop()


def _request(target: Path, runtime: int = RUNTIME_S, rw: RwMode = RwMode.READ) -> BenchRequest:
    options = JobOptions(
        rw=rw, block_size_bytes=64 << 10, runtime_s=runtime, ioengine=IoEngine.SYNC, direct=False, numjobs=1
    )
    return BenchRequest("custom", str(target), options=options)


def _run(plan: object, store: ResultsStore, **kwargs: object) -> FleetResult:
    async def go() -> FleetResult:
        return await asyncio.wait_for(run_fleet(plan, store=store, **kwargs), FLEET_DEADLINE_S)  # type: ignore[arg-type]

    return asyncio.run(go())


def test_each_host_stores_its_own_figures(tmp_path: Path, servers: list[FioServer]) -> None:
    target = tmp_path / "shared.dat"
    with target.open("wb") as handle:
        handle.truncate(TARGET_BYTES)
    hosts = [parse_host(s.address) for s in servers]
    plan = plan_fleet(_request(target), hosts, slack_s=30)
    assert not plan.writes and not plan.refusals
    with ResultsStore(tmp_path / "r.db") as store:
        result = _run(plan, store)
        assert result.status is RunStatus.COMPLETE, [h.error for h in result.hosts]
        runs = store.get_runs(list(result.run_ids))
    assert len(runs) == len(servers)
    seen = set()
    for run, server in zip(runs, servers, strict=True):
        assert run.context["host"] == f"127.0.0.1:{server.port}"
        assert run.context["fleet"]["id"] == result.fleet_id
        document = json.loads(run.fio_json or "{}")
        # The server's own figures, as it sent them back: one job entry naming this server's port.
        assert [job["port"] for job in document["jobs"]] == [server.port]
        assert [job["hostname"] for job in document["jobs"]] == ["127.0.0.1"]
        fio_bw = document["jobs"][0]["read"]["bw_bytes"]
        stored = run.metrics.read_bw_bytes_per_s
        assert stored is not None and abs(stored - fio_bw) <= FLOAT_EQUAL * fio_bw, (stored, fio_bw)
        assert abs((run.metrics.read_iops or 0) - document["jobs"][0]["read"]["iops"]) <= 1e-6
        seen.add(fio_bw)
    assert len(seen) == len(servers), f"hosts stored the same figure (an 'All clients' sum?): {seen}"
    tables = fleet_tables(runs, result.fleet_id)
    assert len(tables) == 1
    table = tables[0]
    values = sorted(row.value or 0 for row in table.rows)
    assert table.median == values[1]
    slowest = table.slowest
    assert slowest is not None and slowest.value == values[0]
    assert slowest.ratio is not None and slowest.ratio <= 1.0
    assert f"slowest host: {slowest.host}" in table.summary()


def test_killed_server_fails_its_host_only(tmp_path: Path, servers: list[FioServer]) -> None:
    target = tmp_path / "shared.dat"
    with target.open("wb") as handle:
        handle.truncate(TARGET_BYTES)
    victim = servers[1]
    plan = plan_fleet(_request(target, runtime=4), [parse_host(s.address) for s in servers], slack_s=30)
    killer = threading.Timer(KILL_AFTER_S, victim.signal, args=(9,))
    started = time.monotonic()
    killer.start()
    try:
        with ResultsStore(tmp_path / "r.db") as store:
            result = _run(plan, store)
            runs = {r.context["host"]: r for r in store.get_runs(list(result.run_ids))}
    finally:
        killer.cancel()
    took = time.monotonic() - started
    by_host = {h.host: h for h in result.hosts}
    dead = f"127.0.0.1:{victim.port}"
    assert by_host[dead].status is RunStatus.FAILED, by_host[dead]
    assert "dropped the connection" in by_host[dead].error, by_host[dead].error
    assert runs[dead].status is RunStatus.FAILED and dead in runs[dead].error
    for server in (servers[0], servers[2]):
        name = f"127.0.0.1:{server.port}"
        assert by_host[name].status is RunStatus.COMPLETE, by_host[name]
        assert runs[name].status is RunStatus.COMPLETE and (runs[name].metrics.read_bw_bytes_per_s or 0) > 0
    assert took < 4 + 30, f"the fleet took {took:.1f} s"


def test_refused_and_silent_hosts_are_named(tmp_path: Path, servers: list[FioServer]) -> None:
    target = tmp_path / "shared.dat"
    with target.open("wb") as handle:
        handle.truncate(TARGET_BYTES)
    servers[2].signal(19)  # SIGSTOP: the kernel still accepts the connection, nobody answers
    refused = Host("127.0.0.1", free_port())
    hosts = [parse_host(servers[0].address), parse_host(servers[2].address), refused]
    plan = plan_fleet(_request(target, runtime=1), hosts, slack_s=HOST_SLACK_S)
    started = time.monotonic()
    with ResultsStore(tmp_path / "r.db") as store:
        result = _run(plan, store)
        stored = {r.context["host"]: r for r in store.get_runs(list(result.run_ids))}
    took = time.monotonic() - started
    by_host = {h.host: h for h in result.hosts}
    assert by_host[servers[0].address].status is RunStatus.COMPLETE
    silent = by_host[servers[2].address]
    assert silent.status is RunStatus.FAILED and "did not answer" in silent.error, silent.error
    assert "refused the connection" in by_host[refused.label].error
    assert stored[servers[0].address].status is RunStatus.COMPLETE
    assert stored[refused.label].status is RunStatus.FAILED
    assert took < 1 + HOST_SLACK_S + 15, f"a silent host held the fleet {took:.1f} s"


def test_readonly_reaches_the_server(tmp_path: Path, servers: list[FioServer]) -> None:
    """A job that writes, sent with --readonly after --client=, is refused by the server: the file stays zero."""
    target = tmp_path / "keep.dat"
    with target.open("wb") as handle:
        handle.truncate(1 << 20)
    spec = JobSpec("w", str(target), 4096, rw=RwMode.WRITE, ioengine=IoEngine.SYNC, direct=False, size_bytes=1 << 20)
    jobfile = tmp_path / "w.fio"
    jobfile.write_text(job_file(spec))
    argv = client_argv(parse_host(servers[0].address), str(jobfile), writes=False)
    assert argv.index("--readonly") > argv.index(f"--client=127.0.0.1,{servers[0].port}")
    output = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert "read-only" in output.stdout + output.stderr, output.stdout[-500:]
    assert target.read_bytes() == bytes(1 << 20), "the server wrote to a --readonly job's target"


def test_remote_writes_need_the_hosts_inventory(tmp_path: Path) -> None:
    request = _request(Path("/dev/nvme4n1"), rw=RwMode.WRITE)
    plan = plan_fleet(request, [Host("127.0.0.1", 8765)], slack_s=5)
    assert plan.writes and plan.refusals
    with pytest.raises(SafetyError, match="loopback address"):
        plan.ensure_allowed()
    plan = plan_fleet(request, [Host("store1")], ssh=False)
    with pytest.raises(SafetyError, match="--no-ssh"):
        plan.ensure_allowed()


def _captured_inventory() -> RemoteInventory:
    """What `mdtui scan --json` prints on the captured lab host (md0 of four NVMe, a mounted SATA disk)."""
    output = subprocess.run(
        [sys.executable, "-m", "mdtui", "--root", str(REPO / "tests/fixtures/trees/lab-standard"), "scan", "--json"],
        capture_output=True, text=True, timeout=60, check=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    data = json.loads(output.stdout)
    data["privileged"] = True  # captured as root; the capture itself records no privilege
    return RemoteInventory(Host("store1"), data, "6.1.0", "performance")


def test_in_use_rules_on_the_hosts_own_inventory() -> None:
    inventory = _captured_inventory()
    host = inventory.host
    assert check_target(host, "/dev/nvme4n1", inventory, writes=True).refusals == ()
    member = check_target(host, "/dev/nvme0n1", inventory, writes=True).refusals
    assert member and "md-member" in member[0], member
    mounted = check_target(host, "/dev/sda", inventory, writes=True).refusals
    assert mounted and "mounted" in " ".join(mounted), mounted
    assert check_target(host, "/dev/dm-0", inventory, writes=True).refusals
    array = check_target(host, "/dev/md0", inventory, writes=True)
    assert array.refusals == () and array.array["level"] == "raid6"
    assert [m["name"] for m in array.array["members"]] == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"]
    unprivileged = RemoteInventory(host, {**inventory.data, "privileged": False})
    assert check_target(host, "/dev/nvme4n1", unprivileged, writes=True).refusals
    # weakest-link takes the host's members from its inventory
    plan = plan_fleet(BenchRequest("weakest-link", "md0", quick=True), [host], scanner=lambda _h: inventory)
    assert plan.hosts[0].members == ("/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1")
    assert not plan.writes


def test_hosts_parsing_and_tunnel(tmp_path: Path) -> None:
    assert parse_host("store1") == Host("store1", 8765)
    assert parse_host("10.0.0.5:9000") == Host("10.0.0.5", 9000)
    assert parse_host("[fe80::1]:9000").client_arg == "ip6:fe80::1,9000"
    for bad in ("", "a:b", "x:70000", "-rf", "a b"):
        with pytest.raises(PlanError):
            parse_host(bad)
    assert Host("store1").tunnel_command(18765) == "ssh -N -o ExitOnForwardFailure=yes -L 18765:127.0.0.1:8765 store1"
    listing = tmp_path / "hosts"
    listing.write_text("# rack 3\nstore1\nstore2:9000  # new box\n\n")
    assert read_hosts_file(str(listing)) == [Host("store1"), Host("store2", 9000)]
    listing.write_text("store1\nbad host\n")
    with pytest.raises(PlanError, match="line 2"):
        read_hosts_file(str(listing))
    with pytest.raises(PlanError, match="offset-sweep"):
        plan_fleet(BenchRequest("offset-sweep", "md0"), [Host("a")], ssh=False)


def test_cli_runs_a_fleet_and_compares_it(tmp_path: Path, servers: list[FioServer]) -> None:
    target = tmp_path / "shared.dat"
    with target.open("wb") as handle:
        handle.truncate(TARGET_BYTES)
    db = tmp_path / "cli.db"
    env = {**os.environ, "PYTHONPATH": str(REPO), "MDTUI_DB": str(db)}
    argv = [
        sys.executable, "-m", "mdtui", "bench", "--preset", "custom", "--target", str(target), "--bs", "64k",
        "--runtime", "1", "--ioengine", "sync", "--no-direct", "--serial", "--json",
        "--host", servers[0].address, "--host", servers[1].address,
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=FLEET_DEADLINE_S, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(done.stdout)
    assert [h["status"] for h in document["hosts"]] == ["complete", "complete"]
    report = subprocess.run(
        [sys.executable, "-m", "mdtui", "results", "fleet", "--format", "json"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    exported = json.loads(report.stdout)
    assert (exported["schema_version"], exported["format"]) == (1, "mdtui-fleet")
    tables = exported["tables"]
    assert tables[0]["fleet"] == document["fleet"]
    assert {h["host"] for h in tables[0]["hosts"]} == {servers[0].address, servers[1].address}
    assert tables[0]["slowest"] in {servers[0].address, servers[1].address}
    tunnel = subprocess.run(
        [sys.executable, "-m", "mdtui", "bench", "--preset", "custom", "--target", "md0", "--host", "store1",
         "--tunnel"], capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert "ssh -N -o ExitOnForwardFailure=yes -L 8765:127.0.0.1:8765 store1" in tunnel.stdout
