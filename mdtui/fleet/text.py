"""Text from a remote host made safe to print: no terminal control sequences, no control characters."""

from __future__ import annotations

import re
from typing import Any

# ESC sequences first (CSI, OSC/DCS/APC/PM/SOS strings, two-byte escapes), then every other C0 control but
# tab and newline, DEL, and the C1 controls (which some terminals obey as 8-bit CSI and OSC).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """``text`` without escape sequences and control characters (tab and newline kept)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def clean_line(text: str) -> str:
    """One line of ``text`` fit for a one-line message: cleaned, line breaks and tabs as spaces."""
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
