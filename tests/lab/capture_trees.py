"""Regenerate tests/fixtures/trees/ from the lab: `python -m tests.lab.capture_trees`.

lab-standard/   the STANDARD machine with the inventory scenario (tests/lab/scenarios.py), captured
                with `mdtui capture` inside the guest: real sysfs, procfs and udev database files.
real-links/     lab-standard with only the link attribute files rewritten to the values real
                hardware reports (QEMU cannot train faster links), see derive_real_links().
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from .harness import boot
from .machines import STANDARD
from .scenarios import build_inventory_scenario

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"


def capture_lab_standard() -> Path:
    guest = boot(STANDARD)
    try:
        build_inventory_scenario(guest)
        guest.run([guest.python_exe, "-m", "mdtui", "capture", guest.guest_out("lab-standard")], timeout=120)
        target = TREES / "lab-standard"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(guest.out_path("lab-standard"), target, symlinks=True)
    finally:
        guest.close()
    return target


def _write(tree: Path, pattern: str, name: str, value: str) -> list[Path]:
    written = []
    for path in sorted(tree.glob(pattern)):
        target = path / name
        if target.exists():
            target.write_text(value + "\n")
            written.append(target)
    return written


def derive_real_links(source: Path) -> Path:
    """Copy lab-standard and set link files to real-hardware values, per device.

    nvme0: healthy Gen3 x4 in a Gen3 x4 slot (8.0 GT/s x4, the values of the NVMe drive in the
           Prometheus procfs fixture, tests/fixtures/procfs). nvme1: a Gen3 x4 drive trained at 2.5 GT/s x4 in a
           PCIe 1.0 slot (docs/findings.md, finding 1). SATA link1 (sda, the HDD): 3.0 Gbps on a 6.0 Gbps
           port; link2 (sdb, the SSD): 6.0 Gbps. SAS phys: 12.0 Gbit of 12.0 Gbit.
    """
    target = TREES / "real-links"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True)
    nvme_functions = {}
    for block in sorted((target / "sys/block").glob("nvme*")):
        real = (block.parent / block.readlink()).resolve()
        controller = real.parent.name  # .../0000:01:00.0/nvme/nvme0/nvme0n1
        nvme_functions[controller] = real.parents[2]
    values = {
        "nvme0": ("8.0 GT/s PCIe", "4", "8.0 GT/s PCIe", "4", "8.0 GT/s PCIe", "4"),
        "nvme1": ("2.5 GT/s PCIe", "4", "8.0 GT/s PCIe", "4", "2.5 GT/s PCIe", "4"),
    }
    for controller, (cur, cur_w, mx, mx_w, port_mx, port_w) in values.items():
        function = nvme_functions[controller]
        for name, value in (
            ("current_link_speed", cur), ("current_link_width", cur_w),
            ("max_link_speed", mx), ("max_link_width", mx_w),
        ):  # fmt: skip
            (function / name).write_text(value + "\n")
        (function.parent / "max_link_speed").write_text(port_mx + "\n")
        (function.parent / "max_link_width").write_text(port_w + "\n")
        (function.parent / "current_link_speed").write_text(cur + "\n")
        (function.parent / "current_link_width").write_text(cur_w + "\n")
    sata = {"link1": ("3.0 Gbps", "6.0 Gbps"), "link2": ("6.0 Gbps", "6.0 Gbps")}
    for link, (speed, limit) in sata.items():
        for path in target.glob(f"sys/devices/**/ata*/{link}/ata_link/{link}"):
            (path / "sata_spd").write_text(speed + "\n")
            (path / "hw_sata_spd_limit").write_text(limit + "\n")
    for path in target.glob("sys/devices/**/sas_phy/phy-*"):
        if (path / "negotiated_linkrate").exists():
            (path / "negotiated_linkrate").write_text("12.0 Gbit\n")
            (path / "maximum_linkrate_hw").write_text("12.0 Gbit\n")
    return target


def main() -> int:
    source = TREES / "lab-standard" if "--derive-only" in sys.argv else capture_lab_standard()
    derived = derive_real_links(source)
    print(f"wrote {source} and {derived}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
