"""--full-speed (create, repair, scrub) and the resync screen's f: md's sync_speed_min raised to the system's
maximum, and put back to "system" (md's word for "follow /proc/sys/dev/raid/speed_limit_min")."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdtui.errors import MdtuiError
from mdtui.probe.root import SystemRoot
from mdtui.run.mdadm import set_full_resync_speed


def _tree(tmp_path: Path, speed_limit_max: str | None = "200000\n") -> SystemRoot:
    md = tmp_path / "sys" / "block" / "md3" / "md"
    md.mkdir(parents=True)
    (md / "sync_speed_min").write_text("1000 (system)\n")
    if speed_limit_max is not None:
        raid = tmp_path / "proc" / "sys" / "dev" / "raid"
        raid.mkdir(parents=True)
        (raid / "speed_limit_max").write_text(speed_limit_max)
    return SystemRoot(tmp_path)


def test_full_speed_sets_the_minimum_to_the_systems_maximum_and_back(tmp_path: Path) -> None:
    root = _tree(tmp_path, "500000\n")
    minimum = tmp_path / "sys" / "block" / "md3" / "md" / "sync_speed_min"
    assert set_full_resync_speed("/dev/md3", True, root=root) == "500000"
    assert minimum.read_text() == "500000\n"
    assert set_full_resync_speed("/dev/md3", False, root=root) == "system"
    assert minimum.read_text() == "system\n"


@pytest.mark.parametrize("limit", [None, "lots\n", "0\n", "99999999999999999999999\n"])
def test_an_unreadable_maximum_falls_back_to_mds_default(tmp_path: Path, limit: str | None) -> None:
    """md's own default maximum (200000 KiB/s) when /proc says nothing usable: never 0, never a huge number."""
    root = _tree(tmp_path, limit)
    assert set_full_resync_speed("/dev/md3", True, root=root) == "200000"


def test_an_array_without_the_file_is_one_line(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with pytest.raises(MdtuiError, match="could not set the resync speed of /dev/md9"):
        set_full_resync_speed("/dev/md9", True, root=root)
