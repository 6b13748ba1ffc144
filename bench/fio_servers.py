"""Real `fio --server` processes on 127.0.0.1 that stand in for remote hosts: bench/bench_fleet.py's, and the
fleet tests' (tests/fio_servers.py adds a hostile server). A benchmark needs nothing from the test tree.

Each server runs in its own session (fio forks a child per connection, in the same process group), so a
test can SIGKILL or SIGSTOP one server with everything it started, and stop() always cleans up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class FioServer:
    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> FioServer:
        # Probing a fio server's port opens a connection it forks for; a probe that just connects and
        # closes is harmless (the child sees EOF and exits).
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                ["fio", f"--server=ip:127.0.0.1,{self.port}"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _listening(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"fio --server on port {self.port} did not start: {self.log.read_text()[-500:]}")
            time.sleep(0.05)
        return self

    def signal(self, sig: signal.Signals) -> None:
        """Signal the server and the children it forked (its whole session's process group)."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)

    def stop(self) -> None:
        if self.process is None:
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self.process = None


def start_servers(count: int, directory: Path) -> list[FioServer]:
    servers: list[FioServer] = []
    try:
        for index in range(count):
            servers.append(FioServer(free_port(), directory / f"fio-server-{index}.log").start())
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers
