"""The array detail's keep rows (reboot, monitoring, last check) as the inventory shows them, at 80 columns."""

from __future__ import annotations

from mdtui.model.array import ArrayMember, MdArray
from mdtui.ui.common.render import Palette, array_detail

from .conftest import plain

PALETTE = Palette()


def test_keep_rows_in_the_array_detail_at_80_columns() -> None:
    array = MdArray(name="md0", state="clean", level="raid1", members=(ArrayMember("sdb", 0, ("in_sync",)),))
    rows = [
        ("Boot", "not in /etc/mdadm/mdadm.conf: after a reboot it may be md127 or missing (mdtui persist md0)", True),
        ("Monitor", "mdadm --monitor runs; alerts to root", False),
    ]
    text = plain(array_detail(array, PALETTE, rows), width=80)
    assert "Boot" in text and "⚠ not in /etc/mdadm/mdadm.conf" in text and "persist md0" in text
    assert "Monitor" in text and "⚠ mdadm --monitor" not in text
    assert text.index("Boot") < text.index("Members")
    assert "Boot" not in plain(array_detail(array, PALETTE), width=80)
