"""Reading the knobs of one array from sysfs and procfs: value, choices, range, suggestion, cost."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from mdtui.ascii_numbers import parse_int
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.plan.sync_inputs import SyncLimits
from mdtui.probe.root import SystemRoot
from mdtui.tune.catalogue import KNOBS, KNOBS_BY_NAME, SPEED_MAX, ArrayShape, Knob, Scope, Suggestion, Workload


@dataclass(frozen=True)
class Value:
    """A knob file's text split into what it is set to, what writing it back takes, and any choices."""

    raw: str  # the file as read ("1000 (system)", "[none] mq-deadline")
    value: str  # what it is set to ("1000", "none")
    restore: str  # what to write to put it back ("system" for a speed that follows the global limit)
    choices: tuple[str, ...] = ()


def parse_value(knob: Knob, raw: str) -> Value:
    text = raw.strip()
    if knob.kind == "choice":
        words = text.split()
        chosen = next((w[1:-1] for w in words if w.startswith("[") and w.endswith("]")), words[0] if words else "")
        return Value(text, chosen, chosen, tuple(w.strip("[]") for w in words))
    if knob.kind == "speed":
        number, _, source = text.partition(" ")
        follows_system = source.strip() == "(system)"
        return Value(text, number, "system" if follows_system else number)
    return Value(text, text, text)


def read_value(root: SystemRoot, knob: Knob, device: str) -> Value | None:
    raw = root.read_text(knob.system_path(device))
    return None if raw is None else parse_value(knob, raw)


@dataclass(frozen=True)
class KnobReading:
    knob: Knob
    device: str  # "md0", a member "nvme0n1", or "" for a global limit
    path: str  # the system path
    value: Value | None  # None: the file is not there (not this level, or not this kernel)
    writable: bool
    suggestion: Suggestion
    memory_bytes: int | None = None  # what the current value costs (stripe cache)
    suggested_memory_bytes: int | None = None

    @property
    def shown(self) -> str:
        return "not available" if self.value is None else self.value.raw


def array_shape(array: MdArray, inventory: Inventory | None, workload: Workload = Workload.GENERAL) -> ArrayShape:
    members = [m for m in array.members if not m.faulty and not m.spare]
    disks = [inventory.disk(m.name) for m in members] if inventory is not None else []
    known = [d for d in disks if d is not None]
    rotational = any(d.rotational for d in known) if known else None
    nvme = bool(known) and all(d.name.startswith("nvme") for d in known)
    return ArrayShape(
        level=array.level,
        members=array.raid_disks or len(members),
        chunk_bytes=array.chunk_bytes,
        rotational=rotational,
        nvme=nvme,
        cpus=os.cpu_count() or 1,
        workload=workload,
    )


def member_names(array: MdArray) -> list[str]:
    return [m.name for m in array.members if not m.faulty]


def _writable(root: SystemRoot, path: str) -> bool:
    return root.is_live and os.access(root.path(path), os.W_OK)


def reading(root: SystemRoot, knob: Knob, device: str, shape: ArrayShape) -> KnobReading:
    path = knob.system_path(device)
    value = read_value(root, knob, device)
    suggestion = knob.suggest(shape, value.value if value else None)
    return KnobReading(
        knob=knob,
        device=device if knob.scope is not Scope.GLOBAL else "",
        path=path,
        value=value,
        writable=value is not None and _writable(root, path),
        suggestion=suggestion,
        memory_bytes=knob.memory_bytes(value.value if value else None, shape),
        suggested_memory_bytes=knob.memory_bytes(suggestion.value, shape),
    )


def read_knobs(
    root: SystemRoot,
    array: MdArray,
    inventory: Inventory | None = None,
    *,
    workload: Workload = Workload.GENERAL,
    members: bool = True,
) -> list[KnobReading]:
    """Every knob that applies to ``array``: md's (for its level), its queue's, each member's, the global limits.

    A knob whose file is missing is listed as not available (a kernel without it, or a captured tree).
    """
    shape = array_shape(array, inventory, workload)
    found = []
    for knob in KNOBS:
        if not knob.applies_to(array.level):
            continue
        if knob.scope is Scope.MEMBER:
            if members:
                found += [reading(root, knob, name, shape) for name in member_names(array)]
            continue
        found.append(reading(root, knob, array.name, shape))
    return found


def knob_context(root: SystemRoot, array: MdArray) -> dict[str, str]:
    """The knobs of ``array`` as read now, for a stored run's context: {"md/stripe_cache_size": "4096", ...}.

    Members' knobs are keyed by member ("nvme0n1/scheduler"), the global limits by their procfs name.
    """
    found: dict[str, str] = {}
    for item in read_knobs(root, array):
        if item.value is None:
            continue
        if item.knob.scope is Scope.GLOBAL:
            key = f"dev.raid.{item.knob.attribute}"
        elif item.knob.scope is Scope.MEMBER:
            key = f"{item.device}/{item.knob.attribute}"
        else:
            key = f"{item.knob.scope.value}/{item.knob.attribute}"
        found[key] = item.value.raw
    return found


def read_sync_limits(
    root: SystemRoot, array: str | None = None, *, own: Mapping[str, Value | None] | None = None
) -> SyncLimits:
    """md's sync speed limits for ``array`` (or the system's alone), for the sync-time model.

    The array's ``md/sync_speed_min``/``max`` say the value md uses and whether it is the array's own ("local")
    or follows the system ("system"); /proc/sys/dev/raid gives the system's. A captured tree without /proc/sys
    still names the system's through the array's files; what cannot be read at all is md's default, and the
    limits say so (``read`` False). ``own``: the array's files as the caller read them already, by knob name
    ({"sync_speed_min": Value, "sync_speed_max": ...}), not read again.
    """

    def number(value: Value | None) -> int | None:
        return None if value is None else parse_int(value.value, lo=0, hi=SPEED_MAX)

    system: dict[str, int | None] = {}
    found: dict[str, int | None] = {"min": None, "max": None}
    for kind in ("min", "max"):
        system[kind] = number(read_value(root, KNOBS_BY_NAME[f"speed_limit_{kind}"], ""))
        if array is None:
            continue
        name = f"sync_speed_{kind}"
        value = own[name] if own is not None else read_value(root, KNOBS_BY_NAME[name], array)
        if value is not None and value.restore == "system":
            # md prints the system's value beside "(system)": a tree without /proc/sys still tells it.
            system[kind] = system[kind] if system[kind] is not None else number(value)
        else:
            found[kind] = number(value)
    defaults = SyncLimits()
    return SyncLimits(
        system_min_kib_s=system["min"] if system["min"] is not None else defaults.system_min_kib_s,
        system_max_kib_s=system["max"] if system["max"] is not None else defaults.system_max_kib_s,
        array_min_kib_s=found["min"],
        array_max_kib_s=found["max"],
        array=array or "",
        read=system["min"] is not None and system["max"] is not None,
    )
