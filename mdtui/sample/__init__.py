"""Periodic sampler: kernel counters become rates in immutable snapshots."""

from mdtui.sample.export import to_json
from mdtui.sample.sampler import (
    DEFAULT_INTERVAL_S,
    MIN_INTERVAL_S,
    History,
    SampleIntervalError,
    Sampler,
)

__all__ = ["DEFAULT_INTERVAL_S", "MIN_INTERVAL_S", "History", "SampleIntervalError", "Sampler", "to_json"]
