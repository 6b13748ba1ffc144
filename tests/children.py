"""A real mdtui process killed with SIGKILL mid-work: the attack the knob journal and the sync boost are tested
against (tests/unit/test_tune.py, tests/unit/test_boost.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# How long the child may take to reach the point where it is killed (import, journal, knob writes).
CHILD_READY_TIMEOUT_S = 20.0


@contextmanager
def killed_when_ready(code: str, ready: Path, what: str) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``code`` in a child Python that imports this checkout; once it writes ``ready``, yield it (alive), then
    kill it with SIGKILL. ``what`` finishes "the child never ..." when it does not get there in time."""
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    try:
        deadline = time.monotonic() + CHILD_READY_TIMEOUT_S
        while not ready.exists():
            assert child.poll() is None, f"the child exited with {child.returncode}"
            assert time.monotonic() < deadline, f"the child never {what}"
            time.sleep(0.05)
        yield child
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
