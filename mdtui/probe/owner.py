"""Which process owns something on disk (a running run, a temporary array, a knob journal), in a form that
survives PID reuse and reboots; and where mdtui keeps such per-user state."""

from __future__ import annotations

import os
from pathlib import Path

from mdtui.probe.root import read_attribute
from mdtui.state_dir import env_location, home_dir

_BOOT_ID = "/proc/sys/kernel/random/boot_id"
_PID_MAX = 1 << 22  # the kernel's ceiling for pid_max (PID_MAX_LIMIT on 64-bit)


def _boot_id() -> str:
    return read_attribute(_BOOT_ID) or ""


def boot_id() -> str:
    """This boot's ID: anything recorded with another one was recorded before the last reboot."""
    return _boot_id()


def _start_ticks(pid: int) -> str:
    """Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot."""
    stat = read_attribute(f"/proc/{pid}/stat")
    if stat is None:
        return ""
    # The command name (field 2) may hold spaces and parentheses; fields after the last ")" are plain.
    rest = stat.rsplit(")", 1)[-1].split()
    return rest[19] if len(rest) > 19 else ""


def current_owner() -> str:
    """A token naming this process: boot ID, PID and start time."""
    pid = os.getpid()
    return f"{_boot_id()}/{pid}/{_start_ticks(pid)}"


def owner_alive(token: str | None) -> bool:
    """Whether the process named by ``token`` still runs; False for None or a malformed token."""
    if not token:
        return False
    parts = token.split("/")
    if len(parts) != 3 or not (parts[1].isascii() and parts[1].isdigit()) or len(parts[1]) > 10:
        return False
    boot_id, pid_text, ticks = parts
    if boot_id and boot_id != _boot_id():
        return False
    pid = int(pid_text)
    if not 0 < pid <= _PID_MAX:
        return False  # a damaged token: no such process can exist
    if ticks:
        # A different start time means the PID was reused by another process.
        return _start_ticks(pid) == ticks
    return pid_alive(pid)


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID runs (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def state_dir() -> Path:
    """$MDTUI_STATE_DIR, else $XDG_STATE_HOME/mdtui, else ~/.local/state/mdtui.

    In another user's environment (sudo, su, doas, pkexec) a location from it is used only when root owns it
    (state_dir.env_location: UnsafeStateError naming the variable otherwise), and ~ is the effective user's home.
    """
    override = env_location("MDTUI_STATE_DIR")
    if override:
        return Path(override)
    base = env_location("XDG_STATE_HOME")
    # The XDG spec says a relative value is invalid and must be ignored.
    if not base or not os.path.isabs(base):
        base = str(home_dir() / ".local" / "state")
    return Path(base) / "mdtui"
