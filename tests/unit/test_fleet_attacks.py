"""A hostile or broken remote host, as an attacker would play it: fio servers, ssh output, host names.

The fio server here is tests/fio_servers.py's HostileFioServer: it speaks fio's own net protocol to a real
`fio --client` and asks it for a root-only file (SENDFILE) and to write files (IOLOG) by relative and
absolute names, during a read-only run.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from fio_servers import HostileFioServer

from mdtui.fleet.client import run_on_host
from mdtui.fleet.hosts import parse_host
from mdtui.model.job import IoEngine, JobSpec, RwMode

DEADLINE_S = 60
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
