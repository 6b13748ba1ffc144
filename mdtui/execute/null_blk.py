"""RAM-backed block devices of mdtui's own (null_blk through configfs), for calibrate: made under names only this run
uses, found by name, what a killed run left found by its prefix and dead pid, and stopped and removed (an md array
over them only when it holds nothing else); every change in the action log."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mdtui.actionlog import ActionLog
from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.probe.owner import pid_alive

PREFIX = "mdtui-cal-"


_OURS = re.compile(r"^mdtui-cal-(\d+)-(\d+)$")


@dataclass(frozen=True)
class Paths:
    """Where the kernel's interfaces are; tests point these at a temporary tree."""

    configfs: Path = Path("/sys/kernel/config")
    sys_block: Path = Path("/sys/block")
    proc: Path = Path("/proc")

    @property
    def nullb(self) -> Path:
        return self.configfs / "nullb"


LIVE_PATHS = Paths()  # the running kernel's


def leftover_names(paths: Paths, own_pid: int) -> list[str]:
    """configfs directories a killed calibration left: our prefix, and its pid no longer running."""
    try:
        entries = sorted(os.listdir(paths.nullb))
    except OSError:
        return []
    found = []
    for name in entries:
        match = _OURS.match(name)
        if match is None:
            continue
        pid = int(match.group(1))
        if pid != own_pid and not pid_alive(pid):
            found.append(name)
    return found


def require_configfs(paths: Paths) -> None:
    if not _configfs_mounted(paths) or not paths.nullb.is_dir():
        raise MdtuiError(
            f"configfs is not mounted at {paths.configfs} (mount -t configfs none {paths.configfs}): calibrate needs it"
        )


def _configfs_mounted(paths: Paths) -> bool:
    try:
        mounts = (paths.proc / "self" / "mounts").read_text(errors="replace")
    except OSError:
        return False
    return any(
        len(fields) > 2 and fields[2] == "configfs" and fields[1] == str(paths.configfs)
        for fields in (line.split() for line in mounts.splitlines())
    )


def module_available() -> bool:
    try:
        result = run_command(["modprobe", "-n", "null_blk"], timeout_s=20)
    except MdtuiError:
        return False
    return result.ok


# What the action log says of each RAM device made and removed.
MAKE_NOTE = "calibrate: make a null_blk RAM device"


REMOVE_NOTE = "calibrate: remove a null_blk RAM device"


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def device_of(paths: Paths, name: str) -> str | None:
    """The block device of one of our configfs directories; None when it is not powered.

    Kernels since 5.19 name the disk after the directory (/dev/mdtui-cal-…, "null_blk: disk x created" on
    the lab's 6.1); older ones nullbN after its index.
    """
    try:
        power = (paths.nullb / name / "power").read_text().strip()
        index = int((paths.nullb / name / "index").read_text().strip())
    except (OSError, ValueError):
        return None
    if power != "1":
        return None
    return f"/dev/{name}" if (paths.sys_block / name).exists() else f"/dev/nullb{index}"


def _arrays_over(paths: Paths, device: str) -> list[str]:
    kernel = device.rsplit("/", 1)[-1]
    try:
        return sorted(
            e
            for e in os.listdir(paths.sys_block)
            if e.startswith("md") and (paths.sys_block / e / "slaves" / kernel).exists()
        )
    except OSError:
        return []


def remove_devices(
    paths: Paths, names: list[str] | tuple[str, ...], report: Callable[[str], None], log: ActionLog | None = None
) -> list[str]:
    """Stop the md arrays built only of these devices of ours, then power them off and remove them.

    An array with any member that is not one of ``names`` is someone else's and is left alone (and so is
    that device of ours it holds: configfs refuses to power off a device in use). The problems, as lines.
    Each stop and removal is recorded in the action log (and so the system journal).
    """
    log = log or ActionLog()
    devices = {name: device_of(paths, name) for name in names}
    kernels = {d.rsplit("/", 1)[-1] for d in devices.values() if d}
    problems = []
    arrays = sorted({a for d in devices.values() if d for a in _arrays_over(paths, d)})
    for array in arrays:
        try:
            members = set(os.listdir(paths.sys_block / array / "slaves"))
        except OSError:
            continue
        if not members <= kernels:
            problems.append(f"/dev/{array} holds devices that are not ours; left running")
            continue
        result = log.run(["mdadm", "--stop", f"/dev/{array}"], "calibrate: stop", timeout_s=60, check=False)
        report(f"mdadm --stop /dev/{array}")
        if not result.ok:
            problems.append(f"mdadm --stop /dev/{array} failed: {result.stderr.strip()[:200]}")
    for name in names:
        directory = paths.nullb / name
        if not directory.is_dir():
            continue
        started = time.monotonic()
        try:
            if (directory / "power").read_text().strip() == "1":
                _write(directory / "power", "0")
            os.rmdir(directory)
            report(f"rmdir {directory}")
        except OSError as exc:
            problems.append(f"cannot remove {directory}: {exc.strerror or exc}")
            log.record_write(str(directory), "power 0, rmdir", REMOVE_NOTE, started=started, error=exc.strerror)
        else:
            log.record_write(str(directory), "power 0, rmdir", REMOVE_NOTE, started=started)
    return problems


def make_devices(
    names: tuple[str, ...], member_mib: int, paths: Paths, report: Callable[[str], None], log: ActionLog
) -> list[str]:
    """Make, power on and wait for one RAM device of ``member_mib`` MiB per name; their /dev paths."""
    members = []
    for name in names:
        directory = paths.nullb / name
        started, made = time.monotonic(), f"null_blk {member_mib} MiB"
        try:
            os.mkdir(directory, 0o755)  # FileExistsError if it exists: never reuse a directory we did not make
            _write(directory / "memory_backed", "1")
            _write(directory / "blocksize", "4096")
            _write(directory / "size", str(member_mib))
            _write(directory / "power", "1")
        except OSError as exc:
            log.record_write(str(directory), made, MAKE_NOTE, started=started, error=exc.strerror or str(exc))
            raise
        log.record_write(str(directory), made, MAKE_NOTE, started=started)
        device = device_of(paths, name)
        if device is None:
            raise MdtuiError(f"null_blk did not power on {directory}")
        for _ in range(50):  # udev makes the node
            if os.path.exists(device):
                break
            time.sleep(0.1)
        report(f"made {device} ({name}, {member_mib} MiB in RAM)")
        members.append(device)
    return members
