"""The one runner every external command goes through: argv only, logged with exit code and duration."""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mdtui.errors import CommandError, MdtuiError

log = logging.getLogger("mdtui.command")


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_command(
    argv: Sequence[str],
    *,
    timeout_s: float = 60.0,
    check: bool = False,
    input_text: str | None = None,
    env: Mapping[str, str] | None = None,
    leaves_child: bool = False,
) -> CommandResult:
    """Run argv (never through a shell), log it, and return its output.

    A missing program or a timeout raises MdtuiError with a message naming the command; with
    ``check`` a non-zero exit raises CommandError carrying stderr.

    ``leaves_child``: the command forks a process that outlives it and keeps its output open (``mdadm --grow``
    leaves one to watch the reshape where systemd does not take it over). Its output then goes to temporary
    files read once the command itself exits (pipes would stay open until the reshape ends), and it runs in a
    session of its own, so a Ctrl-C or a dropped SSH session that stops mdtui does not stop that process.
    """
    argv = [str(a) for a in argv]
    if not argv:
        raise MdtuiError("internal error: empty command")
    if shutil.which(argv[0]) is None:
        raise MdtuiError(f"{argv[0]} is not installed (needed to run: {' '.join(argv)})")
    started = time.monotonic()
    if leaves_child:
        return _run_leaving_child(argv, timeout_s=timeout_s, check=check, env=env, started=started)
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            input=input_text,
            stdin=None if input_text is not None else subprocess.DEVNULL,
            check=False,
            env=None if env is None else dict(env),
        )
    except subprocess.TimeoutExpired as exc:
        log.warning("timeout after %.1fs: %s", timeout_s, argv)
        raise MdtuiError(f"{argv[0]} did not finish within {timeout_s:g} s") from exc
    duration = time.monotonic() - started
    log.info("ran %s -> %d in %.3fs", argv, proc.returncode, duration)
    result = CommandResult(tuple(argv), proc.returncode, proc.stdout, proc.stderr, duration)
    if check and not result.ok:
        raise CommandError(argv, proc.returncode, proc.stderr)
    return result


def _run_leaving_child(
    argv: list[str], *, timeout_s: float, check: bool, env: Mapping[str, str] | None, started: float
) -> CommandResult:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
        try:
            returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            proc.wait()
            log.warning("timeout after %.1fs: %s", timeout_s, argv)
            raise MdtuiError(f"{argv[0]} did not finish within {timeout_s:g} s") from exc
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    duration = time.monotonic() - started
    log.info("ran %s -> %d in %.3fs (its child may still run)", argv, returncode, duration)
    result = CommandResult(tuple(argv), returncode, stdout, stderr, duration)
    if check and not result.ok:
        raise CommandError(argv, returncode, stderr)
    return result
