"""The results file: SQLite in WAL mode, its checks and schema migrations, and where it lives."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self

from mdtui.errors import MdtuiError
from mdtui.invoker import foreign_environment
from mdtui.probe.owner import current_owner, owner_alive
from mdtui.rootsafe import open_directory
from mdtui.state_dir import env_location, home_dir
from mdtui.store.errors import StoreBusyError, StoreError, StoreMissingError
from mdtui.store.records import RunStatus
from mdtui.store.schema import APPLICATION_ID, LATEST_VERSION, MIGRATIONS, Migration

DEFAULT_BUSY_TIMEOUT_S = 5.0
_WAL_RETRY_S = 0.02
_SQLITE_HEADER = b"SQLite format 3\x00"
_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (primary codes; extended codes keep them in the low byte)
_DAMAGED_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


def default_db_path() -> Path:
    """$MDTUI_DB, else $XDG_DATA_HOME/mdtui/results.db, else ~/.local/share/mdtui/results.db.

    Named in help texts, so it never refuses; ResultsStore refuses to open it in another user's environment
    (sudo, su, doas, pkexec) when the variable it came from is not root's (checked_default_db_path).
    """
    return _default_db(os.environ.get)


def checked_default_db_path() -> Path:
    """default_db_path, with a location from the environment checked as state_dir.env_location says."""
    return _default_db(env_location)


def _default_db(lookup: Callable[[str], str | None]) -> Path:
    override = lookup("MDTUI_DB")
    if override:
        return Path(override).expanduser() if not foreign_environment() else Path(override)
    base = lookup("XDG_DATA_HOME") or ""
    # The XDG spec says a relative value is invalid and must be ignored.
    if not base or not os.path.isabs(base):
        base = str(home_dir() / ".local" / "share")
    return Path(base) / "mdtui" / "results.db"


class Database:
    """An open SQLite results file: opening, checks, migrations, locking and error translation.

    ResultsStore adds the runs on top. Methods are safe to call from several threads of one process.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else checked_default_db_path()
        if path is not None and foreign_environment() and self.path == default_db_path():
            checked_default_db_path()  # the caller took the default from the environment
        self.busy_timeout_s = busy_timeout_s
        self._owner = current_owner()
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # Whether PRAGMA quick_check passed; run once, before the first write of this connection.
        self._checked: bool = False
        # Rows skipped while reading (damaged or hand-edited), one sentence each, for the caller to show.
        self.warnings: list[str] = []
        self._conn = self._open(create)

    # -- opening and schema ---------------------------------------------------------------------------

    def _open(self, create: bool) -> sqlite3.Connection:
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a results database file")
        if self.path.exists():
            self._check_header()
        elif not create:
            raise StoreMissingError(f"no results database at {self.path} (no runs recorded yet)")
        else:
            try:
                # Made the one way (mdtui.rootsafe): no link another user could change is followed on the way.
                with open_directory(self.path.parent, make_mode=0o700):
                    pass
            except OSError as exc:
                raise StoreError(f"cannot create the directory for {self.path}: {exc.strerror}") from None
            except MdtuiError as exc:
                raise StoreError(f"cannot create the directory for {self.path}: {exc}") from None
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from None
        try:
            with self._errors("open the database"):
                self._check_identity(conn)
                conn.execute("PRAGMA foreign_keys = ON")
                # WAL keeps readers (the app's results screen) working while a run writes its samples.
                self._enable_wal(conn)
                # FULL: a run reported complete survives a power cut, not just a crash.
                conn.execute("PRAGMA synchronous = FULL")
                self._migrate(conn)
            self._conn = conn
            self._store_interrupted()
        except BaseException:
            conn.close()
            self._conn = None
            raise
        return conn

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """Switch to WAL, waiting up to the busy timeout for other connections of a database just created.

        SQLite does not call the busy handler for this switch: two processes creating one database at once
        would otherwise see "database is locked" at once, without waiting.
        """
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(_WAL_RETRY_S)

    def _check_header(self) -> None:
        # Refuse a foreign file before SQLite touches it, so nothing (not even a -wal file) is written.
        try:
            # Without blocking: a FIFO in the database's place must be refused, not waited on.
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise StoreError(f"{self.path} is not a regular file (a FIFO, device or socket); it was left untouched")
            header = os.read(fd, len(_SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}") from None
        finally:
            os.close(fd)
        if header and header != _SQLITE_HEADER:
            raise StoreError(
                f"{self.path} is not an SQLite database (damaged or some other file); it was left untouched: "
                "move it away or pass another --db"
            )

    def _check_identity(self, conn: sqlite3.Connection) -> None:
        # One read transaction: read one by one, a database another process is creating right now would
        # show version 0 and then its new tables, and pass for some other program's.
        conn.execute("BEGIN")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            application_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            conn.execute("COMMIT")
        foreign = application_id not in (0, APPLICATION_ID) or (version == 0 and tables > 0)
        if foreign:
            raise StoreError(f"{self.path} is an SQLite database of some other program; it was left untouched")
        if version > LATEST_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, written by a newer mdtui; this one reads up to "
                f"version {LATEST_VERSION}: upgrade mdtui"
            )

    def _migrate(self, conn: sqlite3.Connection) -> None:
        for migration in MIGRATIONS:
            if self._user_version(conn) >= migration.version:
                continue
            with self._errors(f"upgrade the schema to version {migration.version}"):
                self._check_before_write(conn)
                self._apply(conn, migration)

    def _apply(self, conn: sqlite3.Connection, migration: Migration) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while this one waited for the write lock.
            if self._user_version(conn) >= migration.version:
                conn.execute("ROLLBACK")
                return
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {migration.version}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _user_version(conn: sqlite3.Connection) -> int:
        version: int = conn.execute("PRAGMA user_version").fetchone()[0]
        return version

    def _store_interrupted(self) -> None:
        """Write "interrupted" over runs whose process is gone, so a later PID reuse cannot revive them."""
        conn = self._connection()
        with self._lock, self._errors("look for interrupted runs"):
            rows = conn.execute("SELECT id, owner FROM runs WHERE status = ?", (RunStatus.RUNNING.value,)).fetchall()
            dead = [run_id for run_id, owner in rows if not self._alive(owner)]
            if not dead:
                return
            # Best effort and without waiting: readers derive "interrupted" anyway, so a busy (or damaged,
            # hence read-only) database is fine.
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                with self._transaction("mark interrupted runs") as tx:
                    tx.executemany(
                        "UPDATE runs SET status = ? WHERE id = ? AND status = ?",
                        [(RunStatus.INTERRUPTED.value, run_id, RunStatus.RUNNING.value) for run_id in dead],
                    )
            except StoreError:
                pass
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")

    # -- plumbing -------------------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the results database {self.path} is closed")
        return self._conn

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            code = getattr(exc, "sqlite_errorcode", None)
            primary = code & 0xFF if isinstance(code, int) else None
            if primary in _BUSY_CODES or "locked" in str(exc):
                raise StoreBusyError(
                    f"{self.path} is locked by another process (waited {self.busy_timeout_s:g} s to {action}); "
                    "try again when it has finished"
                ) from None
            if primary in _DAMAGED_CODES:
                raise StoreError(
                    f"{self.path} is damaged ({exc}); it was left untouched: move it away to start a new one, "
                    "or try `sqlite3 FILE .recover` to salvage runs"
                ) from None
            raise StoreError(f"cannot {action} in {self.path}: {exc}") from None

    def _check_before_write(self, conn: sqlite3.Connection) -> None:
        """Refuse to write into a database SQLite itself calls damaged: a write could spread the damage."""
        if self._checked:
            return
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)").fetchall()]
        if problems != ["ok"]:
            said = " ".join(problems[0].replace("*** in database main ***", "").split())
            raise StoreError(
                f"{self.path} is damaged (SQLite's check says: {said}); it was left untouched: "
                "move it away to start a new one, or try `sqlite3 FILE .recover` to salvage runs"
            )
        self._checked = True

    @contextmanager
    def _transaction(self, action: str, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors(action):
            conn = self._connection()
            if write:
                self._check_before_write(conn)
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _alive(self, owner: str | None) -> bool:
        return owner == self._owner or owner_alive(owner)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- writing runs ---------------------------------------------------------------------------------


__all__ = ["DEFAULT_BUSY_TIMEOUT_S", "Database", "checked_default_db_path", "default_db_path"]
