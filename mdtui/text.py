"""Strings from outside mdtui made safe to show: no control characters reach a terminal or a screen.

A disk's model, serial or filesystem label, a mount point, a remote host's JSON, fio's and mdadm's
messages are written by whoever made the device, the filesystem or the program, not by the admin.
Printed raw, an escape sequence in one of them can move the cursor, rewrite what the screen shows
(hide a warning, fake a confirmation prompt), retitle the window or, on some terminals, answer back as
typed input. Every such string passes through :func:`clean_text` before it is kept in a model object
or put in a message.
"""

from __future__ import annotations

import re
from typing import Any

# Whole escape sequences, which are never content: CSI (ESC [ or the 8-bit CSI), OSC, DCS, APC, PM and SOS
# strings up to their terminator, and two-character escapes.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# C0 controls but tab and newline, DEL, and the C1 controls (0x80-0x9f: CSI, OSC and friends as single
# characters). An ESC-started sequence loses its ESC and shows as harmless text ("[31m").
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# The same, with newline and tab too: for a value that is one line of a table (a model, a serial).
_CONTROLS_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f]")
REPLACEMENT = "\N{REPLACEMENT CHARACTER}"


def clean_text(text: str, *, one_line: bool = False) -> str:
    """``text`` without escape sequences, and every other control character replaced by U+FFFD.

    Newlines and tabs are kept unless ``one_line``; then they are replaced as well. Printable text,
    whatever its script, is returned as it is (the same object: the common case costs one scan).
    """
    if text.isprintable():
        return text
    pattern = _CONTROLS_ONE_LINE if one_line else _CONTROLS
    return pattern.sub(REPLACEMENT, _ESCAPES.sub("", text))


def clean_optional(text: str | None, *, one_line: bool = True) -> str | None:
    """clean_text for an optional value (None stays None); one line by default, as table cells are."""
    return None if text is None else clean_text(text, one_line=one_line)


def clean_line(text: str) -> str:
    """One line of ``text`` for a one-line message: cleaned, line breaks and tabs as single spaces."""
    return " ".join(clean_text(text).split())


def clean_strings(value: Any) -> Any:
    """``value`` (parsed JSON) with every string in it, keys included, cleaned."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_strings(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(key)): clean_strings(item) for key, item in value.items()}
    return value
