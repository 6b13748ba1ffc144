"""Schema migrations: a real schema-v1 file opened by the current code keeps every run and is upgraded."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

import mdtui.store.database as db_module
from mdtui.store.errors import StoreError
from mdtui.store.records import Metrics, RunSetup, RunStatus, SamplePoint
from mdtui.store.runs import ResultsStore
from mdtui.store.schema import LATEST_VERSION, MIGRATIONS, Migration

V1_SQL = Path(__file__).parents[1] / "fixtures" / "store" / "schema-v1.sql"


def make_v1(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(V1_SQL.read_text())
    conn.close()
    return path


def layout(path: Path) -> dict[str, list[tuple]]:
    """Every table's and index's columns, to compare schemas without comparing CREATE text."""
    conn = sqlite3.connect(path)
    try:
        found = {}
        for kind, name in conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"):
            pragma = "table_info" if kind == "table" else "index_info"
            found[f"{kind} {name}"] = conn.execute(f"PRAGMA {pragma}({name})").fetchall()
        found["application_id"] = conn.execute("PRAGMA application_id").fetchall()
        return found
    finally:
        conn.close()


def test_fixture_is_what_migration_1_creates(tmp_path):
    fresh = tmp_path / "fresh-v1.db"
    conn = sqlite3.connect(fresh, isolation_level=None)
    for statement in MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.close()
    assert layout(make_v1(tmp_path / "fixture.db")) == layout(fresh)


def test_v1_file_is_migrated_and_keeps_its_runs(tmp_path):
    path = make_v1(tmp_path / "results.db")
    assert LATEST_VERSION > 1
    with ResultsStore(path) as store:
        assert store._connection().execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
        finished = store.get_run(1)
        assert finished.status is RunStatus.COMPLETE
        assert finished.started_at == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
        assert finished.ended_at == datetime(2024, 5, 1, 12, 1, tzinfo=UTC)
        assert finished.preset == "SEQ1MQ8T8"
        assert finished.params == {"rw": "read", "bs": "1M", "iodepth": 8, "numjobs": 8, "direct": 1}
        assert finished.array["level"] == "raid5"
        assert [m["serial"] for m in finished.array["members"]] == ["ZDH1A1", "ZDH1A2", "ZDH1A3"]
        assert finished.context["governor"] == "performance"
        assert finished.metrics == Metrics(
            read_bw_bytes_per_s=398458880.0, read_iops=380.0, read_lat_p99_ns=2.1e8, md_thread_cpu_pct=1.5
        )
        assert finished.fio_json == '{"fio version": "fio-3.33", "jobs": []}'
        # Columns added by later versions get their defaults.
        assert (finished.label, finished.note, finished.error, finished.samples) == ("", "", "", ())
        # v1 recorded no owner: a run it left running is from a process long gone.
        assert store.get_run(2).status is RunStatus.INTERRUPTED

        # The upgraded file takes everything the current schema holds.
        store.set_label(1, "raid5 512k")
        run_id = store.begin_run(RunSetup(preset="RND4KQ1T1"))
        store.append_samples(run_id, [SamplePoint(1.0, {"read_iops": 7000.0})])
        store.finish_run(run_id, RunStatus.COMPLETE)
        assert run_id == 3
    fresh = tmp_path / "fresh.db"
    ResultsStore(fresh).close()
    assert layout(path) == layout(fresh)
    with ResultsStore(path) as store:
        assert store.get_run(1).label == "raid5 512k"
        assert store.get_run(3).samples == (SamplePoint(1.0, {"read_iops": 7000.0}),)


def test_a_failing_migration_changes_nothing(tmp_path, monkeypatch):
    path = make_v1(tmp_path / "results.db")
    broken = Migration(2, "adds a column, then fails", ("ALTER TABLE runs ADD COLUMN label TEXT", "SELECT nope"))
    monkeypatch.setattr(db_module, "MIGRATIONS", (MIGRATIONS[0], broken))
    monkeypatch.setattr(db_module, "LATEST_VERSION", 2)
    with pytest.raises(StoreError, match=r"cannot upgrade the schema to version 2 .*nope"):
        ResultsStore(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (1,)
        columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
        assert "label" not in columns
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (2,)
    finally:
        conn.close()


def test_migrations_are_numbered_in_order():
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
