"""What mdtui knows about arrays and disks, as Prometheus text exposition (format 0.0.4), for node_exporter's
textfile collector: what its md collector (which reads only /proc/mdstat) cannot tell.

Per array: members missing and failed, the sync action and its progress, rate and ETA beside the sync-time
model's predictions (the running pass, a rebuild if a member failed now, a check), mismatch_cnt, whether mdadm.conf and
the initramfs list it, whether anyone monitors it, its knob values and the newest stored benchmark figure per
preset. Per disk: link rate and width now and at most, downgraded or not, and SMART (healthy, temperature,
media errors, endurance used). A value that was not measured is left out, never written as 0.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mdtui.errors import MdtuiError
from mdtui.keep.boot import BootState, read_boot_state
from mdtui.keep.health import Health, read_health
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.rootwrite import write_file
from mdtui.store.records import Metrics, RunRecord, RunStatus
from mdtui.tune.read import read_knobs

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TEXTFILE_NAME = "mdtui.prom"
# Benchmark figures exported per array and preset: the ones a dashboard compares run after run.
BENCH_FIGURES = (
    "read_bw_bytes_per_s",
    "write_bw_bytes_per_s",
    "read_iops",
    "write_iops",
    "read_lat_p99_ns",
    "write_lat_p99_ns",
)


@dataclass
class Family:
    """One metric family: its samples as (labels, value)."""

    name: str
    help: str
    type: str = "gauge"
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)

    def add(self, labels: Mapping[str, str], value: float | int | bool | None) -> None:
        if value is None:
            return  # not measured: absent, never 0
        number = float(value)
        if math.isfinite(number):
            self.samples.append((dict(labels), number))


def escape_label(value: str) -> str:
    """A label value as the exposition format quotes it: backslash, double quote and line feed escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def render(families: Iterable[Family]) -> str:
    """The text exposition of ``families`` (empty families are left out)."""
    lines = []
    for family in families:
        if not family.samples:
            continue
        lines.append(f"# HELP {family.name} {_escape_help(family.help)}")
        lines.append(f"# TYPE {family.name} {family.type}")
        for labels, value in family.samples:
            text = ",".join(f'{key}="{escape_label(str(val))}"' for key, val in labels.items())
            lines.append(f"{family.name}{{{text}}} {_number(value)}" if text else f"{family.name} {_number(value)}")
    return "\n".join(lines) + "\n" if lines else ""


class _Families:
    def __init__(self) -> None:
        self._by_name: dict[str, Family] = {}

    def __call__(self, name: str, help: str) -> Family:
        family = self._by_name.get(name)
        if family is None:
            family = self._by_name[name] = Family(name, help)
        return family

    def all(self) -> list[Family]:
        return list(self._by_name.values())


def _bool(value: bool | None) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True)
class ArrayTimes:
    """The sync-time model's answers for one array (bench/sync_forecast), for the export."""

    running_seconds: float | None = None  # the pass running now, predicted whole
    running_bound: str = ""
    rebuild_seconds: float | None = None  # a rebuild if a member failed now
    rebuild_bound: str = ""
    check_seconds: float | None = None  # a check pass
    check_bound: str = ""


def _arrays(
    out: _Families,
    root: SystemRoot,
    inventory: Inventory,
    health: Health,
    boot: BootState | None,
    times: Mapping[str, ArrayTimes],
) -> None:
    monitored = None
    # A captured tree without /proc/PID directories cannot tell whether a monitor ran: unknown, not 0.
    processes_seen = root.is_live or any(entry.isdigit() for entry in root.listdir("/proc"))
    if boot is not None and processes_seen:
        mon = boot.monitoring
        monitored = mon.running and bool(mon.program or (mon.mailaddr and mon.mailer))
    for array in inventory.arrays:
        labels = {"array": array.name}
        state = health.array(array.name)
        out("mdtui_array_degraded_members", "Members the array lacks (0 when whole).").add(labels, array.degraded)
        if state is not None:
            out("mdtui_array_failed_members", "Members marked faulty and still in the array.").add(
                labels, len(state.failed)
            )
            out("mdtui_array_mismatch_sectors", "md's mismatch_cnt after the last check or repair (sectors).").add(
                labels, state.mismatch_sectors
            )
            if state.sync_action:
                out("mdtui_array_sync_action", "The array's sync_action now (1 for the action named).").add(
                    {**labels, "action": state.sync_action}, 1
                )
            if state.last_check:
                out("mdtui_array_last_sync_action", "md's last_sync_action (1 for the action named).").add(
                    {**labels, "action": state.last_check}, 1
                )
        if array.sync is not None:
            out("mdtui_array_sync_progress_ratio", "Progress of the running resync, recovery, check or reshape.").add(
                {**labels, "action": array.sync.action}, array.sync.fraction
            )
            out("mdtui_array_sync_speed_bytes_per_second", "Speed of the running sync as md reports it.").add(
                {**labels, "action": array.sync.action}, array.sync.speed_bytes_per_s
            )
            out("mdtui_array_sync_eta_seconds", "What is left of the running sync at md's current speed.").add(
                {**labels, "action": array.sync.action}, array.sync.eta_seconds
            )
        known = times.get(array.name, ArrayTimes())
        if array.sync is not None and known.running_seconds is not None:
            out(
                "mdtui_array_sync_predicted_seconds",
                "The running sync's whole length as mdtui's sync-time model predicts it (bound in the label).",
            ).add({**labels, "action": array.sync.action, "bound": known.running_bound}, known.running_seconds)
        out(
            "mdtui_array_rebuild_predicted_seconds",
            "How long a rebuild would take if a member failed now (sync-time model; bound in the label).",
        ).add({**labels, "bound": known.rebuild_bound}, known.rebuild_seconds)
        out(
            "mdtui_array_check_predicted_seconds",
            "How long a check pass takes (sync-time model; bound in the label).",
        ).add({**labels, "bound": known.check_bound}, known.check_seconds)
        kept = boot.array(array.name) if boot is not None else None
        if kept is not None and array.metadata not in (None, "none"):
            out("mdtui_array_in_mdadm_conf", "mdadm.conf has an ARRAY line with the array's UUID.").add(
                labels, None if kept.uuid is None else kept.conf_line is not None
            )
            in_image = None if boot is None or boot.initramfs_conf is None else kept.initramfs_line is not None
            out("mdtui_array_in_initramfs", "The current initramfs's mdadm.conf lists the array.").add(
                labels, _bool(in_image)
            )
        out("mdtui_array_monitored", "mdadm --monitor runs with somewhere to send alerts.").add(
            labels, _bool(monitored)
        )
        _knobs(out, root, inventory, array.name)


def _knobs(out: _Families, root: SystemRoot, inventory: Inventory, name: str) -> None:
    array = inventory.array(name)
    if array is None:
        return
    for reading in read_knobs(root, array, inventory):
        if reading.value is None:
            continue
        labels = {"array": name, "knob": reading.knob.name, "device": reading.device}
        try:
            number = float(reading.value.value)
        except ValueError:
            out("mdtui_array_knob_choice", "A knob set to a word (a scheduler): 1 for the value chosen.").add(
                {**labels, "value": reading.value.value}, 1
            )
            continue
        out("mdtui_array_knob_value", "A knob's value as its file says (unit as the kernel's).").add(labels, number)


def _disks(out: _Families, inventory: Inventory, health: Health) -> None:
    for disk in inventory.disks:
        labels = {"disk": disk.name}
        link = disk.link
        if link is not None:
            kind = {**labels, "kind": str(link.kind)}
            out("mdtui_disk_link_rate", "Link rate now: GT/s a lane for PCIe, Gbit/s for SATA and SAS.").add(
                kind, link.current_rate
            )
            out("mdtui_disk_link_max_rate", "The highest link rate the device supports.").add(kind, link.max_rate)
            out("mdtui_disk_link_width", "Link width now (PCIe lanes, SAS phys).").add(kind, link.current_width)
            out("mdtui_disk_link_max_width", "The widest link the device supports.").add(kind, link.max_width)
            out("mdtui_disk_link_bandwidth_bytes_per_second", "Usable bandwidth of the link as it trained.").add(
                labels, link.bandwidth_bytes_per_s
            )
            out("mdtui_disk_link_downgraded", "1 when the link trained below its maximum speed or width.").add(
                labels, int(link.downgraded)
            )
        smart = health.smart.get(disk.name)
        if smart is None or (smart.error is not None and smart.passed is None):
            continue
        out("mdtui_disk_smart_healthy", "1 when SMART reports nothing wrong (verdict, warnings, errors, wear).").add(
            labels, int(not smart.problems and smart.passed is not False)
        )
        out("mdtui_disk_temperature_celsius", "Drive temperature from SMART.").add(labels, smart.temperature_c)
        out("mdtui_disk_media_errors", "Media errors SMART counts (NVMe media errors; ATA reallocated+pending).").add(
            labels, smart.media_errors
        )
        out("mdtui_disk_endurance_used_percent", "NVMe percentage of rated endurance used.").add(
            labels, smart.percentage_used
        )


def newest_runs(runs: Sequence[RunRecord]) -> dict[tuple[str, str], RunRecord]:
    """The newest complete run per (array, preset)."""
    newest: dict[tuple[str, str], RunRecord] = {}
    for run in runs:
        name = run.array.get("name") if isinstance(run.array, dict) else None
        if run.status is not RunStatus.COMPLETE or not isinstance(name, str):
            continue
        key = (name, run.preset)
        if key not in newest or run.started_at > newest[key].started_at:
            newest[key] = run
    return newest


def _bench(out: _Families, runs: Sequence[RunRecord]) -> None:
    for (array, preset), run in sorted(newest_runs(runs).items()):
        labels = {"array": array, "preset": preset}
        out("mdtui_bench_started_timestamp_seconds", "When the newest complete benchmark run started.").add(
            labels, run.started_at.timestamp()
        )
        for figure in BENCH_FIGURES:
            value = getattr(run.metrics, figure, None) if isinstance(run.metrics, Metrics) else None
            out("mdtui_bench_newest", "A figure of the newest complete benchmark run (unit in the label).").add(
                {**labels, "figure": figure}, value
            )


def collect(
    root: SystemRoot,
    inventory: Inventory,
    *,
    smart: bool = True,
    runs: Sequence[RunRecord] = (),
    times: Mapping[str, ArrayTimes] | None = None,
) -> list[Family]:
    """Every family mdtui can export for this system."""
    out = _Families()
    health = read_health(root, inventory.arrays, inventory=inventory, smart=smart)
    try:
        boot: BootState | None = read_boot_state(root, arrays=inventory.arrays)
    except MdtuiError:
        boot = None
    _arrays(out, root, inventory, health, boot, times or {})
    _disks(out, inventory, health)
    _bench(out, runs)
    return out.all()


def write_textfile(directory: str | os.PathLike[str], text: str) -> Path:
    """Write DIR/mdtui.prom whole, 0644, the one way root writes a file (mdtui.rootsafe).

    node_exporter reads the directory whenever it is scraped; a rename in the same directory means it reads
    either the old file or the new one, never half of one. The directory is often its user's or 1777: the
    file is made, chmod'ed and renamed only through the directory's descriptor, so nobody who can write
    there can turn the write or the chmod onto another file.
    """
    where = Path(directory)
    if not where.is_dir():
        raise MdtuiError(f"{where} is not a directory (the textfile collector's --collector.textfile.directory)")
    return write_file(where / TEXTFILE_NAME, text.encode("utf-8"), replace=True, mode=0o644)
