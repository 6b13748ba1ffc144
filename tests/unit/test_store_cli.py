"""`mdtui results ...`: every action on a temporary database; bad input is one line and exit code 2."""

from __future__ import annotations

import argparse
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.cli.main import main
from mdtui.cli.results import add_results_parser, run_results
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

FIXTURES = Path(__file__).parents[1] / "fixtures" / "store"
READ = FIXTURES / "fio-3.33-read.json"
RANDRW = FIXTURES / "fio-3.33-randrw-numjobs2.json"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "results.db")


def results(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["results", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_registers_on_the_top_level_parser(db, capsys):
    parser = argparse.ArgumentParser(prog="mdtui")
    add_results_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["results", "list", "--db", db])
    assert (args.command, args.results_command, args.db) == ("results", "list", db)
    # --db before the action works too.
    assert parser.parse_args(["results", "--db", db, "list"]).db == db
    assert run_results(args) == 0
    assert "No runs yet" in capsys.readouterr().out
    assert not Path(db).exists()
    assert run_results(parser.parse_args(["results"])) == 0
    assert "compare" in capsys.readouterr().out


def test_import_list_show_label_note_export_compare_delete(db, capsys, tmp_path):
    code, out, _ = results(capsys, "import", str(READ), "--label", "seq read", "--db", db)
    assert (code, out) == (0, "imported run #1 (complete): Read MB/s 1,118.5, Read IOPS 1,067\n")
    assert results(capsys, "import", str(RANDRW), "--db", db)[0] == 0

    code, out, _ = results(capsys, "list", "--db", db)
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["ID", "STARTED", "STATUS"]
    assert [line.split()[0] for line in lines[1:]] == ["2", "1"]
    assert lines[2].endswith("seq read")

    assert results(capsys, "label", "2", "rand", "rw", "--db", db) == (0, "", "")
    assert results(capsys, "note", "#2", "numjobs=2 on tmpfs", "--db", db) == (0, "", "")
    code, out, _ = results(capsys, "show", "2", "--db", db)
    assert code == 0
    assert out.startswith("Run #2 rand rw\n  Status     complete\n")
    assert "  Note       numjobs=2 on tmpfs\n" in out
    assert "Write IOPS" in out

    code, out, _ = results(capsys, "export", "1", "2", "--format", "json", "--db", db)
    assert code == 0
    assert [run["label"] for run in json.loads(out)["runs"]] == ["seq read", "rand rw"]
    target = tmp_path / "runs.md"
    code, out, err = results(capsys, "export", "1", "--format", "md", "-o", str(target), "--db", db)
    assert (code, out, err) == (0, "", f"wrote {target}\n")
    assert target.read_text().startswith("| Run ")

    code, out, _ = results(capsys, "compare", "1", "2", "--db", db, "--metric", "read_bw_bytes_per_s")
    assert code == 0
    assert out.startswith("Baseline #1 seq read; ratios are run ÷ baseline")
    assert "| params.rw " in out
    assert "worse |" in out.splitlines()[-1]
    code, out, _ = results(capsys, "compare", "1", "2", "--format", "csv", "--tolerance", "5%", "--db", db)
    assert out.splitlines()[0] == "metric,unit,higher_is_better,run,role,value,ratio_vs_baseline,verdict,steady"

    assert results(capsys, "delete", "2", "--db", db) == (0, "deleted run #2\n", "")
    with ResultsStore(db) as store:
        assert [run.id for run in store.list_runs()] == [1]


def test_list_fits_the_terminal_and_a_cut_label_keeps_its_end(db, capsys, monkeypatch):
    # Issue 44: `results list` printed about 200 columns whatever the terminal.
    with ResultsStore(db) as store:
        for jobs in (1, 2):
            setup = RunSetup("weakest_link", {"numjobs": jobs}, "/dev/md0", {"level": "raid5"}, {},
                             label=f"weakest_link /dev/md0 numjobs {jobs}")  # fmt: skip
            store.add_run(setup, status=RunStatus.COMPLETE, started_at=datetime(2024, 5, 2, tzinfo=UTC),
                          ended_at=None, metrics=Metrics(read_bw_bytes_per_s=1e9 * jobs, write_iops=5.0))  # fmt: skip
    code, whole, _ = results(capsys, "list", "--db", db)
    assert code == 0 and max(map(len, whole.splitlines())) > 120 and "fitted" not in whole
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = results(capsys, "list", "--db", db)
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= 80, lines
    assert lines[0].split() == ["ID", "STARTED", "ST", "PRESET", "TARGET", "MB/s", "LABEL"]
    assert re.fullmatch(r"2  \d\d-\d\d \d\d:\d\d  ✓ .*", lines[1].strip()), lines[1]  # no year, a sign
    assert "R 2,000.0" in lines[1] and lines[1].endswith("s 2")
    assert lines[2].endswith("s 1") and lines[-1] == "(fitted to 80 columns: --wide shows every column whole)"
    code, wide, _ = results(capsys, "list", "--wide", "--db", db)
    assert wide == whole


def test_ratios_and_normalise(db, capsys):
    with ResultsStore(db) as store:
        for level, members, bandwidth in (("", 1, 200.0), ("raid0", 3, 582.0), ("raid5", 3, 380.0)):
            store.add_run(
                RunSetup(preset="offset0", array={"level": level, "raid_disks": members} if level else {}),
                status=RunStatus.COMPLETE,
                started_at=datetime(2024, 5, 1, tzinfo=UTC),
                ended_at=None,
                metrics=Metrics(read_bw_bytes_per_s=bandwidth * 1e6),
            )
    code, out, _ = results(
        capsys, "ratios", "1", "2", "3", "--vs", "1", "--vs", "2", "--metric", "read_bw_bytes_per_s", "--db", db
    )
    assert code == 0
    assert out.splitlines()[-1] == "| #3  |     380.0 | 1.90× | 0.65× |"
    code, out, _ = results(capsys, "normalise", "2", "3", "--device-run", "1", "--format", "csv", "--db", db)
    assert code == 0
    assert out.splitlines()[1:] == ["2,,raid0,3,582000000,200000000,0.97", "3,,raid5,2,380000000,200000000,0.95"]
    code, out, _ = results(
        capsys, "normalise", "3", "--device-speed", "100e6", "--data-disks", "3=1", "--format", "json", "--db", db
    )
    assert json.loads(out)["rows"][0]["normalised"] == 3.8


def one_line_error(code: int, out: str, err: str, fragment: str) -> None:
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("mdtui: ")
    assert fragment in err
    assert "Traceback" not in err


def test_unknown_run_id(db, capsys):
    results(capsys, "import", str(READ), "--db", db)
    for argv in (("show", "9"), ("label", "9", "x"), ("note", "9", "x"), ("delete", "9"), ("compare", "1", "9")):
        one_line_error(*results(capsys, *argv, "--db", db), "no run #9")


def test_delete_is_all_or_nothing(db, capsys):
    results(capsys, "import", str(READ), "--db", db)
    one_line_error(*results(capsys, "delete", "1", "9", "--db", db), "no run #9")
    with ResultsStore(db) as store:
        assert [run.id for run in store.list_runs()] == [1]


def test_unreadable_json_and_missing_file(db, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"jobs": [')
    one_line_error(*results(capsys, "import", str(bad), "--db", db), "holds no fio JSON output")
    one_line_error(*results(capsys, "import", str(tmp_path / "absent.json"), "--db", db), "cannot read")


def test_corrupt_database_is_reported_and_kept(capsys, tmp_path):
    path = tmp_path / "results.db"
    content = os.urandom(4096)
    path.write_bytes(content)
    for argv in (("list",), ("show", "1"), ("import", str(READ)), ("delete", "1")):
        one_line_error(*results(capsys, *argv, "--db", str(path)), "not an SQLite database")
    assert path.read_bytes() == content


def test_missing_database_for_a_read(capsys, tmp_path):
    path = tmp_path / "none.db"
    one_line_error(*results(capsys, "show", "1", "--db", str(path)), "no results database at")
    assert not path.exists()


def test_bad_arguments_exit_2_through_argparse(db, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["results", "show", "twelve", "--db", db])
    assert exit_info.value.code == 2
    assert "is not a run ID" in capsys.readouterr().err


def test_unwritable_output_file(db, capsys, tmp_path):
    results(capsys, "import", str(READ), "--db", db)
    one_line_error(*results(capsys, "export", "1", "-o", str(tmp_path / "no" / "dir.md"), "--db", db), "cannot write")


def test_list_show_and_compare_speak_one_json_schema(db, capsys, monkeypatch):
    with ResultsStore(db) as store:
        for index, latency in enumerate((400_000.0, 1_000.0)):
            store.add_run(
                RunSetup(
                    preset="custom",
                    target="/dev/nvme0n1, /dev/nvme1n1, /dev/nvme2n1, /dev/nvme3n1",
                    params={"filename": ["/dev/nvme0n1", "/dev/nvme1n1"][: index + 1]},
                ),
                status=RunStatus.COMPLETE,
                started_at=datetime(2024, 5, 1, 12, index, tzinfo=UTC),
                ended_at=datetime(2024, 5, 1, 12, index, 30, tzinfo=UTC),
                metrics=Metrics(read_lat_mean_ns=latency, read_bw_bytes_per_s=1e9),
            )
    code, out, _ = results(capsys, "list", "--json", "--db", db)
    listing = json.loads(out)
    assert code == 0 and (listing["format"], listing["schema_version"]) == ("mdtui-results", 1)
    assert [run["id"] for run in listing["runs"]] == [2, 1] and "samples" not in listing["runs"][0]
    code, out, _ = results(capsys, "show", "1", "--json", "--db", db)
    shown = json.loads(out)
    assert code == 0 and shown["format"] == "mdtui-results" and shown["runs"][0]["samples"] == []
    assert shown["runs"][0]["metrics"]["read_lat_mean_ns"] == 400_000.0
    code, as_json, _ = results(capsys, "compare", "1", "2", "--json", "--db", db)
    _, as_format, _ = results(capsys, "compare", "1", "2", "--format", "json", "--db", db)
    assert code == 0 and as_json == as_format and json.loads(as_json)["format"] == "mdtui-comparison"

    # A multi-device target is whole in a whole line; fitted, shortened from the right, never cut to ", /dev/nvme3n1".
    code, out, _ = results(capsys, "list", "--db", db)
    assert "/dev/nvme0n1, /dev/nvme1n1, /dev/nvme2n1, /dev/nvme3n1" in out.splitlines()[1]
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = results(capsys, "list", "--db", db)
    assert "nvme0n1 +3" in out.splitlines()[1] and ", /dev" not in out
    # A latency that fell 400-fold is 0.0025×, not 0.00×; device lists read as lists, not JSON.
    code, out, _ = results(capsys, "compare", "1", "2", "--db", db)
    assert "0.0025× better" in out and "0.00×" not in out
    assert "/dev/nvme0n1, /dev/nvme1n1" in out and '["' not in out


def test_empty_database_lists_as_json_too(db, capsys):
    code, out, _ = results(capsys, "list", "--json", "--db", db)
    assert code == 0 and json.loads(out)["runs"] == []
    assert not Path(db).exists()
