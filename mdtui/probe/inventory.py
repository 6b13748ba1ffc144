"""One scan of the system: disks, md arrays, and notes on what could not be seen."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

from mdtui.errors import ProbeError
from mdtui.model.inventory import Inventory
from mdtui.probe.disks import DiskProber
from mdtui.probe.root import SystemRoot

Step = tuple[Inventory, tuple[str, ...]]  # (inventory so far, names of the disks not probed yet)

# The first step of the inventory's first scan probes a screenful of disks: no table shows more rows than
# half the terminal's height (the tables share it with the detail pane), and at least this many.
FIRST_DISKS = 24


def screenful(height: int) -> int:
    """Disks the first step probes for a terminal ``height`` lines high."""
    return max(FIRST_DISKS, height // 2)


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


class ScanAhead:
    """:func:`scan_in_steps` begun in a thread before the app is loaded: its first step probed while nothing else runs.

    Started first thing at launch, the first step (a screenful of disks, every array) is probed while the
    launch waits a moment for it (:meth:`wait`) and before the UI's imports begin, so the first paint
    already holds it: a thread doing a syscall per sysfs file beside those imports gets the interpreter
    back only between their instructions and would finish after an empty screen was drawn. The
    screen shows the step if it is there when the screen mounts (:meth:`ready`), and :meth:`steps`
    gives the steps not shown yet, the rest probed by whichever thread iterates them. The steps are
    those of ``scan_in_steps`` with the same arguments, and an error it raises comes out of
    :meth:`steps` as it would out of ``scan_in_steps``.
    """

    def __init__(self, root: SystemRoot | str, *, privileged: bool | None = None, first: int | None = None) -> None:
        self._steps = scan_in_steps(root, privileged=privileged, first=first)
        self._first: Step | None = None
        self._error: BaseException | None = None
        self._shown = False
        self._thread = threading.Thread(target=self._probe_first, name="mdtui-first-scan", daemon=True)
        self._thread.start()

    def _probe_first(self) -> None:
        try:
            self._first = next(self._steps)
        except BaseException as exc:  # given to whoever takes the steps, as scan_in_steps would raise it
            self._error = exc

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the first step (or its error); True once it is there."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def ready(self) -> Step | None:
        """The first step if it is probed by now, without waiting; :meth:`steps` then goes on after it."""
        if self._thread.is_alive() or self._first is None:
            return None
        self._shown = True
        return self._first

    def steps(self) -> Iterator[Step]:
        """The steps :meth:`ready` did not give, the first waited for; the rest probed as they are taken."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        if self._first is None:  # pragma: no cover - _probe_first sets one or the other
            raise RuntimeError("the first step of the scan was never probed")
        if not self._shown:
            self._shown = True
            yield self._first
        yield from self._steps
