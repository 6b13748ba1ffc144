"""What this host gives mdtui: its tools and their versions, the md driver, root, cpufreq, where state goes.

Each check is one finding with what a missing piece costs, for `mdtui doctor`. Tools are looked up on
this machine's PATH; the md driver, udev's database and cpufreq are read below the root, so a captured
tree answers for the machine it came from.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import metadata
from pathlib import Path

from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.probe.cpu import cpufreq_dirs
from mdtui.probe.mdstat import parse_personalities
from mdtui.probe.root import SystemRoot
from mdtui.rootsafe import path_problem

VERSION_TIMEOUT_S = 5.0


class Status(StrEnum):
    OK = "ok"
    MISSING = "missing"  # not there: `cost` says what mdtui cannot do without it
    WARN = "warn"  # there, but short of what mdtui needs in full: `cost` says what


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    found: str  # what is there: a version, a path and its mode, "not found"
    cost: str | None = None  # what the missing or short piece costs; None when nothing

    def line(self, width: int = 10) -> str:
        mark = {Status.OK: "✓", Status.MISSING: "✖", Status.WARN: "⚠"}[self.status]
        tail = f" — {self.cost}" if self.cost else ""
        return f"{mark} {self.name:<{width}} {self.found}{tail}"


@dataclass(frozen=True)
class Tool:
    name: str
    argv: tuple[str, ...]  # prints the version
    pattern: str  # the version in that output (group 1)
    cost: str  # what mdtui cannot do without it


TOOLS = (
    Tool("mdadm", ("mdadm", "--version"), r"mdadm - (v[\w.\-]+)", "cannot create, stop, repair or persist arrays"),
    Tool("fio", ("fio", "--version"), r"fio-([\w.\-]+)", "cannot benchmark (bench, experiment)"),
    Tool(
        "smartctl",
        ("smartctl", "--version"),
        r"smartctl ([\w.\-]+)",
        "no SMART health, temperatures or error counts in scan and the inventory",
    ),
    Tool("udevadm", ("udevadm", "--version"), r"^(\d[\w.\-]*)", "cannot wait for new arrays' device nodes to settle"),
)

# Runs a tool's version command: (argv) -> its stdout and stderr together, None when it cannot run.
VersionRunner = Callable[[Sequence[str]], str | None]


def _run_version(argv: Sequence[str]) -> str | None:
    try:
        result = run_command(argv, timeout_s=VERSION_TIMEOUT_S)
    except MdtuiError:
        return None
    return f"{result.stdout}\n{result.stderr}"


def check_tool(
    tool: Tool, which: Callable[[str], str | None] = shutil.which, run: VersionRunner = _run_version
) -> Check:
    path = which(tool.name)
    if path is None:
        return Check(tool.name, Status.MISSING, "not found on PATH", tool.cost)
    output = run(tool.argv)
    match = re.search(tool.pattern, output or "", re.MULTILINE)
    if match is None:
        return Check(tool.name, Status.WARN, f"{path}, version unknown", f"`{' '.join(tool.argv)}` did not say")
    return Check(tool.name, Status.OK, f"{match[1]} ({path})")


def check_md(root: SystemRoot) -> Check:
    text = root.read_text("/proc/mdstat")
    if text is None:
        return Check(
            "md driver",
            Status.MISSING,
            "no /proc/mdstat",
            "the md driver is not loaded (modprobe md_mod): no arrays can be seen or created",
        )
    personalities = parse_personalities(text)
    if not personalities:
        return Check(
            "md driver",
            Status.OK,
            "loaded, no personalities yet",
            "each level's module (raid1, raid456, raid10) loads with its first array",
        )
    return Check("md driver", Status.OK, "loaded; personalities " + " ".join(personalities))


def check_udev(root: SystemRoot) -> Check:
    database = root.path("/run/udev/data")
    if database.is_dir():
        return Check("udev db", Status.OK, str(database))
    return Check(
        "udev db",
        Status.MISSING,
        f"no {database}",
        "no disk models, serials or by-id names (udev is not running)",
    )


def check_privilege(euid: int | None = None) -> Check:
    euid = os.geteuid() if euid is None else euid
    if euid == 0:
        return Check("root", Status.OK, "yes")
    return Check(
        "root",
        Status.WARN,
        f"no (uid {euid})",
        "scan and watch read what any user may; SMART, create, bench on disks, repair and tune need root",
    )


def check_cpufreq(root: SystemRoot) -> Check:
    dirs = cpufreq_dirs(root)
    if not dirs:
        return Check(
            "cpufreq",
            Status.MISSING,
            "no cpufreq in /sys",
            "watch shows no core frequencies; tune cannot set the governor",
        )
    governors = sorted({root.read_text(path / "scaling_governor") or "?" for path in dirs.values()})
    driver = root.read_text(next(iter(dirs.values())) / "scaling_driver") or "?"
    return Check("cpufreq", Status.OK, f"{len(dirs)} CPUs, driver {driver}, governor {'/'.join(governors)}")


def check_location(name: str, path: Path, what: str) -> Check:
    """A place mdtui writes (state, results): its mode and owner when it exists, else whether it can be made."""
    problem = path_problem(path)
    if problem:
        return Check(name, Status.WARN, str(path), f"not used: {problem}")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        parent = next((p for p in path.parents if p.exists()), Path("/"))
        if os.access(parent, os.W_OK | os.X_OK):
            return Check(name, Status.OK, f"{path} (made on first use)")
        return Check(name, Status.WARN, f"{path} (absent)", f"{parent} is not writable: {what} cannot be kept")
    except OSError as exc:
        return Check(name, Status.WARN, str(path), f"cannot read it: {exc.strerror}")
    mode = stat.S_IMODE(info.st_mode)
    found = f"{path} (mode {mode:04o}, uid {info.st_uid})"
    if not os.access(path, os.R_OK | os.W_OK):
        return Check(name, Status.WARN, found, f"not writable by uid {os.geteuid()}: {what} cannot be kept")
    return Check(name, Status.OK, found)


def check_textual() -> Check:
    # The version from the installed distribution: the core never imports Textual itself.
    try:
        version = metadata.version("textual")
    except metadata.PackageNotFoundError:
        return Check("textual", Status.MISSING, "not installed", "no app: only the command-line verbs work")
    return Check("textual", Status.OK, version)


def host_checks(
    root: SystemRoot,
    locations: Sequence[tuple[str, Path | MdtuiError, str]],
    *,
    which: Callable[[str], str | None] = shutil.which,
    run: VersionRunner = _run_version,
    euid: int | None = None,
) -> list[Check]:
    """Every check, in the order doctor prints them.

    locations: (name, where, what is kept there); an MdtuiError where the location itself was refused
    (an unsafe $XDG_STATE_HOME in another user's environment).
    """
    checks = [check_tool(tool, which, run) for tool in TOOLS]
    checks += [check_udev(root), check_md(root), check_privilege(euid), check_cpufreq(root)]
    for name, where, what in locations:
        if isinstance(where, MdtuiError):
            checks.append(Check(name, Status.WARN, "refused", str(where)))
        else:
            checks.append(check_location(name, where, what))
    checks.append(check_textual())
    return checks


def missing_pieces(root: SystemRoot, which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """What this host lacks that mdtui needs, a sentence each, for the app's first run.

    Cheap enough for a launch: tools are looked up on PATH (no version commands run) and /proc/mdstat is
    read once. `mdtui doctor` says the rest.
    """
    checks = [check_tool(tool, which, lambda argv: "") for tool in TOOLS] + [check_md(root)]
    return [f"{check.name}: {check.cost}" for check in checks if check.status is Status.MISSING]
