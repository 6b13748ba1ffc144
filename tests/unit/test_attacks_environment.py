"""mdtui as root in another user's environment (issue 40, cases 5 and 6; $HOME): sudo -E, doas and pkexec,
plain su after a user's login, and a run started from a process of that user. Each test is the attack: the
user (nobody) points $MDTUI_DB at a link of theirs, or keeps a $TMPDIR of theirs, and root must neither
write through the one nor make anything in the other, nor take the user's $HOME for its own.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from unprivileged import NOBODY, Attacker, users_home

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks are on root's runs: run as root")

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60.0
FIO_JSON = REPO / "tests" / "fixtures" / "fio" / "perjob_randread.json"

# How each start reaches mdtui: the environment is the user's in all of them.
#  sudo-E, doas, pkexec: the variables they set (SUDO_UID, DOAS_USER, PKEXEC_UID);
#  su: a real `su root -c ...` in a session whose login uid is the user's (pam_loginuid set it at their
#      login; su keeps it), which sets none of those variables;
#  started-by-user: mdtui's parent process is the user's (their shell, or su itself, runs as them).
STARTS = ("sudo-E", "doas", "pkexec", "su", "started-by-user")

_SU = r"""
import os, shlex, sys
with open("/proc/self/loginuid", "w") as handle:  # what pam_loginuid wrote when the user logged in
    handle.write(sys.argv[1])
os.execvp("su", ["su", "root", "-c", shlex.join(sys.argv[2:])])
"""

_STARTED_BY_USER = r"""
import os, sys
user = int(sys.argv[1])
read, write = os.pipe()
child = os.fork()
if child == 0:
    os.close(write)
    os.read(read, 1)  # until the parent is the user's
    os.execv(sys.argv[2], sys.argv[2:])
os.close(read)
os.setgroups([])
os.setresgid(user, user, user)
os.setresuid(user, user, user)
os.write(write, b"x")
os.close(write)
_, status = os.waitpid(child, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _loginuid_settable() -> bool:
    done = subprocess.run(["sh", "-c", f"echo {NOBODY} > /proc/self/loginuid"], capture_output=True)
    return done.returncode == 0


def run_started(start: str, argv: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """This checkout's ``mdtui argv`` as root, started the way ``start`` says, with ``env`` (the user's)."""
    command = [sys.executable, "-m", "mdtui", *argv]
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO), **env}
    if start == "sudo-E":
        environment |= {"SUDO_UID": str(NOBODY), "SUDO_USER": "nobody"}
    elif start == "doas":
        environment |= {"DOAS_USER": "nobody"}
    elif start == "pkexec":
        environment |= {"PKEXEC_UID": str(NOBODY)}
    elif start == "su":
        if not _loginuid_settable():
            pytest.skip("this host does not let root set a login uid (CAP_AUDIT_CONTROL)")
        command = [sys.executable, "-c", _SU, str(NOBODY), *command]
    elif start == "started-by-user":
        command = [sys.executable, "-c", _STARTED_BY_USER, str(NOBODY), *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, cwd="/", env=environment)


# --- case 5: $MDTUI_DB (and the other locations) from another user's environment --------------------


@pytest.mark.parametrize("start", STARTS)
def test_root_never_creates_a_database_through_a_link_the_user_planted(place: Path, start: str) -> None:
    users = users_home(place)
    victim = place / "etc-victim.db"  # where the user wants root to create a file
    with Attacker() as attacker:
        assert attacker.ask("symlink", victim, users / "results.db") == "ok"
    done = run_started(start, ["results", "import", str(FIO_JSON)], {"MDTUI_DB": str(users / "results.db")})
    assert not victim.exists(), f"root created {victim} through the user's link ({start})\n{done.stderr}"
    assert done.returncode != 0 and "$MDTUI_DB" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("start", ("sudo-E", "started-by-user"))  # plain su sets $HOME itself
def test_root_s_own_home_is_used_not_the_users(place: Path, start: str) -> None:
    users = users_home(place)
    done = run_started(start, ["results", "list"], {"HOME": str(users)})
    assert done.returncode == 0, done.stderr
    assert str(users) not in done.stdout, f"the user's $HOME was taken for root's ({start}): {done.stdout}"


# --- case 6: $TMPDIR ---------------------------------------------------------------------------------------

_IN_CREATE, _IN_MOVED_TO, _IN_NONBLOCK = 0x100, 0x80, 0o4000


class Watch:
    """Names created in a directory while it is watched (inotify): what root made where the user can rename it."""

    def __init__(self, directory: Path) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(_IN_NONBLOCK)
        assert self.fd >= 0
        assert self.libc.inotify_add_watch(self.fd, os.fsencode(directory), _IN_CREATE | _IN_MOVED_TO) >= 0

    def names(self) -> list[str]:
        found = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return found
            while data:
                _, _, _, length = struct.unpack_from("iIII", data)
                name = data[16 : 16 + length].rstrip(b"\0").decode()
                found.append(name)
                data = data[16 + length :]

    def close(self) -> None:
        os.close(self.fd)


@pytest.mark.parametrize("start", ("sudo-E", "su"))
def test_scratch_space_is_never_made_in_a_tmpdir_the_user_kept(place: Path, start: str) -> None:
    """scrub-schedule --timer --dry-run copies unit files into scratch space; with the user's $TMPDIR kept,
    3b6999e made it there, where the user renames it and plants a link to any directory (and root then
    writes the unit into it). Nothing may appear in the user's directory, from mdtui or what it runs."""
    if not Path("/lib/systemd/system/mdcheck_start.timer").exists():
        pytest.skip("mdadm's mdcheck_start.timer is not installed here")
    users = users_home(place)
    watch = Watch(users)
    try:
        done = run_started(
            start, ["scrub-schedule", "--timer", "Sun *-*-1..7 01:00", "--dry-run"], {"TMPDIR": str(users)}
        )
        made = watch.names()
    finally:
        watch.close()
    assert made == [], f"root made {made} in the user's $TMPDIR ({start})\n{done.stdout}{done.stderr}"
    assert done.returncode == 0, done.stderr


def test_the_environment_is_settled_for_what_mdtui_runs(place: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdtui import invoker

    users = users_home(place)
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    monkeypatch.setenv("TMPDIR", str(users))
    monkeypatch.setenv("HOME", str(users))
    invoker.settle_environment()
    assert os.environ["TMPDIR"] != str(users) and Path(os.environ["TMPDIR"]).stat().st_uid == 0
    assert os.environ["HOME"] == invoker.own_home()
    child = subprocess.run(["sh", "-c", 'printf "%s %s" "$TMPDIR" "$HOME"'], capture_output=True, text=True)
    assert str(users) not in child.stdout


def test_a_root_login_s_own_run_is_not_another_users(monkeypatch: pytest.MonkeyPatch) -> None:
    from mdtui import invoker

    for name in invoker.INVOKER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    if invoker.login_uid() not in (None, 0) or invoker.started_by_another_user():
        pytest.skip("this test session itself runs in another user's session")
    assert not invoker.foreign_environment()


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def test_a_session_whose_login_uid_is_not_root_s_is_another_users() -> None:
    if not _loginuid_settable():
        pytest.skip("this host does not let root set a login uid (CAP_AUDIT_CONTROL)")
    code = "from mdtui import invoker; import json; print(json.dumps(invoker.foreign_environment()))"
    script = f"echo {NOBODY} > /proc/self/loginuid && exec {sys.executable} -c '{code}'"
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, cwd=REPO,
                          env={"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO)})  # fmt: skip
    assert _json(done.stdout) is True, done.stderr
