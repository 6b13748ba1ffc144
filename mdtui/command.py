"""The one runner every external command goes through: argv only, logged with exit code and duration."""

from __future__ import annotations

import logging
import shutil
import subprocess
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
) -> CommandResult:
    """Run argv (never through a shell), log it, and return its output.

    A missing program or a timeout raises MdtuiError with a message naming the command; with
    ``check`` a non-zero exit raises CommandError carrying stderr.
    """
    argv = [str(a) for a in argv]
    if not argv:
        raise MdtuiError("internal error: empty command")
    if shutil.which(argv[0]) is None:
        raise MdtuiError(f"{argv[0]} is not installed (needed to run: {' '.join(argv)})")
    started = time.monotonic()
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
