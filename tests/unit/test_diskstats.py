"""Tests for the /proc/diskstats and /sys/block/<dev>/stat parsers, on all three field layouts."""

from __future__ import annotations

from pathlib import Path

from mdtui.probe.diskstats import (
    DISKSTATS,
    DiskCounters,
    parse_block_stat,
    parse_diskstats,
    parse_diskstats_line,
    read_block_stat,
    read_block_stats,
)
from mdtui.probe.root import SystemRoot

# tests/fixtures/procfs holds the Prometheus procfs test data (github.com/prometheus/procfs,
# testdata/fixtures.ttar, commit 3c943fd, Apache License 2.0); its diskstats mixes 14-field (sda),
# 18-field (sdb, Linux 4.18+ discards) and 20-field (sdc, Linux 5.5+ flushes) lines.


def test_fixture_has_every_field_layout(procfs_testdata: Path) -> None:
    text = SystemRoot(procfs_testdata).read_table(DISKSTATS)
    assert text is not None
    devices = parse_diskstats(text)
    assert devices is not None
    assert len(devices) == 52
    sda = devices["sda"]
    assert sda == DiskCounters(
        "sda", 8, 0, 25354637, 34367663, 1003346126, 18492372, 28444756, 11134226, 505697032, 63877960, 0,
        9653880, 82621804,
    )
    assert sda.discards_completed is None and sda.flushes_completed is None
    assert sda.read_bytes == 1003346126 * 512

    sdb = devices["sdb"]
    assert (sdb.io_ms, sdb.weighted_io_ms) == (60730, 67070)
    assert (sdb.discards_completed, sdb.discards_merged, sdb.sectors_discarded, sdb.discard_ms) == (
        68851, 0, 1925173784, 11130,
    )
    assert sdb.flushes_completed is None

    sdc = devices["sdc"]
    assert (sdc.flushes_completed, sdc.flush_ms) == (127, 182)
    assert devices["nvme0n1p2"].sectors_written == 39451632
    assert devices["dm-0"].weighted_io_ms == 1206301256


def test_names_filter_skips_other_lines(procfs_testdata: Path) -> None:
    text = (procfs_testdata / "proc" / "diskstats").read_text()
    devices = parse_diskstats(text, {"sda", "vda", "missing"})
    assert sorted(devices) == ["sda", "vda"]


def test_short_and_garbled_lines_are_ignored() -> None:
    text = "   8 1 sda1 1 2 3 4\n\n   8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n 259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11\n"
    assert list(parse_diskstats(text)) == ["nvme0n1"]
    assert parse_diskstats_line("") is None


def test_longer_future_lines_keep_the_known_fields() -> None:
    counters = parse_diskstats_line("8 0 sda " + " ".join(str(n) for n in range(1, 21)))
    assert counters is not None
    assert counters.flush_ms == 17


def test_block_stat_layouts() -> None:
    eleven = parse_block_stat("sda", "  100 0 800 10 50 0 400 5 0 12 15\n", 8, 0)
    assert eleven is not None and eleven.sectors_read == 800 and eleven.discards_completed is None
    fifteen = parse_block_stat("sda", "100 0 800 10 50 0 400 5 0 12 15 3 0 64 1")
    assert fifteen is not None and fifteen.sectors_discarded == 64 and fifteen.flushes_completed is None
    seventeen = parse_block_stat("sda", "100 0 800 10 50 0 400 5 0 12 15 3 0 64 1 9 2")
    assert seventeen is not None and (seventeen.flushes_completed, seventeen.flush_ms) == (9, 2)
    assert parse_block_stat("sda", "1 2 3") is None


def test_sysfs_stat_files(tmp_path: Path) -> None:
    block = tmp_path / "sys" / "block"
    for name, dev in (("sda", "8:0"), ("md0", "9:0")):
        (block / name).mkdir(parents=True)
        (block / name / "stat").write_text("100 0 800 10 50 0 400 5 0 12 15\n")
        (block / name / "dev").write_text(f"{dev}\n")
    (block / "sdb").mkdir()  # no stat file: skipped, not an error
    root = SystemRoot(tmp_path)
    md0 = read_block_stat(root, "md0")
    assert md0 is not None and (md0.major, md0.minor) == (9, 0)
    assert sorted(read_block_stats(root)) == ["md0", "sda"]
    assert list(read_block_stats(root, {"sda"})) == ["sda"]
    assert root.read_table(DISKSTATS) is None  # the sampler then reads /sys/block/*/stat
