"""Scrub history (keep/scrub_history.py): every check/repair pass mdtui starts or sees finish is kept (start,
length, mismatch_cnt, level), rows are checked when read back, and the trend and meaning of the counts."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.keep.schedule import LastScrub, parse_journal, passes_in_log
from mdtui.keep.scrub_history import HISTORY_FILE, ScrubHistory, ScrubPass, mismatch_meaning, observe, trend
from mdtui.model.array import MdArray, SyncStatus
from mdtui.probe.root import SystemRoot

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
MD = "sys/devices/virtual/block/md1/md"
UUID = "d4d41c85-895e-5776-7178-204735012576"
MD1 = MdArray("md1", "active", "raid1", uuid=UUID)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    copy = tmp_path / "tree"
    shutil.copytree(TREE, copy, symlinks=True)
    return copy


def when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def test_a_pass_mdtui_starts_and_follows_is_one_row(tmp_path: Path) -> None:
    history = ScrubHistory(tmp_path / "state")
    opened = history.record_start(MD1, "check", 1000.0)
    assert history.passes(MD1) == [opened]  # open while it runs
    history.record_end(opened, 1060.0, 128)
    [done] = history.passes(MD1)
    assert (done.started, done.seconds, done.mismatch_sectors, done.level, done.source) == (
        1000.0,
        60.0,
        128,
        "raid1",
        "mdtui",
    )
    assert oct(os.stat(tmp_path / "state" / HISTORY_FILE).st_mode & 0o777) == "0o600"


def test_two_checks_are_two_rows_with_their_trend(tmp_path: Path) -> None:
    history = ScrubHistory(tmp_path / "state")
    for start, count in ((1000.0, 0), (5000.0, 64)):
        history.record_end(history.record_start(MD1, "check", start), start + 30, count)
    passes = history.passes(MD1)
    assert [p.mismatch_sectors for p in passes] == [0, 64]
    assert trend(passes) == "rising: 0 → 64 sectors"
    assert history.passes(MdArray("md7", "active", "raid1", uuid="00000000-0000-0000-0000-000000000009")) == []


@pytest.mark.parametrize(
    "line",
    [
        '{"array": "../../etc", "action": "check", "source": "mdtui"}',
        '{"array": "md0", "action": "rm -rf", "source": "mdtui"}',
        '{"array": "md0", "action": "check", "source": "mdtui", "mismatch_sectors": -1}',
        '{"array": "md0", "action": "check", "source": "mdtui", "started": 1e300}',
        '{"array": "md0", "action": "check", "source": "mdtui", "started": 10, "ended": 5}',
        '{"array": "md0", "action": "check", "source": "mdtui", "level": "raid0"}',
        '{"array": "md0", "action": "check", "source": "mdtui", "extra": 1}',
        '{"array": "md0", "action": "check", "source": "forged", "uuid": "x"}',
        "not json at all",
    ],
)
def test_a_bad_row_is_skipped_and_the_good_ones_kept(tmp_path: Path, line: str) -> None:
    history = ScrubHistory(tmp_path / "state")
    history.record_end(history.record_start(MD1, "check", 1000.0), 1010.0, 0)
    with open(tmp_path / "state" / HISTORY_FILE, "a") as handle:
        handle.write(line + "\n")
    assert [p.array for p in history.rows()] == ["md1", "md1"]


def test_a_history_file_that_is_a_link_is_not_read_nor_written(tmp_path: Path) -> None:
    """Another user (or a mistake) planting a link: the history is never read or appended through it."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_text(json.dumps({"array": "md1", "action": "check", "source": "mdtui"}) + "\n")
    (state / HISTORY_FILE).symlink_to(target)
    history = ScrubHistory(state)
    assert history.rows() == []
    history.record_start(MD1, "check", 1000.0)
    assert target.read_text().count("\n") == 1  # nothing appended through the link


def test_a_pass_left_open_is_closed_from_the_kernel_log_with_mds_count(tree: Path, tmp_path: Path) -> None:
    (tree / MD / "last_sync_action").write_text("check\n")
    (tree / MD / "mismatch_cnt").write_text("256\n")
    history = ScrubHistory(tmp_path / "state")
    history.record_start(MD1, "check", 1000.0)  # started with --no-follow, mdtui gone since
    journal = "1000.2 host kernel: md: data-check of RAID array md1\n1042.7 host kernel: md: md1: data-check done.\n"
    observe(SystemRoot(str(tree)), [MD1], history, passes_in_log(parse_journal(journal)), now=9000.0)
    [done] = history.passes(MD1)
    assert (done.seconds, done.mismatch_sectors, done.source) == (pytest.approx(42.7), 256, "kernel log")


def test_a_pass_left_open_without_a_log_is_closed_when_seen_ended(tree: Path, tmp_path: Path) -> None:
    (tree / MD / "last_sync_action").write_text("check\n")
    history = ScrubHistory(tmp_path / "state")
    history.record_start(MD1, "check", 1000.0)
    observe(SystemRoot(str(tree)), [MD1], history, None, now=2000.0)
    [done] = history.passes(MD1)
    assert (done.ended, done.source) == (2000.0, "seen ended")


def test_a_pass_still_running_stays_open(tree: Path, tmp_path: Path) -> None:
    history = ScrubHistory(tmp_path / "state")
    history.record_start(MD1, "check", 1000.0)
    running = MdArray("md1", "active", "raid1", uuid=UUID, sync=SyncStatus("check"))
    observe(SystemRoot(str(tree)), [running], history, None, now=2000.0)
    assert history.passes(MD1)[0].ended is None


def test_passes_mdtui_never_saw_are_taken_from_the_kernel_log_once(tree: Path, tmp_path: Path) -> None:
    (tree / MD / "last_sync_action").write_text("check\n")
    (tree / MD / "mismatch_cnt").write_text("8\n")
    history = ScrubHistory(tmp_path / "state")
    logged = [
        LastScrub("md1", "check", when(100.0), when(160.0), "done"),
        LastScrub("md1", "check", when(900.0), when(950.0), "done"),
        LastScrub("md1", "check", when(990.0), None, None),  # no end in the log: not a finished pass
    ]
    for _ in range(2):  # a second look adds nothing
        observe(SystemRoot(str(tree)), [MD1], history, logged, now=2000.0)
    passes = history.passes(MD1)
    # md's count belongs to the pass it ran last; the older one's count is gone.
    assert [(p.started, p.seconds, p.mismatch_sectors) for p in passes] == [(100.0, 60.0, None), (900.0, 50.0, 8)]


def test_what_a_count_means_depends_on_the_level() -> None:
    assert "swap" in mismatch_meaning("raid1", 128) and "swap" in mismatch_meaning("raid10", 128)
    assert "parity" in mismatch_meaning("raid5", 8) and "write hole" in mismatch_meaning("raid6", 8)
    assert mismatch_meaning("raid5", 0) == "every copy and every parity block agreed"
    assert "not counted" in mismatch_meaning("raid1", None)


def test_the_trend_of_the_counts() -> None:
    def row(count: int | None) -> ScrubPass:
        return ScrubPass("md1", None, "raid1", "check", 1.0, 2.0, count, "mdtui")

    assert trend([]) == "no mismatch count kept yet"
    assert trend([row(0), row(0), row(None)]) == "no mismatches in 2 passes"
    assert trend([row(5)]) == "5 sectors mismatched in the one pass kept"
    assert trend([row(9), row(5)]) == "falling: 9 → 5 sectors"
    assert trend([row(5), row(5)]) == "steady: 5 → 5 sectors"


def test_a_scrub_started_by_either_front_end_opens_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI recorded the start of a scrub and the app did not (its passes came back only from the kernel log):
    begin_scrub starts the pass and opens the row for both."""
    from mdtui.keep import scrub
    from mdtui.keep.scrub_history import begin_scrub

    started: list[str] = []
    monkeypatch.setattr(scrub, "start_scrub", lambda plan, **_: started.append(plan.action))
    history = ScrubHistory(tmp_path)
    opened = begin_scrub(scrub.ScrubPlan("md1", "check", "/sys/block/md1/md/sync_action"), MD1, history)
    assert started == ["check"] and opened.ended is None and opened.source == "mdtui"
    assert [row.action for row in history.rows()] == ["check"]
