"""Many hosts in the lab (issue 18): a guest runs `fio --server`, reached from the host through QEMU user
networking forwarded to 127.0.0.1, with a real md raid0 (one member throttled) as the target; the
weakest-link preset runs there from the host with `mdtui bench --host 127.0.0.1:PORT`.

One boot; the steps are 2 s with 2 jobs × iodepth 4, so the file takes well under two minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .harness import Guest, Machine, nvme
from .machines import SLOW_BPS

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
GUEST_FIO_PORT = 8765
SERVER_START_S = 60.0
# - the throttled member's read alone, measured from the host through the guest's fio server, vs QEMU's
#   throttle on it (SLOW_BPS, 20 MB/s): alone / SLOW_BPS within 1 ± THROTTLE_TOLERANCE;
THROTTLE_TOLERANCE = 0.15
# - the raid0's read vs the slowest member alone × 3 (finding 1), within 1 ± WEAKEST_LINK_TOLERANCE;
WEAKEST_LINK_TOLERANCE = 0.15
# - a stored step's bandwidth vs the fio JSON the guest's server sent for it: float rounding only.
FIO_FIGURE_REL_TOLERANCE = 1e-9


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_server(port: int) -> None:
    """fio --client succeeds against the guest's server through the forward (a bare connect does not prove it)."""
    deadline = time.monotonic() + SERVER_START_S
    last = ""
    while time.monotonic() < deadline:
        probe = subprocess.run(
            ["fio", f"--client=127.0.0.1,{port}", "--output-format=normal", "/dev/null"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        # QEMU accepts on the forwarded port whether or not the guest listens; the server's probe reply
        # ("hostname=..., fio=fio-3.33") proves fio answers.
        if "hostname=" in probe.stdout:
            return
        last = probe.stderr[-300:]
        time.sleep(1.0)
    raise AssertionError(f"the guest's fio server did not answer on 127.0.0.1:{port}: {last}")


def test_weakest_link_on_a_guest_through_its_fio_server(
    lab_boot: Callable[..., Guest], tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    port = _free_port()
    machine = Machine(
        name="fleet",
        disks=(
            nvme("FLEET0", "512M"),
            nvme("FLEET1", "512M"),
            nvme("FLEETSLOW", "512M", bps_total=SLOW_BPS),
        ),
        forward_ports=((port, GUEST_FIO_PORT),),
    )
    guest = lab_boot(machine)
    members = [guest.device(serial) for serial in ("FLEET0", "FLEET1", "FLEETSLOW")]
    guest.run(
        ["mdadm", "--create", "/dev/md0", "--run", "--level=0", "--raid-devices=3", "--chunk=512", *members],
        timeout=120,
    )
    guest.run(["udevadm", "settle"], timeout=60)
    server = guest.spawn(["fio", f"--server=ip:0.0.0.0,{GUEST_FIO_PORT}"], timeout=900, check=False)
    _wait_for_server(port)
    db = tmp_path / "fleet.db"
    env = {**os.environ, "PYTHONPATH": str(REPO), "MDTUI_DB": str(db)}
    argv = [
        sys.executable, "-m", "mdtui", "bench", "--preset", "weakest-link", "--target", "/dev/md0",
        "--members", ",".join(members), "--runtime", "2", "--numjobs", "2", "--iodepth", "4",
        "--host", f"127.0.0.1:{port}", "--json",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, check=False)
    took = time.monotonic() - started
    assert done.returncode == 0, f"rc {done.returncode}\n{done.stderr[-3000:]}\n{guest.console_tail(20)}"
    document: dict[str, Any] = json.loads(done.stdout)
    host = document["hosts"][0]
    assert host["status"] == "complete", host
    steps = {step["step"]: step for step in host["steps"]}
    exported = subprocess.run(
        [sys.executable, "-m", "mdtui", "results", "export", *(str(s["run_id"]) for s in host["steps"]),
         "--format", "json", "--raw"],
        capture_output=True, text=True, timeout=60, env=env, check=True,
    )  # fmt: skip
    runs = {run["id"]: run for run in json.loads(exported.stdout)["runs"]}
    for step in host["steps"]:
        run = runs[step["run_id"]]
        fio = run["fio"] if isinstance(run["fio"], list) else [run["fio"]]
        fio_bw = sum(job["read"]["bw_bytes"] for doc in fio for job in doc["jobs"])
        stored = step["metrics"]["read_bw_bytes_per_s"]
        assert abs(stored - fio_bw) <= FIO_FIGURE_REL_TOLERANCE * fio_bw, (step["step"], stored, fio_bw)
        assert run["context"]["host"] == f"127.0.0.1:{port}"
    alone = {
        name: step["metrics"]["read_bw_bytes_per_s"]
        for name, step in steps.items()
        if name.endswith("alone") or "alone" in name
    }
    slow_name = next(name for name in alone if members[2].rsplit("/", 1)[-1] in name)
    slow = alone[slow_name]
    array_step = host["steps"][-1]
    array_bw = array_step["metrics"]["read_bw_bytes_per_s"]
    ratio_throttle = slow / SLOW_BPS
    ratio_array = array_bw / (min(alone.values()) * len(members))
    print(
        f"\nlab fleet: {took:.1f} s for {len(host['steps'])} steps; slowest alone {slow / 1e6:.1f} MB/s "
        f"({ratio_throttle:.3f}× the throttle), md0 {array_bw / 1e6:.1f} MB/s = {ratio_array:.3f}× slowest × 3"
    )
    record_property("fleet_lab_seconds", round(took, 1))
    assert abs(ratio_throttle - 1) <= THROTTLE_TOLERANCE, f"slowest member alone {slow / 1e6:.1f} MB/s"
    assert abs(ratio_array - 1) <= WEAKEST_LINK_TOLERANCE, f"md0 {ratio_array:.3f}× slowest × 3"
    assert min(alone, key=lambda n: alone[n]) == slow_name, alone
    del server  # the guest, and its fio server, are powered off when the test ends
