"""Ordinary mistakes that once destroyed a user's files or history: each test is one such mistake.

What mdtui must never do: delete or overwrite a file or directory it did not create in the same
command, unless the user named it and confirmed (`--force`, or typed at a terminal).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.cli.main import main
from mdtui.errors import MdtuiError
from mdtui.output_file import output_problem, write_text
from mdtui.rootwrite import OutputExistsError
from mdtui.store.records import Metrics, RunSetup, RunStatus, SamplePoint
from mdtui.store.runs import ResultsStore

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"
LAB = TREES / "lab-standard"
STORE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "store"
READ = STORE_FIXTURES / "fio-3.33-read.json"


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("mdtui: "), err
    return err


def tree_listing(path: Path) -> dict[str, bytes | str]:
    """Every entry below ``path`` with its bytes (files) or link text (links), to prove nothing changed."""
    found: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            key = str(full.relative_to(path))
            if full.is_symlink():
                found[key] = os.readlink(full)
            elif full.is_file():
                found[key] = full.read_bytes()
            else:
                found[key] = "dir"
    return found


def stored_runs(path: Path, count: int = 3) -> None:
    with ResultsStore(path) as store:
        for index in range(count):
            store.add_run(
                RunSetup(preset="custom", target=f"/dev/nvme{index}n1", label=f"run {index + 1}"),
                status=RunStatus.COMPLETE,
                started_at=datetime(2024, 5, 1, 12, index, tzinfo=UTC),
                ended_at=datetime(2024, 5, 1, 12, index, 30, tzinfo=UTC),
                metrics=Metrics(read_bw_bytes_per_s=(index + 1) * 1e8),
                samples=[SamplePoint(float(second), {"read_bw_bytes_per_s": 1e8}) for second in range(200)],
            )


# -- capture -----------------------------------------------------------------------------------------


def test_capture_into_a_directory_that_holds_files_refuses_and_keeps_them(tmp_path, capsys):
    precious = tmp_path / "reports"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    (precious / "sub").mkdir()
    (precious / "sub" / "data.csv").write_text("1,2,3")
    before = tree_listing(precious)
    code, out, err = cli(capsys, "--root", str(LAB), "capture", str(precious))
    assert "not empty" in one_line_error(code, err) and out == ""
    assert tree_listing(precious) == before
    assert [p.name for p in tmp_path.iterdir()] == ["reports"]  # no staging directory left beside it


def test_capture_of_a_tree_onto_itself_refuses_and_keeps_the_tree(tmp_path, capsys):
    tree = tmp_path / "tree"
    shutil.copytree(LAB, tree, symlinks=True)
    before = tree_listing(tree)
    for out_dir in (tree, tree / "sys", tree / "new-inside"):
        code, _, err = cli(capsys, "--root", str(tree), "capture", str(out_dir))
        assert "which the capture reads" in one_line_error(code, err)
    assert tree_listing(tree) == before


def test_capture_onto_a_regular_file_or_under_proc_is_one_line_and_writes_nothing(tmp_path, capsys):
    file = tmp_path / "notes.txt"
    file.write_text("keep me")
    code, _, err = cli(capsys, "--root", str(LAB), "capture", str(file))
    assert "not a directory" in one_line_error(code, err)
    assert file.read_text() == "keep me"
    for place in ("/proc/mdtui-capture", "/sys/mdtui-capture"):
        code, _, err = cli(capsys, "capture", place)
        one_line_error(code, err)
        assert not Path(place).exists()


def test_capture_of_an_empty_root_fails_and_creates_nothing(tmp_path, capsys):
    empty = tmp_path / "empty-root"
    empty.mkdir()
    out_dir = tmp_path / "capture"
    code, _, err = cli(capsys, "--root", str(empty), "capture", str(out_dir))
    assert "nothing mdtui reads" in one_line_error(code, err)
    assert not out_dir.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty-root"]


def test_capture_from_a_relative_root_reads_back_as_the_same_inventory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(LAB.parent)
    out_dir = tmp_path / "copy"
    code, out, err = cli(capsys, "--root", LAB.name, "capture", str(out_dir))
    assert code == 0, err
    assert out.startswith("captured ") and f"mdtui --root {out_dir} scan" in out
    assert (out_dir / "proc" / "mdstat").is_file()  # not out_dir/<relative root>/proc/mdstat
    code, original, _ = cli(capsys, "--root", str(LAB), "scan", "--json")
    code_copy, copied, _ = cli(capsys, "--root", str(out_dir), "scan", "--json")
    assert code == code_copy == 0
    assert [d["name"] for d in json.loads(copied)["disks"]] == [d["name"] for d in json.loads(original)["disks"]]


def test_capture_into_an_empty_existing_directory_is_allowed(tmp_path, capsys):
    out_dir = tmp_path / "empty"
    out_dir.mkdir()
    code, _, err = cli(capsys, "--root", str(LAB), "capture", str(out_dir))
    assert code == 0, err
    assert (out_dir / "proc" / "mdstat").is_file()


# -- exports -----------------------------------------------------------------------------------------


def test_export_onto_the_results_database_is_refused_and_the_history_survives(tmp_path, capsys, monkeypatch):
    db = tmp_path / "d.db"
    stored_runs(db)
    monkeypatch.setenv("MDTUI_DB", str(db))
    before = db.read_bytes()
    for extra in ((), ("--force",)):
        code, _, err = cli(capsys, "results", "export", "1", "-o", str(db), *extra)
        assert "results database" in one_line_error(code, err)
    # Through another name for the same file, and onto its write-ahead log.
    link = tmp_path / "alias.csv"
    link.symlink_to(db)
    code, _, err = cli(capsys, "results", "export", "1", "-o", str(link), "--force")
    one_line_error(code, err)
    code, _, err = cli(capsys, "results", "compare", "1", "2", "-o", f"{db}-wal", "--force")
    one_line_error(code, err)
    assert db.read_bytes() == before
    code, out, _ = cli(capsys, "results", "list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == ["3", "2", "1"]


def test_export_onto_another_sqlite_file_is_refused_even_with_force(tmp_path, capsys):
    db = tmp_path / "results.db"
    stored_runs(db)
    other = tmp_path / "firefox-places.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    before = other.read_bytes()
    code, _, err = cli(capsys, "results", "export", "1", "-o", str(other), "--force", "--db", str(db))
    assert "SQLite database" in one_line_error(code, err)
    assert other.read_bytes() == before


def test_export_over_an_existing_file_needs_force(tmp_path, capsys, monkeypatch):
    db = tmp_path / "results.db"
    stored_runs(db)
    report = tmp_path / "report.md"
    report.write_text("my edited report")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # a script: no terminal to ask at
    for command in (("export", "1"), ("compare", "1", "2"), ("ratios", "1", "--vs", "2", "--metric",
                                                              "read_bw_bytes_per_s")):
        code, _, err = cli(capsys, "results", *command, "-o", str(report), "--db", str(db))
        assert "exists; pass --force" in one_line_error(code, err)
        assert report.read_text() == "my edited report"
    code, _, err = cli(capsys, "results", "export", "1", "-o", str(report), "--force", "--db", str(db))
    assert code == 0, err
    assert report.read_text().startswith("| Run ")
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]  # no temporary file left


def test_export_onto_a_device_or_directory_is_refused(tmp_path, capsys):
    db = tmp_path / "results.db"
    stored_runs(db)
    for target in ("/dev/null", str(tmp_path)):
        code, _, err = cli(capsys, "results", "export", "1", "-o", target, "--force", "--db", str(db))
        one_line_error(code, err)
    assert Path("/dev/null").is_char_device()


def test_write_text_is_atomic_and_never_clobbers_unasked(tmp_path):
    path = tmp_path / "out.txt"
    write_text(path, "one", replace=False)
    assert path.read_text() == "one"
    with pytest.raises(OutputExistsError):
        write_text(path, "two", replace=False)
    assert path.read_text() == "one"
    os.chmod(path, 0o640)
    write_text(path, "three", replace=True)
    assert path.read_text() == "three" and (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temporary file left
    assert output_problem(tmp_path / "missing-dir" / "x.md") is not None


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(MdtuiError, match="No space left"):
        write_text(path, "x" * 10000, replace=False)
    assert list(tmp_path.iterdir()) == []


# -- the database ------------------------------------------------------------------------------------


def malformed_copy(source: Path, target: Path) -> None:
    """A copy that SQLite still reads but whose integrity check fails (an index page cut short)."""
    with sqlite3.connect(source) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs_started'").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(source.read_bytes())
    end = root * page_size
    data[end - 60 : end] = b"\xff" * 60
    target.write_bytes(bytes(data))


def test_label_and_note_refuse_a_database_sqlite_calls_damaged(tmp_path, capsys):
    good = tmp_path / "good.db"
    stored_runs(good)
    db = tmp_path / "damaged.db"
    malformed_copy(good, db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] != "ok"
    before = db.read_bytes()
    for command in (("label", "1", "new"), ("note", "1", "text"), ("delete", "1")):
        code, _, err = cli(capsys, "results", *command, "--db", str(db))
        assert "damaged" in one_line_error(code, err)
    assert db.read_bytes() == before
    # A read that needs the broken index says so in one line, and changes nothing either.
    code, _, err = cli(capsys, "results", "list", "--db", str(db))
    assert "damaged" in one_line_error(code, err)
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("params_json", "{not json", "params are not JSON"),
        ("started_at", "yesterday", "not a time"),
        ("owner", "boot/99999999999999999999999/1", None),
        ("status", "exploded", "unknown status"),
    ],
)
def test_one_damaged_row_does_not_hide_the_others(tmp_path, capsys, column, value, reason):
    db = tmp_path / "results.db"
    stored_runs(db)
    with sqlite3.connect(db) as conn:
        if column == "owner":
            conn.execute("UPDATE runs SET owner = ?, status = 'running' WHERE id = 2", (value,))
        else:
            conn.execute(f"UPDATE runs SET {column} = ? WHERE id = 2", (value,))
    code, out, err = cli(capsys, "results", "list", "--db", str(db))
    assert code == 0, err
    ids = [line.split()[0] for line in out.splitlines()[1:]]
    if reason is None:  # an impossible owner: the run is simply interrupted
        assert ids == ["3", "2", "1"] and "interrupted" in out
    else:
        assert ids == ["3", "1"]
        assert "skipped run #2" in err and reason in err
        code, _, err = cli(capsys, "results", "show", "2", "--db", str(db))
        assert "results delete 2" in one_line_error(code, err)
    for command in (("export", "1", "3"), ("compare", "1", "3"), ("show", "3"), ("advise", "--json")):
        argv = ("results", *command, "--db", str(db)) if command[0] != "advise" else command
        if command[0] == "advise":
            os.environ["MDTUI_DB"] = str(db)
            try:
                code, _, err = cli(capsys, "--root", str(LAB), *argv)
            finally:
                del os.environ["MDTUI_DB"]
        else:
            code, _, err = cli(capsys, *argv)
        assert code == 0, (command, err)
    code, out, err = cli(capsys, "results", "delete", "2", "--db", str(db))
    assert (code, out) == (0, "deleted run #2\n"), err
    with ResultsStore(db) as store:
        assert [run.id for run in store.list_runs()] == [3, 1]


def test_a_metric_that_is_not_a_number_is_skipped_with_a_warning(tmp_path, capsys):
    db = tmp_path / "results.db"
    stored_runs(db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE metrics SET value = 'abc' WHERE run_id = 2")
        conn.execute("UPDATE samples SET values_json = '[' WHERE run_id = 2 AND seq = 5")
    code, out, err = cli(capsys, "results", "show", "2", "--db", str(db))
    assert code == 0, err
    assert "metric read_bw_bytes_per_s holds 'abc'" in err and "sample 5 is damaged" in err
    assert "199 samples" in out
    code, out, err = cli(capsys, "results", "list", "--db", str(db))
    assert code == 0 and len(out.splitlines()) == 4


def test_a_failed_import_creates_no_database(tmp_path, capsys):
    db = tmp_path / "new" / "results.db"
    junk = tmp_path / "junk.json"
    junk.write_text(json.dumps({"jobs": "not a list"}))
    code, _, err = cli(capsys, "results", "import", str(junk), "--db", str(db))
    assert "no fio JSON" in one_line_error(code, err)
    assert not db.exists() and not db.parent.exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda doc: doc["jobs"][0]["read"].update(bw_bytes=-5), "negative"),
        (lambda doc: doc["jobs"][0].update(elapsed=-3), "elapsed"),
        (lambda doc: doc.update(jobs=[]), "no jobs"),
        (lambda doc: doc["jobs"][0]["read"].update(iops=float("inf")), "not finite"),
        (lambda doc: doc["jobs"][0]["read"].update(lat_ns=[1, 2]), None),
    ],
)
def test_import_checks_the_figures_before_storing(tmp_path, capsys, change, message):
    document = json.loads(READ.read_text())
    change(document)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    db = tmp_path / "results.db"
    code, _, err = cli(capsys, "results", "import", str(bad), "--db", str(db))
    if message is None:  # odd shapes inside a job are read as missing figures, never a traceback
        assert code == 0, err
        return
    assert message in one_line_error(code, err)
    assert not db.exists()


def test_delete_of_the_same_id_twice_deletes_it_once_and_succeeds(tmp_path, capsys):
    db = tmp_path / "results.db"
    stored_runs(db)
    code, out, err = cli(capsys, "results", "delete", "3", "3", "--db", str(db))
    assert (code, out, err) == (0, "deleted run #3\n", "")
    code, _, err = cli(capsys, "results", "delete", "2", "9", "--db", str(db))
    assert "no run #9" in one_line_error(code, err)
    with ResultsStore(db) as store:
        assert [run.id for run in store.list_runs()] == [2, 1]  # all or nothing: #2 kept


@pytest.mark.parametrize("limit", ["0", "-1", "²", "1e3"])
def test_list_limit_must_be_a_positive_number(tmp_path, capsys, limit):
    db = tmp_path / "results.db"
    stored_runs(db)
    with pytest.raises(SystemExit) as exit_info:
        main(["results", "list", "--limit", limit, "--db", str(db)])
    assert exit_info.value.code == 2
    assert "positive whole number" in capsys.readouterr().err


# -- arrays ------------------------------------------------------------------------------------------


def test_create_plan_on_a_running_array_device_is_refused(capsys):
    code, out, err = cli(capsys, "--root", str(LAB), "create", "--level", "1", "--device", "md0", "--dry-run",
                         "nvme4n1", "loop0")
    assert "md0 is already a running array" in err and code == 2
    assert "mdadm --create" not in out
    code, out, err = cli(capsys, "--root", str(LAB), "create", "--level", "1", "--device", "md5", "--dry-run",
                         "--allow-mixed-sizes", "nvme4n1", "loop0")
    assert code == 0, err
