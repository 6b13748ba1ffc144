"""A few lines about keeping one array, cheap enough to compute on every highlight of the inventory: is it in
mdadm.conf, does anyone monitor it, what its last check found. No smartctl, no initramfs decompression (the
advisor does those)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mdtui.keep.boot import BootState, read_boot_state
from mdtui.keep.health import array_health
from mdtui.keep.metrics import TEXTFILE_NAME, escape_label
from mdtui.keep.schedule import LastScrub
from mdtui.model.array import MdArray
from mdtui.probe.root import SystemRoot


@dataclass(frozen=True)
class KeepLine:
    label: str  # Boot, Monitor, Check
    text: str
    problem: bool


def keep_lines(root: SystemRoot, array: MdArray) -> tuple[KeepLine, ...]:
    lines = []
    if array.metadata not in (None, "none"):
        state = read_boot_state(root, arrays=[array], read_image=False)
        boot = state.array(array.name)
        conf = state.conf.path
        if boot is None or boot.uuid is None:
            lines.append(KeepLine("Boot", "UUID unknown: cannot check mdadm.conf", True))
        elif boot.conf_line is None:
            lines.append(KeepLine("Boot", f"not in {conf}: after a reboot it may be md127 or missing "
                                  f"(mdtui persist {array.name})", True))  # fmt: skip
        elif boot.named_elsewhere:
            lines.append(KeepLine("Boot", f"{conf} names it {boot.named_elsewhere}", True))
        else:
            lines.append(KeepLine("Boot", f"in {conf} (line {boot.conf_line.line_no})", False))
        mon = state.monitoring
        if mon.running and (mon.mailaddr or mon.program):
            lines.append(KeepLine("Monitor", f"mdadm --monitor runs; alerts to {mon.program or mon.mailaddr}", False))
        else:
            why = "no mdadm --monitor running" if not mon.running else "no MAILADDR or PROGRAM"
            lines.append(KeepLine("Monitor", f"{why}: nobody hears of a failure", True))
    health = array_health(root, array)
    if health.failed:
        lines.append(KeepLine("Failed", ", ".join(health.failed) + f" (mdtui repair {array.name} --remove …)", True))
    if health.last_check in ("check", "repair") and health.mismatch_sectors is not None:
        lines.append(
            KeepLine("Last check", f"{health.last_check}: mismatch_cnt {health.mismatch_sectors}",
                     bool(health.mismatch_sectors))
        )  # fmt: skip
    return tuple(lines)


# Where node_exporter's textfile collector is usually pointed: Debian's package default, then the directory
# the upstream documentation and most Ansible roles use.
TEXTFILE_DIRS = ("/var/lib/prometheus/node-exporter", "/var/lib/node_exporter/textfile_collector")
# A metrics file this much older than its timer's minute is no longer being refreshed.
METRICS_STALE_S = 15 * 60
# Longest the metrics file read for the array's name may be (mdtui writes a few kB per array).
METRICS_READ_LIMIT = 4 << 20


@dataclass(frozen=True)
class Fact:
    """One part of the lifecycle line: its words, and whether it is a problem (None: not known)."""

    text: str
    problem: bool | None


@dataclass(frozen=True)
class Lifecycle:
    persisted: Fact
    monitored: Fact
    scrubbed: Fact
    metrics: Fact

    @property
    def facts(self) -> tuple[Fact, ...]:
        return (self.persisted, self.monitored, self.scrubbed, self.metrics)

    @property
    def line(self) -> str:
        """The four facts on one line, each marked in words and signs as well as colour: ✓ kept, ✗ a gap, ? unknown."""
        return " · ".join(f"{_mark(fact.problem)} {fact.text}" for fact in self.facts)


def _mark(problem: bool | None) -> str:
    return "?" if problem is None else ("✗" if problem else "✓")


def ago(seconds: float) -> str:
    """An age in the largest unit that fits: 40 s, 12 min, 5 h, 3 d."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


def _mtime(root: SystemRoot, path: str | None) -> float | None:
    if path is None:
        return None
    try:
        return root.path(path).stat().st_mtime
    except OSError:
        return None


def _captured_without(root: SystemRoot, path: str) -> bool:
    """A captured tree that did not capture ``path`` (mdtui capture takes /sys, /proc, /run/udev, /dev only)."""
    return not root.is_live and not root.path(path).exists()


def persisted_fact(root: SystemRoot, array: MdArray, state: BootState) -> Fact:
    if array.metadata in (None, "none"):
        return Fact("not persistable (no superblock)", None)
    if _captured_without(root, "/etc"):
        return Fact("persisted: not captured", None)
    boot = state.array(array.name)
    conf = state.conf.path
    if boot is None or boot.uuid is None:
        return Fact("persisted: UUID unknown", None)
    if boot.conf_line is None:
        return Fact(f"not persisted (not in {conf})", True)
    if boot.named_elsewhere:
        return Fact(f"persisted as {boot.named_elsewhere} in {conf}", True)
    # Whether the initramfs holds the line is known only by unpacking it (a second or more): an image
    # built after mdadm.conf last changed took the file as it is now.
    image = _mtime(root, state.initramfs)
    if image is None:
        return Fact("persisted (mdadm.conf; no initramfs found)", False)
    if image < (_mtime(root, conf) or 0.0):
        return Fact("persisted in mdadm.conf; initramfs older than it", True)
    return Fact("persisted (mdadm.conf, initramfs)", False)


def monitored_fact(root: SystemRoot, state: BootState) -> Fact:
    if not root.is_live and not any(entry.isdigit() for entry in root.listdir("/proc")):
        return Fact("monitoring: not captured", None)
    mon = state.monitoring
    if not mon.running:
        return Fact("nobody monitors (no mdadm --monitor)", True)
    if mon.program:
        return Fact(f"monitored: program {mon.program}", False)
    if mon.mailaddr and mon.mailer:
        return Fact(f"monitored: mail {mon.mailaddr}", False)
    if mon.mailaddr:
        return Fact(f"nobody hears: mail {mon.mailaddr} but no sendmail", True)
    return Fact("nobody monitors (no MAILADDR or PROGRAM)", True)


def scrubbed_fact(root: SystemRoot, array: MdArray, scrubs: Mapping[str, LastScrub] | None, now: datetime) -> Fact:
    """The last check or repair: when (from the kernel log, ``scrubs``; None when it was not read), what it found."""
    if array.level not in ("raid1", "raid4", "raid5", "raid6", "raid10"):
        return Fact("no scrub (no redundancy)", None)
    health = array_health(root, array)
    logged = scrubs.get(array.name) if scrubs is not None else None
    if logged is not None and logged.started is not None:
        when = logged.ended or logged.started
        text = f"last {logged.action} {ago((now - when).total_seconds())} ago"
        if logged.outcome == "interrupted":
            text += " (interrupted)"
        elif logged.ended is None:
            text += " (running or unfinished)"
    elif health.last_check in ("check", "repair"):
        text = f"last {health.last_check} since boot"
    elif scrubs is not None:
        return Fact("never scrubbed (none in the kernel log)", True)
    else:
        return Fact("no scrub since boot", None)
    if health.last_check in ("check", "repair") and health.mismatch_sectors is not None:
        text += f", mismatch {health.mismatch_sectors}"
        return Fact(text, bool(health.mismatch_sectors))
    return Fact(text, False)


def metrics_fact(root: SystemRoot, array: MdArray, now: float, dirs: Sequence[str] = TEXTFILE_DIRS) -> Fact:
    """Whether ``mdtui metrics --textfile`` keeps a file fresh, and whether it names this array."""
    if all(_captured_without(root, directory) for directory in dirs):
        return Fact("metrics: not captured", None)
    for directory in dirs:
        path = f"{directory}/{TEXTFILE_NAME}"
        when = _mtime(root, path)
        if when is None:
            continue
        age = now - when
        text = f"metrics: {path} {ago(age)} old"
        body = root.read_text(path, limit=METRICS_READ_LIMIT) or ""
        if f'array="{escape_label(array.name)}"' not in body:
            return Fact(f"{text}, {array.name} not in it", True)
        return Fact(text + (" (stale)" if age > METRICS_STALE_S else ""), age > METRICS_STALE_S)
    return Fact("metrics not exported", True)


def lifecycle(
    root: SystemRoot,
    array: MdArray,
    *,
    scrubs: Mapping[str, LastScrub] | None = None,
    now: datetime | None = None,
    metrics_dirs: Sequence[str] = TEXTFILE_DIRS,
) -> Lifecycle:
    """persisted · monitored · last scrub · metrics exported, from files and sysfs only: no smartctl, no initramfs
    unpacked, no kernel log read (``scrubs`` is the caller's reading of it, or None)."""
    moment = now or datetime.now(UTC)
    state = read_boot_state(root, arrays=[array], read_image=False)
    return Lifecycle(
        persisted=persisted_fact(root, array, state),
        monitored=monitored_fact(root, state),
        scrubbed=scrubbed_fact(root, array, scrubs, moment),
        metrics=metrics_fact(root, array, moment.timestamp(), metrics_dirs),
    )
