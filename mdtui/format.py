"""Human-readable units shared by the CLI and the UI; every unit is named explicitly."""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterable
from typing import Any

from mdtui.columns import ELLIPSIS, cut_end


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


def times(ratio: float | None) -> str:
    """A ratio as "1.01×"; below 0.1 with two significant digits ("0.0023×", never a flat "0.00×")."""
    if ratio is None or not math.isfinite(ratio):
        return "?×"
    if ratio == 0 or abs(ratio) >= 0.1:
        return f"{ratio:.2f}×"
    if abs(ratio) >= 1e-4:
        return f"{ratio:.2g}×"
    decimals = 1 - math.floor(math.log10(abs(ratio)))  # .2g would switch to 1e-05 here
    return f"{ratio:.{decimals}f}×"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """'1 disk', '2 disks', '0 disks'; ``many`` for a noun whose plural is not noun + 's' ('1 copy', '2 copies')."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


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


def about(seconds: float) -> str:
    """A predicted time in words, two significant figures: "about 2.5 h", "about 40 min", "about 12 s"."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"about {_two_figures(seconds / size)} {unit}"
    return f"about {_two_figures(max(seconds, 1.0))} s"


def _two_figures(value: float) -> str:
    if value >= 10:
        return f"{round(value, -math.floor(math.log10(value)) + 1):,.0f}"
    return f"{value:.2g}"


# A serial cut in the middle keeps at most this much of its start (a vendor prefix tells disks of one batch apart
# least; their ends differ).
SERIAL_HEAD_MAX = 4


def _cut_serial(serial: str, width: int, head: int) -> str:
    if len(serial) <= width:
        return serial
    tail = width - 1 - head
    return serial[:head] + ELLIPSIS + serial[-tail:]


def distinct_serials(serials: Iterable[str], width: int) -> dict[str, str]:
    """Each serial as shown in at most ``width`` characters, cut in the middle so its end (where disks of one batch
    differ) stays, and no two different serials shown alike. A serial no cut that short keeps apart is shown
    whole: a wider column is better than two disks that look the same."""
    unique = sorted(set(serials))
    if all(len(s) <= width for s in unique):
        return {s: s for s in unique}
    for head in range(min(SERIAL_HEAD_MAX, max(width - 4, 0)), 0, -1):
        shown = {s: _cut_serial(s, width, head) for s in unique}
        if width - 1 - head >= 3 and len(set(shown.values())) == len(unique):
            return shown
    return {s: s for s in unique}


def ident_text(model: str | None, serial: str | None, width: int | None = None, shown: str | None = None) -> str:
    """ "model / serial" in ``width`` cells: the model gives way first (cut at its end), the serial stays as
    ``shown`` (distinct_serials' cut, or whole). Longer than ``width`` only when the serial alone is."""
    serial_text = shown if shown is not None else serial
    whole = " / ".join(part for part in (model, serial_text) if part) or "-"
    if width is None or len(whole) <= width:
        return whole
    if not serial_text:
        return cut_end(model or "", width)
    room = width - len(serial_text) - len(" / ")
    if not model or room < 2:
        return serial_text
    return model[: room - 1] + ELLIPSIS + " / " + serial_text


def to_jsonable(value: Any) -> Any:
    """Dataclasses, NamedTuples, enums and tuples into plain JSON types, with computed link facts added."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    names = _attributes(kind)
    if names is not None:
        return {name: to_jsonable(getattr(value, name)) for name in names}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple: an object, not a list
        return {name: to_jsonable(item) for name, item in zip(value._fields, value, strict=True)}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


# Values that come out as they go in (exact types: a bool or int enum member is an Enum, not these).
_PLAIN = frozenset({str, int, float, bool, type(None)})
# Each dataclass's attributes in the order they come out: its fields, then its __json_extras__; None for
# other types. A host's `watch --json` turns tens of thousands of dataclasses a tick into dicts, and
# dataclasses.fields() per value cost more than the conversion itself.
_ATTRIBUTES: dict[type, tuple[str, ...] | None] = {}


def _attributes(kind: type) -> tuple[str, ...] | None:
    try:
        return _ATTRIBUTES[kind]
    except KeyError:
        pass
    names: tuple[str, ...] | None = None
    # A dataclass instance (a dataclass type itself is a value of type `type`, which is none).
    if dataclasses.is_dataclass(kind) and not issubclass(kind, type):
        names = tuple(f.name for f in dataclasses.fields(kind))
        names += tuple(getattr(kind, "__json_extras__", ()))
    _ATTRIBUTES[kind] = names
    return names
