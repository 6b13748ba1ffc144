"""md's own ceilings as `mdtui calibrate` measured them on this host, stored in mdtui's state directory.

The file is read as every state file is (state_dir.StateDir: no links followed, a regular file of this
user no one else may write). It names the host it was measured on; a prediction uses it only on that
host (same CPU model, CPU count and kernel), since md's stripe thread and parity routines are CPU and
kernel work. Anything wrong with the file costs one line and the field figures, never a traceback.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mdtui.errors import MdtuiError
from mdtui.plan.forecast import CeilingsChoice
from mdtui.plan.md_limits import FIELD_CEILINGS, MdCeilings
from mdtui.probe.owner import state_dir
from mdtui.probe.root import SystemRoot
from mdtui.probe.system import cpu_model, kernel_release
from mdtui.state_dir import StateDir

CALIBRATION_FILE = "md-calibration.json"
# Version 2 adds every level's reads (and raid0/1/10's writes, md's Q1 write share); a version 1 file (raid5 and
# raid6 writes only) still loads, its missing figures None.
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
CALIBRATED_LEVELS = ("raid0", "raid1", "raid10", "raid5", "raid6")
PARITY_LEVELS = ("raid5", "raid6")
# Levels md runs through the same code as a calibrated one.
SAME_CODE = {"raid4": "raid5", "linear": "raid0"}
FIELD_NOTE = "md's ceilings are field figures: run `mdtui calibrate`"
OLD_NOTE = "the stored calibration has no read figures (calibrated by an older mdtui): run `mdtui calibrate` again"


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
    """One level's figures measured over RAM-backed members; None where it could not be measured.

    Parity levels write through the stripe thread (``stripe_*``, with the kernel's parity routine speed);
    raid0/1/10 through their own write path (``seq_write_bytes_per_s``, ``rand_write_iops``). Every level's
    saturating reads, and ``write_latency_s``: what md adds to a Q1 write beyond the members' own I/O.
    """

    stripe_write_bytes_per_s: float | None
    stripe_small_write_iops: float | None
    parity_bytes_per_s: float | None
    seq_read_bytes_per_s: float | None = None
    rand_read_iops: float | None = None
    seq_write_bytes_per_s: float | None = None
    rand_write_iops: float | None = None
    write_latency_s: float | None = None


# Figures that may be 0: a latency md adds can be within the noise of none.
_ZERO_ALLOWED = {"write_latency_s"}


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
                name: {f.name: getattr(c, f.name) for f in fields(LevelCeilings)} for name, c in self.levels.items()
            },
            "layer_latency_s": self.layer_latency_s,
        }

    def age(self, now: datetime | None = None) -> str:
        seconds = max(0.0, ((now or datetime.now(UTC)) - self.measured_at).total_seconds())
        for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
            if seconds >= size:
                return f"{int(seconds // size)} {unit} ago"
        return "just now"

    def ceilings(self, level: str, basis: str, kernel: str | None = None) -> MdCeilings:
        figures = self.levels.get(level) or LevelCeilings(None, None, None)
        return MdCeilings(
            stripe_write_bytes_per_s=figures.stripe_write_bytes_per_s,
            stripe_small_write_iops=figures.stripe_small_write_iops,
            parity_bytes_per_s=figures.parity_bytes_per_s,
            layer_latency_s=self.layer_latency_s,
            basis=basis,
            seq_read_bytes_per_s=figures.seq_read_bytes_per_s,
            rand_read_iops=figures.rand_read_iops,
            seq_write_bytes_per_s=figures.seq_write_bytes_per_s,
            rand_write_iops=figures.rand_write_iops,
            write_latency_s=figures.write_latency_s,
            kernel=kernel,
        )

    @property
    def has_reads(self) -> bool:
        return any(c.rand_read_iops is not None or c.seq_read_bytes_per_s is not None for c in self.levels.values())


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
    if not isinstance(document, dict) or document.get("version") not in READABLE_VERSIONS:
        raise BadCalibrationError(f"not a version {' or '.join(map(str, READABLE_VERSIONS))} calibration")
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
            raise BadCalibrationError(f"levels holds {str(name)[:20]!r}, not {', '.join(CALIBRATED_LEVELS)} figures")
        parsed[name] = LevelCeilings(
            **{
                f.name: _figure(figures.get(f.name), f"{name}.{f.name}", zero=f.name in _ZERO_ALLOWED)
                for f in fields(LevelCeilings)
            }
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
    """md's ceilings for predictions on ``host``: the calibration when it was measured here, else the field's
    (for the host's kernel, which picks the field figures where md's code changed)."""
    field = field_ceilings(host.kernel)
    if calibration is None:
        return CeilingsChoice(default=field, note=FIELD_NOTE)
    if not calibration.host.same_machine(host):
        if calibration.host.kernel != host.kernel:
            why = f"kernel {calibration.host.kernel}"
        else:
            why = f"{calibration.host.cpus} × {calibration.host.cpu_model}"
        return CeilingsChoice(
            default=field,
            note=f"md's ceilings are field figures: calibrated for {why}, not this one: run `mdtui calibrate`",
        )
    basis = f"calibrated here {calibration.age(now)}"
    by_level: dict[str, MdCeilings] = {}
    for name in CALIBRATED_LEVELS:
        figures = calibration.levels.get(name)
        # A parity level the calibration could not measure keeps the field's stripe thread rather than none.
        complete = name not in PARITY_LEVELS or (
            figures is not None and None not in (figures.stripe_write_bytes_per_s, figures.stripe_small_write_iops)
        )
        by_level[name] = calibration.ceilings(name, basis, host.kernel) if complete else field
    for level, same in SAME_CODE.items():
        by_level[level] = by_level[same]
    default = calibration.ceilings("", basis, host.kernel)
    return CeilingsChoice(by_level=by_level, default=default, note="" if calibration.has_reads else OLD_NOTE)


def field_ceilings(kernel: str | None) -> MdCeilings:
    """The field's ceilings for predictions on ``kernel`` (the read paths whose code changed follow it)."""
    return replace(FIELD_CEILINGS, kernel=kernel)


def host_ceilings(directory: str | os.PathLike[str] | None = None) -> CeilingsChoice:
    """The choice for this host from the stored file; a file that cannot be used is named in the note."""
    host = this_host()
    try:
        calibration = load_calibration(directory)
    except MdtuiError as exc:
        return CeilingsChoice(
            default=field_ceilings(host.kernel), note=f"{FIELD_NOTE} (the stored calibration is not used: {exc})"
        )
    return choose_ceilings(calibration, host)


__all__ = [
    "CALIBRATION_FILE",
    "FIELD_CEILINGS",
    "BadCalibrationError",
    "Calibration",
    "HostId",
    "LevelCeilings",
    "choose_ceilings",
    "field_ceilings",
    "host_ceilings",
    "load_calibration",
    "parse_calibration",
    "save_calibration",
    "this_host",
]
