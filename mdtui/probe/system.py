"""What the system a root describes runs, read once for every user: its kernel release and its CPU's name."""

from __future__ import annotations

import os

from mdtui.probe.root import TABLE_LIMIT, SystemRoot


def kernel_release(root: SystemRoot) -> str:
    """`uname -r` of the system the root describes (a captured tree keeps /proc/sys/kernel/osrelease)."""
    release = (root.read_text("/proc/sys/kernel/osrelease") or "").strip()
    if release:
        return release
    return os.uname().release if root.is_live else "unknown"


def parse_cpu_model(cpuinfo: str) -> str:
    """The CPU's name in /proc/cpuinfo's text, blanks collapsed; "unknown" when it names none.

    'model name' (x86 and most others) or 'cpu model' (MIPS), whichever comes first; without either, the
    first 'Processor' (32-bit ARM: "ARMv7 Processor rev 10") or 'CPU part' (arm64) that is not a CPU number.
    """
    fallback = ""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip().lower(), " ".join(value.split())
        if not sep or not value:
            continue
        if key in ("model name", "cpu model"):
            return value
        if key in ("processor", "cpu part") and not fallback and not value.isdigit():
            fallback = value
    return fallback or "unknown"


def cpu_model(root: SystemRoot) -> str:
    """The CPU's name on the system the root describes (parse_cpu_model of its /proc/cpuinfo)."""
    return parse_cpu_model(root.read_text("/proc/cpuinfo", limit=TABLE_LIMIT) or "")
