"""md's own ceilings as `mdtui calibrate` measured them on this host, stored in mdtui's state directory.

The file is read as every state file is (safefile.StateDir: no links followed, a regular file of this
user no one else may write). It names the host it was measured on; a prediction uses it only on that
host (same CPU model, CPU count and kernel), since md's stripe thread and parity routines are CPU and
kernel work. Anything wrong with the file costs one line and the field figures, never a traceback.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mdtui.errors import MdtuiError
from mdtui.plan.forecast import CeilingsChoice
from mdtui.plan.md_model import FIELD_CEILINGS, MdCeilings
from mdtui.probe.owner import state_dir
from mdtui.probe.root import SystemRoot
from mdtui.probe.system import cpu_model, kernel_release
from mdtui.safefile import StateDir

CALIBRATION_FILE = "md-calibration.json"
FORMAT_VERSION = 1
CALIBRATED_LEVELS = ("raid5", "raid6")
FIELD_NOTE = "md's ceilings are field figures: run `mdtui calibrate`"


class BadCalibrationError(MdtuiError):
    """The stored calibration cannot be used (damaged, tampered with, or not a calibration)."""


@dataclass(frozen=True)
class HostId:
    """What md's ceilings depend on: the CPU and the kernel (mdadm's version is kept for the record)."""

    cpu_model: str
    cpus: int
    kernel: str
    mdadm_version: str | None = None

    def same_machine(self, other: HostId) -> bool:
        return (self.cpu_model, self.cpus, self.kernel) == (other.cpu_model, other.cpus, other.kernel)

    def as_json(self) -> dict[str, Any]:
        return {"cpu_model": self.cpu_model, "cpus": self.cpus, "kernel": self.kernel, "mdadm": self.mdadm_version}


def this_host(mdadm_version: str | None = None, root: SystemRoot | None = None) -> HostId:
    """This machine (or the one ``root`` describes) as a calibration names it: its CPU and kernel as every stored
    run records them (mdtui.probe.system)."""
    system = root or SystemRoot("/")
    return HostId(cpu_model(system), os.cpu_count() or 0, kernel_release(system), mdadm_version)


@dataclass(frozen=True)
class LevelCeilings:
    """One parity level's figures measured over RAM-backed members; None where it could not be measured."""

    stripe_write_bytes_per_s: float | None
    stripe_small_write_iops: float | None
    parity_bytes_per_s: float | None


@dataclass(frozen=True)
class Calibration:
    host: HostId
    measured_at: datetime
    levels: dict[str, LevelCeilings]
    layer_latency_s: float | None

    def as_json(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "measured_at": self.measured_at.isoformat(),
            "host": self.host.as_json(),
            "levels": {
                name: {
                    "stripe_write_bytes_per_s": c.stripe_write_bytes_per_s,
                    "stripe_small_write_iops": c.stripe_small_write_iops,
                    "parity_bytes_per_s": c.parity_bytes_per_s,
                }
                for name, c in self.levels.items()
            },
            "layer_latency_s": self.layer_latency_s,
        }

    def age(self, now: datetime | None = None) -> str:
        seconds = max(0.0, ((now or datetime.now(UTC)) - self.measured_at).total_seconds())
        for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
            if seconds >= size:
                return f"{int(seconds // size)} {unit} ago"
        return "just now"

    def ceilings(self, level: str, basis: str) -> MdCeilings:
        figures = self.levels.get(level)
        return MdCeilings(
            stripe_write_bytes_per_s=figures.stripe_write_bytes_per_s if figures else None,
            stripe_small_write_iops=figures.stripe_small_write_iops if figures else None,
            parity_bytes_per_s=figures.parity_bytes_per_s if figures else None,
            layer_latency_s=self.layer_latency_s,
            basis=basis,
        )


def _figure(value: Any, what: str, *, zero: bool = False) -> float | None:
    """A stored figure: None (not measured) or a positive finite number (or 0 where ``zero``); else tampering."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadCalibrationError(f"{what} is {value!r}, not a number")
    if value < 0 or (value == 0 and not zero):
        raise BadCalibrationError(f"{what} is {value!r}, not a positive number")
    return float(value)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 256 or not value.isprintable():
        raise BadCalibrationError(f"{what} is not a short line of text")
    return value


def parse_calibration(document: Any) -> Calibration:
    """The stored document as a Calibration; BadCalibrationError (one line) for anything else."""
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        raise BadCalibrationError(f"not a version {FORMAT_VERSION} calibration")
    host = document.get("host")
    levels = document.get("levels")
    if not isinstance(host, dict) or not isinstance(levels, dict):
        raise BadCalibrationError("its host or levels are missing")
    cpus = host.get("cpus")
    if isinstance(cpus, bool) or not isinstance(cpus, int) or cpus < 1:
        raise BadCalibrationError("host.cpus is not a CPU count")
    mdadm = host.get("mdadm")
    host_id = HostId(
        _text(host.get("cpu_model"), "host.cpu_model"),
        cpus,
        _text(host.get("kernel"), "host.kernel"),
        None if mdadm is None else _text(mdadm, "host.mdadm"),
    )
    try:
        measured_at = datetime.fromisoformat(_text(document.get("measured_at"), "measured_at"))
    except ValueError:
        raise BadCalibrationError("measured_at is not a date") from None
    if measured_at.tzinfo is None:
        raise BadCalibrationError("measured_at has no time zone")
    parsed: dict[str, LevelCeilings] = {}
    for name, figures in levels.items():
        if name not in CALIBRATED_LEVELS or not isinstance(figures, dict):
            raise BadCalibrationError(f"levels holds {str(name)[:20]!r}, not raid5 or raid6 figures")
        parsed[name] = LevelCeilings(
            _figure(figures.get("stripe_write_bytes_per_s"), f"{name}.stripe_write_bytes_per_s"),
            _figure(figures.get("stripe_small_write_iops"), f"{name}.stripe_small_write_iops"),
            _figure(figures.get("parity_bytes_per_s"), f"{name}.parity_bytes_per_s"),
        )
    return Calibration(
        host_id, measured_at, parsed, _figure(document.get("layer_latency_s"), "layer_latency_s", zero=True)
    )


def calibration_dir(directory: str | os.PathLike[str] | None = None) -> StateDir:
    return StateDir(directory if directory is not None else state_dir())


def save_calibration(calibration: Calibration, directory: str | os.PathLike[str] | None = None) -> Path:
    data = json.dumps(calibration.as_json(), indent=2).encode() + b"\n"
    return calibration_dir(directory).write(CALIBRATION_FILE, data)


def load_calibration(directory: str | os.PathLike[str] | None = None) -> Calibration | None:
    """The stored calibration, None when there is none; MdtuiError (one line) when it cannot be used."""
    state = calibration_dir(directory)
    data = state.read(CALIBRATION_FILE, limit=64 << 10)
    if data is None:
        return None
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        raise BadCalibrationError(f"{state.path / CALIBRATION_FILE} is not JSON") from None
    try:
        return parse_calibration(document)
    except BadCalibrationError as exc:
        raise BadCalibrationError(f"{state.path / CALIBRATION_FILE}: {exc}") from None


def choose_ceilings(calibration: Calibration | None, host: HostId, now: datetime | None = None) -> CeilingsChoice:
    """md's ceilings for predictions on ``host``: the calibration when it was measured here, else the field's."""
    if calibration is None:
        return CeilingsChoice(note=FIELD_NOTE)
    if not calibration.host.same_machine(host):
        if calibration.host.kernel != host.kernel:
            why = f"kernel {calibration.host.kernel}"
        else:
            why = f"{calibration.host.cpus} × {calibration.host.cpu_model}"
        return CeilingsChoice(
            note=f"md's ceilings are field figures: calibrated for {why}, not this one: run `mdtui calibrate`"
        )
    basis = f"calibrated here {calibration.age(now)}"
    by_level: dict[str, MdCeilings] = {}
    for name in CALIBRATED_LEVELS:
        figures = calibration.levels.get(name)
        # A level the calibration could not measure keeps the field's ceiling rather than none at all.
        complete = figures is not None and None not in (
            figures.stripe_write_bytes_per_s,
            figures.stripe_small_write_iops,
        )
        by_level[name] = calibration.ceilings(name, basis) if complete else FIELD_CEILINGS
    by_level["raid4"] = by_level["raid5"]  # the same raid5d thread and xor routine
    default = calibration.ceilings("", basis)
    return CeilingsChoice(by_level=by_level, default=default, note="")


def host_ceilings(directory: str | os.PathLike[str] | None = None) -> CeilingsChoice:
    """The choice for this host from the stored file; a file that cannot be used is named in the note."""
    try:
        calibration = load_calibration(directory)
    except MdtuiError as exc:
        return CeilingsChoice(note=f"{FIELD_NOTE} (the stored calibration is not used: {exc})")
    return choose_ceilings(calibration, this_host())


__all__ = [
    "CALIBRATION_FILE",
    "FIELD_CEILINGS",
    "BadCalibrationError",
    "Calibration",
    "HostId",
    "LevelCeilings",
    "choose_ceilings",
    "host_ceilings",
    "load_calibration",
    "parse_calibration",
    "save_calibration",
    "this_host",
]
