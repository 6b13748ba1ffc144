"""Human-readable units shared by the CLI and the UI; every unit is named explicitly."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


def iec_bytes(value: int | float | None) -> str:
    """1536 → '1.5 KiB'; None → 'unknown'."""
    if value is None:
        return "unknown"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(size) < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def rate_mb_s(bytes_per_s: int | float | None) -> str:
    """Decimal MB/s, as fio and vendors print link and disk speeds."""
    if bytes_per_s is None:
        return "unknown"
    return f"{bytes_per_s / 1e6:,.0f} MB/s"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def to_jsonable(value: Any) -> Any:
    """Dataclasses, enums and tuples into plain JSON types, with computed link facts added."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for extra in getattr(type(value), "__json_extras__", ()):
            out[extra] = to_jsonable(getattr(value, extra))
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value
