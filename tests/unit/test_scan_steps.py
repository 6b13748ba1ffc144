"""The scan in steps (probe.inventory.scan_in_steps): the first disks early, then what scan() returns."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdtui.errors import ProbeError
from mdtui.probe.inventory import scan, scan_in_steps

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


def test_the_first_step_has_the_first_disks_every_array_and_the_names_still_to_probe() -> None:
    whole = scan(TREE, privileged=True)
    assert len(whole.disks) > 4 and whole.arrays
    steps = list(scan_in_steps(TREE, privileged=True, first=4))
    assert len(steps) == 2
    (early, pending), (last, none_left) = steps
    assert early.disks == whole.disks[:4]
    assert pending == tuple(disk.name for disk in whole.disks[4:])
    assert early.arrays == whole.arrays
    assert (early.notes, early.udev, early.md_available, early.privileged) == (
        whole.notes, whole.udev, whole.md_available, whole.privileged,
    )  # fmt: skip
    assert (last, none_left) == (whole, ())


@pytest.mark.parametrize("first", [None, 11, 64])
def test_a_host_with_no_more_disks_than_the_first_step_is_scanned_in_one(first: int | None) -> None:
    assert list(scan_in_steps(TREE, privileged=True, first=first)) == [(scan(TREE, privileged=True), ())]


def test_a_path_that_is_no_system_root_is_refused_before_any_step(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="neither / nor a captured tree"):
        next(scan_in_steps(tmp_path, first=4))
