"""Numbers from kernel files and tool output: ASCII only, bounded in length, range-checked, never raising.

Python's ``int()`` and ``float()`` accept more than a kernel ever prints: Unicode digits ("٤٢"),
underscores ("1_000"), "inf" and "nan", and they fail in ways a parser must not pass on (``int("²")``
raises although ``"²".isdigit()`` is true; past 4300 digits int() refuses the string; ``int(float("1e400"))``
overflows). Every number read from a file or a program's output goes through this module instead:
a value in range, or None.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

# Longer than any counter a kernel prints (u64 is 20 digits); shorter than anything slow to convert.
MAX_DIGITS = 30
U64_MAX = (1 << 64) - 1
# A float magnitude past which no quantity mdtui reads makes sense (bytes, seconds, rates, percentages).
FLOAT_MAX = 1e30

_DIGITS = f"[0-9]{{1,{MAX_DIGITS}}}"
_FRACTION = f"[0-9]{{0,{MAX_DIGITS}}}"
_INT = re.compile(rf"[+-]?{_DIGITS}", re.ASCII)
_HEX = re.compile(rf"(?:0[xX])?[0-9a-fA-F]{{1,{MAX_DIGITS}}}", re.ASCII)
_FLOAT = re.compile(rf"[+-]?(?:{_DIGITS}(?:\.{_FRACTION})?|\.{_DIGITS})(?:[eE][+-]?[0-9]{{1,3}})?", re.ASCII)


def parse_int(text: str | None, *, lo: int = 0, hi: int = U64_MAX) -> int | None:
    """A decimal integer: optional sign, 1 to MAX_DIGITS ASCII digits, surrounding whitespace allowed.

    None for anything else (Unicode digits, underscores, empty text, too many digits) and for values
    outside [lo, hi]. The default range is an unsigned 64-bit counter.
    """
    if text is None:
        return None
    text = text.strip()
    # Plain ASCII digits, what kernels print nearly always, are a match without running the pattern.
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS) and _INT.fullmatch(text) is None:
        return None
    value = int(text)
    return value if lo <= value <= hi else None


def parse_hex(text: str | None, *, lo: int = 0, hi: int = U64_MAX) -> int | None:
    """A hexadecimal integer with or without "0x" (sysfs prints ids and flags so), range-checked."""
    if text is None:
        return None
    text = text.strip()
    if _HEX.fullmatch(text) is None:
        return None
    value = int(text, 16)
    return value if lo <= value <= hi else None


def parse_float(text: str | None, *, lo: float = 0.0, hi: float = FLOAT_MAX) -> float | None:
    """A decimal number such as "8.0", "5e-05" or "-3": ASCII only, finite, within [lo, hi]; else None."""
    if text is None:
        return None
    text = text.strip()
    if _FLOAT.fullmatch(text) is None:
        return None
    value = float(text)
    return value if math.isfinite(value) and lo <= value <= hi else None


def parse_counters(words: Sequence[str], *, hi: int = U64_MAX) -> tuple[int, ...] | None:
    """Several unsigned decimal counters at once (a diskstats or /proc/stat line), or None if any is bad.

    The checks are whole-sequence C calls because the sampler converts every device's line each tick:
    ASCII digits only (no sign, no underscore, no empty word) and none above hi, which bounds the
    significant digits; int() itself refuses a word of more than 4300 digits.
    """
    joined = "".join(words)
    if not (joined.isascii() and joined.isdigit()):
        return () if not words else None
    try:
        values = tuple(map(int, words))
    except ValueError:  # an empty word, or more digits than int() converts
        return None
    return values if max(values) <= hi else None
