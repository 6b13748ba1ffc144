"""`mdtui alerts`: strict MAILADDR/PROGRAM values, the mdadm.conf edit written as persist writes it, the test
alert's proof that PROGRAM ran, and --root refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mdtui.actionlog import ActionLog
from mdtui.cli.main import main
from mdtui.errors import MdtuiError, SafetyError
from mdtui.keep import alerts
from mdtui.keep.conf import parse_conf, read_conf
from mdtui.probe.root import SystemRoot

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
CONF = "/etc/mdadm/mdadm.conf"


@pytest.mark.parametrize(
    "text",
    [
        "root\nPROGRAM /tmp/evil",  # a second line mdadm would read as PROGRAM
        "root PROGRAM",  # a second word
        'root"',
        "root#x",
        "-oQ/tmp/x@example.org",  # an option to sendmail
        "a@b..c",
        "",
        "a@" + "b" * 300,
        "\tadmin@example.org",  # a leading tab makes the line a continuation of the one before
    ],
)
def test_a_mail_address_that_is_more_than_one_address_is_refused(text: str) -> None:
    with pytest.raises(MdtuiError, match="not one mail address"):
        alerts.validate_mail(text)


@pytest.mark.parametrize("text", ["root", "admin@example.org", "raid-alerts+md@mail.example.co.uk"])
def test_plain_addresses_are_accepted(text: str) -> None:
    assert alerts.validate_mail(text) == text


def _program(root: Path, rel: str = "usr/local/sbin/md-alert", mode: int = 0o755, uid: int = 0) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    os.chown(path, uid, 0)
    return path


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")


@needs_root
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("usr/local/sbin/md-alert", "plain absolute path"),
        ("/usr/local/sbin/md alert", "plain absolute path"),
        ("/usr/local/sbin/x'\nMAILADDR evil", "plain absolute path"),
        ("/usr/local/../local/sbin/md-alert", "plain absolute path"),
        ("/usr/local/sbin/missing", "No such file"),
    ],
)
def test_a_program_that_is_not_a_plain_absolute_path_is_refused(tmp_path: Path, text: str, why: str) -> None:
    _program(tmp_path)
    with pytest.raises(MdtuiError, match=why):
        alerts.validate_program(text, SystemRoot(tmp_path))


@needs_root
def test_a_program_others_can_change_is_refused(tmp_path: Path) -> None:
    root = SystemRoot(tmp_path)
    _program(tmp_path)
    assert alerts.validate_program("/usr/local/sbin/md-alert", root) == "/usr/local/sbin/md-alert"
    _program(tmp_path, mode=0o757)
    with pytest.raises(MdtuiError, match="writable by others"):
        alerts.validate_program("/usr/local/sbin/md-alert", root)
    _program(tmp_path, uid=65534)
    with pytest.raises(MdtuiError, match="owned by uid 65534"):
        alerts.validate_program("/usr/local/sbin/md-alert", root)
    _program(tmp_path, mode=0o644)
    with pytest.raises(MdtuiError, match="not executable"):
        alerts.validate_program("/usr/local/sbin/md-alert", root)
    _program(tmp_path)
    (tmp_path / "usr/local/sbin").chmod(0o777)  # anyone could swap the program for another
    with pytest.raises(MdtuiError, match=r"directory .*sbin"):
        alerts.validate_program("/usr/local/sbin/md-alert", root)


@needs_root
def test_a_link_to_a_program_others_can_change_is_refused(tmp_path: Path) -> None:
    target = _program(tmp_path, "home/user/alert", uid=65534)
    link = tmp_path / "usr/local/sbin/md-alert"
    link.parent.mkdir(parents=True)
    link.symlink_to("/" + str(target.relative_to(tmp_path)))  # absolute as on that system: read inside the tree
    with pytest.raises(MdtuiError, match="owned by uid 65534"):
        alerts.validate_program("/usr/local/sbin/md-alert", SystemRoot(tmp_path))


OLD = "DEVICE partitions\nMAILADDR root\nMAILADDR second\n  continued@example.org\nARRAY /dev/md0 UUID=a:b:c:d\n"


def test_the_first_mailaddr_is_replaced_in_place_and_the_rest_removed() -> None:
    edit = alerts.set_alert_lines(parse_conf(CONF, OLD), mail="ops@example.org", program="/usr/local/sbin/md-alert")
    assert edit.new_text == (
        "DEVICE partitions\nMAILADDR ops@example.org\nARRAY /dev/md0 UUID=a:b:c:d\n"
        "# added by mdtui alerts\nPROGRAM /usr/local/sbin/md-alert\n"
    )
    again = parse_conf(CONF, edit.new_text)
    assert (again.mailaddr, again.program) == ("ops@example.org", "/usr/local/sbin/md-alert")
    assert not alerts.set_alert_lines(again, mail="ops@example.org").changed
    assert "(after alerts)" in edit.diff()


def _plan(root: SystemRoot) -> alerts.AlertsPlan:
    conf = read_conf(root, CONF)
    edit = alerts.set_alert_lines(conf, mail="ops@example.org")
    return alerts.AlertsPlan(alerts.detect_distribution(root), edit, "ops@example.org", None, ())


def test_the_conf_is_written_through_a_link_and_not_when_it_changed(tmp_path: Path) -> None:
    target = tmp_path / "root/srv/config/mdadm.conf"
    target.parent.mkdir(parents=True)
    target.write_text(OLD)
    link = tmp_path / "root/etc/mdadm/mdadm.conf"
    link.parent.mkdir(parents=True)
    link.symlink_to("../../srv/config/mdadm.conf")
    root = SystemRoot(tmp_path / "root")
    log = ActionLog(tmp_path / "state" / "actions.log")
    plan = _plan(root)
    with pytest.raises(SafetyError):
        alerts.write_alerts_conf(plan, confirmed=None, root=root, log=log)
    target.write_text(OLD + "# someone else's edit\n")
    with pytest.raises(SafetyError, match="changed since"):
        alerts.write_alerts_conf(plan, confirmed="alerts", root=root, log=log)
    plan = _plan(root)
    assert alerts.write_alerts_conf(plan, confirmed="alerts", root=root, log=log)
    assert link.is_symlink() and "MAILADDR ops@example.org" in target.read_text()


def test_root_refuses_setting_alerts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(TREE), "alerts", "--mail", "root", "--yes"]) == 2
    assert "read-only" in capsys.readouterr().err


def test_the_test_alert_shows_that_the_program_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An mdadm that does what --monitor --oneshot --test does with a program: runs it once per array.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mdadm"
    fake.write_text(
        '#!/bin/sh\nfor a in "$@"; do case "$a" in --program=*) p="${a#--program=}";; esac; done\n'
        '"$p" TestMessage /dev/md0\n"$p" TestMessage /dev/md1\n'
    )
    fake.chmod(0o755)
    program = tmp_path / "alert"
    program.write_text('#!/bin/sh\n[ "$2" = /dev/md1 ] && exit 3\nexit 0\n')
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    test = alerts.send_test(str(program))
    assert test.program_runs == ((0, "TestMessage /dev/md0"), (3, "TestMessage /dev/md1"))
    assert any("exited 3" in line for line in test.lines())
    nothing = alerts.send_test("/bin/false-does-not-exist")
    assert nothing.program_runs and nothing.program_runs[0][0] == 127


def test_the_test_alert_shows_mail_that_arrived_locally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An mdadm whose sendmail delivers locally, as exim or postfix does for MAILADDR root.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mdadm").write_text('#!/bin/sh\nprintf "Subject: TestMessage event on /dev/md0\\n" >> "$SPOOL/root"\n')
    (bin_dir / "mdadm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("SPOOL", str(tmp_path))
    monkeypatch.setattr(alerts, "MAIL_SPOOL", str(tmp_path))
    test = alerts.send_test(None, mailaddr="root", mailer="/usr/sbin/sendmail")
    assert test.mailbox_grew and test.mailbox == f"{tmp_path}/root"
    assert any("arrived in" in line for line in test.lines())
    remote = alerts.send_test(None, mailaddr="ops@example.org", mailer="/usr/sbin/sendmail")
    assert remote.mailbox is None and remote.mailbox_grew is None, "a remote mailbox cannot be looked at"


def test_the_nobody_monitoring_finding_offers_mdtui_alerts() -> None:
    """advise's finding points at the verb that fixes it, not only at the commands to type by hand."""
    import subprocess
    import sys
    from pathlib import Path

    tree = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
    done = subprocess.run(
        [sys.executable, "-m", "mdtui", "--root", str(tree), "advise", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    import json

    findings = {f["id"]: f for f in json.loads(done.stdout)["findings"]}
    monitor = next(f for key, f in findings.items() if key.startswith("monitor"))
    assert "mdtui alerts --mail" in monitor["what_to_do"]
