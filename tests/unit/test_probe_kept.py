"""Tests for kernel files kept open and re-read from offset 0."""

from __future__ import annotations

import time
from pathlib import Path

from mdtui.probe.kept import KeptFile


def test_procfs_regenerates_on_every_read() -> None:
    uptime = KeptFile("/proc/uptime")
    first = uptime.read()
    time.sleep(0.05)
    second = uptime.read()
    uptime.close()
    assert first is not None and second is not None
    assert float(second.split()[0]) > float(first.split()[0])


def test_large_files_are_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_text("x" * 200_000)
    kept = KeptFile(str(path))
    text = kept.read()
    assert text is not None and len(text) == 200_000
    path.write_text("small\n")  # rewritten in place, as procfs files change
    assert kept.read() == "small\n"
    kept.close()


def test_missing_file_is_retried(tmp_path: Path) -> None:
    path = tmp_path / "later"
    kept = KeptFile(str(path), keep_open=False)
    assert kept.read() is None
    path.write_text("1\n")
    assert kept.read() == "1\n"
    kept.close()
