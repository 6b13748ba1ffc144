"""The SMART line of a loop disk: said in words without running smartctl, not smartctl's raw device-type error."""

from __future__ import annotations

from dataclasses import dataclass

from mdtui.model.disk import Transport
from mdtui.ui.common.render import Palette, smart_text
from mdtui.ui.inventory.smart import LOOP_NO_SMART, SmartReader


@dataclass
class _Disk:
    transport: Transport


class _Inventory:
    """The two things health_of asks of an inventory; a captured tree (privileged False) as in the report."""

    privileged = False

    def disk(self, name: str) -> _Disk | None:
        return _Disk(Transport.LOOP) if name.startswith("loop") else _Disk(Transport.SATA)


def test_a_loop_disk_says_it_has_no_smart_instead_of_smartctls_error() -> None:
    reader = SmartReader("/", lambda _name: None)
    health, pending = reader.health_of("loop1", _Inventory())  # type: ignore[arg-type]
    assert health is not None and not pending
    line = smart_text(health, Palette()).plain
    assert LOOP_NO_SMART in line and "loop device" in line and "Unable to detect" not in line
    # A real drive on a captured tree is still "cannot read here", not a loop message.
    assert reader.health_of("sdb", _Inventory()) == (None, False)  # type: ignore[arg-type]
