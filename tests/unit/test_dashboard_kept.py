"""The dashboard's kept per-snapshot figures (DiskTotals, CoreFrequencies) give what working them out afresh gives.

The watch screen keeps each snapshot's figures and looks a window of them up every tick (issue 17, big
hosts); these tests slide windows over histories whose devices and cores change, and hold every series
equal to the one made without anything kept.
"""

from __future__ import annotations

import dataclasses
import gc
import random
from itertools import pairwise

from mdtui.model.snapshot import CoreState, CpuState, DeviceRates, Snapshot
from mdtui.sample.dashboard import CoreFrequencies, build_view, frequency_series
from mdtui.sample.series import ALL_DISKS, DiskTotals, PastSnapshot, past, target_series


def _rates(name: str, rng: random.Random) -> DeviceRates:
    unknown = rng.random() < 0.1  # now and then a tick without a rate: None, never 0
    return DeviceRates(
        name,
        read_bytes_per_s=None if unknown else rng.uniform(0, 5e8),
        write_bytes_per_s=rng.uniform(0, 5e8),
        read_iops=None if unknown else rng.uniform(0, 1e5),
        write_iops=rng.uniform(0, 1e5),
    )


def _history(ticks: int, seed: int) -> list[Snapshot]:
    rng = random.Random(seed)
    history = []
    for tick in range(ticks):
        names = ["md0", "sda", "sdb", "sdc"] + (["sdd"] if tick % 7 < 3 else [])  # a disk comes and goes
        devices = tuple(_rates(name, rng) for name in names)
        count = 4 if tick < ticks // 2 else 12  # cores come online: per-core lines, then the spread
        cores = tuple(
            CoreState(cpu, freq_mhz=None if (cpu == 2 and tick % 5 == 0) else rng.uniform(800, 4200))
            for cpu in range(count)
        )
        cpu = CpuState(tick % 11 != 4, cores, 20.0, 5.0)  # a tick without cpufreq now and then
        history.append(Snapshot(1000.0 + tick + rng.uniform(-0.01, 0.01), 1.0, devices, cpu, (), ()))
    return history


def test_kept_series_equal_fresh_ones_as_the_window_slides() -> None:
    for seed in range(3):
        history = _history(60, seed)
        totals, cores = DiskTotals(), CoreFrequencies()
        for end in range(1, len(history) + 1):
            shown = tuple(history[max(0, end - 25) : end])  # the sampler keeps a bounded history
            disks = frozenset(d.name for d in shown[-1].devices if d.name.startswith("sd"))
            for target in ("md0", ALL_DISKS, "sdd"):
                kept = target_series(shown, target, disks, 20.0, totals)
                assert kept == target_series(shown, target, disks, 20.0), (seed, end, target)
            # An equal set of disks that is another object: the kept figures are checked by value.
            assert target_series(shown, ALL_DISKS, frozenset(disks), 20.0, totals) == target_series(
                shown, ALL_DISKS, disks, 20.0
            )
            assert build_view(shown, "md0", disks, 20.0, totals) == build_view(shown, "md0", disks, 20.0)
            for max_lines in (8, 3):
                fresh = frequency_series(shown, 20.0, max_lines)
                assert frequency_series(shown, 20.0, max_lines, cores) == fresh, (seed, end, max_lines)


def test_snapshots_with_the_same_cores_share_one_set_of_them() -> None:
    history = _history(10, 7)
    cores = CoreFrequencies()
    entries = cores.entries(history)
    assert [entry[0] for entry in entries] == history
    pairs = list(pairwise(entries))
    same = [(a[3], b[3]) for a, b in pairs if a[3] == b[3]]
    assert same and all(a is b for a, b in same)  # while the cores stay the same, one set of them
    assert any(a[3] != b[3] for a, b in pairs)  # and the history does change them
    assert cores.entries(history)[3] is entries[3]  # kept, not worked out again


def test_a_window_of_past_snapshots_draws_what_the_full_ones_draw() -> None:
    """The screen keeps the ticks before the latest as PastSnapshots: every series and view must be the same."""
    for seed in range(3):
        history = _history(60, seed)
        totals, cores = DiskTotals(), CoreFrequencies()
        chained: list[PastSnapshot] = []  # as the screen keeps them: each past() given the one before
        for snapshot in history:
            chained.append(past(snapshot, chained[-1] if chained else None))
        for end in range(1, len(history) + 1):
            full = tuple(history[max(0, end - 25) : end])
            slim = (*chained[max(0, end - 25) : end - 1], full[-1])
            assert all(isinstance(snapshot, PastSnapshot) for snapshot in slim[:-1])
            disks = frozenset(d.name for d in full[-1].devices if d.name.startswith("sd"))
            fewer = frozenset(sorted(disks)[:2])  # a disk set that changed since: the past totals follow it
            for target in ("md0", ALL_DISKS, "sdd", "gone"):
                for chosen in (disks, fewer):
                    fresh = target_series(full, target, chosen, 20.0)
                    assert target_series(slim, target, chosen, 20.0) == fresh, (seed, end, target)
                    assert target_series(slim, target, chosen, 20.0, totals) == fresh, (seed, end, target)
            assert build_view(slim, "md0", disks, 20.0, totals) == build_view(full, "md0", disks, 20.0)
            assert build_view(slim, ALL_DISKS, disks, 20.0, totals) == build_view(full, ALL_DISKS, disks, 20.0)
            assert frequency_series(slim, 20.0, cores=cores) == frequency_series(full, 20.0)


def test_a_past_snapshot_keeps_only_numbers_besides_its_cpu_state() -> None:
    snapshot = _history(3, 1)[-1]
    kept = past(snapshot)
    assert past(kept) is kept and kept.devices == () and kept.arrays == () and kept.cpu is snapshot.cpu
    assert list(kept.names) == [device.name for device in snapshot.devices]
    assert kept.figures == tuple(
        tuple(getattr(device, figure) for device in snapshot.devices)
        for figure in ("read_bytes_per_s", "write_bytes_per_s", "read_iops", "write_iops")
    )
    # Tuples of names and numbers: the collector stops walking them once it has passed over them, a
    # level of nesting a pass at worst (each figure's tuple, then the tuple of them).
    for _ in range(2):
        gc.collect()
    assert not gc.is_tracked(kept.names) and not gc.is_tracked(kept.figures)
    assert not any(gc.is_tracked(column) for column in kept.figures)


def test_past_snapshots_of_the_same_devices_share_one_names_tuple() -> None:
    history = _history(4, 2)
    first = past(history[0])
    second = past(history[1], first)
    assert second.names is first.names and second.names == tuple(d.name for d in history[1].devices)
    # Other devices: a names tuple of their own.
    fewer = dataclasses.replace(history[2], devices=history[2].devices[1:])
    assert past(fewer, second).names == tuple(d.name for d in fewer.devices)
