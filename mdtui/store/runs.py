"""The results database's runs: written crash-safely, read back with damaged rows reported, not fatal."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from mdtui.store.database import Database
from mdtui.store.errors import DamagedRunError, StoreError, UnknownRunError
from mdtui.store.fio_read import text_steady
from mdtui.store.records import FINAL_STATUSES, Metrics, RunRecord, RunSetup, RunStatus, SamplePoint
from mdtui.store.spool import SpooledRun

_RUN_COLUMNS = (
    "id, status, started_at, ended_at, preset, params_json, target, array_json, context_json, label, note, owner, error"
)


def _now() -> datetime:
    return datetime.now(UTC)


def _to_text(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("run times must be timezone-aware")
    # Fixed width (always microseconds, always +00:00) so text order is time order in ORDER BY.
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _parse_time(run_id: int, what: str, text: Any) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise DamagedRunError(run_id, f"{what} {text!r} is not a time") from None
    if moment.tzinfo is None:
        raise DamagedRunError(run_id, f"{what} {text!r} has no time zone")
    return moment


def _json_object(run_id: int, what: str, text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise DamagedRunError(run_id, f"{what} are not JSON") from None
    if not isinstance(value, dict):
        raise DamagedRunError(run_id, f"{what} are not a JSON object")
    return value


def _text(run_id: int, what: str, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DamagedRunError(run_id, f"{what} is not text")
    return value


def _dumps(value: Any) -> str:
    # default=str so a Path or an enum in params is kept as its text rather than refused mid-run.
    return json.dumps(value, default=str)


class ResultsStore(Database):
    """An open results database and its runs. Methods are safe to call from several threads of one process."""

    def begin_run(self, setup: RunSetup, *, started_at: datetime | None = None) -> int:
        """Record a run as "running" before it starts, so a crash leaves a trace; returns its ID."""
        with self._transaction("record a new run") as conn:
            return self._insert_run(conn, setup, RunStatus.RUNNING, started_at or _now(), None, self._owner, "")

    @contextmanager
    def recording(self, setup: RunSetup) -> Iterator[RunHandle]:
        """Begin a run and make sure it ends: failed on an exception, cancelled on a cancel or Ctrl-C.

        A body that returns without calling ``finish`` leaves the run complete, with no figures.
        """
        handle = RunHandle(self, self.begin_run(setup))
        try:
            yield handle
        except (KeyboardInterrupt, asyncio.CancelledError):
            handle.finish_quietly(RunStatus.CANCELLED, "cancelled")
            raise
        except BaseException as exc:
            handle.finish_quietly(RunStatus.FAILED, str(exc) or type(exc).__name__)
            raise
        if not handle.finished:
            handle.finish(RunStatus.COMPLETE)

    def append_samples(self, run_id: int, points: Sequence[SamplePoint]) -> None:
        """Add time-series points as they are taken; each call is its own transaction."""
        if not points:
            return
        with self._transaction("store samples") as conn:
            self._require(conn, run_id)
            self._insert_samples(conn, run_id, points)

    def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        *,
        metrics: Metrics | None = None,
        fio_json: str | None = None,
        error: str = "",
        ended_at: datetime | None = None,
    ) -> None:
        """Complete a running run as complete, cancelled or failed, with whatever it measured."""
        if status not in FINAL_STATUSES:
            raise ValueError(f"a run ends as complete, cancelled or failed, not {status.value}")
        with self._transaction("finish a run") as conn:
            # An "interrupted" run may still be finished: its owner was only presumed dead.
            updated = conn.execute(
                "UPDATE runs SET status = ?, ended_at = ?, fio_json = coalesce(?, fio_json), error = ? "
                "WHERE id = ? AND status IN (?, ?)",
                (
                    status.value,
                    _to_text(ended_at or _now()),
                    fio_json,
                    error,
                    run_id,
                    RunStatus.RUNNING.value,
                    RunStatus.INTERRUPTED.value,
                ),
            ).rowcount
            if not updated:
                row = self._require(conn, run_id)
                raise StoreError(f"run #{run_id} has already ended ({row[0]}); it cannot be finished again")
            if metrics is not None:
                self._insert_metrics(conn, run_id, metrics)

    def add_run(
        self,
        setup: RunSetup,
        *,
        status: RunStatus,
        started_at: datetime,
        ended_at: datetime | None,
        metrics: Metrics,
        samples: Sequence[SamplePoint] = (),
        fio_json: str | None = None,
        error: str = "",
    ) -> int:
        """Store a whole finished run in one transaction (imports); returns its ID."""
        if status not in FINAL_STATUSES:
            raise ValueError(f"add_run stores finished runs, not {status.value} ones")
        with self._transaction("store a run") as conn:
            run_id = self._insert_run(conn, setup, status, started_at, ended_at, None, error)
            if fio_json is not None:
                conn.execute("UPDATE runs SET fio_json = ? WHERE id = ?", (fio_json, run_id))
            self._insert_metrics(conn, run_id, metrics)
            self._insert_samples(conn, run_id, samples)
            return run_id

    def store_spooled(self, run: SpooledRun) -> int:
        """Store a run spooled when the database could not take it (mdtui.store.spool); returns its ID.

        The row the run began before the database stopped taking writes (still running, or interrupted,
        with the same start time) is completed with everything the run measured; otherwise the run is added.
        """
        if run.status not in FINAL_STATUSES:
            raise ValueError(f"a spooled run ends complete, cancelled or failed, not {run.status.value}")
        with self._transaction("store a spooled run") as conn:
            row = None
            if run.run_id is not None:
                row = conn.execute("SELECT status, started_at FROM runs WHERE id = ?", (run.run_id,)).fetchone()
            begun = (RunStatus.RUNNING.value, RunStatus.INTERRUPTED.value)
            if run.run_id is not None and row is not None and row[0] in begun and row[1] == _to_text(run.started_at):
                run_id = run.run_id
                conn.execute(
                    "UPDATE runs SET status = ?, ended_at = ?, fio_json = coalesce(?, fio_json), error = ? "
                    "WHERE id = ?",
                    (run.status.value, _to_text(run.ended_at or _now()), run.fio_json, run.error, run_id),
                )
                # The spool holds the whole time series, including the points stored before the disk filled.
                conn.execute("DELETE FROM samples WHERE run_id = ?", (run_id,))
            else:
                run_id = self._insert_run(conn, run.setup, run.status, run.started_at, run.ended_at, None, run.error)
                if run.fio_json is not None:
                    conn.execute("UPDATE runs SET fio_json = ? WHERE id = ?", (run.fio_json, run_id))
            self._insert_metrics(conn, run_id, run.metrics)
            self._insert_samples(conn, run_id, run.samples)
            return run_id

    def set_label(self, run_id: int, label: str) -> None:
        self._set_text(run_id, "label", label)

    def set_note(self, run_id: int, note: str) -> None:
        self._set_text(run_id, "note", note)

    def _set_text(self, run_id: int, column: str, text: str) -> None:
        with self._transaction(f"set the {column}") as conn:
            if not conn.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (text, run_id)).rowcount:
                raise UnknownRunError(run_id)

    def missing_ids(self, run_ids: Sequence[int]) -> list[int]:
        """Those of ``run_ids`` that are not stored; reads no row's contents, so damaged rows count as there."""
        wanted = list(dict.fromkeys(run_ids))
        with self._transaction("look up runs", write=False) as conn:
            found: set[int] = set()
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                found.update(row[0] for row in conn.execute(f"SELECT id FROM runs WHERE id IN ({marks})", chunk))
        return [run_id for run_id in wanted if run_id not in found]

    def last_run_of(self, owner: str, target: str) -> int | None:
        """The newest run the process ``owner`` (an mdtui.probe.owner token) began on ``target``, or None."""
        with self._transaction("look up runs", write=False) as conn:
            row = conn.execute(
                "SELECT id FROM runs WHERE owner = ? AND target = ? ORDER BY id DESC LIMIT 1", (owner, target)
            ).fetchone()
        return int(row[0]) if row is not None else None

    def delete_run(self, run_id: int) -> None:
        with self._transaction("delete a run") as conn:
            # Metrics and samples go with the run (ON DELETE CASCADE).
            if not conn.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount:
                raise UnknownRunError(run_id)

    def _insert_run(
        self,
        conn: sqlite3.Connection,
        setup: RunSetup,
        status: RunStatus,
        started_at: datetime,
        ended_at: datetime | None,
        owner: str | None,
        error: str,
    ) -> int:
        cursor = conn.execute(
            "INSERT INTO runs (status, started_at, ended_at, preset, params_json, target, array_json, "
            "context_json, label, note, owner, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                status.value,
                _to_text(started_at),
                _to_text(ended_at) if ended_at else None,
                setup.preset,
                _dumps(setup.params),
                setup.target,
                _dumps(setup.array),
                _dumps(setup.context),
                setup.label,
                setup.note,
                owner,
                error,
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    @staticmethod
    def _insert_metrics(conn: sqlite3.Connection, run_id: int, metrics: Metrics) -> None:
        # SQLite stores NaN as NULL; a figure that is not a number is better absent than a failed commit.
        rows = [(run_id, name, value) for name, value in metrics.as_dict().items() if math.isfinite(value)]
        conn.executemany("INSERT OR REPLACE INTO metrics (run_id, name, value) VALUES (?, ?, ?)", rows)

    @staticmethod
    def _insert_samples(conn: sqlite3.Connection, run_id: int, points: Sequence[SamplePoint]) -> None:
        start = conn.execute("SELECT coalesce(max(seq) + 1, 0) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
        conn.executemany(
            "INSERT INTO samples (run_id, seq, t_s, values_json) VALUES (?, ?, ?, ?)",
            [(run_id, start + i, float(p.t_s), _dumps(p.values)) for i, p in enumerate(points)],
        )

    @staticmethod
    def _require(conn: sqlite3.Connection, run_id: int) -> tuple[str]:
        row: tuple[str] | None = conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise UnknownRunError(run_id)
        return row

    # -- reading runs ---------------------------------------------------------------------------------

    def get_run(self, run_id: int) -> RunRecord:
        """One run with its samples and raw fio JSON."""
        with self._transaction("read a run", write=False) as conn:
            row = conn.execute(f"SELECT {_RUN_COLUMNS}, fio_json FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise UnknownRunError(run_id)
            metrics = self._metrics_of(conn, [run_id]).get(run_id, {})
            rows = conn.execute("SELECT seq, t_s, values_json FROM samples WHERE run_id = ? ORDER BY seq", (run_id,))
            samples = tuple(point for seq, t_s, values in rows if (point := self._sample(run_id, seq, t_s, values)))
        return self._record(row[:-1], metrics, samples=samples, fio_json=row[-1])

    def _sample(self, run_id: int, seq: Any, t_s: Any, values: Any) -> SamplePoint | None:
        """One stored sample, or None (with a warning) when its row does not hold a time and a JSON object."""
        try:
            decoded = json.loads(values)
            if isinstance(t_s, (int, float)) and math.isfinite(t_s) and isinstance(decoded, dict):
                return SamplePoint(float(t_s), decoded)
        except (TypeError, ValueError):
            pass
        self.warnings.append(f"run #{run_id}: sample {seq} is damaged and was skipped")
        return None

    def get_runs(self, run_ids: Sequence[int]) -> list[RunRecord]:
        return [self.get_run(run_id) for run_id in run_ids]

    def list_runs(self, *, limit: int | None = None) -> list[RunRecord]:
        """Runs newest first, without samples and raw fio JSON."""
        with self._transaction("list runs", write=False) as conn:
            # Only a step that had a steady-state criterion carries fio's verdict: its JSON alone is read.
            sql = (
                f"SELECT {_RUN_COLUMNS}, CASE WHEN instr(fio_json, '\"steadystate\"') > 0 THEN fio_json END "
                "FROM runs ORDER BY started_at DESC, id DESC"
            )
            if limit is not None and limit <= 0:
                raise ValueError("limit must be a positive number of runs")
            rows = conn.execute(sql + " LIMIT ?", (limit,)).fetchall() if limit else conn.execute(sql).fetchall()
            metrics = self._metrics_of(conn, [row[0] for row in rows])
        runs = []
        for row in rows:
            try:
                record = self._record(row[:-1], metrics.get(row[0], {}))
                runs.append(replace(record, listed_steady=text_steady(row[-1])) if isinstance(row[-1], str) else record)
            except DamagedRunError as exc:
                # One bad row must not hide the others: list the rest and say which was skipped.
                self.warnings.append(
                    f"skipped run #{exc.run_id}: damaged ({exc.reason}); mdtui results delete {exc.run_id} removes it"
                )
        return runs

    def _metrics_of(self, conn: sqlite3.Connection, run_ids: list[int]) -> dict[int, dict[str, float]]:
        found: dict[int, dict[str, float]] = {}
        if not run_ids:
            return found
        # One query for a whole listing; chunks stay under SQLite's bound-parameter limit.
        for start in range(0, len(run_ids), 500):
            chunk = run_ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for run_id, name, value in conn.execute(
                f"SELECT run_id, name, value FROM metrics WHERE run_id IN ({marks})", chunk
            ):
                if isinstance(value, (int, float)) and math.isfinite(value):
                    found.setdefault(run_id, {})[name] = value
                else:
                    self.warnings.append(f"run #{run_id}: metric {name} holds {value!r}, not a number; skipped")
        return found

    def _record(
        self,
        row: tuple[Any, ...],
        metrics: dict[str, float],
        *,
        samples: tuple[SamplePoint, ...] = (),
        fio_json: str | None = None,
    ) -> RunRecord:
        (run_id, status_text, started, ended, preset, params, target, array, context, label, note, owner, error) = row
        try:
            status = RunStatus(status_text)
        except ValueError:
            raise DamagedRunError(run_id, f"unknown status {status_text!r}") from None
        if status is RunStatus.RUNNING and not self._alive(owner if isinstance(owner, str) else None):
            status = RunStatus.INTERRUPTED
        started_at = _parse_time(run_id, "start time", started)
        if started_at is None:
            raise DamagedRunError(run_id, "no start time")
        return RunRecord(
            id=run_id,
            status=status,
            started_at=started_at,
            ended_at=_parse_time(run_id, "end time", ended),
            preset=_text(run_id, "preset", preset),
            params=_json_object(run_id, "params", params),
            target=_text(run_id, "target", target),
            array=_json_object(run_id, "array", array),
            context=_json_object(run_id, "context", context),
            metrics=Metrics.from_dict(metrics),
            label=_text(run_id, "label", label),
            note=_text(run_id, "note", note),
            error=_text(run_id, "error", error),
            samples=samples,
            fio_json=fio_json if isinstance(fio_json, str) else None,
        )


class RunHandle:
    """A run being recorded (from ResultsStore.recording): finish it once; the store appends its samples."""

    def __init__(self, store: ResultsStore, run_id: int) -> None:
        self.store = store
        self.id = run_id
        self.finished = False

    def finish(
        self,
        status: RunStatus,
        *,
        metrics: Metrics | None = None,
        fio_json: str | None = None,
        error: str = "",
    ) -> None:
        self.store.finish_run(self.id, status, metrics=metrics, fio_json=fio_json, error=error)
        self.finished = True

    def finish_quietly(self, status: RunStatus, error: str) -> None:
        """End the run while another error is on its way; if even this fails the run shows as interrupted."""
        if self.finished:
            return
        with suppress(StoreError):
            self.finish(status, error=error)


__all__ = ["ResultsStore", "RunHandle"]
