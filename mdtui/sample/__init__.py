"""Periodic sampler: kernel counters become rates in immutable snapshots."""
