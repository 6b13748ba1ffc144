"""A few lines about keeping one array, cheap enough to compute on every highlight of the inventory: is it in
mdadm.conf, does anyone monitor it, what its last check found. No smartctl, no initramfs decompression (the
advisor does those)."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.keep.boot import read_boot_state
from mdtui.keep.health import array_health
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
