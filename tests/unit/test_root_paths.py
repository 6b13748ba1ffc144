"""SystemRoot reads a system path at the file path() names, whether the root is "/", relative or absolute."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mdtui.probe.root import SystemRoot

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


@pytest.mark.parametrize("root", ["/", "//", ".", "tree", "tree/", "./tree", "/abs/tree", "/abs/tree/"])
@pytest.mark.parametrize("absolute", ["/sys/block/sda/size", "sys/block", "/proc/mdstat", "/"])
def test_a_read_goes_to_the_file_path_names(root: str, absolute: str) -> None:
    system = SystemRoot(root)
    assert os.path.realpath(system._file(absolute)) == os.path.realpath(system.path(absolute))


def test_reads_below_a_relative_root_find_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(TREE.parent)
    system = SystemRoot(TREE.name)
    assert system.read_table("/proc/mdstat") == (TREE / "proc" / "mdstat").read_text()
    assert system.listdir("/sys/block") == sorted(os.listdir(TREE / "sys" / "block"))
    name = system.listdir("/sys/block")[0]
    assert system.read_text(f"/sys/block/{name}/size") == (TREE / "sys" / "block" / name / "size").read_text().strip()
