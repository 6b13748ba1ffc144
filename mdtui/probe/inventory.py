"""One scan of the system: disks, md arrays, and notes on what could not be seen."""

from __future__ import annotations

import os
from collections.abc import Iterator

from mdtui.errors import ProbeError
from mdtui.model.inventory import Inventory
from mdtui.probe.disks import DiskProber
from mdtui.probe.root import SystemRoot


def scan(root: SystemRoot | str | None = None, *, privileged: bool | None = None) -> Inventory:
    """Discover disks and arrays under ``root`` ("/" by default). Never raises on odd sysfs content."""
    *_, (inventory, _pending) = scan_in_steps(root, privileged=privileged)
    return inventory


def scan_in_steps(
    root: SystemRoot | str | None = None, *, privileged: bool | None = None, first: int | None = None
) -> Iterator[tuple[Inventory, tuple[str, ...]]]:
    """The scan of :func:`scan`, given early for a quick first screen: (inventory so far, disks not yet probed).

    With ``first``, a host with more candidate disks than that gives a first step with every array,
    the notes and the first ``first`` disks probed (the names of the others still pending), then the
    whole scan. The last step has nothing pending and is what :func:`scan` returns.
    """
    from mdtui.probe.arrays import md_available, read_arrays

    system = root if isinstance(root, SystemRoot) else SystemRoot(root or "/")
    if not system.root.is_dir():
        raise ProbeError(f"Root {system.root} does not exist. Start mdtui with --root / or a captured tree.")
    if not system.path("/sys/block").is_dir():
        raise ProbeError(
            f"Root {system.root} has no sys/block directory: it is neither / nor a captured tree."
        )
    if privileged is None:
        privileged = os.geteuid() == 0 if system.is_live else True
    prober = DiskProber(system, privileged=privileged)
    names = prober.candidates()
    head = len(names) if first is None else max(first, 0)
    disks = [prober.probe(name) for name in names[:head]]
    arrays = tuple(read_arrays(system))
    notes = []
    has_md = md_available(system)
    if not has_md:
        notes.append("No md driver: /proc/mdstat is missing (load it with `modprobe md_mod`).")
    if not prober.udev.available:
        notes.append("No udev database: by-id paths come from /dev/disk/by-id, signatures from blkid.")
    if system.is_live and not privileged:
        notes.append(
            "Read-only mode (not root): filesystem signatures without udev, exclusive opens by other "
            "programs and md superblocks cannot be checked, and nothing can be created or benchmarked "
            "with writes. Run as root for the full picture."
        )

    def inventory() -> Inventory:
        return Inventory(
            disks=tuple(disks), arrays=arrays, privileged=privileged, udev=prober.udev.available,
            md_available=has_md, notes=tuple(notes),
        )  # fmt: skip

    if head < len(names):
        yield inventory(), tuple(names[head:])
        disks += [prober.probe(name) for name in names[head:]]
    yield inventory(), ()
