"""The sync boost (tune/boost.py): md's sync_speed_min and sync_speed_max raised together through the knob journal,
its cost said first, and put back when the pass ends, when following stops (SIGTERM), and after a SIGKILL at the
next start. Replaces --full-speed, which raised only the minimum and never put it back."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
from children import killed_when_ready

from mdtui.cli.keep import follow_pass
from mdtui.errors import MdtuiError
from mdtui.model.array import MdArray
from mdtui.plan.figures import MemberFigures
from mdtui.plan.levels import RAID5
from mdtui.plan.sync_inputs import SyncMember
from mdtui.plan.sync_time import RECOVER, sync_time
from mdtui.probe.arrays import read_arrays
from mdtui.probe.root import SystemRoot
from mdtui.tune.boost import UNKNOWN_MEMBERS_KIB_S, SyncBoost, plan_boost
from mdtui.tune.journal import load_journals, recover_dead
from mdtui.tune.read import read_sync_limits

REPO = Path(__file__).resolve().parents[2]
TREE = REPO / "tests" / "fixtures" / "trees" / "real-links"
MD = "sys/devices/virtual/block/md0/md"  # raid6, resyncing, sync_speed_min/max "1000/2000 (system)"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    copy = tmp_path / "tree"
    shutil.copytree(TREE, copy, symlinks=True)
    return copy


def md0(root: SystemRoot) -> MdArray:
    return next(a for a in read_arrays(root) if a.name == "md0")


def knobs(tree: Path) -> tuple[str, str]:
    return ((tree / MD / "sync_speed_min").read_text().strip(), (tree / MD / "sync_speed_max").read_text().strip())


def member(name: str, mb: float) -> SyncMember:
    return SyncMember(name, MemberFigures(seq_read_bytes_per_s=mb * 1e6, seq_write_bytes_per_s=mb * 1e6))


def test_the_boost_reaches_what_the_members_allow_and_says_the_cost_first(tree: Path) -> None:
    root = SystemRoot(str(tree))
    limits = read_sync_limits(root, "md0")
    now = sync_time(
        RECOVER, RAID5, [member("a", 800), member("b", 800)], targets=[member("new", 800)],
        component_bytes=1 << 30, limits=limits,
    )  # fmt: skip
    assert now.bound == "speed_limit_max (2,000 KiB/s)"
    plan = plan_boost(root, md0(root), now)
    # 800 MB/s members plus 25 % headroom, in KiB/s.
    assert plan.kib_s == pytest.approx(800e6 * 1.25 / 1024, abs=1)
    assert plan.boosted_seconds == pytest.approx((1 << 30) / 800e6)
    lines = plan.cost_lines()
    assert lines[0].startswith("cost: while boosted md no longer yields the rebuild to other I/O on md0")
    assert any(line.startswith("now: the rebuild takes about") for line in lines)
    assert lines[-1].startswith("undone (sync_speed_max 2000 (system), sync_speed_min 1000 (system)) when")
    assert [path for path, _ in plan.writes] == ["/sys/block/md0/md/sync_speed_max", "/sys/block/md0/md/sync_speed_min"]


def test_without_member_figures_md_is_taken_out_of_the_way(tree: Path) -> None:
    root = SystemRoot(str(tree))
    plan = plan_boost(root, md0(root), None)
    assert plan.kib_s == UNKNOWN_MEMBERS_KIB_S and "not known" in plan.why


def test_an_array_without_a_uuid_is_not_boosted(tree: Path) -> None:
    root = SystemRoot(str(tree))
    with pytest.raises(MdtuiError, match="no UUID"):
        plan_boost(root, MdArray("md0", "active", "raid6"), None)


def test_the_block_writes_both_knobs_and_puts_back_what_they_said(tree: Path, tmp_path: Path) -> None:
    root = SystemRoot(str(tree))
    plan = plan_boost(root, md0(root), None)
    from mdtui.tune.journal import KnobChanger

    changer = KnobChanger(root, purpose="a sync boost of md0", directory=tmp_path / "journal")
    with pytest.raises(RuntimeError), SyncBoost(root, plan, changer):
        assert knobs(tree) == (str(plan.kib_s), str(plan.kib_s))
        assert [c.original for c in load_journals(tmp_path / "journal")[0].changes] == ["system", "system"]
        raise RuntimeError("the follow failed")
    # md's files take "system" to follow the global limits again (a real one then reads "1000 (system)").
    assert knobs(tree) == ("system", "system")
    assert load_journals(tmp_path / "journal") == []


def _args() -> argparse.Namespace:
    return argparse.Namespace(json=True, expect_sync=True)


def test_following_to_the_end_of_the_pass_puts_the_knobs_back(tree: Path) -> None:
    root = SystemRoot(str(tree))
    plan = plan_boost(root, md0(root), None)
    seen: list[tuple[str, str]] = []

    def end_the_resync() -> None:
        time.sleep(0.5)
        seen.append(knobs(tree))  # boosted while md syncs
        (tree / MD / "sync_action").write_text("idle\n")

    threading.Thread(target=end_the_resync).start()
    report, code = follow_pass("/dev/md0", _args(), root, boost=plan)
    assert code == 0 and seen == [(str(plan.kib_s), str(plan.kib_s))]
    assert knobs(tree) == ("system", "system")
    assert [r["ok"] for r in report["boost"]["restored"]] == [True, True]


def test_a_sigterm_while_following_stops_following_and_puts_the_knobs_back(tree: Path) -> None:
    root = SystemRoot(str(tree))
    plan = plan_boost(root, md0(root), None)

    def terminate() -> None:
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=terminate).start()
    report, code = follow_pass("/dev/md0", _args(), root, boost=plan)
    assert code == 128 + signal.SIGTERM and report["stopped"] == "SIGTERM"
    assert knobs(tree) == ("system", "system")
    assert signal.getsignal(signal.SIGTERM) is not None  # the handler went back to what it was


def test_a_killed_mdtui_leaves_the_journal_and_the_next_start_puts_the_knobs_back(tree: Path, tmp_path: Path) -> None:
    """The attack: mdtui SIGKILLed mid-pass. Nothing runs in it any more; the next start restores."""
    journals = tmp_path / "journal"
    ready = tmp_path / "ready"
    code = f"""
    import time
    from pathlib import Path
    from mdtui.probe.arrays import read_arrays
    from mdtui.probe.root import SystemRoot
    from mdtui.tune.boost import SyncBoost, plan_boost
    from mdtui.tune.journal import KnobChanger
    root = SystemRoot({str(tree)!r})
    md0 = next(a for a in read_arrays(root) if a.name == "md0")
    plan = plan_boost(root, md0, None)
    changer = KnobChanger(root, purpose="a sync boost of md0", directory=Path({str(journals)!r}))
    SyncBoost(root, plan, changer).apply()
    Path({str(ready)!r}).write_text("ready")
    time.sleep(60)
    """
    with killed_when_ready(code, ready, "boosted"):
        assert knobs(tree) == (str(UNKNOWN_MEMBERS_KIB_S), str(UNKNOWN_MEMBERS_KIB_S))
        assert recover_dead(SystemRoot(str(tree)), journals) == []  # alive: untouched
    lines = recover_dead(SystemRoot(str(tree)), journals)
    assert len(lines) == 2 and all("restored" in line and "a sync boost of md0" in line for line in lines), lines
    assert knobs(tree) == ("system", "system")


def test_the_plan_reads_each_speed_file_once_and_reports_what_it_says(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """md's limits and what is put back come from one read of md0's sync_speed_min and sync_speed_max."""
    root = SystemRoot(str(tree))
    array = md0(root)
    reads: list[str] = []
    read_text = SystemRoot.read_text

    def counted(self: SystemRoot, path: str, *args: object, **kwargs: object) -> str | None:
        reads.append(str(path).rsplit("/", 1)[-1])
        return read_text(self, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SystemRoot, "read_text", counted)
    plan = plan_boost(root, array, None)
    assert sorted(name for name in reads if name.startswith("sync_speed_")) == ["sync_speed_max", "sync_speed_min"]
    assert plan.as_json() == {"kib_s": UNKNOWN_MEMBERS_KIB_S, "writes": plan.writes, "cost": plan.cost_lines()}
