"""The results screens' pure helpers: filters, chunk and bar text, verdict colours, differences, file names."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from mdtui.store.compare import ConfigDifference, compare
from mdtui.store.records import Metrics, RunRecord, RunStatus
from mdtui.ui.common.render import Palette
from mdtui.ui.results.base import export_stem
from mdtui.ui.results.compare_render import bar_text, metric_table, shown_differences
from mdtui.ui.results.dialogs import device_option_text, export_path_problem, resolve_export_path
from mdtui.ui.results.render import chunk_text, display_path, filter_runs, geometry_text, parse_filter, read_write_text

MOMENT = datetime(2024, 5, 2, 9, 0, tzinfo=UTC)


def run(
    run_id: int, *, target: str = "/dev/md0", preset: str = "disk_mark", label: str = "", **extra: object
) -> RunRecord:
    fields: dict[str, object] = {
        "id": run_id,
        "status": RunStatus.COMPLETE,
        "started_at": MOMENT,
        "ended_at": None,
        "preset": preset,
        "params": {},
        "target": target,
        "array": {},
        "context": {},
        "metrics": Metrics(),
        "label": label,
    }
    fields.update(extra)
    return RunRecord(**fields)  # type: ignore[arg-type]


def test_filter_words_match_target_preset_or_label_and_fields_match_one_field() -> None:
    runs = [
        run(1, target="/dev/md0", preset="disk_mark", label="raid5 512K"),
        run(2, target="/dev/sdb", preset="offset_sweep", label="raw"),
        run(3, target="/dev/md1", preset="custom", label="md0 copy", status=RunStatus.INTERRUPTED),
        run(4, target="/dev/md1", preset="custom", array={"level": "raid10"}),
    ]
    assert [r.id for r in filter_runs(runs, "")] == [1, 2, 3, 4]
    assert [r.id for r in filter_runs(runs, "MD0")] == [1, 3]  # case-insensitive, target or label
    assert [r.id for r in filter_runs(runs, "md0 raid5")] == [1]  # every word must match
    assert [r.id for r in filter_runs(runs, "target:md0")] == [1]  # only the target
    assert [r.id for r in filter_runs(runs, "label:md0")] == [3]
    assert [r.id for r in filter_runs(runs, "preset:sweep")] == [2]
    assert [r.id for r in filter_runs(runs, "status:interr")] == [3]
    assert [r.id for r in filter_runs(runs, "level:raid10")] == [4]
    # An unknown field is an ordinary word; an empty value filters nothing.
    assert parse_filter("size:4k").words == ("size:4k",)
    assert [r.id for r in filter_runs(runs, "target:")] == [1, 2, 3, 4]


def test_filter_words_look_in_the_step_too() -> None:
    # Issue 44: the Step column ("2/5 seq write 1M") was shown but not searched.
    steps = {"step": "seq write 1M", "step_index": 2, "steps": 5}
    runs = [run(1, params=steps, label="disk_mark md0"), run(2, params={"step": "seq read 1M"}), run(3)]
    assert [r.id for r in filter_runs(runs, "seq write")] == [1]
    assert [r.id for r in filter_runs(runs, "step:2/5")] == [1]
    assert [r.id for r in filter_runs(runs, "seq")] == [1, 2]


@pytest.mark.parametrize(
    ("chunk", "text"),
    [(4096, "4K"), (512 * 1024, "512K"), (2 * 1024 * 1024, "2M"), (1536 * 1024, "1536K"), (None, ""), (0, "")],
)
def test_chunk_text_spells_chunks_as_mdadm_does(chunk: int | None, text: str) -> None:
    assert chunk_text(chunk) == text


def test_geometry_and_read_write_cells() -> None:
    assert geometry_text(run(1, array={"level": "raid5", "chunk_bytes": 524288})) == "raid5 512K"
    assert geometry_text(run(1, array={"level": "raid1"})) == "raid1"
    assert geometry_text(run(1)) == "-"
    both = run(1, metrics=Metrics(read_bw_bytes_per_s=28e6, write_bw_bytes_per_s=4211e6))
    assert read_write_text(both) == "R 28.0 W 4,211.0"
    assert read_write_text(run(1)) == "-"


def test_bar_text_fills_eighths_and_clamps() -> None:
    assert bar_text(5, 10, 10).plain == "█████     "
    # Two cells hold 16 eighths: 1/16 is one eighth, 3/16 three, 9/16 a full cell and one eighth.
    assert bar_text(1, 16, 2).plain == "▏ "
    assert bar_text(3, 16, 2).plain == "▍ "
    assert bar_text(9, 16, 2).plain == "█▏"
    assert bar_text(20, 10, 4).plain == "████"
    assert bar_text(None, 10, 4).plain == "    "
    assert bar_text(3, 0, 4).plain == "    "


def test_ratios_are_coloured_by_the_metric_direction() -> None:
    palette = Palette(good="#00ff00", error="#ff0000")
    base = run(1, metrics=Metrics(write_bw_bytes_per_s=1123e6, write_lat_mean_ns=60e6))
    faster = run(2, metrics=Metrics(write_bw_bytes_per_s=4211e6, write_lat_mean_ns=16e6))
    slower = run(3, metrics=Metrics(write_bw_bytes_per_s=985e6, write_lat_mean_ns=68e6))
    comparison = compare(base, [faster, slower])
    styles: dict[str, str] = {}
    for row in comparison.rows:
        console = Console(width=120, file=io.StringIO(), color_system="truecolor")
        for segment in console.render(metric_table(comparison, row, palette)):
            if "better" in segment.text or "worse" in segment.text:
                styles[f"{row.metric.name} {segment.text.strip()}"] = str(segment.style)
    # Higher bandwidth and lower latency are both improvements: green; the opposite red.
    assert "#00ff00" in styles["write_bw_bytes_per_s 3.75× better"]
    assert "#ff0000" in styles["write_bw_bytes_per_s 0.88× worse"]
    assert "#00ff00" in styles["write_lat_mean_ns 0.27× better"]
    assert "#ff0000" in styles["write_lat_mean_ns 1.13× worse"]


def test_member_serials_are_shown_only_when_nothing_else_differs() -> None:
    serials = ConfigDifference("array.member_serials", ("A, B", "A, C"))
    level = ConfigDifference("array.level", ("raid0", "raid5"))
    assert shown_differences([level, serials]) == [level]
    assert shown_differences([serials]) == [serials]


def test_export_names_say_what_is_in_them() -> None:
    assert export_stem("runs", [7, 3, 5]) == "mdtui-runs-3-5-7"
    assert export_stem("runs", range(1, 13)) == "mdtui-runs-1-to-12"


def test_export_paths_are_relative_to_the_export_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert resolve_export_path("out.md") == tmp_path / "data" / "mdtui" / "exports" / "out.md"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_export_path("out.md") == tmp_path / "home" / "out.md"  # not the current directory
    assert resolve_export_path("out.md", tmp_path) == tmp_path / "out.md"
    assert resolve_export_path("/elsewhere/out.md") == Path("/elsewhere/out.md")
    assert export_path_problem(tmp_path / "out.md") is None
    assert "is a directory" in (export_path_problem(tmp_path) or "")
    assert "does not exist" in (export_path_problem(tmp_path / "missing" / "out.md") or "")
    assert display_path(tmp_path / "results.db") == "results.db"
    monkeypatch.setenv("HOME", str(tmp_path.parent))
    monkeypatch.chdir("/")
    assert display_path(tmp_path / "results.db") == f"~/{tmp_path.name}/results.db"


def test_the_baseline_picker_calls_a_file_a_file_not_a_raw_device() -> None:
    # A run on a regular file (fio's target.bin in a scratch directory) next to one on a disk and one on an array.
    figure = Metrics(read_bw_bytes_per_s=500e6)
    on_file = device_option_text(run(1, target="/srv/scratch/target.bin", metrics=figure), "read_bw_bytes_per_s").plain
    on_disk = device_option_text(run(2, target="/dev/sdb", metrics=figure), "read_bw_bytes_per_s").plain
    on_array = device_option_text(
        run(3, metrics=figure, array={"level": "raid5", "chunk_bytes": 524288}), "read_bw_bytes_per_s"
    ).plain
    assert "raw device" not in on_file and "/srv/scratch/target.bin  file  " in on_file
    assert "/dev/sdb  raw device  " in on_disk
    assert "/dev/md0  raid5 512K  " in on_array
