"""The benchmark form's choices: the targets it offers (arrays, disks, a path typed in), an array's active members,
the custom job's fields parsed into options; pure functions the bench screen draws from."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.bench.requests import JobOptions, parse_size
from mdtui.errors import MdtuiError
from mdtui.format import iec_bytes
from mdtui.model.inventory import Inventory
from mdtui.model.job import IoEngine, RwMode

CUSTOM_FIELDS = ("bs", "iodepth", "numjobs", "runtime")
# The target list's last choice: a path typed in (a file, as `mdtui bench --target FILE` takes, or a device not
# listed). Not a path itself, so it never stands for one.
OTHER_TARGET = "other: a path"


@dataclass(frozen=True)
class CustomFields:
    """The custom job's fields as typed; parsed into JobOptions by custom_options()."""

    rw: str = RwMode.READ.value
    bs: str = "4k"
    iodepth: str = "1"
    numjobs: str = "1"
    runtime: str = "30"


def custom_options(fields: CustomFields) -> JobOptions:
    """JobOptions from the typed fields; MdtuiError naming the field that is not a number or size."""

    def whole(text: str, what: str) -> int:
        if not text.strip().isdigit() or int(text) < 1:
            raise MdtuiError(f"{what} must be a whole number of at least 1, not {text!r}")
        return int(text)

    return JobOptions(
        rw=RwMode(fields.rw),
        block_size_bytes=parse_size(fields.bs, "block size"),
        iodepth=whole(fields.iodepth, "iodepth"),
        numjobs=whole(fields.numjobs, "numjobs"),
        runtime_s=whole(fields.runtime, "runtime"),
        ioengine=IoEngine.LIBAIO,
    )


def active_members(inventory: Inventory, target: str | None) -> tuple[str, ...]:
    """The active members of the array at target (a /dev path), () when the target is not an array."""
    array = inventory.array(target.removeprefix("/dev/")) if target else None
    if array is None:
        return ()
    return tuple(m.name for m in array.members if not m.spare and not m.faulty)


def is_array(inventory: Inventory, target: str | None) -> bool:
    return bool(target) and inventory.array((target or "").removeprefix("/dev/")) is not None


def target_options(inventory: Inventory) -> list[tuple[str, str]]:
    """Arrays first, then disks, each with what decides whether it may be written."""
    options = []
    for array in inventory.arrays:
        if array.level is None:
            continue
        members = sum(1 for m in array.members if not m.spare and not m.faulty)
        label = f"{array.name}  {array.level}, {members} members, {iec_bytes(array.size_bytes)}"
        options.append((label, array.dev_path))
    for disk in inventory.disks:
        state = "free" if disk.available else f"in use: {disk.in_use[0].kind.value}" if disk.in_use else "unknown"
        options.append((f"{disk.name}  {disk.transport.value}, {iec_bytes(disk.size_bytes)}, {state}", disk.dev_path))
    options.append(("a file or another path… (type it below)", OTHER_TARGET))
    return options
