"""The right disk: everything that tells one drive from another before it is failed, removed or pulled (full serial,
WWN, model, the controller and port it hangs off, its enclosure slot), and its locate LED blinked and turned off.

The LED is blinked through the enclosure's own ``locate`` attribute where /sys/class/enclosure lists the disk (SES
backplanes), else through ledmon's ``ledctl locate=/dev/X`` (SES, VMD and NPEM backplanes), and turned off the same
way (``locate`` 0, ``ledctl locate_off=/dev/X``). The typed confirmation for failing, removing or replacing a
member is the serial printed on the drive's label: what the admin reads before pulling it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from mdtui.actionlog import ActionLog
from mdtui.errors import MdtuiError
from mdtui.model.disk import Disk
from mdtui.probe.enclosure import EnclosureSlot, enclosure_slot
from mdtui.probe.root import SystemRoot
from mdtui.tune.journal import write_sysfs


@dataclass(frozen=True)
class Identity:
    """What identifies one disk, for the admin standing at the machine."""

    disk: str
    serial: str | None
    wwn: str | None
    model: str | None
    by_path: str | None
    by_id: str | None
    slot: EnclosureSlot | None

    def lines(self) -> list[str]:
        rows = [
            ("serial", self.serial or "unknown (the drive does not report one)"),
            ("WWN", self.wwn or "none reported"),
            ("model", self.model or "unknown"),
            ("port", self.by_path.removeprefix("/dev/disk/by-path/") if self.by_path else "unknown (no udev by-path)"),
            ("slot", self.slot.describe() if self.slot else "no enclosure lists it (/sys/class/enclosure)"),
        ]
        return [f"{self.disk}: {name:<6} {value}" for name, value in rows]

    @property
    def token(self) -> str:
        """What the admin types to confirm acting on it: the serial on its label, else its name."""
        return self.serial or self.disk

    def as_json(self) -> dict[str, object]:
        return {
            "disk": self.disk,
            "serial": self.serial,
            "wwn": self.wwn,
            "model": self.model,
            "by_path": self.by_path,
            "by_id": self.by_id,
            "enclosure_slot": None
            if self.slot is None
            else {"enclosure": self.slot.enclosure, "component": self.slot.component, "slot": self.slot.slot},
        }


def identify(root: SystemRoot, disk: Disk) -> Identity:
    return Identity(
        disk.name, disk.serial, disk.wwn, disk.model, disk.by_path, disk.by_id_path, enclosure_slot(root, disk.name)
    )


@dataclass(frozen=True)
class LocatePlan:
    """How one disk's LED is blinked and turned off: an enclosure attribute, or ledctl's argv."""

    disk: str
    slot: EnclosureSlot | None
    on_argv: tuple[str, ...] = ()  # ledctl, when no enclosure attribute is there
    off_argv: tuple[str, ...] = ()

    @property
    def how(self) -> str:
        return "enclosure" if self.slot is not None else "ledctl"

    def shown(self) -> list[str]:
        if self.slot is not None:
            path = self.slot.locate_path
            return [f"on:  echo 1 > '{path}'", f"off: echo 0 > '{path}'"]
        return [f"on:  {' '.join(self.on_argv)}", f"off: {' '.join(self.off_argv)}"]


def plan_locate(root: SystemRoot, disk: Disk, *, ledctl: str | None = None) -> LocatePlan:
    """The enclosure's locate attribute where it lists the disk, else ledctl; MdtuiError when neither can."""
    slot = enclosure_slot(root, disk.name)
    if slot is not None and root.path(slot.locate_path).is_file():
        return LocatePlan(disk.name, slot)
    tool = ledctl if ledctl is not None else shutil.which("ledctl")
    if tool is None:
        raise MdtuiError(
            f"{disk.name} has no enclosure slot with a locate LED here and ledctl (ledmon) is not installed: "
            "nothing can blink it; find it by its serial"
        )
    # The canonical /dev/NAME of a kernel name: nothing a device string could turn into another path.
    device = f"/dev/{disk.name}"
    return LocatePlan(disk.name, None, ("ledctl", f"locate={device}"), ("ledctl", f"locate_off={device}"))


def _run(plan: LocatePlan, root: SystemRoot, on: bool, log: ActionLog) -> None:
    note = f"locate {plan.disk}: {'on' if on else 'off'}"
    if plan.slot is not None:
        write_sysfs(root, plan.slot.locate_path, "1" if on else "0", note, log)
        return
    result = log.run(plan.on_argv if on else plan.off_argv, note, timeout_s=30, check=False)
    if not result.ok:
        raise MdtuiError(f"{' '.join(result.argv)} failed: {result.stderr.strip()[-300:] or result.returncode}")


class Locating:
    """``with Locating(root, plan):`` blinks the LED and turns it off when the block ends, however it ends."""

    def __init__(self, root: SystemRoot, plan: LocatePlan, log: ActionLog | None = None) -> None:
        self.root = root
        self.plan = plan
        self.log = log or ActionLog()

    def __enter__(self) -> Locating:
        _run(self.plan, self.root, True, self.log)
        return self

    def __exit__(self, *exc: object) -> None:
        _run(self.plan, self.root, False, self.log)
