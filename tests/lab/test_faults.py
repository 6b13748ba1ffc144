"""Faults without loss on real md (issue 13): a chunk sweep killed with SIGKILL, and one whose SSH session drops.

The sweep runs as `mdtui experiment chunk-sweep` in the guest from a shell that records its pid, so the test
can signal exactly that process. Host-side fault tests (real fio on files) are in tests/unit/test_faults.py.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from .harness import Guest, Pending

STATE_DIR = "/tmp/mdtui-faults-state"
DB = "/tmp/mdtui-faults.db"
PID_FILE = "/tmp/mdtui-faults.pid"
ENV = {"MDTUI_STATE_DIR": STATE_DIR, "MDTUI_DB": DB}
# Seconds per fio step: long enough that the sweep is caught while fio reads md9 under TCG, short enough
# that the raw-member baseline before it does not dominate the test.
STEP_RUNTIME_S = 8
FIND_TIMEOUT_S = 120  # the baseline step, the create and fio's start on a 2-vCPU TCG guest under host load


def start_sweep(guest: Guest, runtime_s: int = STEP_RUNTIME_S) -> tuple[Pending, list[str]]:
    devices = [guest.device("NVME0"), guest.device("NVME1")]
    names = [device.rsplit("/", 1)[-1] for device in devices]
    guest.run(["rm", "-rf", DB, f"{DB}-wal", f"{DB}-shm", STATE_DIR, PID_FILE])
    argv = [
        guest.python_exe,
        "-m",
        "mdtui",
        "experiment",
        "chunk-sweep",
        "--level",
        "0",
        "--chunks",
        "64,512",
        "--preset",
        "custom",
        "--runtime",
        str(runtime_s),
        "--device",
        "/dev/md9",
        "--yes",
        *names,
    ]
    script = f"echo $$ > {PID_FILE}; exec " + " ".join(argv)
    return guest.spawn(["/bin/sh", "-c", script], env=ENV, timeout=300, check=False), devices


def wait_for_fio_on_md9(guest: Guest, pending: Pending) -> float:
    """Seconds until fio is reading md9 for real, plus three status intervals.

    fio's process alone is not enough: on a loaded TCG host it can take longer than a status interval to
    issue its first read, and a signal before its first status report leaves no figure to keep (CI once
    signalled 2 s after the process appeared and stored none). udev's probe reads md9 too, so the reads are
    counted from when fio is first seen."""
    started = time.monotonic()
    probe = "grep -q '^md9 : active' /proc/mdstat && pgrep -f 'filename=/dev/md9' >/dev/null && cat /sys/block/md9/stat"
    first_reads: int | None = None
    while time.monotonic() - started < FIND_TIMEOUT_S:
        seen = guest.sh(probe, check=False)
        if seen.rc == 0:
            reads = int(seen.stdout.split()[0])
            if first_reads is None:
                first_reads = reads
            elif reads > first_reads + 64:
                time.sleep(3)
                return time.monotonic() - started
        time.sleep(0.3)
    result = pending.wait()
    raise AssertionError(f"fio never read md9; the sweep ended with {result.rc}: {result.stderr[-2000:]}")


def fio_on_md9(guest: Guest) -> str:
    return guest.run(["pgrep", "-af", "filename=/dev/md9"], check=False).stdout.strip()


LIST_RUNS = """
import json, sys
from mdtui.store.runs import ResultsStore
store = ResultsStore(sys.argv[1], create=False)
print(json.dumps([
    {"id": r.id, "label": r.label, "status": r.status.value, "target": r.target, "error": r.error,
     "read": store.get_run(r.id).metrics.read_bw_bytes_per_s}
    for r in store.list_runs()
]))
"""


def runs(guest: Guest) -> list[dict]:
    return json.loads(guest.run([guest.python_exe, "-c", LIST_RUNS, DB], env=ENV).stdout)


def test_a_sigkilled_chunk_sweep_is_named_at_the_next_start_and_destroy_removes_it(standard_guest: Guest) -> None:
    guest = standard_guest
    pending, devices = start_sweep(guest)
    waited = wait_for_fio_on_md9(guest, pending)
    guest.sh(f"kill -KILL $(cat {PID_FILE})")
    killed = pending.wait()
    assert killed.rc == -9, killed.stderr[-2000:]
    # fio was started with PR_SET_PDEATHSIG: it dies with mdtui instead of reading md9 to the end.
    deadline = time.monotonic() + 10
    while fio_on_md9(guest) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert fio_on_md9(guest) == ""
    assert "md9 : active raid0" in guest.read_file("/proc/mdstat")

    # The next start of any verb names the array and the run it was made for.
    scan = guest.run([guest.python_exe, "-m", "mdtui", "scan"], env=ENV, timeout=120)
    stored = {run["id"]: run for run in runs(guest)}
    sweep_run = max(run_id for run_id, run in stored.items() if run["target"] == "/dev/md9")
    notice = (
        f"mdtui: md9 was left by an interrupted chunk sweep (run #{sweep_run}): remove it with `mdtui destroy /dev/md9`"
    )
    assert notice in scan.stderr.splitlines(), scan.stderr
    print(f"\nSIGKILL {waited:.1f} s into the sweep; next start said: {notice}")
    # The run killed on md9 lists as interrupted; the raw-member baseline before it completed.
    assert stored[sweep_run]["status"] == "interrupted" and stored[sweep_run]["label"] == "raid0 chunk 64 KiB"
    assert [run["status"] for run_id, run in sorted(stored.items()) if run_id < sweep_run] == ["complete"]
    listing = guest.run([guest.python_exe, "-m", "mdtui", "results", "list"], env=ENV, timeout=120).stdout
    (row,) = [line for line in listing.splitlines() if line.split()[:1] == [str(sweep_run)]]
    assert "interrupted" in row.split()

    destroy = guest.run([guest.python_exe, "-m", "mdtui", "destroy", "/dev/md9", "--yes"], env=ENV, timeout=120)
    assert "md9 was left" not in destroy.stderr  # not told to remove what it is removing
    assert "/dev/md9 stopped and its members wiped" in destroy.stdout
    assert "md9" not in guest.read_file("/proc/mdstat")
    for device in devices[1:]:  # the baseline member is overwritten by design, the array members wiped
        assert guest.run(["wipefs", "--no-act", "--noheadings", device]).stdout.strip() == ""
    assert guest.run(["ls", "-A", f"{STATE_DIR}/temporary-arrays"]).stdout.strip() == ""
    again = guest.run([guest.python_exe, "-m", "mdtui", "scan"], env=ENV, timeout=120)
    assert "was left by" not in again.stderr


def test_sighup_mid_chunk_sweep_keeps_the_figures_and_tears_the_array_down(standard_guest: Guest) -> None:
    guest = standard_guest
    # Long steps: the signal must land while fio reads md9, however slowly the guest reached it.
    pending, devices = start_sweep(guest, runtime_s=3 * STEP_RUNTIME_S)
    waited = wait_for_fio_on_md9(guest, pending)
    # What a dropped SSH session delivers: SIGHUP, possibly twice (shell and kernel).
    guest.sh(f"kill -HUP $(cat {PID_FILE}); sleep 0.2; kill -HUP $(cat {PID_FILE}) 2>/dev/null || true")
    result = pending.wait()
    assert result.rc == 129, result.stderr[-2000:]
    assert "experiment stopped" in result.stderr
    assert fio_on_md9(guest) == ""
    assert "md9" not in guest.read_file("/proc/mdstat")
    for device in devices:
        examine = guest.run(["mdadm", "--examine", device], check=False)
        assert examine.rc != 0 and "No md superblock" in examine.stderr, f"{device} still has a superblock"
    assert guest.run(["ls", "-A", f"{STATE_DIR}/temporary-arrays"]).stdout.strip() == ""
    assert json.loads(guest.run(["cat", f"{STATE_DIR}/created-arrays.json"]).stdout) == []
    stored = runs(guest)
    (md9_run,) = [run for run in stored if run["target"] == "/dev/md9"]
    print(f"\nSIGHUP {waited:.1f} s into the sweep: exit {result.rc}, md9 torn down, run {md9_run}")
    assert md9_run["status"] == "cancelled" and "SIGHUP" in md9_run["error"], (md9_run, result.stderr[-2000:])
    assert md9_run["read"] and md9_run["read"] > 0, md9_run
    scan = guest.run([guest.python_exe, "-m", "mdtui", "scan"], env=ENV, timeout=120)
    assert "was left by" not in scan.stderr


def host_mounts_a_tmpfs(scratch: Path) -> bool:
    """Whether this host can mount a tmpfs, as tests/unit/test_faults.py's full-disk cases need."""
    mount = scratch / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        return False
    subprocess.run(["umount", "-l", str(mount)], check=False)
    return True


def test_the_full_disk_cases_run_as_root_in_the_guest(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """tests/unit/test_faults.py fills a tiny tmpfs under the results database; a host that cannot mount one
    skips those cases, so they run here, where the guest is root with tmpfs. A host that can mount one runs
    them itself (the same test command runs the unit tests), and the ~100 s of pytest under TCG are spared."""
    if host_mounts_a_tmpfs(tmp_path):
        pytest.skip("this host mounts a tmpfs: tests/unit/test_faults.py ran the full-disk cases on the host")
    guest: Guest = request.getfixturevalue("standard_guest")  # booted only when the cases run here
    result = guest.run(
        [guest.python_exe, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/unit/test_faults.py",
         "-k", "full_disk"],
        cwd=str(guest.checkout), timeout=600, check=False,
    )  # fmt: skip
    assert result.rc == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout and "skipped" not in result.stdout, result.stdout[-2000:]
