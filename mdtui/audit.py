"""Every action that writes, told to the system journal: syslog identifier mdtui, with the command, who ran it
and how it ended, so `journalctl -t mdtui` (or /var/log/syslog) holds what root did with mdtui.

mdtui.actionlog.ActionLog calls :func:`tell_system_log` for every entry it records: that is the one place an
action is logged, so a new verb that records its actions there is in the journal too.

What is trusted here: nothing in the message is taken as a fact about who ran mdtui. ``SUDO_USER`` is
whatever the environment says (root can set it to anything, and `sudo -E` passes a user's own), so it is
recorded as what the environment said, checked to look like a user name; the login uid is the kernel's
(/proc/self/loginuid, set once at login by pam_loginuid and kept across sudo and su). Argv words and notes can
quote device names and file paths: control characters are replaced, so no entry can begin a forged line in a
text log, and the message is bounded.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shlex
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mdtui import invoker
from mdtui.text import clean_text

# Where syslog(3) sends: journald's socket on systemd hosts, rsyslog's or syslog-ng's elsewhere.
SYSLOG_SOCKET = "/dev/log"
IDENTIFIER = "mdtui"
FACILITY_USER = 1  # LOG_USER, as logger(1) and syslog(3) use by default
SEVERITY_ERR = 3
SEVERITY_NOTICE = 5
# rsyslog's default maximum message is 8 KiB and journald takes far more; an entry stays well inside both.
MAX_MESSAGE_CHARS = 4000
# A datagram to a syslog daemon that stopped reading must not hold up the action it records.
SEND_TIMEOUT_S = 1.0
# What a user name looks like (useradd's default rule, and what sudo puts in SUDO_USER).
_USER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}\$?")


@dataclass(frozen=True)
class InvokingUser:
    """Who ran mdtui, as far as this process can tell: its uid, the kernel's login uid and SUDO_USER."""

    uid: int
    login_uid: int | None  # None when the process has none (never logged in) or it cannot be read
    login_name: str | None  # the login uid's name in the password database
    sudo_user: str | None  # SUDO_USER as the environment says it: recorded, not trusted
    sudo_user_malformed: bool = False  # SUDO_USER was set to something that is no user name

    def as_json(self) -> dict[str, object]:
        return {
            "uid": self.uid,
            "login_uid": self.login_uid,
            "login_name": self.login_name,
            "sudo_user": self.sudo_user,
        }

    def words(self) -> str:
        """"login uid 1000 (alice), SUDO_USER alice, uid 0" (the login uid first: the kernel's word)."""
        parts = []
        if self.login_uid is not None:
            parts.append(f"login uid {self.login_uid}" + (f" ({self.login_name})" if self.login_name else ""))
        else:
            parts.append("no login uid")
        if self.sudo_user is not None:
            parts.append(f"SUDO_USER {self.sudo_user}")
        elif self.sudo_user_malformed:
            parts.append("SUDO_USER set but not a user name")
        parts.append(f"uid {self.uid}" + (f" ({name})" if (name := _user_name(self.uid)) else ""))
        return ", ".join(parts)


def _user_name(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return None


def invoking_user(
    environ: Mapping[str, str] | None = None, login_uid_path: str = "/proc/self/loginuid"
) -> InvokingUser:
    """Who ran mdtui: SUDO_USER recorded only if it looks like a user name, the login uid from the kernel."""
    env = os.environ if environ is None else environ
    raw = env.get("SUDO_USER")
    sudo_user = raw if raw is not None and _USER_NAME.fullmatch(raw) else None
    login_uid = invoker.login_uid(login_uid_path)
    return InvokingUser(
        uid=os.getuid(),
        login_uid=login_uid,
        login_name=_user_name(login_uid) if login_uid is not None else None,
        sudo_user=sudo_user,
        sudo_user_malformed=raw is not None and sudo_user is None,
    )


def one_line(text: str) -> str:
    """A value for one syslog line: escapes gone, every control character (newlines too) replaced."""
    return clean_text(text, one_line=True)


def command_line(argv: Sequence[str] | None = None) -> str:
    """mdtui's own command line as the user typed it ("mdtui create --level 1 sdb sdc"), "mdtui" for the app."""
    words = list(sys.argv if argv is None else argv)
    return one_line(shlex.join(["mdtui", *words[1:]]))


def action_message(
    argv: Sequence[str], returncode: int, duration_s: float, note: str, user: InvokingUser, invoked_as: str
) -> str:
    """The journal's line for one action: what, the command, how it ended, who, and from which mdtui command."""
    outcome = "ok" if returncode == 0 else f"failed, exit {returncode}"
    parts = [
        f"{one_line(note)}: " if note else "",
        f"ran {one_line(shlex.join(argv))}",
        f" ({outcome}, {duration_s:.1f} s)",
        f"; by {user.words()}",
        f"; from {invoked_as}",
    ]
    message = "".join(parts)
    return message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 1] + "…"


def syslog_datagram(message: str, severity: int, *, pid: int | None = None, now: float | None = None) -> bytes:
    """The message as syslog(3) sends it: <PRI>Mmm dd hh:mm:ss mdtui[PID]: MESSAGE (RFC 3164's form, which
    journald, rsyslog and syslog-ng all read; journald takes SYSLOG_IDENTIFIER from the tag)."""
    stamp = time.strftime("%b %e %H:%M:%S", time.localtime(now))
    priority = FACILITY_USER * 8 + severity
    return f"<{priority}>{stamp} {IDENTIFIER}[{os.getpid() if pid is None else pid}]: {message}".encode(
        "utf-8", "replace"
    )


def tell_system_log(message: str, *, failed: bool, socket_path: str | None = None) -> bool:
    """Send one line to the system log; False when there is none to take it (no /dev/log: a container, a
    host without a syslog daemon), which never stops the action being recorded in mdtui's own log."""
    path = SYSLOG_SOCKET if socket_path is None else socket_path
    data = syslog_datagram(message, SEVERITY_ERR if failed else SEVERITY_NOTICE)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError:
        return False
    try:
        sock.settimeout(SEND_TIMEOUT_S)
        sock.connect(path)
        sock.send(data)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            sock.close()
