"""Every place a stored figure is listed says whether it was steady; the advisor says what an unsteady one means.

The runs are stored from real fio output on a file in tmp: a read held to a steady rate (fio judges it steady
after a few seconds), a write whose rate alternates every second (it runs to its ceiling unsteady), and a
fixed-time read and write with no criterion (never judged), and a write replayed from a timed I/O log at a
rate falling each second (a write cache filling). Each listing, compare and export must keep the three apart:
"not judged" is never stored or shown as unsteady.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.advise.rules import advise
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.steady import _movement
from mdtui.cli.main import main
from mdtui.execute.argv import fio_argv
from mdtui.execute.fio import parse_fio_output
from mdtui.execute.record import job_params
from mdtui.model.job import JobSpec, RwMode, SteadyState
from mdtui.store.fio_read import number, text_steady
from mdtui.store.records import Metrics, RunSetup, RunStatus, Steadiness
from mdtui.store.runs import ResultsStore

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def _fio(directory: Path, spec: JobSpec, *extra: str) -> str:
    argv = [a for a in fio_argv(spec) if not a.startswith(("--status-interval", "--direct", "--ioengine"))]
    argv += ["--ioengine=psync", "--direct=0", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=directory, check=True)
    return done.stdout


def _falling_write(directory: Path) -> str:
    """Real fio writing at a rate that falls each second (40, 37, 34 ... 64 KiB writes a second), replayed from
    a timed I/O log (fio's iolog version 3): a drive's write cache filling, as fio's slope criterion sees it."""
    target = directory / "falling.bin"
    target.write_bytes(b"\0" * (8 << 20))
    lines = ["fio version 3 iolog", f"0 {target} add", f"0 {target} open"]
    offset = 0
    for second in range(10):
        count = 40 - 3 * second
        for index in range(count):
            # fio 3.33 reads these timestamps as microseconds.
            lines.append(f"{(second * 1000 + index * 1000 // count) * 1000} {target} write {offset % (8 << 20)} 65536")
            offset += 65536
    lines.append(f"{10_000_000} {target} close")
    log = directory / "falling.log"
    log.write_text("\n".join(lines) + "\n")
    argv = ["fio", "--name=falling", f"--read_iolog={log}", "--ioengine=psync", "--steadystate=bw_slope:1%",
            "--steadystate_duration=4", "--steadystate_ramp_time=1", "--output-format=json"]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True, cwd=directory).stdout


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, int]]:
    """A database with three runs on md9 from real fio: steady read, unsteady write, fixed-time read."""
    directory = tmp_path_factory.mktemp("steady")
    target = directory / "data.bin"
    target.write_bytes(b"\0" * (8 << 20))
    steady = JobSpec("seq-read", str(target), 64 << 10, runtime_s=60,
                     steady=SteadyState("bw", "slope", 5.0, window_s=3, ramp_s=1))  # fmt: skip
    # The write falls each second to the end of its log: fio's slope criterion never holds.
    unsteady = JobSpec("seq-write", str(target), 64 << 10, rw=RwMode.WRITE, runtime_s=60,
                       steady=SteadyState("bw", "slope", 1.0, window_s=4, ramp_s=1))  # fmt: skip
    fixed = JobSpec("fixed-read", str(target), 64 << 10, runtime_s=1)
    fixed_write = JobSpec("fixed-write", str(target), 64 << 10, rw=RwMode.WRITE, runtime_s=1)
    outputs = {
        "steady": (steady, _fio(directory, steady, "--rate=16m")),
        "unsteady": (unsteady, _falling_write(directory)),
        "fixed": (fixed, _fio(directory, fixed)),
        "fixed write": (fixed_write, _fio(directory, fixed_write, "--rate=8m")),
    }
    if '"attained" : 0' not in outputs["unsteady"][1]:
        pytest.skip("this fio does not replay a timed I/O log (iolog version 3 needs fio 3.31 or later)")
    db = str(directory / "runs.db")
    ids = {}
    with ResultsStore(db, create=True) as store:
        for name, (spec, text) in outputs.items():
            output = parse_fio_output(text)
            raw = output.final_raw
            assert raw is not None
            (job,) = json.loads(raw)["jobs"]
            direction = "write" if spec.rw.writes else "read"
            figure = number(job[direction]["bw_bytes"])
            metrics = Metrics(**{f"{direction}_bw_bytes_per_s": figure})
            params = {**job_params(spec), "step": f"SEQ {direction}"}
            ids[name] = store.add_run(
                RunSetup("disk-mark", params, "/dev/md9"),
                status=RunStatus.COMPLETE,
                started_at=datetime(2026, 11, 27, 1, len(ids), tzinfo=UTC),
                ended_at=datetime(2026, 11, 27, 1, len(ids), 30, tzinfo=UTC),
                metrics=metrics,
                fio_json=raw,
            )
    return db, ids


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_the_listing_reads_each_verdict_without_loading_every_run(stored: tuple[str, dict[str, int]]) -> None:
    db, ids = stored
    with ResultsStore(db) as store:
        listed = {run.id: run for run in store.list_runs()}
    assert all(run.fio_json is None for run in listed.values())  # a listing still leaves the JSON out
    assert listed[ids["steady"]].steadiness is Steadiness.REACHED
    assert listed[ids["unsteady"]].steadiness is Steadiness.NOT_REACHED
    assert listed[ids["fixed"]].steadiness is Steadiness.NOT_JUDGED


def test_results_list_has_a_steady_column_and_its_legend(
    stored: tuple[str, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = stored
    lines = _cli(capsys, "results", "list", "--db", db).splitlines()
    assert "STEADY" in lines[0].split()
    column = lines[0].index("STEADY")
    cells = {int(line.split()[0]): line[column:].split()[0] for line in lines[1:5]}
    assert cells == {ids["steady"]: "yes", ids["unsteady"]: "NO", ids["fixed"]: "fixed", ids["fixed write"]: "fixed"}
    assert lines[-1].startswith("steady: yes = fio judged") and "fixed = a fixed-time step, not judged" in lines[-1]
    listed = json.loads(_cli(capsys, "results", "list", "--json", "--db", db))["runs"]
    states = {run["id"]: run["steady"]["state"] for run in listed}
    assert states[ids["unsteady"]] == "not reached" and states[ids["fixed"]] == "not judged"


def test_exports_say_reached_not_reached_or_not_judged_never_false(
    stored: tuple[str, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = stored
    order = [str(ids[name]) for name in ("steady", "unsteady", "fixed")]
    document = json.loads(_cli(capsys, "results", "export", *order, "--format", "json", "--db", db))
    states = [run["steady"]["state"] for run in document["runs"]]
    assert states == ["reached", "not reached", "not judged"]
    fixed = document["runs"][2]["steady"]
    assert fixed == {"state": "not judged", "criterion": None, "after_s": None, "last_window": None}
    unsteady = document["runs"][1]["steady"]
    assert unsteady["criterion"].startswith("bw_slope:1") and unsteady["after_s"] >= 5

    rows = list(csv.DictReader(io.StringIO(_cli(capsys, "results", "export", *order, "--format", "csv", "--db", db))))
    assert [row["steady"] for row in rows] == ["reached", "not reached", "not judged"]
    assert rows[2]["steady_after_s"] == "" and rows[2]["steady_criterion"] == ""

    markdown = _cli(capsys, "results", "export", *order, "--db", db)
    steady_row = next(line for line in markdown.splitlines() if line.startswith("| Steady"))
    assert "reached after" in steady_row and "not reached (" in steady_row and "not judged (fixed time)" in steady_row


def test_a_ratio_with_an_unsteady_figure_says_so(
    stored: tuple[str, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ids = stored
    steady, unsteady, fixed, written = (str(ids[name]) for name in ("steady", "unsteady", "fixed", "fixed write"))
    clean = _cli(capsys, "results", "compare", steady, fixed, "--db", db)
    assert "~" not in clean and "still moving" not in clean  # fixed time is not unsteady
    # The unsteady write beside reads has no ratio to mark, and so no footnote either.
    assert "~" not in _cli(capsys, "results", "compare", steady, unsteady, "--metric", "read_bw_bytes_per_s",
                           "--metric", "write_bw_bytes_per_s", "--db", db)  # fmt: skip
    marked = _cli(capsys, "results", "compare", written, unsteady, "--metric", "write_bw_bytes_per_s", "--db", db)
    write_row = next(line for line in marked.splitlines() if line.startswith("| Write MB/s"))
    assert write_row.rstrip(" |").endswith("~")
    assert f"#{unsteady} not steady" in marked and "not a ratio of sustained figures" in marked
    document = json.loads(_cli(capsys, "results", "compare", steady, unsteady, fixed, "--json", "--db", db))
    flags = {c["run"]: c["unsteady"] for metric in document["metrics"] for c in metric["candidates"]}
    assert flags == {int(unsteady): True, int(fixed): False}
    rows = list(csv.DictReader(io.StringIO(_cli(capsys, "results", "compare", steady, unsteady, "--format", "csv",
                                                 "--db", db))))  # fmt: skip
    assert {row["run"]: row["steady"] for row in rows} == {steady: "reached", unsteady: "not reached"}


def test_the_advisor_says_what_an_unsteady_write_means_with_its_evidence(stored: tuple[str, dict[str, int]]) -> None:
    db, ids = stored
    with ResultsStore(db) as store:
        runs = tuple(store.list_runs())
    findings = [f for f in advise(AdviceInput(runs=runs)) if f.id.startswith("unsteady")]
    assert [f.id for f in findings] == ["unsteady-write:md9"]  # the steady read and the fixed one say nothing
    (finding,) = findings
    assert f"#{ids['unsteady']} SEQ write" in finding.title
    assert finding.title.startswith("md9: writes still falling after 1")  # the log's 10 s, give or take
    assert finding.title.endswith("the drive's cache is absorbing them; the steady figure is lower")
    evidence = {e.label: e.value for e in finding.evidence}
    assert evidence["run"] == f"#{ids['unsteady']}" and evidence["step"] == "SEQ write"
    assert evidence["criterion"] == "bw_slope:1.000000%" and float(evidence["ran"]) >= 5
    assert str(evidence["last window"]).startswith("-")
    assert "upper bound" in finding.what_to_do


def test_a_deviation_has_no_direction_and_a_read_gets_its_own_word(stored: tuple[str, dict[str, int]]) -> None:
    assert _movement("bw_slope:1.000000%", "-3.5%") == "falling"
    assert _movement("bw_slope:1.000000%", "2.1%") == "rising"
    assert _movement("bw:1.000000%", "-3.5%") == "moving"
    db, ids = stored
    with ResultsStore(db) as store:
        write = next(run for run in store.list_runs() if run.id == ids["unsteady"])
    read = replace(write, params={**write.params, "rw": "read"})
    (finding,) = [f for f in advise(AdviceInput(runs=(read,))) if f.id.startswith("unsteady")]
    assert finding.id == "unsteady-read:md9" and "reads still falling" in finding.title
    assert "cache is absorbing" not in finding.title


def test_several_documents_of_one_step_are_steady_only_when_every_job_was() -> None:
    # "all members at once" stores one fio document per member, one after another.
    def document(name: str, attained: int) -> str:
        job = {"jobname": name, "read": {"runtime": 9000}, "write": {"runtime": 0},
               "steadystate": {"ss": "bw_slope:2.000000%", "attained": attained, "criterion": "1%"}}  # fmt: skip
        return json.dumps({"jobs": [job]}, indent=1)

    both = text_steady(document("together-sdb", 1) + "\n" + document("together-sdc", 1))
    one = text_steady(document("together-sdb", 1) + "\n" + document("together-sdc", 0))
    assert both is not None and both.attained and one is not None and not one.attained
    # --status-interval output names the same job again: its last report counts.
    assert (later := text_steady(document("x", 0) + "\n" + document("x", 1))) is not None and later.attained
    assert text_steady(None) is None and text_steady("not json") is None
