"""Scrub an array: start a check (read everything, count mismatches) or a repair (rewrite them) through md's
sync_action, follow it, report mismatch_cnt; and show when the distribution scrubs on its own (Debian's
checkarray cron job, the mdcheck systemd timers)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mdtui.actionlog import ActionLog
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError
from mdtui.keep.health import MISMATCH_LIMIT
from mdtui.model.array import MdArray
from mdtui.plan.sync_time import SyncTime
from mdtui.plan.sync_words import prediction_words
from mdtui.probe.root import SystemRoot
from mdtui.tune.journal import write_sysfs

SCRUB_ACTIONS = ("check", "repair")
CRON_FILE = "/etc/cron.d/mdadm"
TIMER_UNITS = ("mdcheck_start.timer", "mdcheck_continue.timer")
UNIT_DIRS = ("/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")
WANTS_DIR = "/etc/systemd/system/timers.target.wants"


@dataclass(frozen=True)
class ScrubPlan:
    array: str  # md0
    action: str  # check or repair
    path: str  # /sys/block/md0/md/sync_action

    @property
    def shown(self) -> str:
        """The write as a shell user would type it."""
        return f"echo {self.action} > {self.path}"

    @property
    def writes(self) -> bool:
        """A check only reads; a repair rewrites whatever disagrees, so only a repair is confirmed."""
        return self.action == "repair"

    @property
    def confirmation(self) -> str:
        """What the user types to let a repair pass rewrite mismatches: the array's name."""
        return self.array


@dataclass(frozen=True)
class Schedule:
    source: str  # the file it comes from
    what: str  # the line or OnCalendar
    enabled: bool | None  # timers: linked into timers.target.wants; cron: always


def plan_scrub(array: MdArray, action: str = "check", *, root: SystemRoot | None = None) -> ScrubPlan:
    system = root or SystemRoot("/")
    if action not in SCRUB_ACTIONS:
        raise MdtuiError(f"unknown scrub action {action!r} (check or repair)")
    if array.level not in ("raid1", "raid4", "raid5", "raid6", "raid10"):
        raise MdtuiError(f"{array.name} is {array.level or 'inactive'}: only redundant arrays can be checked")
    path = f"/sys/block/{array.name}/md/sync_action"
    now = (system.read_text(path) or "").strip()
    if now and now != "idle":
        raise MdtuiError(f"{array.name} is busy ({now}); wait for it to finish, or `mdtui watch {array.name}`")
    if array.degraded:
        raise MdtuiError(f"{array.name} is degraded: there is nothing to compare against; repair it first")
    return ScrubPlan(array.name, action, path)


def start_scrub(
    plan: ScrubPlan, *, confirmed: str | None = None, root: SystemRoot | None = None, log: ActionLog | None = None
) -> None:
    """Start the pass; a repair (plan.writes) only when ``confirmed`` is the plan's token."""
    if plan.writes:
        require_confirmed(confirmed, plan.confirmation, f"a repair pass on {plan.array}")
    write_sysfs(root or SystemRoot("/"), plan.path, plan.action, f"scrub {plan.array}: {plan.action}", log)


def describe_scrub(plan: ScrubPlan, predicted: SyncTime | None = None) -> list[str]:
    """The pass in lines, as `mdtui scrub --dry-run` prints it and the app shows it: the write that starts it,
    and how long it takes (bench.sync_forecast.scrub_time) with what bounds it."""
    lines = [f"{plan.action} {plan.array}: {plan.shown}"]
    if predicted is not None:
        lines.append("  " + prediction_words(predicted))
    return lines


def mismatch_sectors(array: str, root: SystemRoot | None = None) -> int | None:
    return (root or SystemRoot("/")).read_int(f"/sys/block/{array}/md/mismatch_cnt", hi=MISMATCH_LIMIT)


def _unit_file(root: SystemRoot, unit: str) -> str | None:
    return next((f"{d}/{unit}" for d in UNIT_DIRS if root.path(f"{d}/{unit}").is_file()), None)


def read_schedule(root: SystemRoot | None = None) -> tuple[Schedule, ...]:
    """The distribution's scrub schedule: checkarray lines of /etc/cron.d/mdadm and the mdcheck timers."""
    system = root or SystemRoot("/")
    found = []
    cron = system.read_text(CRON_FILE)
    if cron:
        for line in cron.splitlines():
            if line.strip() and not line.lstrip().startswith("#") and "checkarray" in line:
                fields = line.split()
                when = " ".join(fields[:5])
                # The job is a shell line; the checkarray call with its options is the part worth showing.
                calls = re.findall(r"(?:^|[;&|]\s*|then\s+)(\S*checkarray(?:\s+--?[\w-]+)*)", line)
                what = calls[-1] if calls else " ".join(fields[6:])
                if "$(date" in line and "-le 7" in line:
                    what += " (first week of the month)"
                found.append(Schedule(CRON_FILE, f"cron '{when}': {what}"[:200], True))
    for unit in TIMER_UNITS:
        path = _unit_file(system, unit)
        if path is None:
            continue
        text = system.read_text(path) or ""
        calendars = re.findall(r"^\s*OnCalendar\s*=\s*(.+?)\s*$", text, flags=re.MULTILINE)
        enabled = system.path(f"{WANTS_DIR}/{unit}").exists() or system.path(f"{WANTS_DIR}/{unit}").is_symlink()
        what = f"{unit}: OnCalendar={', '.join(calendars) or '?'}"
        found.append(Schedule(path, what, enabled))
    return tuple(found)


def describe_schedule(schedules: tuple[Schedule, ...]) -> list[str]:
    if not schedules:
        return ["no scheduled scrub found (no checkarray cron job, no mdcheck timers)"]
    lines = []
    for item in schedules:
        state = "" if item.enabled is None else (" (enabled)" if item.enabled else " (installed, not enabled)")
        lines.append(f"{item.what}{state}  [{item.source}]")
    return lines
