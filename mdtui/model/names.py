"""The order admins read kernel device names in: md2 before md10, nvme2n1 before nvme10n1, sdz before sdaa."""

from __future__ import annotations

import functools
import re

# SCSI, virtio, Xen and IDE disks are lettered a..z, then aa..zz, then aaa..: by length, then alphabetically.
_LETTERED = re.compile(r"(sd|vd|xvd|hd)([a-z]+)(.*)", re.DOTALL)
_DIGIT_RUNS = re.compile(r"([0-9]+)")

Runs = tuple[str | tuple[int, str], ...]
NameKey = tuple[Runs, str]


# Big hosts sort a thousand names at a time and arrays are sorted every tick a resync moves: big enough
# for a host's every device and array (a cache smaller than the names sorted would miss on every one).
@functools.lru_cache(maxsize=1 << 16)
def kernel_name_key(name: str) -> NameKey:
    """A sort key: runs of ASCII digits compare by value (without int(): a name may be long), and a lettered
    disk's letters by length first (sdz, then sdaa), as the kernel hands them out.

    The runs alternate text and (length, run) pairs from the first position, so any two names compare;
    names whose runs tie (sda01 and sda1) fall back on the name itself, so the order never depends on
    the order the names came in.
    """
    lettered = _LETTERED.fullmatch(name)
    if lettered is None:
        return _natural(name), name
    prefix, letters, rest = lettered.groups()
    return (prefix, (len(letters), letters), *_natural(rest)), name


def _natural(text: str) -> Runs:
    parts: list[str | tuple[int, str]] = []
    for index, part in enumerate(_DIGIT_RUNS.split(text)):
        if index % 2:
            digits = part.lstrip("0") or "0"
            parts.append((len(digits), digits))
        else:
            parts.append(part)
    return tuple(parts)
