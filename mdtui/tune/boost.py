"""A sync run faster on purpose, and undone: one array's md/sync_speed_min and md/sync_speed_max raised together
through the knob journal (tune/journal.py), so the old values come back when the sync ends, when the user stops
following it, and at the next mdtui start after mdtui was killed.

md yields a sync to any other I/O above ``sync_speed_min`` and sleeps it above ``sync_speed_max`` (both fall
back to /proc/sys/dev/raid's limits while they say "system"). Raising only the minimum (what ``--full-speed``
did, and never put back) left every later sync of the array starving foreground I/O, and left the maximum,
200,000 KiB/s by default, holding an NVMe rebuild back. A boost sets both to what the members allow (the
sync-time model's pace without md's limits, with headroom), or, when nothing is known of the members, to a
rate no single member reaches; its cost to foreground I/O is said before anything is written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mdtui.errors import MdtuiError
from mdtui.format import about, rate_mb_s
from mdtui.model.array import MdArray
from mdtui.plan.sync_inputs import KIB
from mdtui.plan.sync_time import SyncTime
from mdtui.probe.root import SystemRoot
from mdtui.tune.catalogue import KNOBS_BY_NAME, SPEED_MAX
from mdtui.tune.journal import KnobChanger, Restored
from mdtui.tune.read import read_sync_limits, read_value

# Headroom over the members' predicted pace: a boost must not become the limit where the figures were low.
BOOST_HEADROOM = 1.25
# Where nothing is known of the members: 4,000,000 KiB/s (4.1 GB/s), above what one SATA, SAS or PCIe Gen3 x4
# member moves, so md's limits are out of the way; the members then set the pace.
UNKNOWN_MEMBERS_KIB_S = 4_000_000
BOOST_PURPOSE = "a sync boost"
KNOB_NAMES = ("sync_speed_max", "sync_speed_min")  # written in this order: the maximum first


@dataclass(frozen=True)
class BoostPlan:
    """What a boost writes and what it costs, for one array and the pass it speeds."""

    array: str
    uuid: str
    kib_s: int  # the array's sync_speed_min and sync_speed_max while boosted
    before: dict[str, str] = field(default_factory=dict)  # each knob as it reads now ("1000 (system)")
    why: str = ""  # how the value was chosen
    now: SyncTime | None = None  # the pass as it would run without the boost
    boosted_seconds: float | None = None

    @property
    def confirmation(self) -> str:
        """What the user types to boost a pass that is otherwise not confirmed (a check): the array."""
        return self.array

    @property
    def writes(self) -> list[tuple[str, str]]:
        """(path, value) of each write, in order."""
        return [(KNOBS_BY_NAME[name].system_path(self.array), str(self.kib_s)) for name in KNOB_NAMES]

    def as_json(self) -> dict[str, object]:
        """The boost as a plan's report gives it: the rate, each write, the cost lines."""
        return {"kib_s": self.kib_s, "writes": self.writes, "cost": self.cost_lines()}

    def cost_lines(self) -> list[str]:
        """The foreground cost first, then what it buys and how it is undone."""
        rate = rate_mb_s(self.kib_s * KIB)
        lines = [
            f"cost: while boosted md no longer yields the {self._pass} to other I/O on {self.array} below "
            f"{self.kib_s:,} KiB/s ({rate}): reads and writes of {self.array} and its members wait behind it"
        ]
        if self.now is not None and self.now.predicted_seconds is not None:
            loaded = self.now.under_load_seconds
            busy = f"; {about(loaded)} while other I/O runs" if loaded is not None else ""
            lines.append(
                f"now: the {self._pass} takes {about(self.now.predicted_seconds)} idle{busy} ({self.now.bound})"
            )
        if self.boosted_seconds is not None:
            lines.append(f"boosted: {about(self.boosted_seconds)}, idle or busy")
        lines.append(f"sets {self.array} sync_speed_min and sync_speed_max to {self.kib_s:,} KiB/s: {self.why}")
        before = ", ".join(f"{name} {value}" for name, value in self.before.items())
        lines.append(
            f"undone ({before}) when the {self._pass} ends, when you stop following it, or at the next mdtui start "
            "if mdtui is killed"
        )
        return lines

    @property
    def _pass(self) -> str:
        return self.now.words if self.now is not None else "sync"


def plan_boost(root: SystemRoot, array: MdArray, now: SyncTime | None) -> BoostPlan:
    """The boost for ``array``'s sync predicted as ``now`` (None when it cannot be predicted), from md's limits
    read here: the array's sync_speed_min/max read once, for what is put back and for the limits they set.

    MdtuiError when the array has no UUID (the journal acts only on an array it can name) or no sync speed files.
    """
    if not array.uuid:
        raise MdtuiError(f"{array.name} has no UUID here: its sync speed is changed only with a restore journal")
    values = {name: read_value(root, KNOBS_BY_NAME[name], array.name) for name in KNOB_NAMES}
    before: dict[str, str] = {}
    for name, value in values.items():
        if value is None:
            raise MdtuiError(f"{KNOBS_BY_NAME[name].system_path(array.name)} does not exist: no sync to boost")
        before[name] = value.raw
    cap, _ = read_sync_limits(root, array.name, own=values).cap()
    free = now.free_rate_bytes_per_s if now is not None else None
    if free:
        wanted = math.ceil(free * BOOST_HEADROOM / KIB)
        bound = now.free_bound if now is not None else ""
        why = f"the pace without md's limits ({rate_mb_s(free)}; {bound}) plus {BOOST_HEADROOM - 1:.0%}"
    else:
        wanted = UNKNOWN_MEMBERS_KIB_S
        why = "the members' figures are not known, so md's limits are taken out of the way"
    kib_s = min(max(wanted, math.ceil(cap / KIB)), SPEED_MAX)
    boosted = None
    if now is not None and free:
        boosted = now.work_bytes / min(free, kib_s * KIB)
    return BoostPlan(array.name, array.uuid, kib_s, before, why, now, boosted)


class SyncBoost:
    """The boost as a block: ``with SyncBoost(root, plan):`` writes both knobs (journalled first) and puts them
    back when the block ends, however it ends; a SIGKILL leaves the journal for the next start to restore."""

    def __init__(self, root: SystemRoot, plan: BoostPlan, changer: KnobChanger | None = None) -> None:
        self.plan = plan
        self.changer = changer or KnobChanger(root, purpose=f"{BOOST_PURPOSE} of {plan.array}")
        self.restored: list[Restored] = []

    def apply(self) -> list[str]:
        """Write the knobs; what each reads afterwards. Anything already written is put back on a failure."""
        read: list[str] = []
        try:
            for name in KNOB_NAMES:
                after = self.changer.set(
                    KNOBS_BY_NAME[name],
                    self.plan.array,
                    str(self.plan.kib_s),
                    array=self.plan.array,
                    array_uuid=self.plan.uuid,
                )
                read.append(f"{name} {after}")
        except BaseException:
            self.restore()
            raise
        return read

    def restore(self) -> list[Restored]:
        done = self.changer.restore()
        self.restored += done
        return done

    def __enter__(self) -> SyncBoost:
        self.apply()
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()
