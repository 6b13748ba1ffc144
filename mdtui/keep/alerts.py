"""Who is told when an array fails, and making sure someone is: mdadm's own monitor (`mdadm --monitor`, the
distribution's mdmonitor.service) sending mail to MAILADDR or running PROGRAM, both set in mdadm.conf.

mdadm.conf is changed the way persist changes it (a diff, a typed confirmation, a check that the file did not
change since the plan, a temporary file renamed over it, written through a link); then the monitor is
(re)started so it reads the new lines, and a test alert (`mdadm --monitor --scan --oneshot --test`) shows
whether the mail left or the program ran.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from dataclasses import dataclass

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult, run_command
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError
from mdtui.keep.boot import monitor_pids, read_monitoring
from mdtui.keep.conf import (
    ConfEdit,
    Distribution,
    MdadmConf,
    detect_distribution,
    keyword_of,
    logical_lines,
    read_conf,
)
from mdtui.keep.persist import write_planned_conf
from mdtui.probe.root import SystemRoot
from mdtui.rootsafe import UnsafePathError, locate
from mdtui.rootwrite import scratch_directory, write_file

MONITOR_UNIT = "mdmonitor.service"  # the unit's name on Debian, Ubuntu, RHEL, Fedora, SUSE and Arch
SYSTEMD_RUNNING = "/run/systemd/system"  # exists when systemd is PID 1 (sd_booted)
MONITOR_PID_FILE = "/run/mdadm/mdtui-monitor.pid"
MAIL_SPOOL = "/var/mail"  # where a local user's mail is delivered (Debian, RHEL: /var/spool/mail links here)
TEST_TIMEOUT_S = 60.0
# What the test program wrapper waits for after mdadm returns (mdadm waits for PROGRAM; a mailer may not).
PROGRAM_WAIT_S = 5.0
# RFC 5321 limits: 64 for the local part, 254 for the whole address.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_MAIL = re.compile(rf"[A-Za-z0-9_.%+=-]{{1,64}}(@{_LABEL}(?:\.{_LABEL})*)?")
# A path mdadm.conf can hold as one word and a shell line never has to quote.
_PATH = re.compile(r"/[A-Za-z0-9._+/@-]*")


def validate_mail(text: str) -> str:
    """One address (user@host, or a local user such as root), or MdtuiError.

    mdadm.conf is split into words and a line that starts with white space continues the previous one, so a
    space, a quote, a '#' or a line break in it would add words or lines mdadm reads as more than an address.
    """
    if len(text) > 254 or not _MAIL.fullmatch(text) or text.startswith(("-", ".")) or ".." in text:
        raise MdtuiError(f"{text!r} is not one mail address (user@example.org, or a local user such as root)")
    return text


def validate_program(text: str, root: SystemRoot | None = None) -> str:
    """PROGRAM for mdadm: an absolute path to a root-owned executable nobody else can change, or MdtuiError.

    mdadm runs it as root on every event, by the path written in mdadm.conf: a program, a directory on its
    way or a link on its way (the path itself, or any link it goes through) that another user can change
    would let that user run anything as root at the next failure. The path is walked as rootsafe walks
    one, following only links of root's in root's directories that no one else can write.
    """
    system = root or SystemRoot("/")
    if not _PATH.fullmatch(text) or "/../" in f"{text}/" or "/./" in f"{text}/" or len(text) > 1024:
        raise MdtuiError(
            f"{text!r} is not a plain absolute path (letters, digits and ._+@-/ only; no spaces, quotes or ..)"
        )
    root_only = frozenset({0})
    try:
        # A sticky directory (/tmp) lets others create files but not replace root's; still no place for it.
        with locate(text, top=str(system.root), owners=root_only, sticky=False) as where:
            if where.info is None or not where.name:
                raise MdtuiError(f"{text} cannot be used as PROGRAM: No such file or directory")
            info = os.stat(where.name, dir_fd=where.directory, follow_symlinks=False)
            chain = where.chain()

    except UnsafePathError as exc:
        raise MdtuiError(f"{text}: {exc}; mdadm runs PROGRAM as root") from None
    except OSError as exc:
        raise MdtuiError(f"{text} cannot be used as PROGRAM: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise MdtuiError(f"{text} is not a regular file")
    if not info.st_mode & stat.S_IXUSR:
        raise MdtuiError(f"{text} is not executable (chmod 755 {text})")
    problem = _owner_problem(info)
    if problem:
        raise MdtuiError(f"{text}: {problem}; mdadm runs PROGRAM as root")
    for parent, parent_info in reversed(chain):
        problem = _owner_problem(parent_info)
        if problem:
            raise MdtuiError(f"{text}: its directory {parent} {problem.removeprefix('it ')}; mdadm runs it as root")
    return text


def _owner_problem(info: os.stat_result) -> str | None:
    if info.st_uid != 0:
        return f"it is owned by uid {info.st_uid}, not root"
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    # A sticky directory (/tmp) lets others create files but not replace this one; still not a place for it.
    if writable:
        return f"it is writable by {'others' if info.st_mode & stat.S_IWOTH else 'its group'}"
    return None


def set_alert_lines(conf: MdadmConf, *, mail: str | None = None, program: str | None = None) -> ConfEdit:
    """The conf with ``MAILADDR mail`` and/or ``PROGRAM program``: the first existing line of each replaced in
    place, any further ones (mdadm reads one) removed, or the line appended when there is none."""
    old = conf.text
    lines = old.splitlines(keepends=True)
    wanted = {
        "MAILADDR": None if mail is None else f"MAILADDR {mail}",
        "PROGRAM": None if program is None else f"PROGRAM {program}",
    }
    logical = logical_lines(old)
    done: set[str] = set()
    drop: set[int] = set()
    replace: dict[int, str] = {}
    for number, text in logical:
        # mdadm's own reading of the first word: MAILFROM (or MAILF) is not MAILADDR and is left alone.
        keyword = keyword_of(text.split(None, 1)[0])
        key = keyword if keyword in wanted and wanted[keyword] is not None else None
        if key is None:
            continue
        index = number - 1
        end = index + 1
        while end < len(lines) and lines[end][:1].isspace() and lines[end].strip():
            end += 1
        if key in done:
            drop.update(range(index, end))
        else:
            replace[index] = str(wanted[key])
            drop.update(range(index + 1, end))
            done.add(key)
    new_lines = []
    for index, line in enumerate(lines):
        if index in drop:
            continue
        if index in replace:
            ending = line[len(line.rstrip("\r\n")) :] or "\n"
            new_lines.append(replace[index] + ending)
        else:
            new_lines.append(line)
    new = "".join(new_lines)
    missing = [str(wanted[k]) for k in wanted if wanted[k] is not None and k not in done]
    if missing:
        new = (new if not new or new.endswith("\n") else new + "\n") + "# added by mdtui alerts\n"
        new += "".join(f"{line}\n" for line in missing)
    changed = " and ".join(line for line in wanted.values() if line)
    return ConfEdit(conf.path, old, new, changed, None, by="alerts")


@dataclass(frozen=True)
class ServiceState:
    systemd: bool  # systemd runs this system
    active: str | None  # systemctl is-active: active, inactive, failed; None without systemd
    enabled: str | None  # systemctl is-enabled: enabled, disabled, static, masked, ...


@dataclass(frozen=True)
class AlertsState:
    conf_path: str
    mailaddr: str | None
    program: str | None
    monitor_pids: tuple[int, ...]
    mailer: str | None
    service: ServiceState | None  # None under --root (not asked)

    @property
    def lines(self) -> list[str]:
        told = []
        if self.mailaddr:
            told.append(f"mail to {self.mailaddr}" + ("" if self.mailer else " (no sendmail here: it cannot leave)"))
        if self.program:
            told.append(f"runs {self.program}")
        out = [f"{self.conf_path}: " + ("; ".join(told) if told else "neither MAILADDR nor PROGRAM: nobody is told")]
        pids = ", ".join(map(str, self.monitor_pids))
        out.append(f"mdadm --monitor: {'runs (pid ' + pids + ')' if pids else 'not running'}")
        if self.service is not None:
            if self.service.systemd:
                out.append(f"{MONITOR_UNIT}: {self.service.active or '?'}, {self.service.enabled or '?'}")
            else:
                out.append("systemd does not run here: the monitor is started as `mdadm --monitor --daemonise`")
        out.append(f"mail transport: {self.mailer or 'none (no /usr/sbin/sendmail)'}")
        return out


def _systemctl(*args: str) -> str | None:
    if shutil.which("systemctl") is None:
        return None
    result = run_command(["systemctl", *args], timeout_s=30)
    return result.stdout.strip().splitlines()[0] if result.stdout.strip() else None


def service_state(root: SystemRoot) -> ServiceState | None:
    if not root.is_live:
        return None
    if not root.path(SYSTEMD_RUNNING).is_dir():
        return ServiceState(False, None, None)
    return ServiceState(True, _systemctl("is-active", MONITOR_UNIT), _systemctl("is-enabled", MONITOR_UNIT))


def read_alerts(root: SystemRoot, conf_path: str | None = None) -> AlertsState:
    distribution = detect_distribution(root)
    conf = read_conf(root, conf_path or distribution.conf_path)
    mon = read_monitoring(root, conf)
    return AlertsState(conf.path, mon.mailaddr, mon.program, mon.monitor_pids, mon.mailer, service_state(root))


@dataclass(frozen=True)
class AlertsPlan:
    distribution: Distribution
    edit: ConfEdit
    mail: str | None
    program: str | None
    start: tuple[tuple[str, ...], ...]  # the commands that (re)start the monitor

    @property
    def confirmation(self) -> str:
        """What the user types to write mdadm.conf's MAILADDR/PROGRAM and (re)start the monitor."""
        return "alerts"

    def describe(self) -> list[str]:
        lines = [f"alerts: {self.edit.added}"]
        if self.edit.changed:
            lines.append(f"  {self.edit.path}:")
            lines.extend("    " + row for row in self.edit.diff().rstrip("\n").splitlines())
        else:
            lines.append(f"  {self.edit.path} already says so: no change")
        lines.extend(f"  then: {' '.join(argv)}" for argv in self.start)
        lines.append("  then a test alert: mdadm --monitor --scan --oneshot --test")
        return lines


def monitor_start_commands(root: SystemRoot, running: tuple[int, ...]) -> tuple[tuple[str, ...], ...]:
    """Commands that leave a monitor running that has read the new mdadm.conf."""
    state = service_state(root)
    if state is not None and state.systemd:
        steps: list[tuple[str, ...]] = []
        # Debian's unit has no [Install] section (udev starts it when an array appears): "static", not enabled.
        if state.enabled in ("disabled",):
            steps.append(("systemctl", "enable", MONITOR_UNIT))
        if state.enabled == "masked":
            raise MdtuiError(f"{MONITOR_UNIT} is masked; unmask it first (systemctl unmask {MONITOR_UNIT})")
        steps.append(("systemctl", "restart", MONITOR_UNIT))
        return tuple(steps)
    if running:
        # Not ours to kill: a monitor started by hand or by an init script reads mdadm.conf only when it starts.
        raise MdtuiError(
            f"mdadm --monitor already runs (pid {', '.join(map(str, running))}) outside systemd; it reads "
            "mdadm.conf only at its start: restart it the way it was started, then run `mdtui alerts` again"
        )
    return (("mdadm", "--monitor", "--scan", "--daemonise", f"--pid-file={MONITOR_PID_FILE}"),)


def plan_alerts(
    root: SystemRoot, *, mail: str | None = None, program: str | None = None, conf_path: str | None = None
) -> AlertsPlan:
    if mail is None and program is None:
        raise MdtuiError("say where alerts go: --mail ADDR or --program PATH")
    if mail is not None:
        validate_mail(mail)
    if program is not None:
        validate_program(program, root)
    distribution = detect_distribution(root)
    conf = read_conf(root, conf_path or distribution.conf_path)
    edit = set_alert_lines(conf, mail=mail, program=program)
    start = monitor_start_commands(root, monitor_pids(root))
    return AlertsPlan(distribution, edit, mail, program, start)


def write_alerts_conf(
    plan: AlertsPlan, *, confirmed: str | None, root: SystemRoot | None = None, log: ActionLog | None = None
) -> bool:
    """Write the planned mdadm.conf as persist does; False when there was nothing to write."""
    require_confirmed(confirmed, plan.confirmation, f"writing {plan.edit.path}")
    if not plan.edit.changed:
        return False
    write_planned_conf(
        root or SystemRoot("/"), plan.edit, "alerts", f"alerts: {plan.edit.added} in {plan.edit.path}", log
    )
    return True


def start_monitor(plan: AlertsPlan, *, confirmed: str | None, log: ActionLog | None = None) -> list[CommandResult]:
    require_confirmed(confirmed, plan.confirmation, "(re)starting the monitor")
    results = []
    for argv in plan.start:
        if argv[0] == "mdadm":
            os.makedirs(os.path.dirname(MONITOR_PID_FILE), exist_ok=True)
        result = run_command(argv, timeout_s=60)
        (log or ActionLog()).record(result, "alerts: start the monitor")
        results.append(result)
        if not result.ok:
            raise MdtuiError(f"{' '.join(argv)} failed (exit {result.returncode}): {result.stderr.strip()[-300:]}")
    return results


@dataclass(frozen=True)
class AlertTestResult:
    result: CommandResult
    program_runs: tuple[tuple[int, str], ...]  # (exit status, arguments) per run of PROGRAM
    program: str | None
    mailaddr: str | None
    mailer: str | None
    mailbox: str | None = None  # a local user's mailbox, for a local address
    mailbox_grew: int | None = None  # bytes it grew by during the test; None when it was not looked at

    def lines(self) -> list[str]:
        out = [f"test alert: {' '.join(self.result.argv)} exited {self.result.returncode}"]
        if self.program:
            if not self.program_runs:
                out.append(f"  {self.program} did not run")
            for status, words in self.program_runs:
                out.append(f"  {self.program} ran with '{words}' and exited {status}")
        if self.mailaddr:
            if self.mailer and self.mailbox_grew:
                out.append(f"  mail to {self.mailaddr} arrived in {self.mailbox} (+{self.mailbox_grew} bytes)")
            elif self.mailer and self.mailbox:
                out.append(f"  mail to {self.mailaddr} handed to {self.mailer}; nothing arrived in {self.mailbox} yet")
            elif self.mailer:
                out.append(f"  mail to {self.mailaddr} handed to {self.mailer} (check that mailbox)")
            else:
                out.append(f"  mail to {self.mailaddr} could not leave: no sendmail here")
        return out


def send_test(program: str | None, *, mailaddr: str | None = None, mailer: str | None = None) -> AlertTestResult:
    """`mdadm --monitor --scan --oneshot --test`: one TestMessage per array, to MAILADDR and PROGRAM.

    With a PROGRAM, mdadm is given a wrapper that runs it with mdadm's arguments and notes its exit status,
    so what is shown is that the program itself ran, not only that mdadm returned.
    """
    argv = ["mdadm", "--monitor", "--scan", "--oneshot", "--test"]
    runs: list[tuple[int, str]] = []
    mailbox = local_mailbox(mailaddr)
    before = _size(mailbox)
    with scratch_directory("mdtui-alert-test-") as work:
        if program is not None:
            record = work / "ran"
            wrapper = work / "program"
            # Both paths are plain (validate_program, mkdtemp's letters): no quoting is needed beyond ''.
            script = (
                f"#!/bin/sh\n'{program}' \"$@\"\nstatus=$?\nprintf '%s %s\\n' \"$status\" \"$*\" >> '{record}'\n"
                "exit $status\n"
            )
            write_file(wrapper, script.encode(), replace=False, mode=0o700)
            argv.append(f"--program={wrapper}")
        result = run_command(argv, timeout_s=TEST_TIMEOUT_S)
        if program is not None:
            deadline = time.monotonic() + PROGRAM_WAIT_S
            while not (work / "ran").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            text = (work / "ran").read_text() if (work / "ran").exists() else ""
            for line in text.splitlines():
                status, _, words = line.partition(" ")
                runs.append((int(status) if status.isdigit() else -1, words))
        if mailbox is not None and mailer is not None:
            # A local delivery takes a moment after sendmail returns.
            deadline = time.monotonic() + PROGRAM_WAIT_S
            while _size(mailbox) == before and time.monotonic() < deadline:
                time.sleep(0.2)
    grew = None if mailbox is None else max(0, (_size(mailbox) or 0) - (before or 0))
    return AlertTestResult(result, tuple(runs), program, mailaddr, mailer, mailbox, grew)


def local_mailbox(mailaddr: str | None, spool: str | None = None) -> str | None:
    """The mailbox a local address (root, root@localhost) is delivered to; None for a remote one."""
    if not mailaddr:
        return None
    user, _, host = mailaddr.partition("@")
    if host not in ("", "localhost"):
        return None
    return f"{spool or MAIL_SPOOL}/{user}"


def _size(path: str | None) -> int | None:
    if path is None:
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
