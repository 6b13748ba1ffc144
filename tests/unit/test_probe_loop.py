"""A loop disk's backing file: read from sysfs, cleaned (any user names the file), "(deleted)" kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mdtui.model.disk import Disk, Transport
from mdtui.probe.disks import DiskProber
from mdtui.probe.root import SystemRoot

LAB = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "lab-standard"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(LAB, root, symlinks=True)
    return root


def probe(root: Path, name: str) -> Disk:
    return DiskProber(SystemRoot(root), privileged=True).probe(name)


def backing(root: Path, text: str) -> None:
    (root / "sys/block/loop0/loop/backing_file").write_text(text)


def test_the_lab_loop_disk_names_its_file() -> None:
    # The lab's loop0 was set up on /tmp/loop0.img.
    assert probe(LAB, "loop0").backing_file == "/tmp/loop0.img"


def test_a_removed_file_keeps_the_kernels_deleted_mark(tree: Path) -> None:
    # losetup on a file, then rm: the kernel's d_path appends " (deleted)".
    backing(tree, "/srv/images/disk1.img (deleted)\n")
    assert probe(tree, "loop0").backing_file == "/srv/images/disk1.img (deleted)"


def test_control_characters_in_the_file_name_are_not_passed_to_the_terminal(tree: Path) -> None:
    # A file name is any user's choice: an escape sequence or a line break in it is shown, never obeyed.
    backing(tree, "/home/eve/\x1b]0;owned\x07x\nfake line.img\n")
    shown = probe(tree, "loop0").backing_file
    assert shown is not None
    assert "\x1b" not in shown and "\x07" not in shown and "\n" not in shown
    assert shown.startswith("/home/eve/") and shown.endswith("fake line.img")


def test_only_loop_disks_have_a_backing_file() -> None:
    disk = probe(LAB, "nvme0n1")
    assert disk.transport is Transport.NVME and disk.backing_file is None


def test_the_model_cleans_a_backing_file_given_directly() -> None:
    disk = Disk(name="loop9", dev_path="/dev/loop9", transport=Transport.LOOP, backing_file="/a\tb\x1b[2J")
    assert disk.backing_file is not None and "\x1b" not in disk.backing_file and "\t" not in disk.backing_file
