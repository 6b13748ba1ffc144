"""mdtui's action log: every action that writes (a command, a knob, a file), one JSON line each in the state
directory for the admin to audit, and the same told to the system journal (mdtui.audit). It is the one place
actions are logged: a verb that records its writes here is in both."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path

from mdtui.audit import action_message, command_line, invoking_user, tell_system_log
from mdtui.command import CommandResult, run_command
from mdtui.errors import CommandError
from mdtui.probe.owner import state_dir
from mdtui.state_dir import StateDir, UnsafeStateError

log = logging.getLogger(__name__)


def skipped(where: Path, why: object) -> None:
    """One line on stderr for a state file that was not used."""
    log.warning("mdtui: skipped %s: %s", where, why)


class ActionLog:
    """Every action that writes (a command, a knob, a file), one JSON line each, kept for the admin to audit,
    and the same told to the system journal (mdtui.audit): this is the one place actions are logged."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "actions.log"

    def record(self, result: CommandResult, note: str = "") -> None:
        user = invoking_user()
        invoked_as = command_line()
        told = tell_system_log(
            action_message(result.argv, result.returncode, result.duration_s, note, user, invoked_as),
            failed=not result.ok,
        )
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": list(result.argv),
            "returncode": result.returncode,
            "duration_s": round(result.duration_s, 3),
            "stdout": result.stdout[-4000:],
            "stderr": result.stderr[-4000:],
            "note": note,
            "user": user.as_json(),
            "invoked_as": invoked_as,
            "system_log": told,
        }
        StateDir(self.path.parent).append(self.path.name, (json.dumps(entry) + "\n").encode())

    def run(
        self, argv: Sequence[str], note: str, *, timeout_s: float = 120, check: bool = True, leaves_child: bool = False
    ) -> CommandResult:
        """Run a command that writes and record it; with ``check`` a non-zero exit raises CommandError.
        ``leaves_child``: see mdtui.command.run_command (mdadm --grow's watcher)."""
        result = run_command(list(argv), timeout_s=timeout_s, leaves_child=leaves_child)
        self.record(result, note)
        if check and not result.ok:
            raise CommandError(list(argv), result.returncode, result.stderr)
        return result

    def record_write(self, path: str, value: str, note: str, *, started: float, error: str | None = None) -> None:
        """Record a write mdtui made itself (a knob, a sysfs or configfs file): shown as `mdtui-write PATH VALUE`."""
        seconds = time.monotonic() - started
        returncode = 0 if error is None else 1
        self.record(CommandResult(("mdtui-write", path, value), returncode, "", error or "", seconds), note)

    def entries(self) -> list[dict]:
        try:
            data = StateDir(self.path.parent).read(self.path.name)
        except UnsafeStateError as exc:
            skipped(self.path, exc)
            return []
        lines = (data or b"").decode("utf-8", "replace").splitlines()
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out
