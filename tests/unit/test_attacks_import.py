"""`mdtui results import` of a file another user made (issue 40, cases 9, 10 and 11): a document with many
groups must not grow the database by its size once per group, a FIFO or a device must not hang or be read,
and escape sequences in imported or spooled strings must never reach the terminal."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIO_READ = REPO / "tests" / "fixtures" / "store" / "fio-3.33-read.json"
TREE = REPO / "tests" / "fixtures" / "trees" / "real-links"
# A command that could hang (a FIFO opened for reading) is given this long before the test calls it a hang.
HANG_S = 20.0
# What the database may grow by per byte of an imported document: the document once (fio_json), each job's
# options again in its run's parameters, metric rows, indexes and SQLite's pages. 3b6999e stored the whole
# document once per group: 60 groups grew it by 60 times the document (measured: ~61x).
GROWTH_PER_DOCUMENT_BYTE = 4.0
GROWTH_SLACK_BYTES = 256 << 10  # an empty database's pages, WAL and schema
ESC = "\x1b"
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[1;1Hmdtui: all arrays clean"


def _mdtui(db: Path, *argv: str, timeout: float = HANG_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdtui", *argv], capture_output=True, text=True, timeout=timeout, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "MDTUI_DB": str(db)}, start_new_session=True,
    )  # fmt: skip


def _groups(count: int) -> dict:
    """fio 3.33's JSON of a sequential read, with its job repeated as ``count`` stonewall groups."""
    document = json.loads(FIO_READ.read_text())
    job = document["jobs"][0]
    jobs = []
    for group in range(count):
        entry = copy.deepcopy(job)
        entry["jobname"], entry["groupid"] = f"step{group}", group
        jobs.append(entry)
    document["jobs"] = jobs
    return document


def _database_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


# --- case 9 -----------------------------------------------------------------------------------------------


def test_a_document_of_many_groups_is_stored_once_not_once_per_group(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    source = tmp_path / "groups.json"
    source.write_text(json.dumps(_groups(60)))
    done = _mdtui(db, "results", "import", str(source))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("imported run #") == 60
    grown = _database_bytes(db)
    size = source.stat().st_size
    print(f"\n60 groups: a {size:,}-byte document grew the database by {grown:,} bytes ({grown / size:.1f}x)")
    assert grown <= GROWTH_PER_DOCUMENT_BYTE * size + GROWTH_SLACK_BYTES, f"{grown / size:.1f}x the document"
    listed = _mdtui(db, "results", "export", "5", "--format", "json", "--raw")
    raw = json.loads(listed.stdout)["runs"][0]["fio"]
    assert [job["jobname"] for job in raw["jobs"]] == ["step4"], "a run keeps its own jobs of the document"


def test_more_runs_than_an_import_may_add_are_refused_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    source = tmp_path / "groups.json"
    source.write_text(json.dumps(_groups(1000)))
    done = _mdtui(db, "results", "import", str(source))
    assert done.returncode != 0 and "1000 runs" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not db.exists(), "a refused import created the database"


# --- case 10 ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_is_refused_before_anything_is_read(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "results.db"
    path = tmp_path / "run.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    try:
        done = _mdtui(db, "results", "import", str(path))
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"results import of a {kind} hung for {HANG_S:g} s") from exc
    assert done.returncode != 0 and ("FIFO" in done.stderr or "device" in done.stderr), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not db.exists()


# --- case 11 ----------------------------------------------------------------------------------------------


def _hostile_fio(tmp_path: Path) -> Path:
    document = _groups(1)
    document["fio version"] = HOSTILE
    document["jobs"][0]["jobname"] = HOSTILE
    document["jobs"][0]["job options"]["filename"] = "/dev/md0" + HOSTILE
    document["global options"] = {"description": HOSTILE}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document))
    return path


def _hostile_spool(tmp_path: Path) -> Path:
    document = {
        "format": "mdtui-spooled-run", "version": 1, "database": HOSTILE, "reason": HOSTILE, "run_id": None,
        "status": "complete", "started_at": "2026-11-26T22:18:58+00:00", "ended_at": "2026-11-26T22:19:58+00:00",
        "preset": "seq" + HOSTILE, "params": {"bs": HOSTILE}, "target": "/dev/md0" + HOSTILE,
        "array": {"name": "md0", "level": HOSTILE}, "context": {HOSTILE: HOSTILE}, "label": HOSTILE,
        "note": HOSTILE, "error": "", "metrics": {"read_bw_bytes_per_s": 1e9}, "samples": [],
        "fio_json": json.dumps({"fio version": HOSTILE, "jobs": [{"jobname": HOSTILE}]}),
    }  # fmt: skip
    path = tmp_path / "run-spooled.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("make", [_hostile_fio, _hostile_spool], ids=["fio-json", "spooled"])
def test_imported_strings_reach_no_terminal_with_their_escapes(tmp_path: Path, make) -> None:
    db = tmp_path / "results.db"
    done = _mdtui(db, "results", "import", str(make(tmp_path)))
    assert done.returncode == 0, done.stderr
    shown = [done.stdout + done.stderr]
    exports = (["results", "export", "1", "--format", "md"], ["results", "export", "1", "--format", "json", "--raw"])
    for argv in (["results", "list"], ["results", "show", "1"], *exports, ["--root", str(TREE), "metrics"]):
        out = _mdtui(db, *argv)
        assert out.returncode == 0, (argv, out.stderr)
        shown.append(out.stdout + out.stderr)
    for text, argv in zip(shown, ["import", "list", "show", "export md", "export json", "metrics"], strict=True):
        assert ESC not in text and "\x07" not in text, f"`results {argv}` printed an escape sequence"
        assert "\\u001b" not in text, f"`results {argv}` printed an escape that decodes to one"
