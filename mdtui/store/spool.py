"""Runs the results database could not take (a full disk, a lock held too long), kept as JSON beside it.

A benchmark whose run cannot be written to the database (or only in part: begun, but its samples or its
end refused) writes the whole run to ``<database>.spool/run-<time>-<pid>.json`` instead, in one
self-describing document that `mdtui results import FILE` stores later: it completes the row the run
left behind ("interrupted") when there is one, else adds the run. When even the spool cannot be written,
the caller prints the same document on stdout.
"""

from __future__ import annotations

import errno
import json
import math
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mdtui.errors import MdtuiError
from mdtui.probe.root import RefusedFileError, open_regular, read_descriptor
from mdtui.rootwrite import write_file
from mdtui.store.errors import FioImportError
from mdtui.store.fio_read import fio_documents
from mdtui.store.records import FINAL_STATUSES, Metrics, RunSetup, RunStatus, SamplePoint
from mdtui.text import clean_strings

SPOOL_FORMAT = "mdtui-spooled-run"
SPOOL_VERSION = 1
MAX_SPOOL_BYTES = 256 << 20  # a run of an hour sampled every second with fio's JSON is a few MiB


@dataclass(frozen=True)
class SpooledRun:
    """One run as it was measured, for ResultsStore.store_spooled."""

    setup: RunSetup
    status: RunStatus
    started_at: datetime
    ended_at: datetime | None
    metrics: Metrics
    samples: tuple[SamplePoint, ...]
    error: str = ""
    fio_json: str | None = None
    run_id: int | None = None  # the row begun in the database before it stopped taking writes
    database: str = ""  # the database it was meant for
    reason: str = ""  # why it could not be stored there

    def document(self) -> dict[str, Any]:
        """The JSON document: format, version, and every field of the run."""
        return {
            "format": SPOOL_FORMAT,
            "version": SPOOL_VERSION,
            "database": self.database,
            "reason": self.reason,
            "run_id": self.run_id,
            "status": self.status.value,
            "started_at": self.started_at.astimezone(UTC).isoformat(),
            "ended_at": self.ended_at.astimezone(UTC).isoformat() if self.ended_at else None,
            "preset": self.setup.preset,
            "params": self.setup.params,
            "target": self.setup.target,
            "array": self.setup.array,
            "context": self.setup.context,
            "label": self.setup.label,
            "note": self.setup.note,
            "error": self.error,
            "metrics": self.metrics.as_dict(),
            "samples": [{"t_s": point.t_s, "values": point.values} for point in self.samples],
            "fio_json": self.fio_json,
        }


def spool_dir(db_path: str | os.PathLike[str]) -> Path:
    """Where runs meant for ``db_path`` are spooled: ``<database>.spool`` beside it."""
    return Path(f"{os.fspath(db_path)}.spool")


def write_spooled(db_path: str | os.PathLike[str], run: SpooledRun) -> Path:
    """Write ``run`` into the spool directory (synced, renamed into place); OSError when that fails too."""
    directory = spool_dir(db_path)
    moment = run.started_at.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    path = directory / f"run-{moment}-{os.getpid()}.json"
    data = json.dumps(run.document(), default=str).encode()
    try:
        # The one way (mdtui.rootsafe): the spool directory made 0700 if missing, no link another user could
        # change followed, the file made new and renamed into place.
        write_file(path, data, replace=True, make_mode=0o700)
    except MdtuiError as exc:
        raise OSError(errno.EIO, str(exc)) from None
    return path


def is_spooled(text: str) -> bool:
    """Whether ``text`` looks like a spooled run (rather than fio's own JSON output)."""
    head = text.lstrip()[:200]
    return head.startswith("{") and f'"format": "{SPOOL_FORMAT}"' in head


def _time(where: str, what: str, value: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise FioImportError(f"{where}: {what} {value!r} is not a time") from None
    if moment.tzinfo is None:
        raise FioImportError(f"{where}: {what} {value!r} has no time zone")
    return moment


def _object(where: str, what: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FioImportError(f"{where}: {what} is not a JSON object")
    return value


def parse_spooled(text: str, *, source: str = "") -> SpooledRun:
    """A spooled run from its JSON document, checked; FioImportError (an import error) when it is not one."""
    where = source or "the input"
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        raise FioImportError(f"{where} is not JSON") from None
    # Every string from the file (labels, notes, errors, parameters) is cleaned here, where it enters.
    document = _object(where, "the document", clean_strings(raw))
    if document.get("format") != SPOOL_FORMAT:
        raise FioImportError(f"{where} is not a spooled mdtui run")
    if document.get("version") != SPOOL_VERSION:
        raise FioImportError(f"{where} is a spooled run of version {document.get('version')!r}; this mdtui reads 1")
    try:
        status = RunStatus(str(document.get("status")))
    except ValueError:
        raise FioImportError(f"{where}: unknown status {document.get('status')!r}") from None
    if status not in FINAL_STATUSES:
        raise FioImportError(f"{where}: a spooled run ends complete, cancelled or failed, not {status.value}")
    metrics_raw = _object(where, "metrics", document.get("metrics", {}))
    values = {}
    for name, value in metrics_raw.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
            raise FioImportError(f"{where}: metric {name} is {value!r}, not a figure")
        values[str(name)] = float(value)
    samples = []
    for point in document.get("samples") or []:
        point = _object(where, "a sample", point)
        t_s = point.get("t_s")
        if not isinstance(t_s, (int, float)) or not math.isfinite(t_s):
            raise FioImportError(f"{where}: a sample has no time")
        samples.append(SamplePoint(float(t_s), _object(where, "a sample's values", point.get("values"))))
    run_id = document.get("run_id")
    ended = document.get("ended_at")
    fio_json = document.get("fio_json")
    return SpooledRun(
        setup=RunSetup(
            preset=str(document.get("preset") or "custom"),
            params=_object(where, "params", document.get("params", {})),
            target=str(document.get("target") or ""),
            array=_object(where, "array", document.get("array", {})),
            context=_object(where, "context", document.get("context", {})),
            label=str(document.get("label") or ""),
            note=str(document.get("note") or ""),
        ),
        status=status,
        started_at=_time(where, "start time", document.get("started_at")),
        ended_at=_time(where, "end time", ended) if ended is not None else None,
        metrics=Metrics.from_dict(values),
        samples=tuple(samples),
        error=str(document.get("error") or ""),
        fio_json=_clean_fio_json(fio_json) if isinstance(fio_json, str) else None,
        run_id=run_id if isinstance(run_id, int) and not isinstance(run_id, bool) and run_id > 0 else None,
        database=str(document.get("database") or ""),
        reason=str(document.get("reason") or ""),
    )


def _clean_fio_json(text: str) -> str:
    """fio's JSON as a spooled run carries it, with no escape sequence left in what it decodes to.

    The text itself is already cleaned (clean_strings); what JSON escapes (\\u001b) is cleaned in the
    documents, which are written again only when that changed something.
    """
    documents = fio_documents(text)
    cleaned = [clean_strings(document) for document in documents]
    if cleaned == documents:
        return text
    return "\n".join(json.dumps(document) for document in cleaned)


def read_bounded_text(path: str | os.PathLike[str], *, limit: int, what: str) -> str:
    """The UTF-8 text of a regular file a user named for import, at most ``limit`` bytes; FioImportError
    saying it is not ``what`` ("fio JSON output", "a spooled run") otherwise.

    Read the way mdtui reads every file it does not own (probe.root.open_regular): a FIFO, a device or a
    socket is refused after a stat, before it is opened, and the open never blocks.
    """
    file = Path(path)
    try:
        fd = open_regular(file)
    except FileNotFoundError:
        raise FioImportError(f"cannot read {file}: No such file or directory") from None
    except RefusedFileError as exc:
        raise FioImportError(f"{file} {exc.problem.removesuffix('; not read')}, so not {what}") from None
    try:
        data = read_descriptor(fd, limit, str(file))
    except RefusedFileError:
        raise FioImportError(f"{file} is larger than {limit >> 20} MiB; not {what}") from None
    except OSError as exc:
        raise FioImportError(f"cannot read {file}: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FioImportError(f"{file} is not text, so not {what}") from None


def read_spooled(path: str | os.PathLike[str]) -> SpooledRun:
    """The spooled run in ``path``; FioImportError when it cannot be read or is not one."""
    text = read_bounded_text(path, limit=MAX_SPOOL_BYTES, what="a spooled run")
    return parse_spooled(text, source=str(Path(path)))
