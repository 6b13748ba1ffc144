"""Whose environment a run has: a root login's own, or another user's that sudo, su, doas or pkexec kept.

mdtui as root takes locations from its environment ($MDTUI_DB, $XDG_*, $TMPDIR, $HOME ...). When the run
did not start from a root login, that environment may still be the invoking user's: `sudo -E` and plain
`su` keep it, `su -` and `sudo -i` reset most of it but not what PAM or a profile sets. Such a run is
told apart by what the invoking user cannot forge: the real and effective user ids, the kernel's login
uid (set at login by pam_loginuid, kept across su and sudo), and the processes it was started from (the
user's shell and su or sudo itself, which run as that user). The variables sudo, doas and pkexec set
(SUDO_UID, DOAS_USER, PKEXEC_UID) count too, though only to add runs, never to clear one.
"""

from __future__ import annotations

import os
import pwd
import tempfile

from mdtui.ascii_numbers import parse_int
from mdtui.errors import MdtuiError
from mdtui.rootwrite import scratch_base

# Set by sudo, doas and pkexec in the environment of what they run.
INVOKER_VARIABLES = ("SUDO_UID", "DOAS_USER", "PKEXEC_UID")
UNSET_LOGIN_UID = 4294967295  # (uid_t)-1: no login set one (a daemon, a system without pam_loginuid)
_MAX_ANCESTORS = 256  # a process tree deeper than this is not one a login made
_ancestry: dict[int, bool] = {}  # pid -> whether a process it was started from is not root's


def status_uids(text: str) -> tuple[int, ...] | None:
    """The real, effective, saved and filesystem uids in a /proc/PID/status text; None without a Uid line."""
    for line in text.splitlines():
        if line.startswith("Uid:"):
            uids = [parse_int(word) for word in line.split()[1:5]]
            return tuple(u for u in uids if u is not None) or None
    return None


def _status_uids(pid: int | str) -> tuple[int, ...] | None:
    """A live process's uids (status_uids); None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            return status_uids(handle.read(1 << 16).decode("ascii", "replace"))
    except OSError:
        return None


def _parent(pid: int | str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read(4096).decode("ascii", "replace")
    except OSError:
        return None
    # The command name may hold spaces and parentheses; the fields after its last ")" are fixed.
    fields = text[text.rfind(")") + 2 :].split()
    return parse_int(fields[1]) if len(fields) > 1 else None


def login_uid(path: str = "/proc/self/loginuid") -> int | None:
    """The kernel's login uid of this process (pam_loginuid sets it at login); None when none was set or it
    cannot be read. ``path``: another file of the same form, for tests."""
    try:
        with open(path, "rb") as handle:
            value = parse_int(handle.read(32).decode("ascii", "replace").strip())
    except OSError:
        return None
    return None if value is None or value == UNSET_LOGIN_UID else value


def started_by_another_user() -> bool:
    """Whether a process this one was started from (up to init) runs as, or was started by, a user other
    than root: the invoking user's shell, or su or sudo themselves (their real uid is that user's)."""
    me = os.getpid()
    if me not in _ancestry:
        found = False
        pid = _parent("self")
        for _ in range(_MAX_ANCESTORS):
            if pid is None or pid <= 1:
                break
            uids = _status_uids(pid)
            if uids is None:
                break  # gone meanwhile, or hidden by hidepid: nothing more to learn above it
            if any(uid != 0 for uid in uids):
                found = True
                break
            pid = _parent(pid)
        _ancestry[me] = found
    return _ancestry[me]


def foreign_environment() -> bool:
    """Whether this run's environment may be another user's (see the module doc); False for a root login's
    own run and for a user's own run."""
    if os.getuid() != os.geteuid():
        return True  # set-uid: the environment is the caller's
    if any(os.environ.get(name) for name in INVOKER_VARIABLES):
        return True
    if os.geteuid() != 0:
        return False  # a user's own run, with that user's environment
    uid = login_uid()
    if uid is not None and uid != 0:
        return True  # su, su -, sudo after a user's login: the login uid stays that user's
    return started_by_another_user()


def own_home() -> str:
    """The effective user's home from the password database (/root when it has no entry)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_dir or "/root"
    except KeyError:
        return "/root"


def settle_environment() -> None:
    """Make what every later step and child process takes from the environment safe, once at start.

    In another user's environment, $HOME becomes the effective user's own; and whoever's it is, $TMPDIR
    is replaced by a place no other user can change (rootwrite.scratch_base) when it is not one, so
    neither mdtui's own scratch files nor those of the programs it runs (mkinitramfs, dracut and sort
    make theirs in $TMPDIR) can be made where that user renames them and plants links.
    """
    if foreign_environment():
        os.environ["HOME"] = own_home()
    wanted = os.environ.get("TMPDIR")
    if wanted:
        try:
            base = scratch_base()
        except MdtuiError:  # no safe place at all: the scratch users say so when they need one
            base = None
        if base != wanted:
            if base is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = base
            tempfile.tempdir = None  # tempfile caches the directory it chose first
