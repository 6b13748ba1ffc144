"""md kernel threads (mdX_raidN, mdX_resync, mdX_reshape) and their CPU time from /proc/PID/stat."""

from __future__ import annotations

import re
from typing import NamedTuple

from mdtui.ascii_numbers import parse_int
from mdtui.probe.root import SystemRoot

# md names its threads "<array>_<purpose>": the personality's thread (raid1, raid10, raid4/5/6) and
# the sync thread, which older kernels always call "resync" and newer ones name after the action.
# Array numbers have at most 9 digits here: a longer one is not an md thread, and int() stays cheap.
MD_THREAD_RE = re.compile(
    r"(?P<array>md[0-9]{1,9}|md_d[0-9]{1,9})_(?P<role>raid[0-9]{1,2}|resync|recovery|recover|reshape|check|repair)",
    re.ASCII,
)
# The kernel's ceiling for pid_max (PID_MAX_LIMIT on 64-bit).
PID_MAX = 1 << 22
MAX_CPUS = 1 << 16


class MdThread(NamedTuple):
    pid: int
    name: str
    array: str
    role: str


class PidStat(NamedTuple):
    """The fields of /proc/PID/stat the sampler uses; times are in USER_HZ ticks."""

    pid: int
    comm: str
    state: str
    utime_ticks: int
    stime_ticks: int
    processor: int | None  # field 39: the CPU the task last ran on

    @property
    def cpu_ticks(self) -> int:
        return self.utime_ticks + self.stime_ticks


def parse_pid_stat(text: str) -> PidStat | None:
    """Parse /proc/PID/stat. comm may hold spaces and parentheses, so it ends at the last ')'.

    None when the text is not a stat line: a field that should be a number is not a plain one in range.
    """
    open_paren = text.find("(")
    close_paren = text.rfind(")")
    if open_paren < 0 or close_paren < open_paren:
        return None
    # rest[0] is field 3 (state), so field N sits at rest[N - 3]: utime 14, stime 15, processor 39.
    # Split no further than processor: the dozen fields after it are never read.
    rest = text[close_paren + 1 :].split(None, 37)
    if len(rest) < 13:
        return None
    pid = parse_int(text[:open_paren], lo=1, hi=PID_MAX)
    utime_word, stime_word = rest[11], rest[12]
    # The sampler reads each md thread's stat every tick: plain ASCII digits of fewer than 20 (always
    # within u64) convert without parse_int's call; split words hold no spaces for it to strip.
    if utime_word.isdigit() and stime_word.isdigit() and len(utime_word) < 20 > len(stime_word):
        utime = int(utime_word) if utime_word.isascii() else parse_int(utime_word)
        stime = int(stime_word) if stime_word.isascii() else parse_int(stime_word)
    else:
        utime, stime = parse_int(utime_word), parse_int(stime_word)
    processor = None
    if len(rest) > 36:
        word = rest[36]
        if word.isdigit() and word.isascii() and len(word) < 6:
            processor = int(word)
            if processor > MAX_CPUS:
                processor = None
        else:
            processor = parse_int(word, hi=MAX_CPUS)
    if pid is None or utime is None or stime is None:
        return None
    return PidStat(pid, text[open_paren + 1 : close_paren], rest[0], utime, stime, processor)


def read_pid_stat(root: SystemRoot, pid: int) -> PidStat | None:
    text = root.read_text(f"/proc/{pid}/stat")
    return parse_pid_stat(text) if text is not None else None


def md_thread_name(comm: str) -> tuple[str, str] | None:
    """(array, role) when comm names an md kernel thread."""
    match = MD_THREAD_RE.fullmatch(comm)
    return (match["array"], match["role"]) if match else None


def find_md_threads(root: SystemRoot) -> list[MdThread]:
    """Every md kernel thread, found by reading /proc/*/comm; costly on busy hosts, so callers cache it."""
    threads = []
    for entry in root.listdir("/proc"):
        if not entry.isdigit() or (pid := parse_int(entry, lo=1, hi=PID_MAX)) is None:
            continue
        comm = root.read_text(f"/proc/{entry}/comm")
        if comm is None or not comm.startswith("md"):
            continue
        if (parsed := md_thread_name(comm)) is not None:
            threads.append(MdThread(pid, comm, *parsed))
    # md2 before md10, as mdstat lists them; the pattern allows only up to 9 ASCII digits.
    threads.sort(key=lambda t: (int(re.sub(r"[^0-9]", "", t.array) or 0), t.array, t.role, t.pid))
    return threads
