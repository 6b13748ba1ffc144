"""`mdtui advise` on the captured trees: text and JSON, the workload switch, stored runs, bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.advise.findings import Finding, Severity, short_title
from mdtui.cli.main import main
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

REPO = Path(__file__).resolve().parents[2]
REAL_LINKS = str(REPO / "tests" / "fixtures" / "trees" / "real-links")


def advise_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["--root", REAL_LINKS, "advise", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_lists_findings_with_evidence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = advise_json(capsys, "--db", str(tmp_path / "none.db"))
    by_id = {f["id"]: f for f in out["findings"]}
    assert {"slow-member:md0", "link-downgraded:nvme1n1", "link-downgraded:sda", "resync:md0",
            "stripe-cache:md0"} <= set(by_id)
    slow = by_id["slow-member:md0"]
    assert slow["severity"] == "warning"
    assert slow["experiment"] == "weakest-link"
    assert {"label": "throughput lost", "value": 75.0, "unit": "%"} in slow["evidence"]
    # No workload given: the workload rules stay silent.
    assert not any(f["id"].startswith(("level-small-writes", "chunk:", "bitmap:")) for f in out["findings"])
    assert not (tmp_path / "none.db").exists()  # a missing store is read as "no runs", never created


def test_workload_and_target_add_findings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = advise_json(capsys, "--workload", "database", "--target", "md0", "--db", str(tmp_path / "none.db"))
    by_id = {f["id"]: f for f in out["findings"]}
    assert out["workload"] == "database"
    assert by_id["level-small-writes:md0"]["severity"] == "warning"
    assert by_id["resync:md0"]["severity"] == "critical"
    assert out["findings"][0]["severity"] == "critical"


def test_stored_runs_are_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    moment = datetime(2026, 5, 1, tzinfo=UTC)
    with ResultsStore(db) as store:
        run_id = store.add_run(
            RunSetup(preset="custom", target="/dev/md0", array={"level": "raid6", "sync": "resync running"}),
            status=RunStatus.COMPLETE, started_at=moment, ended_at=moment, metrics=Metrics(),
        )
    out = advise_json(capsys, "--db", str(db))
    assert f"run-during-resync:{run_id}" in {f["id"] for f in out["findings"]}


def test_text_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--root", REAL_LINKS, "advise", "--db", str(tmp_path / "none.db")]) == 0
    text = capsys.readouterr().out
    assert "⚠ WARNING: nvme2n1, nvme3n1 limit md0 to at most 1,000 MB/s of sequential reads" in text
    assert "  why: A stripe runs at its slowest member × N (docs/findings.md, finding 1:" in text
    assert "  experiment: Find the weakest link" in text


def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--root", str(tmp_path), "advise"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mdtui: ") and "Traceback" not in err
    assert main(["--root", REAL_LINKS, "advise", "--samples", "-1"]) == 2
    assert "--samples" in capsys.readouterr().err


def test_text_gives_each_explanation_once_and_json_every_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The captured tree's two downgraded links share one why: the text gives it in full for the first and
    points back to it for the second (a big host's dozens of them read as a list, not a wall); JSON keeps it."""
    assert main(["--root", REAL_LINKS, "advise", "--db", str(tmp_path / "none.db")]) == 0
    blocks = capsys.readouterr().out.split("\n\n")
    findings = advise_json(capsys, "--db", str(tmp_path / "none.db"))["findings"]
    assert len(blocks) == len(findings)
    seen: dict[str, str] = {}
    pointers = 0
    for block, finding in zip(blocks, findings, strict=True):
        why = next(line for line in block.splitlines() if line.startswith("  why: "))
        title = short_title(Finding(finding["id"], Severity.INFO, finding["title"], (), "", ""))
        first = seen.setdefault(finding["why"], title)
        if first == title:
            assert why == f"  why: {finding['why']}"
        else:
            # The first finding by what the admin read (its title), never by an internal id.
            assert why == f'  why: as for "{first}" above' and ":" not in first.split()[0], why
            pointers += 1
    assert pointers >= 1, "the captured tree has findings sharing an explanation"
    assert len({f["why"] for f in findings}) < len(findings)
