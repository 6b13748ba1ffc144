"""`mdtui results show` says a run in the words the app's run detail uses: yes/no, steps as "2/5 seq write 1M",
recorded disks by name and kind, never a Python repr (both print store.describe)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mdtui.cli.main import main
from mdtui.store.describe import describe_run, device_words, words
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

START = datetime(2024, 5, 2, 9, 0, tzinfo=UTC)
# Step 2 of a five-step disk-mark on a 1 GiB loop device, as `mdtui bench` records it (params from the step
# plus the session's step_index, steps and quick; the disks it ran on in the context).
LOOP_DEVICE = {"name": "loop1", "transport": "loop", "size_bytes": 1024**3, "rotational": False}
PARAMS = {"rw": "write", "bs": "1M", "step": "seq write 1M", "step_index": 2, "steps": 5, "quick": True}
CONTEXT = {"kernel": "6.1.0-18-amd64", "fio_version": "fio-3.33", "devices": [LOOP_DEVICE]}


def stored(path: Path) -> int:
    with ResultsStore(path) as store:
        return store.add_run(
            RunSetup("disk_mark", dict(PARAMS), "/dev/loop1", {}, dict(CONTEXT)),
            status=RunStatus.COMPLETE,
            started_at=START,
            ended_at=START + timedelta(seconds=10),
            metrics=Metrics(write_bw_bytes_per_s=201e6),
        )


def test_results_show_says_the_run_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    run_id = stored(db)
    assert main(["results", "show", str(run_id), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "True" not in out and "{'" not in out and "[{" not in out and "step_index" not in out
    assert "step=2/5 seq write 1M" in out and "quick=yes" in out
    assert "devices loop1 (loop, 1.0 GiB, SSD)" in out and "fio version fio-3.33" in out
    with ResultsStore(db) as store:
        assert out == describe_run(store.get_run(run_id)) + "\n"


def test_results_show_json_keeps_the_stored_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    run_id = stored(db)
    assert main(["results", "show", str(run_id), "--json", "--db", str(db)]) == 0
    (run,) = __import__("json").loads(capsys.readouterr().out)["runs"]
    assert run["params"] == PARAMS and run["context"]["devices"] == [LOOP_DEVICE]


def test_words_for_each_kind_of_value() -> None:
    assert words("quick", False) == "no"
    assert words("x", 0.5) == "0.5"
    assert words("devices", [LOOP_DEVICE, {"name": "sdb", "model": "KPM5XRUG1T92", "transport": "sas"}]) == (
        "loop1 (loop, 1.0 GiB, SSD), sdb (KPM5XRUG1T92, sas)"
    )
    assert device_words({}) == "?"
