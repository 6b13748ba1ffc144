"""Schema of the results database as ordered migrations; PRAGMA user_version is the applied count."""

from __future__ import annotations

from dataclasses import dataclass

# "mdtu" in ASCII: lets open() tell an mdtui database from some other SQLite file.
APPLICATION_ID = 0x6D647475


@dataclass(frozen=True)
class Migration:
    version: int  # user_version after this migration
    description: str
    statements: tuple[str, ...]  # run one by one inside a single transaction


# Released migrations are never edited: a database in the field was made by exactly these statements.
# Change the schema by appending a migration.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "runs and their summary metrics",
        (
            f"PRAGMA application_id = {APPLICATION_ID}",
            """CREATE TABLE runs (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                status TEXT NOT NULL,
                started_at TEXT NOT NULL,
                ended_at TEXT,
                preset TEXT NOT NULL,
                params_json TEXT NOT NULL DEFAULT '{}',
                target TEXT NOT NULL DEFAULT '',
                array_json TEXT NOT NULL DEFAULT '{}',
                context_json TEXT NOT NULL DEFAULT '{}',
                fio_json TEXT
            )""",
            "CREATE INDEX runs_started ON runs (started_at)",
            """CREATE TABLE metrics (
                run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                value REAL NOT NULL,
                PRIMARY KEY (run_id, name)
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        2,
        "user label and note; owning process, to tell a live run from one cut short by a crash; error text",
        (
            "ALTER TABLE runs ADD COLUMN label TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT ''",
            # NULL for runs written by schema 1, which had no owner: a run of theirs still "running" is
            # from a process that has since been upgraded away, so it is shown as interrupted.
            "ALTER TABLE runs ADD COLUMN owner TEXT",
            "ALTER TABLE runs ADD COLUMN error TEXT NOT NULL DEFAULT ''",
        ),
    ),
    Migration(
        3,
        "sampled time series of each run",
        (
            """CREATE TABLE samples (
                run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                t_s REAL NOT NULL,
                values_json TEXT NOT NULL,
                PRIMARY KEY (run_id, seq)
            ) WITHOUT ROWID""",
        ),
    ),
)
LATEST_VERSION = MIGRATIONS[-1].version
