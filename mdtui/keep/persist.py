"""Make an array survive a reboot: its ARRAY line in the distribution's mdadm.conf, then the initramfs rebuilt
with the distribution's own tool so the copy the early boot reads says the same."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult, run_command
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError, SafetyError
from mdtui.execute.mdadm import find_array
from mdtui.execute.process import run_streaming
from mdtui.keep.conf import ConfEdit, Distribution, add_array_line, detect_distribution, read_conf
from mdtui.model.array import MdArray
from mdtui.probe.root import SystemRoot
from mdtui.probe.udev import UdevReader
from mdtui.rootwrite import write_file

# update-initramfs takes ~10-30 s on a real machine and minutes under emulation; dracut similar.
INITRAMFS_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class PersistPlan:
    device: str  # /dev/md0
    brief: str  # the ARRAY line mdadm --detail --brief gives
    distribution: Distribution
    edit: ConfEdit

    @property
    def initramfs_argv(self) -> tuple[str, ...]:
        return self.distribution.initramfs_argv

    @property
    def confirmation(self) -> str:
        """What the user types to write mdadm.conf and to refresh the initramfs: the array's name (md0)."""
        return self.device.removeprefix("/dev/")


def detail_brief(device: str) -> str:
    """The ARRAY line of `mdadm --detail --brief DEVICE`."""
    result = run_command(["mdadm", "--detail", "--brief", device], timeout_s=30)
    if not result.ok:
        raise MdtuiError(f"mdadm --detail --brief {device} failed: {result.stderr.strip() or result.returncode}")
    line = next((line for line in result.stdout.splitlines() if line.startswith("ARRAY")), None)
    if line is None:
        raise MdtuiError(f"mdadm --detail --brief {device} printed no ARRAY line")
    return " ".join(line.split())


# What a captured tree's udev record may hold for the ARRAY line: mdadm's metadata versions, array names
# (host:name, no blanks) and UUIDs as mdadm --detail --export writes them. Anything else is not used.
_METADATA = re.compile(r"[0-9]+\.[0-9]+|ddf|imsm")
_NAME = re.compile(r"[A-Za-z0-9_.:+-]{1,64}")
_UUID = re.compile(r"[0-9a-fA-F]{8}(?::[0-9a-fA-F]{8}){3}")


def tree_brief(system: SystemRoot, array: MdArray) -> str:
    """On a captured tree, the ARRAY line `mdadm --detail --brief` printed when it was captured, made from the
    tree's udev record of `mdadm --detail --export` (MD_METADATA, MD_NAME, MD_UUID): a plan, never a write."""
    major_minor = (system.read_text(f"/sys/block/{array.name}/dev") or "").strip()
    info = UdevReader(system).lookup(major_minor, array.name)
    metadata, name, uuid = info.get("MD_METADATA"), info.get("MD_NAME"), info.get("MD_UUID")
    if metadata is None or uuid is None or not _METADATA.fullmatch(metadata) or not _UUID.fullmatch(uuid):
        raise MdtuiError(
            f"the tree has no usable udev record of {array.dev_path}'s superblock (MD_METADATA, MD_UUID): "
            "its ARRAY line cannot be planned from it"
        )
    named = f" name={name}" if name is not None and _NAME.fullmatch(name) else ""
    return f"ARRAY {array.dev_path} metadata={metadata}{named} UUID={uuid}"


def plan_persist(
    device: str,
    *,
    root: SystemRoot | None = None,
    conf_path: str | None = None,
    brief: str | None = None,
) -> PersistPlan:
    """What persisting ``device`` would change. ``conf_path`` overrides the distribution's mdadm.conf."""
    system = root or SystemRoot("/")
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    if array.metadata in (None, "none"):
        raise MdtuiError(
            f"{device} has no superblock (made with --build): mdadm cannot find it again by UUID after a "
            "reboot, so there is nothing to persist"
        )
    distribution = detect_distribution(system)
    if conf_path is not None:
        distribution = Distribution(
            distribution.family, conf_path, distribution.initramfs_argv, distribution.initramfs_tool
        )
    conf = read_conf(system, distribution.conf_path)
    # The live mdadm is asked only about the live system; a captured tree has its own record of the array.
    line = brief or (detail_brief(array.dev_path) if system.is_live else tree_brief(system, array))
    try:
        edit = add_array_line(conf, line)
    except ValueError as exc:
        raise MdtuiError(str(exc)) from None
    return PersistPlan(array.dev_path, line, distribution, edit)


def describe_persist(plan: PersistPlan) -> list[str]:
    lines = [f"persist {plan.device} ({plan.distribution.family} family)", f"  ARRAY line: {plan.brief}"]
    if plan.edit.changed:
        verb = "replaces a stale line for the same UUID" if plan.edit.replaced else "adds it"
        lines.append(f"  {plan.edit.path}: {verb}")
        lines.extend("    " + row for row in plan.edit.diff().rstrip("\n").splitlines())
    else:
        lines.append(f"  {plan.edit.path} already has this line: no change")
    lines.append(f"  then refresh the initramfs: {' '.join(plan.initramfs_argv)}")
    return lines


def write_conf(
    plan: PersistPlan, *, confirmed: str | None, root: SystemRoot | None = None, log: ActionLog | None = None
) -> bool:
    """Write the planned mdadm.conf (temporary file + rename), after checking nothing changed since the plan.

    A link is written through, to the regular file it leads to (write_planned_conf).

    Returns False when there was nothing to write.
    """
    require_confirmed(confirmed, plan.confirmation, f"writing {plan.edit.path}")
    if not plan.edit.changed:
        return False
    system = root or SystemRoot("/")

    def same_array() -> None:
        current = detail_brief(plan.device)
        if current != plan.brief:
            raise SafetyError(f"{plan.device} is not the array planned (now: {current}); run persist again")

    write_planned_conf(
        system, plan.edit, "persist", f"persist {plan.device}: ARRAY line in {plan.edit.path}", log, same_array
    )
    return True


def write_planned_conf(
    system: SystemRoot,
    edit: ConfEdit,
    verb: str,
    note: str,
    log: ActionLog | None,
    recheck: Callable[[], None] | None = None,
) -> None:
    """Write a planned mdadm.conf edit: refused when the file changed since the plan (or ``recheck`` refuses),
    written through a link to its regular target, temporary file + rename, and logged with its diff."""
    if read_conf(system, edit.path).text != edit.old_text:
        raise SafetyError(f"{edit.path} changed since the plan was made; run {verb} again to see the new diff")
    if recheck is not None:
        recheck()
    started = time.monotonic()
    # A link is written through to the file it leads to (replacing the link with a plain file would leave
    # that file, which mdadm may still read, with the old lines), when no other user can change the link.
    write_file(system.path(edit.path), edit.new_text.encode("utf-8"), replace=True, follow_last=True)
    (log or ActionLog()).record(
        CommandResult(("mdtui-write", edit.path), 0, edit.diff(), "", time.monotonic() - started), note
    )


def refresh_initramfs(
    plan: PersistPlan,
    *,
    confirmed: str | None,
    on_output: Callable[[str], None] | None = None,
    timeout_s: float = INITRAMFS_TIMEOUT_S,
    log: ActionLog | None = None,
) -> CommandResult:
    """Run update-initramfs -u / dracut -f, streaming its output; raises MdtuiError when it fails."""
    require_confirmed(confirmed, plan.confirmation, f"running {' '.join(plan.initramfs_argv)}")
    argv = plan.initramfs_argv

    def forward(data: bytes) -> None:
        if on_output is not None:
            on_output(data.decode("utf-8", "replace"))

    run = asyncio.run(run_streaming(argv, on_stdout=forward, on_stderr=forward, timeout_s=timeout_s))
    result = CommandResult(
        run.argv,
        run.returncode if run.returncode is not None else -1,
        run.stdout.decode("utf-8", "replace"),
        run.stderr_text,
        run.duration_s,
    )
    (log or ActionLog()).record(result, f"persist {plan.device}: refresh the initramfs")
    if run.timed_out:
        raise MdtuiError(f"{argv[0]} did not finish within {timeout_s:g} s")
    if not result.ok:
        tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or [""]
        raise MdtuiError(f"{' '.join(argv)} failed (exit {result.returncode}): {tail[0]}")
    return result
