"""The app's results table and compare mark a figure that was still moving at its step's ceiling (and only it)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from mdtui.model.job import SteadyOutcome
from mdtui.store.compare import compare
from mdtui.store.records import Metrics, RunRecord, RunStatus
from mdtui.ui.common.render import Palette
from mdtui.ui.results.compare_render import comparison_renderable
from mdtui.ui.results.render import history_cells, run_summary

PALETTE = Palette(good="#00ff00", error="#ff0000")


def _run(run_id: int, steady: SteadyOutcome | None, write: float) -> RunRecord:
    return RunRecord(
        id=run_id, status=RunStatus.COMPLETE, started_at=datetime(2026, 11, 27, 1, run_id, tzinfo=UTC),
        ended_at=None, preset="disk-mark", params={"rw": "write"}, target="/dev/md0", array={}, context={},
        metrics=Metrics(write_bw_bytes_per_s=write), listed_steady=steady,
    )  # fmt: skip


# A write step that reached its 120 s ceiling still falling, one judged steady, one run for a fixed time.
UNSTEADY = _run(3, SteadyOutcome(False, "bw_slope:1.000000%", "-4.1%", 120.0), 900e6)
STEADY = _run(2, SteadyOutcome(True, "bw_slope:1.000000%", "0.3%", 41.0), 450e6)
FIXED = _run(1, None, 880e6)


def _text(renderable: object) -> str:
    console = Console(width=120, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_only_the_unsteady_figure_is_marked_in_the_history_table() -> None:
    cells = {run.id: history_cells(run, PALETTE, marked=False, baseline=False) for run in (UNSTEADY, STEADY, FIXED)}
    assert cells[3]["write"].plain == "900.0~" and cells[3]["rw"].plain == "W 900.0~"
    assert cells[3]["read"].plain == "-"  # nothing measured: nothing to mark
    assert cells[2]["write"].plain == "450.0" and cells[1]["write"].plain == "880.0"  # fixed time is not unsteady
    assert "not steady: not reached (120 s ceiling)" in run_summary(UNSTEADY, PALETTE).plain
    assert "steady" not in run_summary(FIXED, PALETTE).plain


def test_a_compare_marks_ratios_with_an_unsteady_figure_and_says_why() -> None:
    marked = _text(comparison_renderable(compare(STEADY, [UNSTEADY, FIXED]), 0, PALETTE))
    assert "2.00× better ~" in marked and "1.96× better ~" not in marked and "1.96× better" in marked
    assert "#3 not steady" in marked and "not a ratio of sustained figures" in marked
    clean = _text(comparison_renderable(compare(STEADY, [FIXED]), 0, PALETTE))
    assert "~" not in clean and "sustained" not in clean
