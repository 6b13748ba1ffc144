"""When each array is scrubbed: the next and the last check, its mismatch_cnt and how long it took; and changing
the schedule through the distribution's own mechanism (the checkarray line of Debian's /etc/cron.d/mdadm, or a
drop-in for mdadm's mdcheck_start.timer), shown as a diff and confirmed.

What can be known: md's sysfs says which sync ran last (last_sync_action) and its mismatch_cnt, not when; the
kernel log says when a check began ("md: data-check of RAID array md0") and ended ("md: md0: data-check
done."), so the journal gives the last scrub's time and length while it still holds them. The next scrub
comes from the timer's OnCalendar (systemd-analyze calendar) or from the cron line's fields.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mdtui.actionlog import ActionLog
from mdtui.command import CommandResult, run_command
from mdtui.confirmation import require_confirmed
from mdtui.errors import MdtuiError, SafetyError
from mdtui.keep.conf import text_diff
from mdtui.keep.health import MISMATCH_LIMIT
from mdtui.keep.scrub import CRON_FILE, UNIT_DIRS, WANTS_DIR
from mdtui.model.array import MdArray
from mdtui.probe.kernel_log import kernel_messages
from mdtui.probe.root import SystemRoot
from mdtui.rootwrite import scratch_directory, write_file

TIMER = "mdcheck_start.timer"
DROP_IN = f"/etc/systemd/system/{TIMER}.d/mdtui-schedule.conf"
SYSTEMD_RUNNING = "/run/systemd/system"
# The scrub messages md prints (drivers/md/md.c): a check is "data-check", a repair "requested-resync".
# Each is the whole message (probe.kernel_log.kernel_messages): one found inside another message (a program
# or file name in a segfault line, which any user chooses) is not md's.
_BEGIN = re.compile(r"md: (data-check|requested-resync) of RAID array (md\w+)\s*")
_END = re.compile(r"md: (md\w+): (data-check|requested-resync) (done|interrupted)\.\s*")
_CRON_FIELD = re.compile(r"(\*|\d{1,2}(-\d{1,2})?)(/\d{1,2})?(,(\*|\d{1,2}(-\d{1,2})?)(/\d{1,2})?)*")
_CRON_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
# Where a cron expression's next run is looked for: a year and a bit covers every "first Sunday" schedule.
CRON_HORIZON_DAYS = 400


@dataclass(frozen=True)
class LastScrub:
    array: str
    action: str  # check or repair
    started: datetime | None
    ended: datetime | None
    outcome: str | None  # done, interrupted; None while it runs (or its end left the log)

    @property
    def seconds(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return (self.ended - self.started).total_seconds()


def passes_in_log(lines: Sequence[tuple[datetime, str]]) -> list[LastScrub]:
    """Every scrub the kernel log lines tell of, oldest first: each begin, and its end when the log has it."""
    found: list[LastScrub] = []
    running: dict[str, int] = {}  # array -> index in found of its pass without an end yet
    for when, text in lines:
        begin = _BEGIN.fullmatch(text)
        if begin:
            action = "check" if begin.group(1) == "data-check" else "repair"
            running[begin.group(2)] = len(found)
            found.append(LastScrub(begin.group(2), action, when, None, None))
            continue
        end = _END.fullmatch(text)
        if end and end.group(1) in running:
            index = running.pop(end.group(1))
            old = found[index]
            found[index] = LastScrub(old.array, old.action, old.started, when, end.group(3))
    return found


def scrubs_in_log(lines: Sequence[tuple[datetime, str]]) -> dict[str, LastScrub]:
    """The last scrub of each array from kernel log lines with their times."""
    return {scrub.array: scrub for scrub in passes_in_log(lines)}


def parse_journal(text: str) -> list[tuple[datetime, str]]:
    """`journalctl -k -o short-unix` lines ("1764000000.123456 host kernel: message") as (time, message)."""
    found = []
    for stamp, message in kernel_messages(text):
        if stamp is None or not stamp.endswith(" kernel:"):
            continue
        try:
            when = datetime.fromtimestamp(float(stamp.split(" ", 1)[0]), UTC)
        except (ValueError, OverflowError, OSError):
            continue
        found.append((when, message))
    return found


def parse_dmesg(text: str) -> list[tuple[datetime, str]]:
    """`dmesg --time-format=iso` lines (2026-11-26T22:18:58,123456+00:00 message) as (time, message)."""
    found = []
    for stamp, message in kernel_messages(text):
        if stamp is None:
            continue
        try:
            when = datetime.fromisoformat(stamp.replace(",", "."))
        except ValueError:
            continue
        found.append((when if when.tzinfo else when.replace(tzinfo=UTC), message))
    return found


def read_kernel_scrubs(root: SystemRoot) -> dict[str, LastScrub] | None:
    """The last scrub of each array the kernel log still holds (read_kernel_passes)."""
    passes = read_kernel_passes(root)
    return None if passes is None else {scrub.array: scrub for scrub in passes}


def read_kernel_passes(root: SystemRoot) -> list[LastScrub] | None:
    """Every scrub the kernel log still holds: the journal's (it outlives reboots), else the kernel's ring
    buffer through dmesg (systems without journald). None when neither can be asked (a captured tree)."""
    if not root.is_live:
        return None
    if shutil.which("journalctl") is not None and root.path("/run/systemd/journal").is_dir():
        result = run_command(
            ["journalctl", "-k", "-o", "short-unix", "--no-pager", "-q", "--grep", "data-check|requested-resync"],
            timeout_s=30,
        )
        if result.returncode in (0, 1):  # 1: nothing matched
            return passes_in_log(parse_journal(result.stdout))
    if shutil.which("dmesg") is not None:
        result = run_command(["dmesg", "--time-format=iso"], timeout_s=30)
        if result.ok:
            return passes_in_log(parse_dmesg(result.stdout))
    return None


# -- the next scrub -------------------------------------------------------------------------------------------


def _cron_values(field: str, lo: int, hi: int) -> set[int]:
    values: set[int] = set()
    for part in field.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span == "*":
            first, last = lo, hi
        elif "-" in span:
            first, last = (int(x) for x in span.split("-"))
        else:
            first = last = int(span)
            if step_text:
                last = hi
        if not (lo <= first <= hi and lo <= last <= hi and first <= last and step >= 1):
            raise MdtuiError(f"cron field {field!r}: {part!r} is outside {lo}-{hi}")
        values.update(range(first, last + 1, step))
    return values


def validate_cron(expression: str) -> tuple[str, ...]:
    """Five cron time fields (minute hour day-of-month month day-of-week), numbers only; else MdtuiError."""
    fields = tuple(expression.split())
    if len(fields) != 5 or not all(_CRON_FIELD.fullmatch(f) for f in fields):
        raise MdtuiError(
            f"{expression!r} is not five cron time fields of numbers, ranges, lists and steps (e.g. '57 0 * * 0')"
        )
    for field, (lo, hi) in zip(fields, _CRON_RANGES, strict=True):
        _cron_values(field, lo, hi)
    return fields


def next_cron(fields: Sequence[str], after: datetime, *, first_week: bool = False) -> datetime | None:
    """The next time cron runs a line with these fields (cron's rule: when both day fields are restricted,
    either matching is enough); ``first_week`` adds Debian's "day of the month 7 or less" test."""
    minutes, hours, days, months, weekdays = (
        _cron_values(f, lo, hi) for f, (lo, hi) in zip(fields, _CRON_RANGES, strict=True)
    )
    weekdays = {0 if d == 7 else d for d in weekdays}
    any_day, any_weekday = fields[2] == "*", fields[4] == "*"
    start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    for offset in range(CRON_HORIZON_DAYS):
        day = (start + timedelta(days=offset)).date()
        weekday = (day.weekday() + 1) % 7  # cron counts from Sunday = 0
        if day.month not in months or (first_week and day.day > 7):
            continue
        if any_day or any_weekday:
            hit = day.day in days and weekday in weekdays
        else:
            hit = day.day in days or weekday in weekdays
        if not hit:
            continue
        for hour in sorted(hours):
            for minute in sorted(minutes):
                moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=after.tzinfo)
                if moment >= start:
                    return moment
    return None


def next_calendar(spec: str) -> datetime | None:
    """The next elapse of an OnCalendar spec, from `systemd-analyze calendar`; None when it cannot tell."""
    if shutil.which("systemd-analyze") is None:
        return None
    result = run_command(["systemd-analyze", "calendar", "--iterations=1", spec], timeout_s=30)
    match = re.search(r"Next elapse: \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", result.stdout)
    if match:
        return datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    match = re.search(r"\(in UTC\): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", result.stdout)
    if match:
        return datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    return None


@dataclass(frozen=True)
class Mechanism:
    kind: str  # cron or timer
    source: str  # the file
    when: str  # the cron fields, or the OnCalendar spec in force
    enabled: bool
    first_week: bool = False  # Debian's cron line runs only when the day of the month is 7 or less
    line_no: int | None = None  # the cron line


def _whole(root: SystemRoot, path: str) -> str | None:
    """A file's text as it is (read_text strips it; a cron file's last line needs its line feed)."""
    data = root.read_bytes(path)
    return None if data is None else data.decode("utf-8", "replace")


def _unit_file(root: SystemRoot, unit: str) -> str | None:
    return next((f"{d}/{unit}" for d in UNIT_DIRS if root.path(f"{d}/{unit}").is_file()), None)


def _calendars(text: str) -> list[str]:
    """OnCalendar values in force: an empty assignment clears the ones before it (a drop-in's reset)."""
    found: list[str] = []
    for match in re.finditer(r"^[ \t]*OnCalendar[ \t]*=[ \t]*(.*?)[ \t]*$", text, flags=re.MULTILINE):
        if match.group(1):
            found.append(match.group(1))
        else:
            found.clear()
    return found


def mechanisms(root: SystemRoot) -> list[Mechanism]:
    found = []
    cron = _whole(root, CRON_FILE)
    for number, line in enumerate((cron or "").splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#") and "checkarray" in line:
            fields = line.split()
            first_week = "$(date" in line and "-le 7" in line
            found.append(Mechanism("cron", CRON_FILE, " ".join(fields[:5]), True, first_week, number))
    unit = _unit_file(root, TIMER)
    if unit is not None:
        text = root.read_text(unit) or ""
        drop_dir = f"/etc/systemd/system/{TIMER}.d"
        for name in sorted(root.listdir(drop_dir)):
            if name.endswith(".conf"):
                text += "\n" + (root.read_text(f"{drop_dir}/{name}") or "")
        enabled = root.path(f"{WANTS_DIR}/{TIMER}").is_symlink() or root.path(f"{WANTS_DIR}/{TIMER}").exists()
        found.append(Mechanism("timer", unit, ", ".join(_calendars(text)), enabled))
    return found


def next_run(mechanism: Mechanism, now: datetime | None = None) -> datetime | None:
    if not mechanism.enabled or not mechanism.when:
        return None
    if mechanism.kind == "cron":
        try:
            fields = validate_cron(mechanism.when)
        except MdtuiError:
            return None  # @weekly and names: not worked out here
        # cron reads its fields in local time.
        return next_cron(fields, now or datetime.now().astimezone(), first_week=mechanism.first_week)
    times = [t for t in (next_calendar(spec.strip()) for spec in mechanism.when.split(",")) if t]
    return min(times) if times else None


@dataclass(frozen=True)
class ArrayScrub:
    array: str
    last_action: str | None  # md/last_sync_action
    mismatch_sectors: int | None
    last: LastScrub | None  # from the kernel log


def array_scrubs(
    root: SystemRoot, arrays: Sequence[MdArray], passes: Sequence[LastScrub] | None = None
) -> list[ArrayScrub]:
    """Each array's last scrub: md's last_sync_action and mismatch_cnt, and the kernel log's times (``passes``:
    the log read already, else read here)."""
    logged = {p.array: p for p in passes} if passes is not None else (read_kernel_scrubs(root) or {})
    found = []
    for array in arrays:
        md = f"/sys/block/{array.name}/md"
        action = (root.read_text(f"{md}/last_sync_action") or "").strip() or None
        mismatch = root.read_int(f"{md}/mismatch_cnt", hi=MISMATCH_LIMIT)
        found.append(ArrayScrub(array.name, action, mismatch, logged.get(array.name)))
    return found


# -- changing it ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScheduleEdit:
    kind: str  # cron or timer
    path: str
    old_text: str  # "" when the file does not exist
    new_text: str
    then: tuple[tuple[str, ...], ...] = ()  # daemon-reload, when systemd runs

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    @property
    def confirmation(self) -> str:
        """What the user types to write the cron line or the timer's drop-in."""
        return "schedule"

    def diff(self) -> str:
        return text_diff(self.old_text, self.new_text, f"{self.path} (now)", f"{self.path} (after)")


def plan_cron(root: SystemRoot, expression: str) -> ScheduleEdit:
    """The checkarray line of /etc/cron.d/mdadm with new time fields (the rest of the line as it was)."""
    fields = validate_cron(expression)
    text = _whole(root, CRON_FILE)
    if text is None:
        raise MdtuiError(f"{CRON_FILE} does not exist: this system does not scrub through cron (try --timer)")
    lines = text.splitlines(keepends=True)
    hits = [m for m in mechanisms(root) if m.kind == "cron" and m.line_no is not None]
    if not hits:
        raise MdtuiError(f"{CRON_FILE} has no checkarray line to reschedule")
    for hit in hits:
        index = (hit.line_no or 1) - 1
        line = lines[index]
        ending = line[len(line.rstrip("\r\n")) :] or "\n"  # cron skips a last line without one
        words = line.rstrip("\r\n").split(None, 5)
        lines[index] = " ".join(fields) + " " + words[5] + ending
    return ScheduleEdit("cron", CRON_FILE, text, "".join(lines))


def validate_calendar(spec: str) -> str:
    """An OnCalendar spec systemd accepts (asked of systemd-analyze), on one line; else MdtuiError."""
    if not spec.strip() or not spec.isprintable() or len(spec) > 200:
        raise MdtuiError(f"{spec!r} is not a calendar spec (one printable line, e.g. 'Sun *-*-1..7 01:00')")
    if shutil.which("systemd-analyze") is None:
        raise MdtuiError("systemd-analyze is missing: the calendar spec cannot be checked, so it is not written")
    result = run_command(["systemd-analyze", "calendar", spec], timeout_s=30)
    if not result.ok:
        why = (result.stderr.strip().splitlines() or ["refused"])[-1]
        raise MdtuiError(f"systemd does not accept {spec!r}: {why}")
    return spec.strip()


def plan_timer(root: SystemRoot, spec: str) -> ScheduleEdit:
    """A drop-in for mdcheck_start.timer that replaces its OnCalendar (the packaged unit is left as shipped)."""
    if _unit_file(root, TIMER) is None:
        raise MdtuiError(f"{TIMER} is not installed here (mdadm's package ships it; try --cron)")
    spec = validate_calendar(spec)
    new = f"# written by mdtui scrub-schedule\n[Timer]\nOnCalendar=\nOnCalendar={spec}\n"
    old = _whole(root, DROP_IN) or ""
    then = (("systemctl", "daemon-reload"),) if root.path(SYSTEMD_RUNNING).is_dir() else ()
    return ScheduleEdit("timer", DROP_IN, old, new, then)


def verify_drop_in(root: SystemRoot, edit: ScheduleEdit) -> CommandResult | None:
    """`systemd-analyze verify` of the timer with the new drop-in, in a scratch copy of its unit directory.

    Raises MdtuiError when systemd would ignore or refuse a line of it; None when systemd-analyze is missing.
    """
    if shutil.which("systemd-analyze") is None:
        return None
    unit = _unit_file(root, TIMER)
    if unit is None:
        raise MdtuiError(f"{TIMER} is not installed")
    # A private directory in a place no other user can change (never a $TMPDIR another user's environment
    # kept), holding copies read through the root's own bounded reads.
    with scratch_directory("mdtui-verify-") as work:
        source = unit.rsplit("/", 1)[0]
        for name in (TIMER, "mdcheck_start.service", "mdcheck_continue.timer", "mdcheck_continue.service"):
            data = root.read_bytes(f"{source}/{name}")
            if data is not None:
                write_file(work / name, data, replace=False)
        write_file(work / f"{TIMER}.d" / Path(edit.path).name, edit.new_text.encode(), replace=False, make_mode=0o700)
        # The scratch directory first, then systemd's own (the trailing ':'), so the units it names resolve.
        env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{work}:"}
        done = run_command(["systemd-analyze", "verify", str(work / TIMER)], timeout_s=60, env=env)
        complaints = [line for line in done.stderr.splitlines() if Path(edit.path).name in line or TIMER in line]
        if done.returncode != 0 or complaints:
            raise MdtuiError(f"systemd-analyze verify refuses the drop-in: {'; '.join(complaints) or done.stderr}")
        return done


def write_schedule(
    edit: ScheduleEdit, *, confirmed: str | None, root: SystemRoot | None = None, log: ActionLog | None = None
) -> bool:
    """Write the planned cron line or drop-in (then reload systemd); False when there was nothing to change.

    A change is written only when ``confirmed`` is the edit's token; a no-change writes nothing, so it needs none.
    """
    if not edit.changed:
        return False
    require_confirmed(confirmed, edit.confirmation, f"writing {edit.path}")
    system = root or SystemRoot("/")
    if (_whole(system, edit.path) or "") != edit.old_text:
        raise SafetyError(f"{edit.path} changed since the plan was made; run it again to see the new diff")
    started = time.monotonic()
    # The one way (mdtui.rootsafe): the drop-in's directory made if missing, a link followed only when no
    # other user can change it, the file made new and renamed into place.
    write_file(system.path(edit.path), edit.new_text.encode("utf-8"), replace=True, follow_last=True, make_mode=0o755)
    (log or ActionLog()).record(
        CommandResult(("mdtui-write", edit.path), 0, edit.diff(), "", time.monotonic() - started),
        f"scrub schedule: {edit.path}",
    )
    for argv in edit.then:
        result = run_command(argv, timeout_s=60)
        (log or ActionLog()).record(result, "scrub schedule: reload systemd")
        if not result.ok:
            raise MdtuiError(f"{' '.join(argv)} failed: {result.stderr.strip()[-300:]}")
    return True
