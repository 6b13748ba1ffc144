"""`mdtui metrics`: the exposition parsed with Prometheus' own parser (prometheus_client), never by string."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from mdtui.cli.main import main
from mdtui.errors import MdtuiError
from mdtui.keep import metrics
from mdtui.keep.metrics import Family, collect, render, write_textfile
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunRecord, RunStatus

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def value(found: dict, name: str, **labels: str) -> float | None:
    hits = [v for got, v in found.get(name, []) if all(got.get(k) == w for k, w in labels.items())]
    assert len(hits) <= 1, (name, labels, hits)
    return hits[0] if hits else None


def test_real_links_reports_md1_degraded_by_one_and_nvme1n1_downgraded(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(TREES / "real-links"), "metrics"]) == 0
    found = samples(capsys.readouterr().out)
    assert value(found, "mdtui_array_degraded_members", array="md1") == 1
    assert value(found, "mdtui_array_degraded_members", array="md0") == 0
    assert value(found, "mdtui_disk_link_downgraded", disk="nvme1n1") == 1
    assert value(found, "mdtui_disk_link_downgraded", disk="nvme0n1") == 0
    assert value(found, "mdtui_disk_link_rate", disk="nvme1n1", kind="pcie") == 2.5
    assert value(found, "mdtui_disk_link_max_rate", disk="nvme1n1", kind="pcie") == 8
    assert value(found, "mdtui_array_sync_action", array="md0", action="resync") == 1
    # A captured tree has no processes: whether anyone monitors is unknown, so absent (never a false 0).
    assert "mdtui_array_monitored" not in found


@pytest.mark.parametrize("tree", sorted(p.name for p in TREES.iterdir() if p.is_dir()))
def test_every_fixture_tree_parses(tree: str) -> None:
    root = SystemRoot(TREES / tree)
    found = samples(render(collect(root, scan(root), smart=False)))
    assert found.get("mdtui_array_degraded_members") or found.get("mdtui_disk_link_rate"), tree


def test_untrusted_label_values_cannot_forge_a_sample() -> None:
    # A device string (model, a name from a tree) that tries to close the label and start a metric of its own.
    evil = 'x"} 1\nmdtui_array_degraded_members{array="md9"} 7\n\\'
    family = Family("mdtui_disk_link_downgraded", "help with \\ and\nnewline")
    family.add({"disk": evil}, 0)
    found = samples(render([family]))
    assert found == {"mdtui_disk_link_downgraded": [({"disk": evil}, 0.0)]}


def test_not_measured_is_absent_never_zero() -> None:
    family = Family("mdtui_disk_temperature_celsius", "t")
    family.add({"disk": "sda"}, None)
    family.add({"disk": "sdb"}, float("nan"))
    family.add({"disk": "sdc"}, 41)
    assert samples(render([family])) == {"mdtui_disk_temperature_celsius": [({"disk": "sdc"}, 41.0)]}
    assert render([Family("mdtui_empty", "nothing")]) == ""


def _run(run_id: int, minute: int, preset: str, bw: float, status: RunStatus = RunStatus.COMPLETE) -> RunRecord:
    return RunRecord(
        id=run_id,
        status=status,
        started_at=datetime(2026, 5, 1, 12, minute, tzinfo=UTC),
        ended_at=None,
        preset=preset,
        params={},
        target="/dev/md0",
        array={"name": "md0"},
        context={},
        metrics=Metrics(read_bw_bytes_per_s=bw),
    )


def test_the_newest_complete_run_per_array_and_preset_is_exported() -> None:
    runs = [
        _run(1, 1, "SEQ1MQ8T8", 100.0),
        _run(3, 3, "SEQ1MQ8T8", 300.0, RunStatus.FAILED),  # newer but failed: not a figure to compare
        _run(2, 2, "SEQ1MQ8T8", 200.0),
        _run(4, 4, "RND4KQ32T1", 50.0),
    ]
    root = SystemRoot(TREES / "real-links")
    found = samples(render(collect(root, scan(root), smart=False, runs=runs)))
    bench = found["mdtui_bench_newest"]
    assert value(found, "mdtui_bench_newest", preset="SEQ1MQ8T8", figure="read_bw_bytes_per_s") == 200.0
    assert value(found, "mdtui_bench_newest", preset="RND4KQ32T1", figure="read_bw_bytes_per_s") == 50.0
    assert all(labels["figure"] == "read_bw_bytes_per_s" for labels, _ in bench), "unmeasured figures written"


def test_textfile_is_replaced_by_rename_and_leaves_no_temporary(tmp_path: Path) -> None:
    old = tmp_path / "mdtui.prom"
    old.write_text("# old\n")
    reader = old.open()  # what node_exporter holds open while scraping: it must keep the whole old file
    inode = old.stat().st_ino
    target = write_textfile(tmp_path, "mdtui_x 1\n")
    assert target == old and target.read_text() == "mdtui_x 1\n"
    assert target.stat().st_ino != inode and reader.read() == "# old\n"
    assert sorted(os.listdir(tmp_path)) == ["mdtui.prom"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)
    with pytest.raises(MdtuiError, match="not a directory"):
        write_textfile(tmp_path / "missing", "x")


def test_textfile_under_root_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(TREES / "real-links"), "metrics", "--textfile", str(tmp_path)]) == 2
    assert "captured tree" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mdtui.prom").write_text("# old\n")

    def broken(src: str, dst: str, **_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(metrics.os, "rename", broken)
    with pytest.raises(MdtuiError, match="No space"):
        write_textfile(tmp_path, "new\n")
    assert (tmp_path / "mdtui.prom").read_text() == "# old\n"
    assert sorted(os.listdir(tmp_path)) == ["mdtui.prom"]


def test_a_running_sync_exports_progress_rate_eta_and_the_prediction_beside_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """node_exporter's md collector cannot say how far a sync is (prometheus/node_exporter #1085): mdtui does,
    with md's own ETA and the sync-time model's prediction and bound beside it."""
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "none.db"))
    assert main(["--root", str(TREES / "real-links"), "metrics", "--no-smart"]) == 0
    found = samples(capsys.readouterr().out)
    progress = value(found, "mdtui_array_sync_progress_ratio", array="md0", action="resync")
    assert progress is not None and 0 <= progress <= 1
    # md's sysfs: 2,139 KiB/s, 2,093,056 sectors to go.
    assert value(found, "mdtui_array_sync_eta_seconds", array="md0", action="resync") == pytest.approx(
        2093056 * 512 / (2139 * 1024)
    )
    bound = "speed_limit_max (2,000 KiB/s)"  # the tree's md caps the resync at 2,000 KiB/s
    predicted = value(found, "mdtui_array_sync_predicted_seconds", array="md0", action="resync", bound=bound)
    assert predicted == pytest.approx(1046528 * 1024 / (2000 * 1024))
    assert value(found, "mdtui_array_rebuild_predicted_seconds", array="md0", bound=bound) == predicted
    # md1 has one member left: no rebuild from it if it failed, so no figure, never a 0.
    assert value(found, "mdtui_array_rebuild_predicted_seconds", array="md1") is None
    assert value(found, "mdtui_array_sync_eta_seconds", array="md2") is None


def test_an_array_that_lost_every_member_exports_all_of_them_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A tree without md's sysfs directory for the array: the count comes from mdstat's header line alone.
    (tmp_path / "sys" / "block").mkdir(parents=True)
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "mdstat").write_text(
        "Personalities : [raid6] [raid5] [raid4]\n"
        "md126 : active raid5 super 1.2 level 5, 64k chunk, algorithm 2 [4/0] [____]\n"
        "      \n"
        "unused devices: <none>\n"
    )
    assert main(["--root", str(tmp_path), "metrics"]) == 0
    assert value(samples(capsys.readouterr().out), "mdtui_array_degraded_members", array="md126") == 4
