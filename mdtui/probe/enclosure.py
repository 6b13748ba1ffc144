"""Where a disk sits in its enclosure: the slot /sys/class/enclosure gives it (SES backplanes), and its locate LED.

The kernel's enclosure class (drivers/misc/enclosure.c, Documentation/ABI/testing/sysfs-class-enclosure) makes
one directory per enclosure under /sys/class/enclosure, named by its SCSI address ("0:0:12:0"), holding
``components`` (their count), ``id`` and one directory per component, named by the enclosure ("Slot 01",
"ArrayDevice05", "3"). A component has ``slot`` (its number; unreadable when the enclosure gives none), ``type``,
``status``, ``fault``, ``locate`` and ``active`` (0 or 1; writing 1 to ``locate`` blinks the slot's LED) and,
when a disk sits in it, a ``device`` link to the disk's SCSI device, the same directory /sys/block/DISK/device
leads to. Names come from the enclosure's firmware: they are cleaned like any device string.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.ascii_numbers import parse_int
from mdtui.probe.root import SystemRoot
from mdtui.text import clean_line

ENCLOSURE_CLASS = "/sys/class/enclosure"
# Slots an enclosure may number; a bigger "slot" is not one.
MAX_SLOT = 1 << 16


@dataclass(frozen=True)
class EnclosureSlot:
    enclosure: str  # the enclosure's directory name (its SCSI address)
    component: str  # the component's name ("Slot 01")
    slot: int | None  # its number, when the enclosure gives one
    locate: bool | None  # the locate LED now (None: unreadable)
    enclosure_id: str | None = None  # the enclosure's own id (a SAS address), when it gives one

    @property
    def locate_path(self) -> str:
        return f"{ENCLOSURE_CLASS}/{self.enclosure}/{self.component}/locate"

    def describe(self) -> str:
        """ "slot 5 (Slot 05) of enclosure 0:0:12:0" """
        number = f"slot {self.slot} " if self.slot is not None else ""
        return f"{number}({self.component}) of enclosure {self.enclosure}" + (
            f", id {self.enclosure_id}" if self.enclosure_id else ""
        )


def enclosure_slot(root: SystemRoot, disk: str) -> EnclosureSlot | None:
    """The enclosure slot holding ``disk`` (a kernel name, "sdc"); None when no enclosure lists it."""
    device = root.resolve(f"/sys/block/{disk}/device")
    if device is None:
        return None
    for enclosure in root.listdir(ENCLOSURE_CLASS):
        base = f"{ENCLOSURE_CLASS}/{enclosure}"
        for component in root.listdir(base):
            if root.resolve(f"{base}/{component}/device") != device:
                continue
            if clean_line(enclosure) != enclosure or clean_line(component) != component or "/" in component:
                return None  # a name a terminal would misread is not one to show or to write under
            state = (root.read_text(f"{base}/{component}/locate") or "").strip()
            return EnclosureSlot(
                enclosure=enclosure,
                component=component,
                slot=parse_int(root.read_text(f"{base}/{component}/slot"), hi=MAX_SLOT),
                locate=None if state not in ("0", "1") else state == "1",
                enclosure_id=clean_line(root.read_text(f"{base}/id") or "") or None,
            )
    return None
