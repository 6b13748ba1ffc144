"""Sweeps stop early once the remaining points cannot be expected to beat the best, and say so; --full-sweep
and --fixed-time run every point.

The rule is tested on figures first (each way it must not stop: one fall, two falls inside the noise band,
the best among the last two points, a point without a figure, a latency that is lower-is-better), then
through the parallelism sweep with a runner that stores runs with chosen figures, and the CLI's flags.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mdtui.advise.experiments import parallelism_sweep
from mdtui.advise.sweep_stop import SWEEP_STOP_RULE, point_figure, sweep_stop_reason
from mdtui.cli.main import build_parser
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

LABELS = ("numjobs 1", "numjobs 4", "numjobs 16", "numjobs 64", "numjobs 128")


def reason(*figures: float | None, higher_is_better: bool = True) -> str | None:
    return sweep_stop_reason(LABELS[: len(figures)], figures, higher_is_better=higher_is_better)


def test_two_falls_past_the_best_both_clear_of_the_noise_band_stop_the_sweep() -> None:
    text = reason(800, 1000, 900, 850)
    assert text is not None and text.startswith("stopped after numjobs 64: numjobs 16 and numjobs 64 each fell")
    assert "15% below the best (numjobs 4)" in text and SWEEP_STOP_RULE in text


@pytest.mark.parametrize(
    "figures",
    [
        (800, 1000, 900),  # one fall only
        (800, 1000, 970, 960),  # two falls, both inside the 5 % band
        (800, 1000, 940, 960),  # not falling twice in a row
        (800, 1000, 900, 1010),  # the best is the last point
        (800, 1000, None, 850, 800),  # a point without a figure: nothing known
        (1000, 1000),  # too few points
    ],
)
def test_the_sweep_goes_on(figures: Sequence[float | None]) -> None:
    assert reason(*figures) is None


def test_a_lower_is_better_figure_stops_when_it_rises_twice() -> None:
    assert reason(120, 100, 110, 125, higher_is_better=False) is not None  # latency rising past its best
    assert reason(120, 100, 90, 85, higher_is_better=False) is None
    assert point_figure([None, 2.0, 4.0]) == 3.0 and point_figure([None]) is None
    with pytest.raises(ValueError):
        sweep_stop_reason(["a"], [1.0, 2.0])


class FigureRunner:
    """Stores one run per sweep point with the read figure chosen for its label."""

    def __init__(self, store: ResultsStore, figures: dict[str, float]) -> None:
        self.store, self.figures, self.called = store, figures, []

    def __call__(self, preset_key: str, target: str, *, quick: bool, label: str, **options: Any) -> Sequence[int]:
        self.called.append(label)
        moment = datetime(2026, 11, 27, tzinfo=UTC)
        setup = RunSetup(preset=preset_key, target=target, label=label, params=dict(options))
        metrics = Metrics(read_bw_bytes_per_s=self.figures[label])
        return [self.store.add_run(setup, status=RunStatus.COMPLETE, started_at=moment, ended_at=moment,
                                   metrics=metrics)]  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ResultsStore]:
    with ResultsStore(tmp_path / "results.db") as opened:
        yield opened


# A device that saturates at 4 jobs and then loses to contention: 16 and 64 jobs each clearly slower.
FALLING = {"numjobs 1": 900e6, "numjobs 4": 1800e6, "numjobs 16": 1500e6, "numjobs 64": 1300e6, "numjobs 128": 2e9}


def test_the_parallelism_sweep_stops_after_two_falls_and_says_what_it_skipped(store: ResultsStore) -> None:
    runner = FigureRunner(store, FALLING)
    result = parallelism_sweep(runner, "/dev/md0", numjobs=(1, 4, 16, 64, 128), store=store)
    assert runner.called == ["numjobs 1", "numjobs 4", "numjobs 16", "numjobs 64"]
    assert result.notes[0].startswith("stopped after numjobs 64")
    assert result.notes[1] == "not run (the sweep stopped early): numjobs 128"


def test_full_sweep_and_a_sweep_without_a_store_run_every_point(store: ResultsStore) -> None:
    full = FigureRunner(store, FALLING)
    assert parallelism_sweep(full, "/dev/md0", numjobs=(1, 4, 16, 64, 128), store=store, full_sweep=True).notes == ()
    assert len(full.called) == 5
    unjudged = FigureRunner(store, FALLING)
    parallelism_sweep(unjudged, "/dev/md0", numjobs=(1, 4, 16, 64, 128))
    assert len(unjudged.called) == 5


def test_the_cli_takes_full_sweep_and_fixed_time() -> None:
    parser = build_parser()
    args = parser.parse_args(["experiment", "parallelism", "--target", "md0", "--full-sweep", "--fixed-time"])
    assert args.full_sweep and args.fixed_time
    assert not parser.parse_args(["experiment", "chunk-sweep", "sdb", "sdc", "--level", "0"]).full_sweep
    knob = parser.parse_args(["experiment", "knob", "--knob", "stripe_cache_size", "--values", "256,1024",
                              "--target", "md0", "--full-sweep"])  # fmt: skip
    assert knob.full_sweep and not knob.fixed_time
    assert parser.parse_args(["experiment", "levels", "sdb", "sdc", "--fixed-time"]).fixed_time


def test_the_guides_parallelism_sweep_stops_by_the_same_rule(store: ResultsStore) -> None:
    # The guide ran every point of its sweep whatever the figures said; it now passes its store.
    from mdtui.advise.guide import run_experiment
    from mdtui.probe.root import SystemRoot

    peaked_first = {"numjobs 1": 1800e6, "numjobs 4": 1500e6, "numjobs 16": 1300e6, "numjobs 64": 2e9}
    runner = FigureRunner(store, peaked_first)
    result = run_experiment("parallelism-sweep", runner, "/dev/md0", root=SystemRoot("/"), store=store)
    assert runner.called == ["numjobs 1", "numjobs 4", "numjobs 16"]
    assert result.notes[1] == "not run (the sweep stopped early): numjobs 64"
