"""Snapshot of the inventory's lifecycle line for a kept array at 80x24: the captured tree with what a kept Debian
host adds (its mdadm.conf, an initramfs built after it, a running monitor mailing root, a finished check), so
the line shows its ticks and its one gap (no metrics file) rather than the tree's question marks."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from mdtui.model.inventory import Inventory
from mdtui.ui.app import MdtuiApp

from .conftest import THEME_DIRS, settle

SnapCompare = Callable[..., bool]
RELEASE = "6.1.0-28-amd64"


@pytest.fixture
def kept_app(tree_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MdtuiApp:
    host = tmp_path / "kept-host"
    shutil.copytree(tree_root, host, symlinks=True)
    md2 = host / "sys/devices/virtual/block/md2/md"
    uuid = (md2 / "uuid").read_text().strip()
    (host / "etc/mdadm").mkdir(parents=True)
    (host / "etc/os-release").write_text("ID=debian\n")
    conf = host / "etc/mdadm/mdadm.conf"
    conf.write_text(f"HOMEHOST <system>\nMAILADDR root\nARRAY /dev/md2 metadata=1.2 UUID={uuid}\n")
    (host / "proc/sys/kernel").mkdir(parents=True)
    (host / "proc/sys/kernel/osrelease").write_text(RELEASE + "\n")
    (host / "proc/812").mkdir()
    (host / "proc/812/cmdline").write_bytes(b"/sbin/mdadm\x00--monitor\x00--scan\x00")
    (host / "proc/812/status").write_text("Name:\tmdadm\nUid:\t0\t0\t0\t0\n")  # root's own monitor
    (host / "proc/812/exe").symlink_to("/usr/sbin/mdadm")
    (host / "usr/sbin").mkdir(parents=True)
    (host / "usr/sbin/sendmail").write_text("")
    (host / "boot").mkdir()
    image = host / f"boot/initrd.img-{RELEASE}"
    image.write_bytes(b"\x00")
    built = conf.stat().st_mtime + 60  # update-initramfs ran after mdadm.conf was written
    os.utime(image, (built, built))
    (md2 / "last_sync_action").write_text("check\n")
    (md2 / "mismatch_cnt").write_text("0\n")
    (host / "var/lib/prometheus/node-exporter").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)  # the header names the root relatively, as the other snapshots do
    return MdtuiApp("kept-host", privileged=True, theme_dirs=THEME_DIRS)


def test_kept_array_lifecycle_line_80x24(
    snap_compare: SnapCompare, kept_app: MdtuiApp, tree_inventory: Inventory
) -> None:
    index = [a.name for a in tree_inventory.arrays].index("md2")

    async def select_md2(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("tab", *["down"] * index)
        await pilot.pause()

    assert snap_compare(kept_app, terminal_size=(80, 24), run_before=select_md2)
