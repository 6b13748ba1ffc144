"""The lab's command agent. Runs INSIDE the guest, standard library only.

It talks JSON lines over a virtio-serial port. Each request is one line::

    {"id": 7, "op": "exec", "argv": ["lsblk", "-J"], "timeout": 30, "env": {}, "cwd": "/", "input": null}

and each answer is one line carrying the same id::

    {"id": 7, "rc": 0, "stdout": "...", "stderr": "...", "duration": 0.12, "timed_out": false}

Requests run concurrently (one thread each), so a test can start a long command (fio, a resync
watcher) and keep talking to the guest. A command that outlives its timeout has its whole process
group killed and is answered with ``timed_out: true``; the agent itself stays up.

Other ops: ``ping`` (readiness probe, answered once guest_init.sh has touched ``READY_FLAG``)
and ``poweroff`` (answer, sync, then sysrq power-off).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

PORT_NAME = "mdtui.agent"
READY_FLAG = "/run/mdtui-lab.ready"


def find_port(name: str, wait: float = 30.0) -> str:
    """The /dev node of the virtio-serial port called ``name`` (udev's symlink if present)."""
    deadline = time.monotonic() + wait
    link = f"/dev/virtio-ports/{name}"
    while True:
        if os.path.exists(link):
            return link
        base = "/sys/class/virtio-ports"
        if os.path.isdir(base):
            for entry in sorted(os.listdir(base)):
                try:
                    with open(os.path.join(base, entry, "name")) as fh:
                        if fh.read().strip() == name and os.path.exists(f"/dev/{entry}"):
                            return f"/dev/{entry}"
                except OSError:
                    continue
        if time.monotonic() > deadline:
            raise SystemExit(f"agent: no virtio-serial port named {name!r}")
        time.sleep(0.1)


class Agent:
    def __init__(self, fd: int, base_env: dict[str, str], default_cwd: str) -> None:
        self.fd = fd
        self.base_env = base_env
        self.default_cwd = default_cwd
        self.write_lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        with self.write_lock:
            view = memoryview(data)
            while view:
                written = os.write(self.fd, view)
                view = view[written:]

    def serve(self) -> None:
        buffer = b""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while True:
            events = poller.poll(1000)
            if not events:
                continue
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:  # host side not connected: wait for it to come (back)
                time.sleep(0.1)
                continue
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.strip():
                    threading.Thread(target=self.handle, args=(line,), daemon=True).start()

    def handle(self, line: bytes) -> None:
        request_id: Any = None
        try:
            request = json.loads(line)
            request_id = request.get("id")
            op = request.get("op", "exec")
            if op == "ping":
                while not os.path.exists(READY_FLAG):  # guest_init.sh is still settling udev
                    time.sleep(0.05)
                self.send({"id": request_id, "ok": True, "pid": os.getpid(), "uptime": _uptime()})
            elif op == "exec":
                self.send({"id": request_id, **self.execute(request)})
            elif op == "poweroff":
                self.send({"id": request_id, "ok": True})
                os.sync()
                with open("/proc/sysrq-trigger", "w") as fh:
                    fh.write("o")
            else:
                self.send({"id": request_id, "error": f"unknown op {op!r}"})
        except Exception as exc:  # answer anything rather than leave the host waiting
            self.send({"id": request_id, "error": f"{type(exc).__name__}: {exc}"})

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        argv = [str(arg) for arg in request["argv"]]
        timeout = request.get("timeout")
        env = dict(self.base_env)
        env.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
        stdin_data = request.get("input")
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=request.get("cwd") or self.default_cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return {
                "rc": 127,
                "stdout": "",
                "stderr": f"agent: cannot run {argv[0]!r}: {exc}\n",
                "duration": 0.0,
                "timed_out": False,
            }
        timed_out = False
        try:
            out, err = proc.communicate(stdin_data.encode() if stdin_data is not None else None, timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            try:
                out, err = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # a grandchild in another session holds the pipes
                proc.kill()
                out, err = b"", b"agent: output lost (pipes held open after kill)\n"
        return {
            "rc": proc.wait(),
            "stdout": out.decode(errors="replace"),
            "stderr": err.decode(errors="replace"),
            "duration": round(time.monotonic() - started, 3),
            "timed_out": timed_out,
        }


def _uptime() -> float:
    try:
        with open("/proc/uptime") as fh:
            return float(fh.read().split()[0])
    except OSError:
        return -1.0


def main() -> None:
    """``agent.py [CHECKOUT]``: serve on the mdtui.agent port; commands run in CHECKOUT by default,
    with CHECKOUT on PYTHONPATH so the guest can ``import mdtui`` from the host's checkout."""
    checkout = sys.argv[1] if len(sys.argv) > 1 else "/"
    # The init script starts the agent with `&`, and a non-interactive shell starts background jobs with
    # SIGINT and SIGQUIT ignored; commands would inherit that and a test's `kill -INT` (a user's Ctrl-C)
    # would do nothing. Commands run as typed at a terminal: default dispositions.
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONPATH": checkout,
    }
    port = find_port(PORT_NAME)
    fd = os.open(port, os.O_RDWR)
    print(f"agent: serving on {port} (pid {os.getpid()}, uptime {_uptime():.2f}s)", file=sys.stderr, flush=True)
    Agent(fd, env, checkout).serve()


if __name__ == "__main__":
    main()
