"""Mounts and swaps as the kernel lists them, keyed so a block device can be matched to them."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.probe.root import SystemRoot


@dataclass(frozen=True)
class Mount:
    major_minor: str | None
    source: str
    mount_point: str
    fs_type: str
    options: tuple[str, ...] = ()  # the mount's own options (rw or ro, relatime, ...)


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal.
    return (
        field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
    )


def parse_mountinfo(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        tail = right.split()
        if not sep or len(fields) < 5 or len(tail) < 2:
            continue
        options = tuple(fields[5].split(",")) if len(fields) > 5 else ()
        mounts.append(Mount(fields[2], _unescape(tail[1]), _unescape(fields[4]), tail[0], options))
    return mounts


def parse_proc_mounts(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3:
            options = tuple(fields[3].split(",")) if len(fields) > 3 else ()
            mounts.append(Mount(None, _unescape(fields[0]), _unescape(fields[1]), fields[2], options))
    return mounts


def read_mounts(root: SystemRoot) -> list[Mount]:
    """Every mount; RefusedFileError when the mount table exists but cannot be read (see mdtui.probe.root)."""
    text = root.read_table("/proc/self/mountinfo")
    if text is not None:
        return parse_mountinfo(text)
    text = root.read_table("/proc/mounts")
    return parse_proc_mounts(text) if text is not None else []


def read_swaps(root: SystemRoot) -> list[str]:
    """Device paths (or files) in use as swap; RefusedFileError when /proc/swaps cannot be read."""
    text = root.read_table("/proc/swaps")
    if not text:
        return []
    return [line.split()[0] for line in text.splitlines()[1:] if line.split()]
