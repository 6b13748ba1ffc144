"""The array detail's keep rows (reboot, monitoring, last check) and the disk detail's SMART health as the
inventory shows them, at 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.disk import Disk, Transport
from mdtui.probe.smart import SmartHealth, parse_smartctl_json
from mdtui.ui.common.render import Palette, array_detail, disk_detail

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


SMART = Path(__file__).resolve().parents[1] / "fixtures" / "smart"


def test_smart_health_in_the_disk_detail_at_80_columns() -> None:
    disk = Disk(name="nvme0n1", dev_path="/dev/nvme0n1", transport=Transport.NVME, size_bytes=1 << 30)
    raw = json.loads((SMART / "qemu-nvme.json").read_text())
    health = parse_smartctl_json("/dev/nvme0n1", json.dumps(raw))
    text = plain(disk_detail(disk, PALETTE, health), width=80)
    log = raw["nvme_smart_health_information_log"]
    expected = (f"PASSED · {raw['temperature']['current']} °C · {raw['power_on_time']['hours']:,} h on · "
                f"media errors {log['media_errors']}")  # fmt: skip
    assert "Health" in text and expected in text, text
    raw["smart_status"]["passed"] = False
    log["media_errors"] = 7
    failing = plain(disk_detail(disk, PALETTE, parse_smartctl_json("/dev/nvme0n1", json.dumps(raw))), width=80)
    assert "FAILED" in failing and "⚠ SMART overall health: FAILED" in failing and "⚠ 7 media errors" in failing
    # While smartctl runs the row says so; without a reading (a captured tree, not root) there is no row.
    assert "reading SMART" in plain(disk_detail(disk, PALETTE, health_pending=True), width=80)
    assert "Health" not in plain(disk_detail(disk, PALETTE), width=80)
    unavailable = SmartHealth("/dev/vda", error="smartctl cannot read /dev/vda: Unable to detect device type")
    assert "not available: smartctl cannot read /dev/vda" in plain(disk_detail(disk, PALETTE, unavailable), width=80)
