"""What a benchmark is asked to do: the request, the user's job overrides and size parsing."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mdtui.errors import PlanError
from mdtui.model.job import IoEngine, RwMode

CUSTOM_DEFAULT_RUNTIME_S = 30


_SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str, what: str = "size") -> int:
    """'4k', '1M', '512', '2GiB' → bytes; k, m, g, t are powers of 1024 as fio reads them."""
    match = _SIZE_RE.match(text)
    if match is None:
        raise PlanError(f"{what} {text!r} is not a size such as 4k, 1m or 512 (k, m, g: powers of 1024, as in fio)")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


@dataclass(frozen=True)
class JobOptions:
    """Job options for the custom preset; runtime, size, iodepth and numjobs also override the other presets."""

    rw: RwMode | None = None
    block_size_bytes: int | None = None
    iodepth: int | None = None
    numjobs: int | None = None
    runtime_s: int | None = None
    size_bytes: int | None = None
    ioengine: IoEngine | None = None
    direct: bool | None = None
    offset_bytes: int | None = None
    name: str | None = None  # the fio job name (custom only)

    def custom_only(self) -> list[str]:
        """Options that only a custom job takes, by their command-line names."""
        names = {
            "rw": "--rw",
            "block_size_bytes": "--bs",
            "ioengine": "--ioengine",
            "direct": "--direct/--no-direct",
            "offset_bytes": "--offset",
            "name": "name",
        }
        return [flag for name, flag in names.items() if getattr(self, name) is not None]


@dataclass(frozen=True)
class BenchRequest:
    preset: str
    target: str
    quick: bool = False
    members: tuple[str, ...] = ()  # weakest-link: members to measure instead of the array's own
    # Every step runs its whole runtime, as before steady-state detection (comparisons with older runs).
    fixed_time: bool = False
    options: JobOptions = JobOptions()
    # Every stored step of one run carries this label (params["step"] tells the steps apart), so tools
    # that read the store can group them; empty means "<preset> <target>".
    label: str = ""
