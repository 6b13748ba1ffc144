"""Faults without loss (issue 13): a dropped SSH session, SIGTERM, SIGKILL, a stalled fio, two writers, a full disk.

Each case runs the real `mdtui` CLI in a subprocess with real fio on a file, does to it what the fault does
(a signal, a hung-up terminal, SIGSTOP on fio, a filled filesystem) and checks what is left: the exit code,
the stored run and its figures, and that no fio process outlived it. What needs md (a SIGKILLed chunk sweep)
is in tests/lab/test_faults.py.
"""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from mdtui.store.records import Metrics, RunRecord, RunSetup, RunStatus, SamplePoint
from mdtui.store.runs import ResultsStore

REPO = Path(__file__).resolve().parents[2]
TARGET_BYTES = 64 << 20
START_TIMEOUT_S = 30  # interpreter start, scan and fio start on a loaded 2-core host
EXIT_TIMEOUT_S = 20  # fio stops within a second of SIGINT; SIGKILL of a stall is immediate
# How long after fio started a fault is injected: one status report (a second) gives figures to keep.
RUNNING_FOR_S = 1.5


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """A file fio reads, named uniquely so a leftover fio is found by its name alone."""
    path = tmp_path / f"fault-{uuid.uuid4().hex[:12]}.img"
    with path.open("wb") as handle:
        handle.truncate(TARGET_BYTES)
    return path


def bench_argv(target: Path, *extra: str, runtime: int = 30) -> list[str]:
    return [
        sys.executable, "-m", "mdtui", "bench", "--preset", "custom", "--target", str(target),
        "--rw", "read", "--bs", "1m", "--runtime", str(runtime), *extra,
    ]  # fmt: skip


def env_for(db: Path) -> dict[str, str]:
    return {**os.environ, "MDTUI_DB": str(db), "PYTHONPATH": str(REPO)}


def fio_pids(target: Path) -> list[int]:
    """fio processes reading ``target`` (found by its unique file name)."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "status"]):
        info = proc.info
        alive = info["name"] == "fio" and info["status"] != psutil.STATUS_ZOMBIE
        if alive and any(target.name in arg for arg in info["cmdline"] or ()):
            found.append(proc.pid)
    return found


def pgrep(target: Path) -> list[int]:
    out = subprocess.run(["pgrep", "-f", "--", target.name], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def wait_until_fio_runs(target: Path, proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> int:
    """fio's pid once it has run RUNNING_FOR_S (status reports have come in); fails if mdtui exits first."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"mdtui exited with {proc.returncode} before fio started"
        pids = fio_pids(target)
        if pids:
            time.sleep(RUNNING_FOR_S)
            return pids[0]
        time.sleep(0.05)
    pytest.fail(f"fio did not start on {target} within {START_TIMEOUT_S} s")


def wait_gone(target: Path, timeout_s: float = 5.0) -> float:
    """Seconds until no fio reads ``target``; fails naming the survivors."""
    started = time.monotonic()
    while fio_pids(target) and time.monotonic() - started < timeout_s:
        time.sleep(0.05)
    assert fio_pids(target) == [] and pgrep(target) == [], f"fio still running on {target}: {pgrep(target)}"
    return time.monotonic() - started


def stored(db: Path) -> list[RunRecord]:
    with ResultsStore(db, create=False) as store:
        return [store.get_run(run.id) for run in store.list_runs()]


def quick_check(db: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("PRAGMA quick_check")]


@pytest.fixture
def reap() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test started; any still running at the end are killed (by pid), fio with them."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def start(argv: Sequence[str], db: Path, reap: list[subprocess.Popen[str]], **popen: object) -> subprocess.Popen[str]:
    options: dict[str, object] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **popen}
    proc = subprocess.Popen(list(argv), env=env_for(db), cwd=REPO, **options)  # type: ignore[call-overload]
    reap.append(proc)
    return proc


# --- 1. SSH drop (SIGHUP) and SIGTERM mid-benchmark ------------------------------------------------------


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGHUP, 129), (signal.SIGTERM, 143)])
def test_sighup_or_sigterm_stops_fio_and_keeps_the_figures_as_cancelled(
    target: Path, tmp_path: Path, reap: list[subprocess.Popen[str]], sig: signal.Signals, code: int
) -> None:
    db = tmp_path / "results.db"
    proc = start(bench_argv(target), db, reap)
    fio = wait_until_fio_runs(target, proc)
    sent = time.monotonic()
    # A dropped SSH session can deliver SIGHUP twice (the shell passes it on, the kernel sends it when the
    # session leader exits); the second must not abandon the figures.
    proc.send_signal(sig)
    time.sleep(0.1)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=EXIT_TIMEOUT_S)
    took = time.monotonic() - sent
    print(f"\n{sig.name}: mdtui exited {proc.returncode} {took:.2f} s after the signal")
    assert proc.returncode == code, err
    assert not psutil.pid_exists(fio) or psutil.Process(fio).status() == psutil.STATUS_ZOMBIE
    wait_gone(target, 0)
    (run,) = stored(db)
    assert run.status is RunStatus.CANCELLED
    assert sig.name in run.error and "the figures cover the part that ran" in run.error
    assert run.metrics.read_bw_bytes_per_s and run.metrics.read_bw_bytes_per_s > 0, run.metrics
    assert run.fio_json and json.loads(run.fio_json)["jobs"][0]["read"]["io_bytes"] > 0
    assert run.samples, "the time series sampled while fio ran was stored"
    assert f"{sig.name}" in out and "cancelled" in out
    assert took < 5, f"mdtui took {took:.1f} s to stop after {sig.name}"


def _controlling_terminal() -> None:
    # Runs in the child after setsid (start_new_session): make the pty on fd 0 its controlling terminal,
    # as sshd does for a login shell, so closing the master is a real hang-up.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_a_hung_up_terminal_stops_the_benchmark_and_keeps_the_figures(
    target: Path, tmp_path: Path, reap: list[subprocess.Popen[str]]
) -> None:
    """The SSH drop itself: the pty's master closes, the kernel sends SIGHUP and every write fails with EIO."""
    db = tmp_path / "results.db"
    master, slave = pty.openpty()
    try:
        proc = start(
            bench_argv(target), db, reap, stdin=slave, stdout=slave, stderr=slave, text=False,
            start_new_session=True, preexec_fn=_controlling_terminal,
        )  # fmt: skip
    finally:
        os.close(slave)
    screen = b""
    deadline = time.monotonic() + START_TIMEOUT_S
    # The live progress line on the terminal shows fio is running and reporting.
    while b"IOPS" not in screen and time.monotonic() < deadline and proc.poll() is None:
        if select.select([master], [], [], 0.2)[0]:
            try:
                screen += os.read(master, 65536)
            except OSError:
                break
    assert b"IOPS" in screen, screen.decode(errors="replace")[-500:]
    assert fio_pids(target)
    hung_up = time.monotonic()
    os.close(master)
    proc.wait(timeout=EXIT_TIMEOUT_S)
    print(f"\nhang-up: mdtui exited {proc.returncode} {time.monotonic() - hung_up:.2f} s after the master closed")
    assert proc.returncode == 129
    wait_gone(target, 0)
    (run,) = stored(db)
    assert run.status is RunStatus.CANCELLED and "SIGHUP" in run.error
    assert run.metrics.read_bw_bytes_per_s and run.metrics.read_bw_bytes_per_s > 0


def test_sighup_mid_experiment_stops_it_and_keeps_the_stored_point(
    target: Path, tmp_path: Path, reap: list[subprocess.Popen[str]]
) -> None:
    """`mdtui experiment` takes SIGHUP the way bench does: the point running is kept, the next not started."""
    db = tmp_path / "results.db"
    argv = [sys.executable, "-m", "mdtui", "experiment", "parallelism", "--target", str(target),
            "--numjobs", "1,4", "--runtime", "30", "--db", str(db)]  # fmt: skip
    proc = start(argv, db, reap)
    wait_until_fio_runs(target, proc)
    proc.send_signal(signal.SIGHUP)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=EXIT_TIMEOUT_S)
    assert proc.returncode == 129, err
    assert "experiment stopped" in err
    wait_gone(target, 0)
    (run,) = stored(db)
    assert run.status is RunStatus.CANCELLED and "SIGHUP" in run.error
    assert run.label == "numjobs 1" and run.metrics.read_bw_bytes_per_s


# --- 2. SIGKILL mid-benchmark -------------------------------------------------------------------------------


def test_sigkill_mid_benchmark_leaves_an_interrupted_run_and_no_fio(
    target: Path, tmp_path: Path, reap: list[subprocess.Popen[str]]
) -> None:
    db = tmp_path / "results.db"
    proc = start(bench_argv(target), db, reap)
    wait_until_fio_runs(target, proc)
    proc.kill()
    proc.wait(timeout=EXIT_TIMEOUT_S)
    assert proc.returncode == -signal.SIGKILL
    # The kernel kills fio with its parent (PR_SET_PDEATHSIG): no fio reads on for the rest of its runtime.
    gone_after = wait_gone(target, 5)
    print(f"\nSIGKILL: fio gone {gone_after:.2f} s after mdtui died")
    listing = subprocess.run(
        [sys.executable, "-m", "mdtui", "results", "list"], env=env_for(db), cwd=REPO, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert listing.returncode == 0, listing.stderr
    (row,) = listing.stdout.splitlines()[1:]
    assert row.split()[3] == "interrupted", listing.stdout
    (run,) = stored(db)
    assert run.status is RunStatus.INTERRUPTED
    assert quick_check(db) == ["ok"]


# --- 4. two mdtui processes storing into one database -------------------------------------------------------


def test_two_benchmarks_store_into_one_database_at_once(tmp_path: Path, reap: list[subprocess.Popen[str]]) -> None:
    db = tmp_path / "shared.db"  # created by whichever of the two comes first
    targets = []
    for _ in range(2):
        path = tmp_path / f"fault-{uuid.uuid4().hex[:12]}.img"
        with path.open("wb") as handle:
            handle.truncate(TARGET_BYTES)
        targets.append(path)
    procs = [start(bench_argv(path, runtime=3), db, reap) for path in targets]
    results = [proc.communicate(timeout=START_TIMEOUT_S + 30) for proc in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert "could not" not in err
    runs = stored(db)
    assert sorted(run.target for run in runs) == sorted(str(path) for path in targets)
    assert all(run.status is RunStatus.COMPLETE and run.metrics.read_bw_bytes_per_s for run in runs)
    assert all(len(run.samples) >= 2 for run in runs), [len(run.samples) for run in runs]
    assert quick_check(db) == ["ok"]


def _store_one_run(path: str, barrier: multiprocessing.synchronize.Barrier, queue: multiprocessing.Queue) -> None:
    try:
        barrier.wait(timeout=30)
        with ResultsStore(path) as store:
            run_id = store.begin_run(RunSetup(preset="custom", params={}, target=f"pid {os.getpid()}"))
            for second in range(3):
                store.append_samples(run_id, [SamplePoint(float(second), {"read_bw_bytes_per_s": 1.0})])
            store.finish_run(run_id, RunStatus.COMPLETE, metrics=Metrics(read_bw_bytes_per_s=1.0))
        queue.put("ok")
    except Exception as exc:  # reported to the test, which names it
        queue.put(f"{type(exc).__name__}: {exc}")


def test_processes_creating_one_new_database_at_once_all_store_their_run(tmp_path: Path) -> None:
    """The race behind the test above, made likely: four processes open one new database at the same instant.

    SQLite does not wait for the switch to WAL (busy handler not called), and a database read while another
    process creates it looked foreign; both failed about one attempt in six before the store handled them.
    """
    context = multiprocessing.get_context("fork")
    failures = []
    for attempt in range(12):
        path = str(tmp_path / f"new-{attempt}.db")
        barrier, queue = context.Barrier(4), context.Queue()
        workers = [context.Process(target=_store_one_run, args=(path, barrier, queue)) for _ in range(4)]
        for worker in workers:
            worker.start()
        outcomes = [queue.get(timeout=60) for _ in workers]
        for worker in workers:
            worker.join(timeout=10)
        failures += [f"attempt {attempt}: {outcome}" for outcome in outcomes if outcome != "ok"]
        with ResultsStore(path) as store:
            assert len(store.list_runs()) == outcomes.count("ok")
    assert failures == []


# --- 5. fio that stops answering ----------------------------------------------------------------------------


def test_a_stopped_fio_is_killed_as_stalled_and_the_run_fails_naming_it(
    target: Path, tmp_path: Path, reap: list[subprocess.Popen[str]]
) -> None:
    db = tmp_path / "results.db"
    stall_s = 2
    proc = start(bench_argv(target, "--stall-timeout", str(stall_s)), db, reap)
    fio = wait_until_fio_runs(target, proc)
    os.kill(fio, signal.SIGSTOP)
    stopped = time.monotonic()
    out, err = proc.communicate(timeout=EXIT_TIMEOUT_S)
    took = time.monotonic() - stopped
    print(f"\nstall: fio SIGSTOPped, mdtui exited {proc.returncode} after {took:.2f} s (stall timeout {stall_s} s)")
    assert proc.returncode == 1, err
    wait_gone(target, 0)
    # The stall clock runs from fio's last report, up to a status interval before the SIGSTOP.
    assert took < stall_s + 4
    (run,) = stored(db)
    assert run.status is RunStatus.FAILED
    assert "fio stalled: no status report for 2 s, so it was killed" in run.error, run.error
    # The figures of fio's last status report before it stopped are kept.
    assert run.metrics.read_bw_bytes_per_s and run.metrics.read_bw_bytes_per_s > 0
    assert "failed: fio stalled" in out


# --- 2. an experiment killed between creating a temporary array and tearing it down -------------------------

MDSTAT_MD9 = (
    "Personalities : [raid0]\nmd9 : active raid0 nvme3n1[1] nvme2n1[0]\n"
    "      2093056 blocks super 1.2 64k chunks\n\nunused devices: <none>\n"
)

# Runs in a child that then dies by SIGKILL, as a sweep would between its create and its teardown: it
# journals the array, begins its run on it, and never finishes either.
KILLED_SWEEP = r"""
import os, signal, sys
from mdtui.execute.state import TemporaryArrayJournal
from mdtui.store.runs import ResultsStore
from mdtui.store.records import RunSetup

journal_dir, db = sys.argv[1:]
TemporaryArrayJournal(__import__("pathlib").Path(journal_dir)).add(
    "/dev/md9", "chunk sweep", members=["/dev/nvme2n1", "/dev/nvme3n1"], db=db)
store = ResultsStore(db)
store.begin_run(RunSetup(preset="custom", params={}, target="/dev/nvme2n1", label="raw member"))
run_id = store.begin_run(RunSetup(preset="custom", params={}, target="/dev/md9", label="raid0 chunk 64 KiB"))
print(run_id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def md9_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "mdstat").write_text(MDSTAT_MD9)
    return root


def test_the_journal_names_the_array_a_killed_sweep_left_and_its_run(md9_root: Path, tmp_path: Path) -> None:
    from mdtui.execute.leftovers import find_leftovers
    from mdtui.execute.state import TemporaryArrayJournal
    from mdtui.probe.root import SystemRoot

    journal = TemporaryArrayJournal(tmp_path / "journal")
    db = tmp_path / "results.db"
    child = subprocess.run(
        [sys.executable, "-c", KILLED_SWEEP, str(journal.directory), str(db)], capture_output=True, text=True,
        cwd=REPO, env=env_for(db), timeout=60,
    )  # fmt: skip
    assert child.returncode == -signal.SIGKILL, child.stderr
    run_id = int(child.stdout)
    (entry,) = journal.entries()
    assert not psutil.pid_exists(entry.pid) or psutil.Process(entry.pid).status() == psutil.STATUS_ZOMBIE
    # This process's own entry is an experiment still running, not a leftover.
    mine = journal.add("/dev/md9", "level comparison", db=db)

    (leftover,) = find_leftovers(SystemRoot(md9_root), journal)
    assert leftover.entry.owner == entry.owner and leftover.run_id == run_id == 2
    assert leftover.notice == (
        "md9 was left by an interrupted chunk sweep (run #2): remove it with `mdtui destroy /dev/md9`"
    )
    assert leftover.entry.members == ("/dev/nvme2n1", "/dev/nvme3n1")
    # Looking the run up opened the store, which wrote "interrupted" over both of the dead process's runs.
    assert [run.status for run in stored(db)] == [RunStatus.INTERRUPTED, RunStatus.INTERRUPTED]
    import sqlite3

    with sqlite3.connect(db) as conn:
        assert {row[0] for row in conn.execute("SELECT status FROM runs")} == {"interrupted"}

    # Once the array is gone (destroyed by hand, not assembled after a reboot) the entry goes too.
    (md9_root / "proc" / "mdstat").write_text("Personalities : [raid0]\nunused devices: <none>\n")
    assert find_leftovers(SystemRoot(md9_root), journal) == []
    assert [e.path for e in journal.entries()] == [mine.path]
    journal.remove(mine)
    assert journal.entries() == []


def test_a_leftover_entry_for_another_array_on_that_device_is_dropped(md9_root: Path, tmp_path: Path) -> None:
    from dataclasses import replace

    from mdtui.execute.leftovers import find_leftovers
    from mdtui.execute.state import TemporaryArrayJournal
    from mdtui.probe.root import SystemRoot

    journal = TemporaryArrayJournal(tmp_path / "journal")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    entry = journal.add("/dev/md9", "chunk sweep")
    # The same entry as a process that has exited would have written it (a pid no process holds now).
    boot_id = entry.owner.split("/")[0]
    gone = replace(entry, owner=f"{boot_id}/{int(dead.stdout)}/1", uuid="0a1b2c3d:11111111:22222222:33333333")
    journal.remove(entry)
    journal._write(gone)
    md = md9_root / "sys" / "block" / "md9" / "md"
    md.mkdir(parents=True)
    (md / "uuid").write_text("0a1b2c3d-1111-1111-2222-222233333333\n")
    (leftover,) = find_leftovers(SystemRoot(md9_root), journal)
    assert leftover.run_id is None
    assert leftover.notice == "md9 was left by an interrupted chunk sweep: remove it with `mdtui destroy /dev/md9`"
    # md9 is now some other array (another UUID, e.g. assembled after a reboot): not ours to name.
    (md / "uuid").write_text("ffffffff-1111-1111-2222-222233333333\n")
    assert find_leftovers(SystemRoot(md9_root), journal) == []
    assert journal.entries() == []


def test_temporary_array_journals_before_the_create_and_forgets_after_the_teardown(
    md9_root: Path, tmp_path: Path
) -> None:
    from mdtui.actionlog import ActionLog
    from mdtui.advise.experiments import ArrayTools, sweep_request, temporary_array
    from mdtui.errors import MdtuiError
    from mdtui.execute.mdadm import CreateOutcome
    from mdtui.execute.state import ArrayRegistry, CreatedArray, TemporaryArrayJournal
    from mdtui.model.disk import Disk, Transport
    from mdtui.plan.create import plan_create
    from mdtui.plan.levels import level_from_name
    from mdtui.probe.root import SystemRoot

    (md9_root / "proc" / "mdstat").write_text("Personalities : [raid0]\nunused devices: <none>\n")
    journal = TemporaryArrayJournal(tmp_path / "journal")
    seen: list[str] = []

    def create(plan: Any, **_: Any) -> CreateOutcome:
        # The entry is on disk before mdadm would run.
        seen.append(f"create with {len(journal.entries())} entry")
        if fail == "create":
            raise MdtuiError("mdadm failed")
        (md9_root / "proc" / "mdstat").write_text(MDSTAT_MD9)
        # An array with a superblock is mdtui's only by its UUID, which the scan reads from sysfs.
        (md9_root / "sys/block/md9/md").mkdir(parents=True, exist_ok=True)
        (md9_root / "sys/block/md9/md/uuid").write_text("0a1b2c3d-1111-1111-2222-222233333333\n")
        tools.registry.add(CreatedArray(plan.request.device, "0a1b2c3d:11111111:22222222:33333333", (),
                                        plan.member_paths, 0.0))  # fmt: skip
        return CreateOutcome(plan.request.device, "0a1b2c3d:11111111:22222222:33333333", (), None)

    def destroy(plan: Any, **_: Any) -> None:
        if fail == "destroy":
            raise MdtuiError("mdadm --stop: device busy")
        (md9_root / "proc" / "mdstat").write_text("Personalities : [raid0]\nunused devices: <none>\n")

    disks = [Disk(n, f"/dev/{n}", Transport.NVME, size_bytes=1 << 30) for n in ("nvme2n1", "nvme3n1")]
    plan = plan_create(sweep_request("/dev/md9", level_from_name("0"), disks, 64))
    tools = ArrayTools(SystemRoot(md9_root), ActionLog(tmp_path / "log"), ArrayRegistry(tmp_path / "reg.json"),
                       create, destroy, journal)  # fmt: skip
    fail = ""
    with temporary_array(plan, tools, confirmed=plan.confirmation, purpose="chunk sweep", db=tmp_path / "r.db"):
        (entry,) = journal.entries()
        assert (entry.device, entry.purpose, entry.pid, entry.db) == ("/dev/md9", "chunk sweep", os.getpid(),
                                                                      str(tmp_path / "r.db"))  # fmt: skip
        assert entry.uuid == "0a1b2c3d:11111111:22222222:33333333"
    assert seen == ["create with 1 entry"] and journal.entries() == []

    fail = "create"
    with pytest.raises(MdtuiError, match="mdadm failed"), temporary_array(plan, tools, confirmed=plan.confirmation):
        pass
    assert journal.entries() == []  # nothing was made

    fail = "destroy"
    with pytest.raises(MdtuiError, match="device busy"), temporary_array(plan, tools, confirmed=plan.confirmation):
        pass
    # The array is still there: the entry stays, to be named once this process is gone.
    (left,) = journal.entries()
    assert left.device == "/dev/md9" and left.pid == os.getpid()


# --- 3. the results database on a full filesystem -------------------------------------------------------------

TINY_FS = "1m"  # tmpfs size: room for a new database and its WAL, filled up once the run has begun


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB tmpfs (mounted for the test, root only); the lab repeats the test where this cannot run."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TINY_FS},mode=0755", "tmpfs", str(mount)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}); tests/lab/test_faults.py "
                    "runs the full-disk case in the lab guest")  # fmt: skip
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> int:
    """Write zeros into directory/filler until the filesystem says ENOSPC; the bytes written."""
    written = 0
    chunk = b"\0" * 4096
    with (directory / "filler").open("wb", buffering=0) as handle:
        while True:
            try:
                written += handle.write(chunk)
            except OSError as exc:
                assert exc.errno == 28, exc  # ENOSPC
                return written


def run_filling_the_disk(target: Path, db: Path, reap: list[subprocess.Popen[str]]) -> tuple[int, str, str]:
    """A 4 s benchmark into ``db``; once its run is begun and fio reads, the filesystem is filled.

    Buffered reads: the lab guest's /tmp is a tmpfs, which (kernel 6.1) takes no O_DIRECT.
    """
    proc = start(bench_argv(target, "--no-direct", runtime=4), db, reap)
    wait_until_fio_runs(target, proc)
    filled = fill(db.parent)
    out, err = proc.communicate(timeout=EXIT_TIMEOUT_S)
    print(f"\nfull disk: filled {filled} bytes; mdtui exited {proc.returncode}")
    assert "database or disk is full" in out, f"stdout:\n{out}\nstderr:\n{err}"
    return proc.returncode, out, err


def test_a_full_disk_spools_the_run_beside_the_database_and_import_stores_it(
    target: Path, tmp_path: Path, tiny_fs: Path, reap: list[subprocess.Popen[str]]
) -> None:
    db = tiny_fs / "results.db"
    # The spool directory beside the database points at a filesystem with room, so that the database alone
    # is full (on one full filesystem both fail: the next test).
    roomy = tmp_path / "spool"
    roomy.mkdir()
    (tiny_fs / "results.db.spool").symlink_to(roomy)
    code, out, err = run_filling_the_disk(target, db, reap)
    assert code == 1, err
    (spooled,) = roomy.glob("run-*.json")
    message = next(line for line in out.splitlines() if "its figures are kept in" in line)
    print(message)
    assert f"run #1 could not be stored in {db} (cannot store samples: database or disk is full)" in message
    assert f"`mdtui results import {tiny_fs / 'results.db.spool' / spooled.name}`" in message
    assert quick_check(db) == ["ok"]
    document = json.loads(spooled.read_text())
    assert document["format"] == "mdtui-spooled-run" and document["status"] == "complete"
    assert document["metrics"]["read_bw_bytes_per_s"] > 0 and len(document["samples"]) >= 3
    assert json.loads(document["fio_json"])["jobs"][0]["read"]["bw_bytes"] == document["metrics"]["read_bw_bytes_per_s"]
    # The run begun before the disk filled reads as interrupted until the spool is imported.
    assert [run.status for run in stored(db)] == [RunStatus.INTERRUPTED]

    (tiny_fs / "filler").unlink()
    imported = subprocess.run(
        [sys.executable, "-m", "mdtui", "results", "import", str(spooled)], env=env_for(db), cwd=REPO,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert "stored the spooled run as #1 (complete)" in imported.stdout
    (run,) = stored(db)  # the interrupted row completed in place, not a second run
    assert run.status is RunStatus.COMPLETE and run.error == ""
    assert run.metrics.read_bw_bytes_per_s == document["metrics"]["read_bw_bytes_per_s"]
    assert len(run.samples) == len(document["samples"])
    assert quick_check(db) == ["ok"]


def test_a_full_disk_with_no_room_for_the_spool_prints_the_run_as_json(
    target: Path, tiny_fs: Path, reap: list[subprocess.Popen[str]]
) -> None:
    db = tiny_fs / "results.db"
    code, out, err = run_filling_the_disk(target, db, reap)
    assert code == 1, err
    lines = out.splitlines()
    message = next(line for line in lines if "nor kept beside it" in line)
    print(message)
    assert "database or disk is full" in message and "No space left on device" in message
    document = json.loads(lines[-1])  # the last line of stdout: the whole run
    assert document["format"] == "mdtui-spooled-run" and document["run_id"] == 1
    assert document["metrics"]["read_bw_bytes_per_s"] > 0 and document["samples"]
    assert quick_check(db) == ["ok"]
    assert not any(tiny_fs.glob("results.db.spool/run-*.json"))
    # What was printed is importable once there is room.
    (tiny_fs / "filler").unlink()
    saved = tiny_fs.parent / "printed.json"
    saved.write_text(lines[-1])
    imported = subprocess.run(
        [sys.executable, "-m", "mdtui", "results", "import", str(saved)], env=env_for(db), cwd=REPO,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    (run,) = stored(db)
    assert run.status is RunStatus.COMPLETE
    assert run.metrics.read_bw_bytes_per_s == document["metrics"]["read_bw_bytes_per_s"]


async def test_the_app_says_at_its_start_which_array_a_killed_sweep_left(tmp_path: Path) -> None:
    """The app start shows the same line as every CLI verb (run_app passes leftover_notices to it)."""
    from mdtui.ui.app import MdtuiApp
    from mdtui.ui.themes import repo_themes_dir

    tree = REPO / "tests" / "fixtures" / "trees" / "real-links"
    notice = "md9 was left by an interrupted chunk sweep (run #2): remove it with `mdtui destroy /dev/md9`"
    app = MdtuiApp(str(tree), privileged=True, theme_dirs=(repo_themes_dir(),), db_path=tmp_path / "r.db",
                   notices=[notice])  # fmt: skip
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        (shown,) = [note for note in app._notifications if note.title == "Left behind"]
        assert shown.message == notice and shown.severity == "warning"


def test_a_stopped_verb_ignores_late_signals_only_until_it_returns() -> None:
    """A second SIGHUP after the stop must not kill the verb while it prints; nor may the ignore outlive it
    (an in-process caller, or pytest, would then ignore SIGHUP and SIGTERM for good)."""
    from mdtui.cli.common import STOP_SIGNALS, ignore_late_signals, signals_restored

    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    with signals_restored():
        ignore_late_signals()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]  # a second Ctrl-C still abandons
    assert {sig: signal.getsignal(sig) for sig in STOP_SIGNALS} == before
