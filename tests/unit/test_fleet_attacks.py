"""A hostile or broken remote host, as an attacker would play it: fio servers, ssh output, host names.

The fio server here is tests/fio_servers.py's HostileFioServer: it speaks fio's own net protocol to a real
`fio --client` and asks it for a root-only file (SENDFILE) and to write files (IOLOG) by relative and
absolute names, during a read-only run.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fio_servers import HostileFioServer

from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.errors import PlanError
from mdtui.fleet.client import run_on_host
from mdtui.fleet.hosts import Host, parse_host
from mdtui.fleet.plan import plan_fleet
from mdtui.fleet.remote import (
    REMOTE_SCAN_MAX_BYTES,
    RemoteInventory,
    check_target,
    is_loopback,
    remote_path,
    remote_scan,
)
from mdtui.model.job import IoEngine, JobSpec, RwMode

DEADLINE_S = 60
CAP_DEADLINE_S = 15.0  # the flooding host hangs 30 s after its 64 MiB: waiting for it is the bug
SLOW_SCAN_S = 0.5
SECRET = b"root-only secret: the admin's private key\n"


def _read_job() -> JobSpec:
    return JobSpec("r", "/dev/null", 4096, rw=RwMode.READ, ioengine=IoEngine.SYNC, direct=False, size_bytes=1 << 20)


@pytest.mark.skipif(os.geteuid() != 0, reason="as a user the client runs as that user and reads what it can")
def test_hostile_fio_server_reads_nothing_and_plants_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    admin = tmp_path / "admin"  # where the admin ran mdtui: a private key beside it, mode 0600
    victim = tmp_path / "victim"  # a root-only directory the server names by its absolute path
    admin.mkdir()
    victim.mkdir(mode=0o700)
    secret = admin / "id_ed25519"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    monkeypatch.chdir(admin)
    server = HostileFioServer(str(secret), ("planted", str(victim / "planted"))).start()
    try:
        result = asyncio.run(asyncio.wait_for(run_on_host(_read_job(), parse_host(server.address)), DEADLINE_S))
    finally:
        server.stop()
    assert server.version is not None, "the fake server never heard from the client"
    assert server.sendfile_reply is not None, "the client never answered SENDFILE"
    assert SECRET not in bytes(server.received), "the fio client sent the server a root-only file"
    assert not result.spec.writes
    assert sorted(p.name for p in admin.iterdir()) == ["id_ed25519"], "the server planted a file in the admin's cwd"
    assert list(victim.iterdir()) == [], "the server planted a file by its absolute path"
    leftovers = [p for p in Path(os.environ.get("TMPDIR", "/tmp")).glob("mdtui-fio-client-*")]
    assert leftovers == [], leftovers


def test_hostile_fio_server_plants_nothing_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root or not, the client's working directory is a fresh one, never the admin's."""
    monkeypatch.chdir(tmp_path)
    server = HostileFioServer("job.fio", ("planted",)).start()
    try:
        asyncio.run(asyncio.wait_for(run_on_host(_read_job(), parse_host(server.address)), DEADLINE_S))
    finally:
        server.stop()
    assert server.sendfile_reply is not None, "the client never answered SENDFILE"
    error, data = server.sendfile_reply
    # the job file in its own directory is all a relative name reaches: what the server sent anyway
    assert error != 0 or data.startswith(b"[r]"), (error, data[:80])
    assert list(tmp_path.iterdir()) == [], "the server planted a file in the admin's working directory"


# -- remote in-use checks that could be walked around -----------------------------------------------------


def _disk(name: str, *reasons: tuple[str, str], partitions: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "name": name,
        "dev_path": f"/dev/{name}",
        "model": "QEMU HARDDISK",
        "partitions": list(partitions),
        "in_use": [{"kind": kind, "detail": detail} for kind, detail in reasons],
        "problems": [],
    }


def _partitioned_host() -> RemoteInventory:
    """What a host's `mdtui scan --json` says when md1 is on partitions and mounted (the issue's case:
    md1 on sdc1 + sdd1, mounted at /srv): the mount traces down to the whole disks sdc and sdd."""
    mounted = ("mounted", "mounted at /srv (ext4) via md1")
    data = {
        "privileged": True,
        "disks": [
            _disk("sda", ("mounted", "mounted at / (ext4)")),
            _disk("sdb"),
            _disk("sdc", mounted, ("partition-table", "gpt partition table"), partitions=("sdc1",)),
            _disk("sdd", mounted, ("partition-table", "gpt partition table"), partitions=("sdd1",)),
        ],
        "arrays": [
            {"name": "md1", "level": "raid1", "members": [{"name": "sdc1", "states": ["in_sync"]},
                                                          {"name": "sdd1", "states": ["in_sync"]}]},
            {"name": "md2", "level": "raid1", "members": [{"name": "sdx1", "states": ["in_sync"]}]},
        ],
    }  # fmt: skip
    return RemoteInventory(Host("203.0.113.1"), data)


def test_array_on_mounted_partitions_is_refused() -> None:
    inventory = _partitioned_host()
    refusals = check_target(inventory.host, "/dev/md1", inventory, writes=True).refusals
    assert any("member /dev/sdc1 is mounted" in r for r in refusals), refusals
    unknown = check_target(inventory.host, "md2", inventory, writes=True).refusals
    assert unknown and "sdx1 is neither a disk nor a partition" in unknown[0], unknown
    assert check_target(inventory.host, "/dev/sdb", inventory, writes=True).refusals == ()


@pytest.mark.parametrize("spelling", ["//dev/sda", "/./dev/sda", "/dev/../dev/sda", "/dev//sda", "///dev/sda"])
def test_other_spellings_of_a_mounted_disk_are_refused(spelling: str) -> None:
    inventory = _partitioned_host()
    refusals = check_target(inventory.host, spelling, inventory, writes=True).refusals
    assert refusals and "/dev/sda is in use: mounted" in refusals[0], refusals
    request = BenchRequest("custom", spelling, options=JobOptions(rw=RwMode.WRITE))
    plan = plan_fleet(request, [inventory.host], scanner=lambda _h: inventory)
    assert plan.hosts[0].target == "/dev/sda" and plan.refusals


@pytest.mark.parametrize("relative", ["dev/sda", "./dev/sda", "../dev/sda", "srv/x.dat"])
def test_relative_remote_paths_are_refused(relative: str) -> None:
    with pytest.raises(PlanError, match="relative path"):
        remote_path(relative)
    request = BenchRequest("custom", relative, options=JobOptions(rw=RwMode.WRITE))
    with pytest.raises(PlanError, match="relative path"):
        plan_fleet(request, [Host("203.0.113.1")], scanner=lambda _h: _partitioned_host())


def _fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An `ssh` first on PATH: it logs each host it is asked for and plays that host from files beside it
    (HOST.out printed, HOST.err, HOST.rc; HOST.flood prints 64 MiB then hangs 30 s)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ssh"
    script.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys, time\n"
        "args = sys.argv[1:]\n"
        "host, command = args[args.index('--') + 1], args[-1]\n"
        f"here = pathlib.Path({str(bin_dir)!r})\n"
        "with (here / 'calls').open('a') as log:\n"
        "    log.write(host + '\\n')\n"
        "if command != 'mdtui scan --json':\n"
        "    print('6.1.0'); print('performance'); sys.exit(0)\n"
        "if (here / (host + '.flood')).exists():\n"
        "    for _ in range(64):\n"
        "        sys.stdout.buffer.write(b' ' * (1 << 20))\n"
        "    sys.stdout.flush(); time.sleep(30)\n"
        "out = here / (host + '.out')\n"
        "sys.stdout.buffer.write(out.read_bytes() if out.exists() else b'')\n"
        "err = here / (host + '.err')\n"
        "sys.stderr.buffer.write(err.read_bytes() if err.exists() else b'')\n"
        "rc = here / (host + '.rc')\n"
        "sys.exit(int(rc.read_text()) if rc.exists() else 0)\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


@pytest.mark.parametrize(
    "name", ["127.1", "0.0.0.0", "2130706433", "localhost.", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]:8765", "own"]
)
def test_every_spelling_of_this_machine_is_loopback(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ssh to any of these reaches this machine, whose inventory says nothing of the fio server's disks."""
    calls = _fake_ssh(tmp_path, monkeypatch) / "calls"
    host = parse_host(socket.gethostname() if name == "own" else name)
    found = remote_scan(host)
    assert isinstance(found, str), found
    assert not calls.exists(), f"ssh was run for {name}: {calls.read_text()}"
    assert is_loopback(host)


@pytest.mark.parametrize("bad", ["store1\n:8765", "sto\nre1", "a..b", "-oProxyCommand=x", "a-.b", "x" * 64, "a/b"])
def test_host_grammar_is_strict(bad: str) -> None:
    with pytest.raises(PlanError):
        parse_host(bad)


# -- hostile or broken remote output ------------------------------------------------------------------------


def _inventory_json(**disk: Any) -> bytes:
    return json.dumps({"privileged": True, "disks": [{**_disk("sdb"), **disk}], "arrays": []}).encode()


def test_mistyped_inventory_refuses_that_host_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = _fake_ssh(tmp_path, monkeypatch)
    (bin_dir / "203.0.113.1.out").write_bytes(_inventory_json(in_use=5))
    (bin_dir / "203.0.113.2.out").write_bytes(_inventory_json())
    (bin_dir / "203.0.113.3.out").write_bytes(_inventory_json(name="sdb\x1b[2J"))
    request = BenchRequest("custom", "/dev/sdb", options=JobOptions(rw=RwMode.WRITE))
    plan = plan_fleet(request, [Host("203.0.113.1"), Host("203.0.113.2"), Host("203.0.113.3")])
    bad, good, named = plan.hosts
    assert bad.inventory is None and "in_use is not a list" in bad.no_inventory, bad.no_inventory
    assert named.inventory is None and "not a kernel device name" in named.no_inventory
    assert good.inventory is not None and good.refusals == ()
    assert len(plan.refusals) == 2 and all("\n" not in r and "\x1b" not in r for r in plan.refusals)


def test_invalid_utf8_and_escapes_from_a_host_are_cleaned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = _fake_ssh(tmp_path, monkeypatch)
    model = "\x1b]0;owned\x07\x1b[2JEvil\x9b31m disk\x7f"
    (bin_dir / "203.0.113.1.out").write_bytes(_inventory_json(model=model).replace(b"Evil", b"Evil\xff\xfe"))
    found = remote_scan(Host("203.0.113.1"))
    assert isinstance(found, RemoteInventory), found
    assert found.disks()[0]["model"] == "Evil\ufffd\ufffd disk\ufffd"  # sequences removed, the lone DEL marked
    (bin_dir / "203.0.113.2.err").write_bytes(b"\xff\x1b[31mPermission denied (publickey).\x1b]0;x\x07\n")
    (bin_dir / "203.0.113.2.rc").write_text("255")
    failed = remote_scan(Host("203.0.113.2"))
    assert isinstance(failed, str) and failed.endswith("failed: \ufffdPermission denied (publickey).")


def test_endless_output_is_cut_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host printing 64 MiB and then hanging: reading stops at 16 MiB and ssh is killed at once."""
    bin_dir = _fake_ssh(tmp_path, monkeypatch)
    (bin_dir / "203.0.113.1.flood").touch()
    started = time.monotonic()
    found = remote_scan(Host("203.0.113.1"))
    took = time.monotonic() - started
    assert isinstance(found, str) and f"printed more than {REMOTE_SCAN_MAX_BYTES} bytes" in found, found
    assert took < CAP_DEADLINE_S, f"reading a flooding host took {took:.1f} s"


def test_hosts_are_scanned_in_parallel() -> None:
    def slow(host: Host) -> str:
        time.sleep(SLOW_SCAN_S)
        return f"{host.name} is slow"

    hosts = [Host(f"203.0.113.{n}") for n in range(1, 9)]
    started = time.monotonic()
    plan = plan_fleet(BenchRequest("custom", "md0"), hosts, scanner=slow)
    took = time.monotonic() - started
    assert [p.no_inventory for p in plan.hosts] == [f"{h.name} is slow" for h in hosts]
    assert took < 3 * SLOW_SCAN_S, f"8 hosts took {took:.1f} s: scanned one after another"


# -- the printed tunnel ---------------------------------------------------------------------------------------


def test_tunnel_exits_when_its_port_is_taken() -> None:
    """Without ExitOnForwardFailure, ssh only warns when another user already listens on the local port."""
    argv = shlex.split(Host("store1").tunnel_command(18765))
    assert argv[argv.index("-o") + 1] == "ExitOnForwardFailure=yes"
    assert argv.index("-o") < argv.index("store1")
    if shutil.which("ssh") is not None:  # the installed ssh takes the option (-G prints its config, no connection)
        config = subprocess.run([*argv[:-1], "-G", "store1"], capture_output=True, text=True, timeout=30)
        assert "exitonforwardfailure yes" in config.stdout.lower(), config.stderr
