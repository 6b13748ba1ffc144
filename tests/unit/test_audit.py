"""Every action that writes reaches the system journal: a real /dev/log-style datagram socket the test binds
stands for journald or rsyslog (the lab checks real journald: tests/lab/test_journal.py)."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdtui import audit, invoker
from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult
from mdtui.model.array import ArrayMember, MdArray
from mdtui.probe.root import SystemRoot
from mdtui.tune.catalogue import knob_named
from mdtui.tune.journal import write_knob
from mdtui.tune.udev import plan_apply, write_plan

# What syslog(3) sends and journald parses: <PRI>Mmm dd hh:mm:ss mdtui[PID]: MESSAGE
LINE = re.compile(r"<(?P<pri>\d+)>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d mdtui\[(?P<pid>\d+)\]: (?P<message>.*)", re.S)
# A record must not hold up the action when the daemon stopped reading: audit.SEND_TIMEOUT_S plus slack for a
# busy machine.
STALLED_DAEMON_BOUND_S = audit.SEND_TIMEOUT_S + 2.0


@pytest.fixture
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A bound AF_UNIX datagram socket, as /dev/log is, that mdtui.audit sends to."""
    path = tmp_path / "dev-log"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(5)
    monkeypatch.setattr(audit, "SYSLOG_SOCKET", str(path))
    yield sock
    sock.close()


def received(sock: socket.socket) -> list[str]:
    lines = []
    sock.setblocking(False)
    try:
        while True:
            lines.append(sock.recv(65536).decode())
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(5)
    return lines


def entries(log: ActionLog) -> list[dict]:
    return log.entries()


def test_an_action_is_in_the_journal_with_argv_user_and_outcome(
    journal: socket.socket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUDO_USER", "alice")
    monkeypatch.setattr("sys.argv", ["/usr/local/bin/mdtui", "create", "--level", "1", "sdb", "sdc", "--yes"])
    log = ActionLog(tmp_path / "state" / "actions.log")
    argv = ("mdadm", "--create", "/dev/md0", "--level=1", "--raid-devices=2", "/dev/sdb", "/dev/sdc")
    log.record(CommandResult(argv, 0, "", "", 1.25), "create /dev/md0")
    [line] = received(journal)
    match = LINE.fullmatch(line)
    assert match is not None, line
    assert int(match["pri"]) == 1 * 8 + 5  # user.notice
    assert int(match["pid"]) > 0
    message = match["message"]
    assert message.startswith("create /dev/md0: ran mdadm --create /dev/md0 --level=1 --raid-devices=2 /dev/sdb")
    assert "(ok, 1.2 s)" in message or "(ok, 1.3 s)" in message
    assert "SUDO_USER alice" in message and "uid " in message
    assert message.endswith("from mdtui create --level 1 sdb sdc --yes")
    # Beside it, mdtui's own log has the same action, the user, and that the journal took it.
    [entry] = entries(log)
    assert entry["argv"] == list(argv) and entry["user"]["sudo_user"] == "alice" and entry["system_log"] is True


def test_a_failure_is_an_error_in_the_journal(journal: socket.socket, tmp_path: Path) -> None:
    log = ActionLog(tmp_path / "actions.log")
    with pytest.raises(Exception, match="exit"):
        log.run(["false"], "repair /dev/md0: add /dev/sdf")
    [line] = received(journal)
    match = LINE.fullmatch(line)
    assert match is not None and int(match["pri"]) == 1 * 8 + 3  # user.err
    assert "repair /dev/md0: add /dev/sdf: ran false (failed, exit 1," in match["message"]


def test_a_forged_line_cannot_be_planted(
    journal: socket.socket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: a device path and a SUDO_USER carrying a newline and a fake entry, an escape sequence."""
    monkeypatch.setenv("SUDO_USER", "root\n<13>Nov  1 00:00:00 sshd[1]: Accepted password for root")
    forged = "/dev/disk/by-id/x\n<13>Nov  1 00:00:00 sudo[1]: alice : COMMAND=/bin/true\x1b[2J"
    ActionLog(tmp_path / "actions.log").record(CommandResult(("mdadm", "--add", "/dev/md0", forged), 0, "", "", 0.0))
    [line] = received(journal)
    # One line: the fake entry stays inside the message (after U+FFFD), never at the start of a line of its own.
    assert len(line.splitlines()) == 1 and "\x1b" not in line and "x\N{REPLACEMENT CHARACTER}<13>Nov" in line
    assert "SUDO_USER root" not in line and "SUDO_USER set but not a user name" in line
    [entry] = entries(ActionLog(tmp_path / "actions.log"))
    assert entry["user"]["sudo_user"] is None


def test_without_a_system_log_the_action_log_still_has_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit, "SYSLOG_SOCKET", str(tmp_path / "nothing-listens"))
    log = ActionLog(tmp_path / "actions.log")
    log.record(CommandResult(("mdadm", "--stop", "/dev/md0"), 0, "", "", 0.1), "destroy /dev/md0")
    [entry] = entries(log)
    assert entry["system_log"] is False and entry["note"] == "destroy /dev/md0"


def test_a_stalled_syslog_daemon_does_not_hold_up_the_action(journal: socket.socket, tmp_path: Path) -> None:
    """A daemon that stopped reading: its queue full, a send blocks; the record gives up after SEND_TIMEOUT_S."""
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    filler.connect(audit.SYSLOG_SOCKET)
    filler.setblocking(False)
    try:
        while True:
            filler.send(b"x" * 1024)
    except (BlockingIOError, OSError):
        pass
    log = ActionLog(tmp_path / "actions.log")
    started = time.monotonic()
    log.record(CommandResult(("mdadm", "--stop", "/dev/md0"), 0, "", "", 0.1), "destroy /dev/md0")
    took = time.monotonic() - started
    filler.close()
    assert took < STALLED_DAEMON_BOUND_S, f"recording took {took:.2f} s"
    [entry] = entries(log)
    assert entry["system_log"] is False


def test_the_login_uid_is_the_kernels_and_unset_is_none(tmp_path: Path) -> None:
    (tmp_path / "set").write_text("1000")
    (tmp_path / "unset").write_text(str(invoker.UNSET_LOGIN_UID))
    (tmp_path / "junk").write_text("1000; rm -rf /")
    assert invoker.login_uid(str(tmp_path / "set")) == 1000
    assert invoker.login_uid(str(tmp_path / "unset")) is None
    assert invoker.login_uid(str(tmp_path / "junk")) is None
    assert invoker.login_uid(str(tmp_path / "missing")) is None
    user = audit.invoking_user({}, str(tmp_path / "set"))
    assert user.login_uid == 1000 and user.sudo_user is None and "login uid 1000" in user.words()


# -- the writes that are not commands: a knob, the udev rule file --------------------------------------------


def _md0(tmp_path: Path) -> tuple[SystemRoot, MdArray]:
    md = tmp_path / "sys/block/md0/md"
    md.mkdir(parents=True)
    (md / "stripe_cache_size").write_text("256\n")
    array = MdArray("md0", "active", "raid5", (ArrayMember("nvme0n1", 0), ArrayMember("nvme1n1", 1)), raid_disks=2)
    return SystemRoot(tmp_path), array


def test_a_knob_write_is_in_the_journal(journal: socket.socket, tmp_path: Path) -> None:
    """write_knob is where tune --apply, every sweep point and every restore write: each is recorded."""
    root, _array = _md0(tmp_path)
    write_knob(root, knob_named("stripe_cache_size"), "md0", "4096")
    [line] = received(journal)
    assert "knob stripe_cache_size of md0: ran mdtui-write /sys/block/md0/md/stripe_cache_size 4096 (ok," in line


def test_the_udev_rule_file_written_by_tune_apply_is_in_the_journal(journal: socket.socket, tmp_path: Path) -> None:
    _root, array = _md0(tmp_path)
    plan = plan_apply(array, knob_named("stripe_cache_size"), "4096", tmp_path / "rules.d" / "61-mdtui.rules")
    (tmp_path / "rules.d").mkdir()
    write_plan(plan)
    [line] = received(journal)
    assert f"md0 stripe_cache_size=4096 at every start: ran mdtui-write {tmp_path}/rules.d/61-mdtui.rules" in line
