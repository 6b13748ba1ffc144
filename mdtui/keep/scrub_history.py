"""Every check and repair pass mdtui starts or sees finish, kept: when it started, how long it took, its
mismatch_cnt and the array's level; the trend of the counts, and what a count means for that level.

md keeps only the last pass (last_sync_action, mismatch_cnt) and the kernel log only as long as it is kept;
the history is one line of JSON per pass in mdtui's state directory (scrub-history.jsonl, 0600 in a 0700
directory, opened without following links). Each line is checked when read (kernel names, a level and an action
md has, times and counts in range); a line that fails is skipped, never trusted. A pass is written when mdtui
starts it (an open row), when it follows it to the end, and when any later look (scrub-schedule, the array's
detail) finds it ended: its end is then taken from the kernel log when the log has it, else the time it was seen
ended (marked so). Passes the kernel log tells of that mdtui did not see are added the same way.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import mdtui.keep.scrub as scrub_module
from mdtui.keep.health import MISMATCH_LIMIT
from mdtui.keep.schedule import LastScrub
from mdtui.keep.scrub import ScrubPlan
from mdtui.model.array import MdArray
from mdtui.probe.owner import state_dir
from mdtui.probe.root import SystemRoot
from mdtui.state_dir import BadEntry, StateDir, UnsafeStateError, kernel_name, same_uuid, uuid_text

log = logging.getLogger(__name__)

HISTORY_FILE = "scrub-history.jsonl"
SCRUB_ACTIONS = ("check", "repair")
LEVELS = ("raid1", "raid4", "raid5", "raid6", "raid10")
# Where a pass's row came from: mdtui ran and followed it; the kernel log told its times; mdtui found it ended.
SOURCES = ("mdtui", "kernel log", "seen ended")
# A kernel log pass and a row mdtui wrote are the same pass when they started this close together.
SAME_PASS_S = 10.0
# Rows kept: far more passes than a monthly scrub makes in a decade.
MAX_ROWS = 5000


@dataclass(frozen=True)
class ScrubPass:
    array: str
    uuid: str | None
    level: str | None
    action: str  # check or repair
    started: float | None  # Unix time
    ended: float | None  # None while it runs (or mdtui never learnt its end)
    mismatch_sectors: int | None
    source: str

    @property
    def seconds(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return max(0.0, self.ended - self.started)

    def same_array(self, array: MdArray) -> bool:
        if self.uuid and array.uuid:
            return same_uuid(self.uuid, array.uuid)
        return self.array == array.name

    def same_pass(self, other: ScrubPass) -> bool:
        return (
            self.array == other.array
            and self.action == other.action
            and self.started is not None
            and other.started is not None
            and abs(self.started - other.started) <= SAME_PASS_S
        )


def _time(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadEntry(f"{what} {value!r} is not a time")
    if not 0 <= value <= time.time() + 86400:
        raise BadEntry(f"{what} {value!r} is out of range")
    return float(value)


def parse_row(raw: Any) -> ScrubPass:
    """One history line, checked; BadEntry says why it is not one."""
    if not isinstance(raw, dict) or set(raw) - set(ScrubPass.__dataclass_fields__):
        raise BadEntry("not a scrub history row")
    level = raw.get("level")
    if level is not None and level not in LEVELS:
        raise BadEntry(f"level {level!r} is not one md checks")
    action = raw.get("action")
    if action not in SCRUB_ACTIONS:
        raise BadEntry(f"action {action!r} is not check or repair")
    source = raw.get("source")
    if source not in SOURCES:
        raise BadEntry(f"source {source!r} is not one mdtui writes")
    mismatch = raw.get("mismatch_sectors")
    if mismatch is not None and (isinstance(mismatch, bool) or not isinstance(mismatch, int)
                                 or not 0 <= mismatch <= MISMATCH_LIMIT):  # fmt: skip
        raise BadEntry(f"mismatch_sectors {mismatch!r} is not a count")
    started, ended = _time(raw.get("started"), "started"), _time(raw.get("ended"), "ended")
    if started is not None and ended is not None and ended < started:
        raise BadEntry("the pass ended before it started")
    return ScrubPass(
        kernel_name(raw.get("array"), "array"),
        uuid_text(raw.get("uuid"), "uuid"),
        level,
        action,
        started,
        ended,
        mismatch,
        source,
    )


class ScrubHistory:
    """The history file: rows appended, read back checked, and merged into one row per pass."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or state_dir()

    def _append(self, row: ScrubPass) -> None:
        try:
            StateDir(self.directory).append(HISTORY_FILE, (json.dumps(asdict(row)) + "\n").encode())
        except UnsafeStateError as exc:  # history must never stop the scrub it records
            log.warning("mdtui: scrub history not written: %s", exc)

    def rows(self) -> list[ScrubPass]:
        try:
            data = StateDir(self.directory).read(HISTORY_FILE)
        except UnsafeStateError as exc:
            log.warning("mdtui: skipped %s: %s", self.directory / HISTORY_FILE, exc)
            return []
        found = []
        for number, line in enumerate((data or b"").decode("utf-8", "replace").splitlines()[-MAX_ROWS:], 1):
            if not line.strip():
                continue
            try:
                found.append(parse_row(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("mdtui: skipped line %d of %s: %s", number, HISTORY_FILE, exc)
        return found

    def passes(self, array: MdArray | None = None) -> list[ScrubPass]:
        """One row per pass (a later row for the same pass replaces an earlier one), oldest first."""
        merged: list[ScrubPass] = []
        for row in self.rows():
            if array is not None and not row.same_array(array):
                continue
            index = next((i for i, old in enumerate(merged) if old.same_pass(row)), None)
            if index is None:
                merged.append(row)
            else:
                merged[index] = row
        return sorted(merged, key=lambda p: p.started or 0.0)

    def record_start(self, array: MdArray, action: str, started: float | None = None) -> ScrubPass:
        row = ScrubPass(array.name, array.uuid, array.level, action, started or time.time(), None, None, "mdtui")
        self._append(row)
        return row

    def record_end(self, opened: ScrubPass, ended: float, mismatch: int | None, source: str = "mdtui") -> ScrubPass:
        row = ScrubPass(opened.array, opened.uuid, opened.level, opened.action, opened.started, ended, mismatch, source)
        self._append(row)
        return row


def observe(
    root: SystemRoot,
    arrays: Sequence[MdArray],
    history: ScrubHistory,
    kernel: Sequence[LastScrub] | None,
    now: float | None = None,
) -> None:
    """Bring the history up to date with what is seen now: passes it left open that have ended, and ended passes
    the kernel log tells of that it does not hold. The pass md ran last gets md's mismatch_cnt; an older one's
    count is gone (md keeps one)."""
    now = now or time.time()
    logged = [p for p in kernel or () if p.ended is not None and p.started is not None]
    for array in arrays:
        if array.level not in LEVELS:
            continue
        md = f"/sys/block/{array.name}/md"
        last_action = (root.read_text(f"{md}/last_sync_action") or "").strip()
        running = array.sync is not None and array.sync.action in SCRUB_ACTIONS
        mismatch = root.read_int(f"{md}/mismatch_cnt", hi=MISMATCH_LIMIT)
        known = history.passes(array)
        newest_logged = max(
            (p for p in logged if p.array == array.name and p.action == last_action),
            key=lambda p: p.started.timestamp() if p.started else 0.0,
            default=None,
        )
        for row in known:
            if row.ended is not None or (running and row is known[-1]):
                continue
            match = next(
                (p for p in logged if p.array == row.array and p.action == row.action and p.started is not None
                 and row.started is not None and abs(p.started.timestamp() - row.started) <= SAME_PASS_S),
                None,
            )  # fmt: skip
            count = mismatch if row is known[-1] and last_action == row.action else None
            if match is not None and match.ended is not None:
                history.record_end(row, match.ended.timestamp(), count, "kernel log")
            else:
                history.record_end(row, now, count, "seen ended")
        for scrub in logged:
            if scrub.array != array.name or scrub.started is None or scrub.ended is None:
                continue
            row = ScrubPass(array.name, array.uuid, array.level, scrub.action, scrub.started.timestamp(),
                            scrub.ended.timestamp(), None, "kernel log")  # fmt: skip
            if any(old.same_pass(row) for old in known):
                continue
            count = mismatch if scrub is newest_logged and not running else None
            history.record_end(row, row.ended or now, count, "kernel log")


# --- what the counts say ----------------------------------------------------------------------------------


def trend(passes: Sequence[ScrubPass]) -> str:
    """The counts over the passes that have one: none found, steady, rising or falling, with the figures."""
    counts = [p.mismatch_sectors for p in passes if p.mismatch_sectors is not None and p.ended is not None]
    if not counts:
        return "no mismatch count kept yet"
    if not any(counts):
        return f"no mismatches in {len(counts)} pass{'es' if len(counts) > 1 else ''}"
    shown = " → ".join(f"{c:,}" for c in counts[-5:])
    if len(counts) == 1:
        return f"{counts[0]:,} sectors mismatched in the one pass kept"
    if counts[-1] > counts[-2]:
        return f"rising: {shown} sectors"
    if counts[-1] < counts[-2]:
        return f"falling: {shown} sectors"
    return f"steady: {shown} sectors"


def mismatch_meaning(level: str | None, count: int | None) -> str:
    """What a check's mismatch_cnt means for an array of ``level``."""
    if count is None:
        return "md has not counted a check or repair of it since it started"
    if count == 0:
        return "every copy and every parity block agreed"
    if level in ("raid1", "raid10"):
        return (
            f"{count:,} sectors differ between mirror copies. On raid1/raid10 this is often harmless: swap, or "
            "writes a program changed or aborted in flight, land on one copy and not the other, in blocks nobody "
            "reads again; a count that keeps rising without swap on the array points at a member (check SMART)"
        )
    if level in ("raid4", "raid5", "raid6"):
        return (
            f"{count:,} sectors of parity do not match their data. On a parity level this is not expected: a "
            "member returned wrong data, or a crash tore a stripe write (the write hole). A repair rewrites the "
            "parity from the data (which is then trusted); find the member first (SMART, the kernel log)"
        )
    return f"{count:,} sectors mismatched"


def begin_scrub(
    plan: ScrubPlan,
    array: MdArray,
    history: ScrubHistory,
    *,
    confirmed: str | None = None,
    root: SystemRoot | None = None,
) -> ScrubPass:
    """Start the pass (start_scrub) and open its row in the scrub history, as the CLI and the app both do: the
    row a later look (scrub_history.observe) or the follower closes."""
    started = time.time()
    scrub_module.start_scrub(plan, confirmed=confirmed, root=root)  # by its module: one place a test stops it
    return history.record_start(array, plan.action, started)
