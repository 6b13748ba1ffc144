"""An array's write safety as the kernel reports it: the bitmap and the consistency policy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LiveSafety:
    """An existing array's write safety as sysfs says it (md/bitmap/location, chunksize; consistency_policy)."""

    bitmap: str  # none, internal, file (its path is not in sysfs), lockless
    bitmap_chunk_bytes: int | None
    policy: str  # resync, bitmap, ppl, journal (md reports "bitmap" for resync with a bitmap)

    @property
    def choice_policy(self) -> str:
        return "resync" if self.policy == "bitmap" else self.policy
