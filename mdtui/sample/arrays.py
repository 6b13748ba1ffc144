"""md arrays from /proc/mdstat and md sysfs."""

from __future__ import annotations

from mdtui.model.array import MdArray
from mdtui.probe.arrays import ArrayReader
from mdtui.probe.kept import KeptFile
from mdtui.probe.root import TABLE_LIMIT, SystemRoot
from mdtui.sample.source import Tick


class ArraySource:
    """The arrays as of this tick; latest holds the last tick's, for the md thread source."""

    def __init__(self, root: SystemRoot) -> None:
        self._mdstat = KeptFile(str(root.path("/proc/mdstat")), limit=TABLE_LIMIT, table=True)
        self._mdstat_text: str | None = None
        self._arrays: tuple[MdArray, ...] = ()
        self._array_reader = ArrayReader(root)

    @property
    def latest(self) -> tuple[MdArray, ...]:
        return self._arrays

    def read(self, tick: Tick) -> tuple[MdArray, ...]:
        rescan_due = tick.rescan_due
        text = self._mdstat.read()
        # mdstat changes whenever anything worth showing live changes (members, sync progress and
        # speed), so an unchanged text means the dozens of sysfs reads behind read_arrays can wait,
        # and a text changed only in an array's progress line re-reads just that array's sync files
        # (ArrayReader). Only sysfs-only details such as clean/active flips lag, by at most rescan_s.
        if text != self._mdstat_text or rescan_due:
            self._mdstat_text = text
            self._arrays = tuple(self._array_reader.read(text, full=rescan_due))
        return self._arrays

    def close(self) -> None:
        self._mdstat.close()
        self._array_reader.close()


__all__ = ["ArraySource"]
