"""What every per-source sampler implements: read once per tick, close its kept-open files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True, slots=True)
class Tick:
    """One tick of the sampler as every source sees it.

    interval is the seconds since the previous tick (None on the first, or when the clock did not
    advance); settings_due asks for slow-changing settings to be re-read, rescan_due for the full
    rediscovery that catches what the fast path cannot notice by itself.
    """

    interval: float | None
    settings_due: bool = False
    rescan_due: bool = False


class Source(Protocol[T_co]):
    """One kernel source (diskstats, CPUs, arrays, md threads) turned into one part of a Snapshot."""

    def read(self, tick: Tick) -> T_co: ...

    def close(self) -> None: ...


__all__ = ["Source", "Tick"]
