"""Another local user, for tests written as the attack: processes that run as nobody, wherever the clone is.

Importable as ``unprivileged`` from any test (tests/ is on ``sys.path``, as for ``ci``).

A test that drops privileges must not depend on where the checkout lives: an admin's clone under root's
home (0700 on Debian) or under ``mktemp -d`` (0700) cannot be entered by nobody, nor can a venv inside it.
So what nobody runs comes from places nobody can reach: :func:`package_copy` is a read-only copy of the
``mdtui`` package in a fresh 0755 directory under /tmp, :func:`python_for_nobody` the first Python 3.11+
interpreter that nobody can actually start (the venv's own, else the one it was made from, else the
system's), and :func:`public_dir` a directory every user can enter for the files of a test.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

NOBODY = 65534
NOGROUP = 65534
REPO = Path(__file__).resolve().parents[1]
# How long a child of a test may take: importing the core on a loaded two-core host takes a second or two.
CHILD_TIMEOUT_S = 60.0

_DROP = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOGROUP}", "--clear-groups"]


def drop_privileges(argv: Sequence[str]) -> list[str]:
    """``argv`` run as nobody:nogroup with no supplementary groups (util-linux setpriv)."""
    return [*_DROP, *argv]


@functools.cache
def python_for_nobody() -> str:
    """A Python (3.11 or later) that nobody can start, tried for real: the venv's, its base's, the system's."""
    candidates = [sys.executable, os.path.realpath(sys.executable), getattr(sys, "_base_executable", ""),
                  shutil.which("python3") or "", "/usr/bin/python3"]  # fmt: skip
    for candidate in dict.fromkeys(c for c in candidates if c):
        try:
            done = subprocess.run(
                drop_privileges([candidate, "-I", "-c", "import sys; assert sys.version_info >= (3, 11)"]),
                capture_output=True, timeout=CHILD_TIMEOUT_S, cwd="/",
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return candidate
    raise RuntimeError("no Python 3.11+ that the user nobody can start (setpriv, /usr/bin/python3?)")


def _make_public(path: Path) -> None:
    """Every directory under ``path`` 0755 and every file 0644: nobody reads, nobody changes."""
    for directory, _dirs, files in os.walk(path):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)


@functools.cache
def package_copy() -> str:
    """A directory (for PYTHONPATH) holding a read-only copy of this checkout's ``mdtui`` package.

    Made once per test session under /tmp and removed at exit; the copy, not the checkout, is what a
    child running as nobody imports.
    """
    base = Path(tempfile.mkdtemp(prefix="mdtui-test-package-", dir="/tmp"))
    shutil.copytree(REPO / "mdtui", base / "mdtui", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _make_public(base)
    import atexit

    atexit.register(shutil.rmtree, base, ignore_errors=True)
    return str(base)


@contextlib.contextmanager
def public_dir(prefix: str = "mdtui-test-") -> Iterator[Path]:
    """A fresh root-owned 0755 directory under /tmp that nobody can enter (and not change), removed after."""
    made = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        made.chmod(0o755)
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def give_to_nobody(path: Path, mode: int | None = None) -> Path:
    """``path`` (not followed) made nobody's, with ``mode`` when given; returns it."""
    os.lchown(path, NOBODY, NOGROUP)
    if mode is not None:
        path.chmod(mode)
    return path


def users_home(place: Path) -> Path:
    """``place``/home-nobody: a directory of the attacking user's own (0755), as their home is."""
    home = place / "home-nobody"
    home.mkdir()
    return give_to_nobody(home, 0o755)


def run_as_nobody(
    code: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] = "/",
    timeout: float = CHILD_TIMEOUT_S,
    with_mdtui: bool = True,
) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` as nobody, with the copy of ``mdtui`` importable when ``with_mdtui``."""
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", **(env or {})}
    if with_mdtui:
        environment["PYTHONPATH"] = package_copy()
    return subprocess.run(
        drop_privileges([python_for_nobody(), "-c", code, *args]),
        capture_output=True, text=True, timeout=timeout, cwd=cwd, env=environment,
    )  # fmt: skip


# The attacker's side of a race: a long-lived process as nobody that does, when told, what another user
# can do in a directory of theirs, atomically: renameat2(RENAME_EXCHANGE) swaps two names in one step.
_ATTACKER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def exchange(a, b):
    if libc.renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), a)
print("ready", flush=True)
for line in sys.stdin:
    verb, *words = line.rstrip("\n").split("\t")
    try:
        if verb == "symlink":
            os.symlink(words[0], words[1]); print("ok", flush=True)
        elif verb == "swap-new":
            # Exchange the first entry of a directory that is not in the given names with our link.
            directory, link, *keep = words
            found = [n for n in sorted(os.listdir(directory)) if n not in keep and n != os.path.basename(link)]
            if found:
                exchange(os.path.join(directory, found[0]), link)
                print("swapped " + found[0], flush=True)
            else:
                print("none", flush=True)
        elif verb == "replace-with-link":
            # Rename a directory entry away and put a link to a place of our choosing in its stead.
            path, target = words
            os.rename(path, path + ".moved")
            os.symlink(target, path)
            print("ok", flush=True)
        else:
            print("unknown " + verb, flush=True)
    except OSError as exc:
        print("error " + str(exc), flush=True)
"""


class Attacker:
    """Another local user (nobody) at work while mdtui runs: ``ask`` sends one command and waits for its
    answer ("ok", "swapped NAME", "none" or "error ...")."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            drop_privileges([python_for_nobody(), "-I", "-c", _ATTACKER]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/",
        )  # fmt: skip
        assert self.read() == "ready"

    def read(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def ask(self, *words: str | os.PathLike[str]) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write("\t".join(map(str, words)) + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> Attacker:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
