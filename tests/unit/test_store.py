"""Results store: round trips, crash safety, damaged, foreign and locked databases."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.store.database import default_db_path
from mdtui.store.errors import StoreBusyError, StoreError, StoreMissingError, UnknownRunError
from mdtui.store.records import Metrics, RunSetup, RunStatus, SamplePoint
from mdtui.store.runs import ResultsStore
from mdtui.store.schema import LATEST_VERSION

START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
END = datetime(2024, 5, 1, 12, 1, 30, tzinfo=UTC)
SETUP = RunSetup(
    preset="SEQ1MQ8T8",
    params={"rw": "read", "bs": "1M", "iodepth": 8, "numjobs": 8},
    target="/dev/md0",
    array={
        "level": "raid5",
        "raid_disks": 3,
        "chunk_bytes": 524288,
        "layout": "left-symmetric",
        "bitmap": "none",
        "members": [{"name": "sdb", "model": "ST4000DM004", "serial": "ZDH1A1", "link": "SATA 6.0 Gbit/s"}],
    },
    context={"kernel": "6.1.0-18-amd64", "cpu_model": "Xeon", "governor": "performance", "fio_version": "fio-3.33"},
    label="raid5 512k",
)
METRICS = Metrics(
    read_bw_bytes_per_s=398458880.0,
    read_iops=380.0,
    read_lat_mean_ns=2.1e7,
    read_lat_p50_ns=1.9e7,
    read_lat_p99_ns=2.1e8,
    read_lat_p99_9_ns=3.5e8,
    cpu_usr_pct=0.5,
    cpu_sys_pct=4.25,
    md_thread_cpu_pct=1.5,
)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "results.db"


@pytest.fixture
def store(db_path: Path):
    with ResultsStore(db_path) as opened:
        yield opened


def raw(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_default_path_follows_mdtui_db_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.delenv("MDTUI_DB", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "mdtui" / "results.db"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "mdtui" / "results.db"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "mdtui" / "results.db"
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "elsewhere.db"))
    assert default_db_path() == tmp_path / "elsewhere.db"
    with ResultsStore() as opened:
        assert opened.path == tmp_path / "elsewhere.db"
    assert (tmp_path / "elsewhere.db").exists()


def test_new_database_is_wal_at_latest_version(store, db_path):
    assert raw(db_path, "PRAGMA user_version") == [(LATEST_VERSION,)]
    assert raw(db_path, "PRAGMA journal_mode") == [("wal",)]
    assert store.list_runs() == []


def test_run_round_trip(store):
    run_id = store.begin_run(SETUP, started_at=START)
    store.append_samples(run_id, [SamplePoint(1.0, {"read_bw_bytes_per_s": 4.0e8, "cpu_mhz": 4200.0})])
    store.append_samples(run_id, [SamplePoint(2.0, {"read_bw_bytes_per_s": 3.9e8}), SamplePoint(3.0, {})])
    store.finish_run(run_id, RunStatus.COMPLETE, metrics=METRICS, fio_json='{"jobs": []}', ended_at=END)
    store.set_note(run_id, "after moving sdd to the other HBA")

    run = store.get_run(run_id)
    assert run.id == run_id
    assert run.status is RunStatus.COMPLETE
    assert (run.started_at, run.ended_at, run.duration_s) == (START, END, 90.0)
    assert (run.preset, run.target, run.label) == ("SEQ1MQ8T8", "/dev/md0", "raid5 512k")
    assert run.params == SETUP.params
    assert run.array == SETUP.array
    assert run.context == SETUP.context
    assert run.metrics == METRICS
    assert run.note == "after moving sdd to the other HBA"
    assert run.samples == (
        SamplePoint(1.0, {"read_bw_bytes_per_s": 4.0e8, "cpu_mhz": 4200.0}),
        SamplePoint(2.0, {"read_bw_bytes_per_s": 3.9e8}),
        SamplePoint(3.0, {}),
    )
    assert run.fio_json == '{"jobs": []}'

    [listed] = store.list_runs()
    assert listed.metrics == METRICS
    assert (listed.samples, listed.fio_json) == ((), None)


def test_add_run_stores_a_finished_run_at_once(store):
    run_id = store.add_run(
        SETUP,
        status=RunStatus.FAILED,
        started_at=START,
        ended_at=END,
        metrics=Metrics(read_iops=1.0, write_iops=float("nan")),
        samples=[SamplePoint(0.5, {"read_iops": 2.0})],
        fio_json="{}",
        error="job 't': error 5 (Input/output error)",
    )
    run = store.get_run(run_id)
    assert run.status is RunStatus.FAILED
    assert run.error == "job 't': error 5 (Input/output error)"
    # NaN cannot be stored as a figure; it is dropped instead of failing the whole run.
    assert run.metrics == Metrics(read_iops=1.0)
    assert run.samples == (SamplePoint(0.5, {"read_iops": 2.0}),)


def test_list_is_newest_first_and_limited(store):
    first = store.add_run(SETUP, status=RunStatus.COMPLETE, started_at=START, ended_at=END, metrics=METRICS)
    second = store.add_run(SETUP, status=RunStatus.CANCELLED, started_at=END, ended_at=END, metrics=Metrics())
    assert [run.id for run in store.list_runs()] == [second, first]
    assert [run.id for run in store.list_runs(limit=1)] == [second]


def test_label_note_and_delete(store, db_path):
    run_id = store.begin_run(SETUP)
    store.append_samples(run_id, [SamplePoint(1.0, {"read_iops": 1.0})])
    store.finish_run(run_id, RunStatus.COMPLETE, metrics=METRICS)
    store.set_label(run_id, "new label")
    store.set_note(run_id, "")
    assert (store.get_run(run_id).label, store.get_run(run_id).note) == ("new label", "")
    store.delete_run(run_id)
    with pytest.raises(UnknownRunError, match=f"no run #{run_id}"):
        store.get_run(run_id)
    # The run's figures and samples go with it.
    assert raw(db_path, "SELECT count(*) FROM metrics") == [(0,)]
    assert raw(db_path, "SELECT count(*) FROM samples") == [(0,)]
    # IDs are never reused, so a report that names #1 never points at another run later.
    assert store.begin_run(SETUP) == run_id + 1


def test_unknown_runs_are_typed_errors(store):
    for action in (
        lambda: store.get_run(42),
        lambda: store.set_label(42, "x"),
        lambda: store.set_note(42, "x"),
        lambda: store.delete_run(42),
        lambda: store.append_samples(42, [SamplePoint(1.0, {})]),
        lambda: store.finish_run(42, RunStatus.COMPLETE),
    ):
        with pytest.raises(UnknownRunError):
            action()


def test_a_run_ends_once(store):
    run_id = store.begin_run(SETUP)
    store.finish_run(run_id, RunStatus.CANCELLED, error="cancelled by the user")
    with pytest.raises(StoreError, match="already ended"):
        store.finish_run(run_id, RunStatus.COMPLETE)
    with pytest.raises(ValueError):
        store.finish_run(run_id, RunStatus.RUNNING)
    assert store.get_run(run_id).status is RunStatus.CANCELLED


def test_missing_database_is_not_created_when_asked(db_path):
    with pytest.raises(StoreMissingError):
        ResultsStore(db_path, create=False)
    assert not db_path.exists()


def test_recording_ends_the_run_whatever_happens(store):
    with store.recording(SETUP) as run:
        store.append_samples(run.id, [SamplePoint(1.0, {"read_iops": 5.0})])
        assert store.get_run(run.id).status is RunStatus.RUNNING
        run.finish(RunStatus.COMPLETE, metrics=METRICS, fio_json="{}")
    assert store.get_run(run.id).metrics == METRICS

    with store.recording(SETUP) as run:
        pass
    assert store.get_run(run.id).status is RunStatus.COMPLETE

    with pytest.raises(RuntimeError), store.recording(SETUP) as run:
        raise RuntimeError("fio exited with code 1: bad option")
    failed = store.get_run(run.id)
    assert (failed.status, failed.error) == (RunStatus.FAILED, "fio exited with code 1: bad option")

    with pytest.raises(KeyboardInterrupt), store.recording(SETUP) as run:
        raise KeyboardInterrupt
    assert store.get_run(run.id).status is RunStatus.CANCELLED


# -- crash safety ------------------------------------------------------------------------------------

CRASHING_RUN = """
import os, sys
from mdtui.store.runs import ResultsStore
from mdtui.store.records import RunSetup, SamplePoint
store = ResultsStore(sys.argv[1])
run_id = store.begin_run(RunSetup(preset="SEQ1MQ8T8", target="/dev/md0"))
store.append_samples(run_id, [SamplePoint(1.0, {"read_bw_bytes_per_s": 1e9})])
print(run_id, flush=True)
os._exit(9)  # die as a crash would: no finish_run, no close
"""


def crash_in_child(db_path: Path) -> int:
    result = subprocess.run(
        [sys.executable, "-c", CRASHING_RUN, str(db_path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 9, result.stderr
    return int(result.stdout)


def test_run_left_running_by_a_crash_is_interrupted_on_next_open(db_path):
    run_id = crash_in_child(db_path)
    with ResultsStore(db_path) as store:
        run = store.get_run(run_id)
        assert run.status is RunStatus.INTERRUPTED
        assert run.ended_at is None
        # What was written before the crash survives.
        assert run.samples == (SamplePoint(1.0, {"read_bw_bytes_per_s": 1e9}),)
        assert [r.status for r in store.list_runs()] == [RunStatus.INTERRUPTED]
    # Stored, not just shown: a later process that happens to get the same PID cannot revive it.
    assert raw(db_path, "SELECT status FROM runs WHERE id = ?", (run_id,)) == [("interrupted",)]


def test_a_live_run_stays_running_for_other_readers(db_path):
    with ResultsStore(db_path) as writer:
        run_id = writer.begin_run(SETUP)
        with ResultsStore(db_path) as reader:
            assert reader.get_run(run_id).status is RunStatus.RUNNING
        assert raw(db_path, "SELECT status FROM runs") == [("running",)]
        writer.finish_run(run_id, RunStatus.COMPLETE, metrics=METRICS)
    with ResultsStore(db_path) as reader:
        assert reader.get_run(run_id).status is RunStatus.COMPLETE


def test_an_interrupted_run_can_still_be_finished(db_path):
    run_id = crash_in_child(db_path)
    with ResultsStore(db_path) as store:
        store.finish_run(run_id, RunStatus.FAILED, error="the process died")
        assert store.get_run(run_id).status is RunStatus.FAILED


# -- damaged, foreign, newer and locked databases ----------------------------------------------------


def assert_untouched(path: Path, content: bytes) -> None:
    assert path.read_bytes() == content
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_random_bytes_give_a_clear_error_and_the_file_is_left_alone(tmp_path):
    path = tmp_path / "results.db"
    content = os.urandom(8192)
    path.write_bytes(content)
    with pytest.raises(StoreError, match=r"not an SQLite database .* left untouched"):
        ResultsStore(path)
    assert_untouched(path, content)


def test_a_damaged_sqlite_file_gives_a_clear_error_and_is_left_alone(tmp_path):
    path = tmp_path / "results.db"
    with ResultsStore(path) as store:
        store.add_run(SETUP, status=RunStatus.COMPLETE, started_at=START, ended_at=END, metrics=METRICS)
    # Keep the header, scribble over the rest: the file still claims to be SQLite.
    content = path.read_bytes()[:100] + os.urandom(len(path.read_bytes()) - 100)
    path.write_bytes(content)
    with pytest.raises(StoreError, match=r"damaged|not a database|malformed"), ResultsStore(path) as store:
        store.list_runs()
    assert_untouched(path, content)


def test_some_other_programs_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "places.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.commit()
    conn.close()
    content = path.read_bytes()
    with pytest.raises(StoreError, match="some other program"):
        ResultsStore(path)
    assert_untouched(path, content)


def test_a_database_from_a_newer_mdtui_is_refused(db_path):
    ResultsStore(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer mdtui"):
        ResultsStore(db_path)


def test_a_locked_database_gives_a_clear_error_after_a_short_wait_and_loses_nothing(db_path):
    with ResultsStore(db_path) as store:
        kept = store.add_run(SETUP, status=RunStatus.COMPLETE, started_at=START, ended_at=END, metrics=METRICS)
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with ResultsStore(db_path, busy_timeout_s=0.2) as store:
            # WAL lets readers through a writer's lock.
            assert [run.id for run in store.list_runs()] == [kept]
            began = time.monotonic()
            with pytest.raises(StoreBusyError, match=r"locked by another process \(waited 0.2 s"):
                store.begin_run(SETUP)
            waited = time.monotonic() - began
            assert 0.15 <= waited < 3
            with pytest.raises(StoreBusyError):
                store.set_label(kept, "changed")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with ResultsStore(db_path) as store:
        [run] = store.list_runs()
        assert (run.id, run.label, run.metrics) == (kept, SETUP.label, METRICS)
        store.set_label(kept, "changed")
        assert store.get_run(kept).label == "changed"


def test_a_database_locked_before_wal_gives_a_clear_error_on_open(tmp_path):
    # A v1 file still in rollback-journal mode blocks even readers while another process writes.
    path = tmp_path / "results.db"
    conn = sqlite3.connect(path)
    conn.executescript((Path(__file__).parents[1] / "fixtures" / "store" / "schema-v1.sql").read_text())
    conn.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreBusyError, match="locked by another process"):
            ResultsStore(path, busy_timeout_s=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert raw(path, "PRAGMA user_version") == [(1,)]
    assert raw(path, "SELECT count(*) FROM runs") == [(2,)]


def test_closed_store_refuses_work(db_path):
    store = ResultsStore(db_path)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.list_runs()
