"""The array's detail and the watch dashboard with the sync-time model beside md's figures (issue 42): the running
pass's prediction and bound, a rebuild if a member fails now, a check, the kept scrubs and their meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdtui.bench.sync_forecast import forecast_arrays
from mdtui.keep.scrub_history import ScrubPass
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.render import Palette
from mdtui.ui.inventory.array_readings import keep_rows
from mdtui.ui.watch.render import summary

from .conftest import plain

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


def test_the_detail_shows_the_forecast_the_rebuild_the_check_and_the_scrubs() -> None:
    inventory = scan(SystemRoot(str(TREE)))
    forecasts = forecast_arrays(SystemRoot(str(TREE)), inventory, [])
    md0 = inventory.array("md0")
    assert md0 is not None
    history = [ScrubPass("md0", md0.uuid, "raid6", "check", 1000.0, 1500.0, 0, "mdtui")]
    rows = {label: text for label, text, _ in keep_rows(str(TREE), md0, None, forecasts["md0"], history)}
    # The tree's md0 resyncs held by its 2,000 KiB/s speed_limit_max: 1,046,528 KiB at 2,000 KiB/s.
    assert rows["Forecast"] == "predicted 8m43s (8m43s left) · bound: speed_limit_max (2,000 KiB/s)"
    assert rows["Rebuild"].startswith("if a member fails now: about 8.7 min idle (bound: speed_limit_max")
    assert rows["Check"].startswith("about 8.7 min idle")
    assert rows["Scrubs"].startswith("1 kept, no mismatches in 1 pass; mismatch_cnt: ")


@pytest.mark.parametrize("width", [80, 200])
def test_the_dashboard_puts_the_prediction_under_the_sync_bar(width: int) -> None:
    from mdtui.sample.dashboard import TargetView
    from mdtui.sample.series import Series

    inventory = scan(SystemRoot(str(TREE)))
    md0 = inventory.array("md0")
    view = TargetView("md0", md0, None, (), None, None, None, None, (), Series())
    text = plain(summary(view, Palette(), forecast="predicted 8m43s · bound: speed_limit_max (2,000 KiB/s)"), width)
    lines = text.splitlines()
    assert "resync" in lines[1] and lines[2].strip().startswith("predicted 8m43s")


def test_the_dashboard_marks_a_degraded_array_by_sign_and_weight_not_colour_alone() -> None:
    """Issue 44: under NO_COLOR a degraded array's red state read as the dimmest text; the watch's top line marks
    it as the inventory does (✗, bold), so its state never rests on colour."""
    from mdtui.sample.dashboard import Series, TargetView

    md1 = scan(SystemRoot(str(TREE))).array("md1")
    assert md1 is not None and md1.degraded
    line = summary(TargetView("md1", md1, None, (), None, None, None, None, (), Series()), Palette())
    marked = next(span for span in line.spans if "degraded" in line.plain[span.start : span.end])
    assert line.plain[marked.start :].startswith("✗ ") and "bold" in str(marked.style)
