"""`mdtui scrub-schedule`: the next cron run worked out as cron does, the last scrub and its length from the
kernel log, and a schedule changed only through the distribution's own files (checked, diffed, confirmed)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mdtui.actionlog import ActionLog
from mdtui.cli.main import main
from mdtui.errors import MdtuiError, SafetyError
from mdtui.keep import schedule
from mdtui.probe.root import SystemRoot

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
# Debian's own line (mdadm 4.2 package): the first Sunday of the month at 00:57.
DEBIAN_CRON = (
    "# cron.d/mdadm\n"
    "57 0 * * 0 root if [ -x /usr/share/mdadm/checkarray ] && [ $(date +\\%d) -le 7 ]; then "
    "/usr/share/mdadm/checkarray --cron --all --idle --quiet; fi\n"
)
TIMER_UNIT = "[Unit]\nDescription=MD array scrubbing\n\n[Timer]\nOnCalendar=Sun *-*-1..7 1:00:00\n"
SERVICE_UNIT = "[Unit]\nDescription=MD array scrubbing\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n"


def _root(tmp_path: Path) -> SystemRoot:
    (tmp_path / "etc/cron.d").mkdir(parents=True)
    (tmp_path / "etc/cron.d/mdadm").write_text(DEBIAN_CRON)
    units = tmp_path / "usr/lib/systemd/system"
    units.mkdir(parents=True)
    (units / "mdcheck_start.timer").write_text(TIMER_UNIT)
    (units / "mdcheck_start.service").write_text(SERVICE_UNIT)
    return SystemRoot(tmp_path)


def test_the_next_cron_run_is_the_first_sunday_of_the_month() -> None:
    fields = schedule.validate_cron("57 0 * * 0")
    # Thursday 26 November 2026: Sundays 29 November (day 29 > 7) and then 6 December (the first Sunday).
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    assert schedule.next_cron(fields, now, first_week=True) == datetime(2026, 12, 6, 0, 57, tzinfo=UTC)
    assert schedule.next_cron(fields, now) == datetime(2026, 11, 29, 0, 57, tzinfo=UTC)
    # Both day fields restricted: either matching is enough (cron's rule): the 1st or any Friday.
    both = schedule.validate_cron("0 3 1 * 5")
    assert schedule.next_cron(both, now) == datetime(2026, 11, 27, 3, 0, tzinfo=UTC)
    assert schedule.next_cron(schedule.validate_cron("*/15 * * * *"), now) == datetime(2026, 11, 26, 12, 15, tzinfo=UTC)


@pytest.mark.parametrize("text", ["57 0 * * 0 root", "57 0 * *", "61 0 * * 0", "0 0 * * 8", "@weekly", "0 3 * * 6;x"])
def test_anything_but_five_numeric_cron_fields_is_refused(text: str) -> None:
    with pytest.raises(MdtuiError, match="cron"):
        schedule.validate_cron(text)


def test_the_last_scrub_and_its_length_come_from_the_kernel_log() -> None:
    # What md (drivers/md/md.c) logs for a check, then for a repair interrupted by a reboot.
    journal = (
        "1764000000.000000 host kernel: md: data-check of RAID array md0\n"
        "1764000100.500000 host kernel: md: data-check of RAID array md1\n"
        "1764003600.000000 host kernel: md: md0: data-check done.\n"
        "1764090000.000000 host kernel: md: requested-resync of RAID array md1\n"
        "1764090060.000000 host kernel: md: md1: requested-resync interrupted.\n"
    )
    last = schedule.scrubs_in_log(schedule.parse_journal(journal))
    assert last["md0"].action == "check" and last["md0"].seconds == 3600.0 and last["md0"].outcome == "done"
    assert last["md1"].action == "repair" and last["md1"].seconds == 60.0 and last["md1"].outcome == "interrupted"
    running = schedule.scrubs_in_log(
        schedule.parse_journal("1764000000.0 h kernel: md: data-check of RAID array md2\n")
    )
    assert running["md2"].seconds is None, "a check still running has no length, not 0"


def test_dmesg_times_give_the_same_length() -> None:
    # util-linux dmesg --time-format=iso on a system without journald (the lab's guest).
    text = (
        "2026-11-26T22:18:58,000000+00:00 md: data-check of RAID array md0\n"
        "2026-11-26T22:19:10,500000+00:00 md: md0: data-check done.\n"
    )
    assert schedule.scrubs_in_log(schedule.parse_dmesg(text))["md0"].seconds == 12.5


def test_cron_edit_changes_only_the_time_fields(tmp_path: Path) -> None:
    root = _root(tmp_path)
    edit = schedule.plan_cron(root, "30 2 * * 6")
    assert edit.new_text == DEBIAN_CRON.replace("57 0 * * 0 root", "30 2 * * 6 root")
    log = ActionLog(tmp_path / "state/actions.log")
    with pytest.raises(SafetyError):
        schedule.write_schedule(edit, confirmed=None, root=root, log=log)
    (tmp_path / "etc/cron.d/mdadm").write_text(DEBIAN_CRON + "# edited meanwhile\n")
    with pytest.raises(SafetyError, match="changed since"):
        schedule.write_schedule(edit, confirmed="schedule", root=root, log=log)
    edit = schedule.plan_cron(root, "30 2 * * 6")
    assert schedule.write_schedule(edit, confirmed="schedule", root=root, log=log)
    assert [m.when for m in schedule.mechanisms(root) if m.kind == "cron"] == ["30 2 * * 6"]


needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is missing")


@needs_analyze
def test_the_timer_drop_in_passes_systemd_analyze_verify_and_takes_effect(tmp_path: Path) -> None:
    root = _root(tmp_path)
    edit = schedule.plan_timer(root, "Sat *-*-1..7 03:00")
    assert schedule.verify_drop_in(root, edit) is not None
    assert schedule.write_schedule(edit, confirmed="schedule", root=root, log=ActionLog(tmp_path / "state/a.log"))
    timer = next(m for m in schedule.mechanisms(root) if m.kind == "timer")
    assert timer.when == "Sat *-*-1..7 03:00", "the drop-in's empty OnCalendar= resets the packaged one"
    assert (tmp_path / "usr/lib/systemd/system/mdcheck_start.timer").read_text() == TIMER_UNIT


@needs_analyze
@pytest.mark.parametrize("spec", ["Blursday 99:00", "Sat 03:00\nExecStart=/bin/sh", ""])
def test_a_spec_systemd_refuses_is_never_written(tmp_path: Path, spec: str) -> None:
    root = _root(tmp_path)
    with pytest.raises(MdtuiError, match=r"calendar spec|does not accept"):
        schedule.plan_timer(root, spec)


@needs_analyze
def test_verify_catches_a_drop_in_systemd_would_ignore(tmp_path: Path) -> None:
    root = _root(tmp_path)
    edit = schedule.plan_timer(root, "Sat *-*-1..7 03:00")
    broken = schedule.ScheduleEdit(edit.kind, edit.path, edit.old_text, edit.new_text + "Bogus=1\n")
    with pytest.raises(MdtuiError, match="verify"):
        schedule.verify_drop_in(root, broken)


def test_root_refuses_changing_the_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(TREE), "scrub-schedule", "--cron", "0 3 * * 6", "--yes"]) == 2
    assert "read-only" in capsys.readouterr().err
    assert main(["--root", str(TREE), "scrub-schedule", "--json"]) == 0


def test_scrub_dry_run_plans_from_a_tree_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tree_stands_for_live: None
) -> None:
    """`scrub md0 --dry-run` was refused as an unknown argument (issue 44); it plans as persist and repair do."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree, symlinks=True)
    action = tree / "sys/block/md2/md/sync_action"
    before = action.read_text()
    assert main(["--root", str(tree), "scrub", "md2", "--repair", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "repair md2: echo repair > /sys/block/md2/md/sync_action" in out
    assert action.read_text() == before  # nothing started, and no confirmation was asked


def test_scrub_without_dry_run_is_refused_on_a_captured_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(TREE), "scrub", "md2"]) == 2
    err = capsys.readouterr().err
    assert "read-only: starting a scrub (--dry-run plans it from the tree)" in err and err.count("\n") == 1
