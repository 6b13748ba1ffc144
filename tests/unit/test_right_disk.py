"""The right disk (issue 42): the enclosure slot from a sysfs tree written after the kernel's enclosure class
(drivers/misc/enclosure.c, Documentation/ABI/testing/sysfs-class-enclosure), its locate LED blinked and turned off
(the enclosure's attribute, or ledctl's argv), the identity shown before a member is failed, and serials never cut
so that two disks look alike."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mdtui.actionlog import ActionLog
from mdtui.errors import MdtuiError
from mdtui.format import distinct_serials, ident_text
from mdtui.keep.locate import Locating, identify, plan_locate
from mdtui.model.disk import Disk, Transport
from mdtui.probe.enclosure import enclosure_slot
from mdtui.probe.root import SystemRoot

HBA = "sys/devices/pci0000:00/0000:00:04.0/host0/port-0:0/expander-0:0"
DISK = Disk(
    name="sdc",
    dev_path="/dev/sdc",
    transport=Transport.SAS,
    serial="ZL200003",
    wwn="0x5000c500a1b2c3d4",
    model="SEAGATE ST16000NM004J",
    by_path="/dev/disk/by-path/pci-0000:00:04.0-sas-exp0x500304801f2a3b3f-phy3-lun-0",
)


def _link(link: Path, target: Path) -> None:
    """A link as sysfs makes it: relative, so it stays inside the tree a confined reader walks."""
    link.symlink_to(os.path.relpath(target, link.parent))


def enclosure_tree(root: Path, *, component: str = "Slot 03", slot: str = "3\n") -> Path:
    """A SAS disk in slot 3 of an SES enclosure, as the kernel lays it out: the disk's SCSI device, the enclosure's
    own SCSI device with its enclosure-class directory, a component directory per slot (slot, type, status, fault,
    locate, a device link to the disk in it), and /sys/class/enclosure linking to the enclosure."""
    disk_dev = root / HBA / "end_device-0:0:3" / "target0:0:3" / "0:0:3:0"
    (disk_dev / "block" / "sdc").mkdir(parents=True)
    encl_dev = root / HBA / "end_device-0:0:12" / "target0:0:12" / "0:0:12:0"
    encl = encl_dev / "enclosure" / "0:0:12:0"
    encl.mkdir(parents=True)
    (encl / "components").write_text("12\n")
    (encl / "id").write_text("0x500304801f2a3b3f\n")
    for number in range(12):
        name = component if number == 3 else f"Slot {number:02d}"
        comp = encl / name
        comp.mkdir()
        for attribute, value in (
            ("slot", slot if number == 3 else f"{number}\n"),
            ("type", "array device\n"),
            ("status", "OK\n"),
            ("fault", "0\n"),
            ("locate", "0\n"),
            ("active", "0\n"),
        ):
            (comp / attribute).write_text(value)  # fmt: skip
        if number == 3:
            _link(comp / "device", disk_dev)
    block = root / "sys" / "block"
    block.mkdir(parents=True)
    _link(block / "sdc", disk_dev / "block" / "sdc")
    _link(disk_dev / "block" / "sdc" / "device", disk_dev)
    klass = root / "sys" / "class" / "enclosure"
    klass.mkdir(parents=True)
    _link(klass / "0:0:12:0", encl)
    return encl / component / "locate"


def test_the_slot_comes_from_the_enclosure_class(tmp_path: Path) -> None:
    enclosure_tree(tmp_path)
    slot = enclosure_slot(SystemRoot(tmp_path), "sdc")
    assert slot is not None
    assert (slot.enclosure, slot.component, slot.slot, slot.locate) == ("0:0:12:0", "Slot 03", 3, False)
    assert slot.describe() == "slot 3 (Slot 03) of enclosure 0:0:12:0, id 0x500304801f2a3b3f"
    assert enclosure_slot(SystemRoot(tmp_path), "sdz") is None


def test_a_captured_trees_device_links_leading_out_of_it_are_not_followed(tmp_path: Path) -> None:
    """The tree's links are resolved inside it (SystemRoot.resolve): a disk and a slot whose device links both
    lead to one directory of this machine are no match, as mdtui never follows a tree out of itself."""
    tree = tmp_path / "tree"
    locate = enclosure_tree(tree)
    outside = tmp_path / "outside"
    outside.mkdir()
    for link in (
        tree / HBA / "end_device-0:0:3" / "target0:0:3" / "0:0:3:0" / "block" / "sdc" / "device",
        locate.parent / "device",
    ):
        link.unlink()
        link.symlink_to(outside)
    assert enclosure_slot(SystemRoot(tree), "sdc") is None


def test_an_enclosure_name_a_terminal_would_misread_is_neither_shown_nor_written(tmp_path: Path) -> None:
    enclosure_tree(tmp_path, component="Slot\x1b[2J03")
    assert enclosure_slot(SystemRoot(tmp_path), "sdc") is None


def test_the_identity_shows_the_full_serial_wwn_port_and_slot_and_the_serial_is_the_token(tmp_path: Path) -> None:
    enclosure_tree(tmp_path)
    identity = identify(SystemRoot(tmp_path), DISK)
    text = "\n".join(identity.lines())
    assert "serial ZL200003" in text and "WWN    0x5000c500a1b2c3d4" in text
    assert "port   pci-0000:00:04.0-sas-exp0x500304801f2a3b3f-phy3-lun-0" in text
    assert "slot   slot 3 (Slot 03) of enclosure 0:0:12:0" in text
    assert identity.token == "ZL200003"
    assert identify(SystemRoot(tmp_path), Disk("sdz", "/dev/sdz", Transport.SATA)).token == "sdz"


def test_locate_blinks_through_the_enclosure_and_turns_it_off_whatever_ends_the_block(tmp_path: Path) -> None:
    locate = enclosure_tree(tmp_path)
    root = SystemRoot(tmp_path)
    plan = plan_locate(root, DISK, ledctl="")
    assert plan.how == "enclosure" and plan.shown()[0].startswith("on:  echo 1 > '/sys/class/enclosure/0:0:12:0/")
    log = ActionLog(tmp_path / "actions.log")
    with pytest.raises(RuntimeError), Locating(root, plan, log):
        assert locate.read_text() == "1"
        raise RuntimeError("interrupted")
    assert locate.read_text() == "0"
    assert [entry["note"] for entry in log.entries()] == ["locate sdc: on", "locate sdc: off"]


def test_a_locate_file_turned_into_a_link_out_of_sysfs_is_refused(tmp_path: Path) -> None:
    """The attack: the locate attribute replaced by a link to a file elsewhere; nothing is written through it."""
    locate = enclosure_tree(tmp_path)
    victim = tmp_path / "etc-shadow"
    victim.write_text("keep\n")
    locate.unlink()
    locate.symlink_to(victim)
    root = SystemRoot(tmp_path)
    plan = plan_locate(root, DISK, ledctl="")
    with pytest.raises(MdtuiError, match="outside /sys/block"), Locating(root, plan, ActionLog(tmp_path / "a.log")):
        pass
    assert victim.read_text() == "keep\n"


def test_without_an_enclosure_ledctl_blinks_it_and_its_argv_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ledctl cannot drive an LED here (no SES, VMD or NPEM): a stand-in on PATH records the argv mdtui runs."""
    record = tmp_path / "argv"
    fake = tmp_path / "bin" / "ledctl"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {record}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    root = SystemRoot(tmp_path / "empty")
    plan = plan_locate(root, DISK)
    assert (plan.on_argv, plan.off_argv) == (("ledctl", "locate=/dev/sdc"), ("ledctl", "locate_off=/dev/sdc"))
    with Locating(root, plan, ActionLog(tmp_path / "a.log")):
        pass
    assert record.read_text().splitlines() == ["locate=/dev/sdc", "locate_off=/dev/sdc"]


def test_without_an_enclosure_or_ledctl_it_says_so_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(MdtuiError, match="ledctl \\(ledmon\\) is not installed"):
        plan_locate(SystemRoot(tmp_path), DISK)


SERIALS = [f"S64HNE0R{index:06d}" for index in range(64)]  # bench/bigtree.py's NVMe disks


@pytest.mark.parametrize("width", [40, 14, 10, 8, 6])
def test_serials_of_one_batch_stay_apart_at_any_width(width: int) -> None:
    shown = distinct_serials(SERIALS, width)
    assert len(set(shown.values())) == len(SERIALS)
    assert all(value.endswith(serial[-3:]) for serial, value in shown.items())
    assert all(len(value) <= max(width, len(SERIALS[0])) for value in shown.values())


def test_too_narrow_a_column_shows_serials_whole_rather_than_alike() -> None:
    assert distinct_serials(SERIALS, 4) == {serial: serial for serial in SERIALS}
    assert distinct_serials(["AB1", "AB2"], 2) == {"AB1": "AB1", "AB2": "AB2"}


def test_the_model_gives_way_before_the_serial() -> None:
    assert ident_text("SAMSUNG MZQL23T8HCLS-00A07", "S64HNE0R000063") == "SAMSUNG MZQL23T8HCLS-00A07 / S64HNE0R000063"
    assert ident_text("SAMSUNG MZQL23T8HCLS-00A07", "S64HNE0R000063", 24) == "SAMSUN… / S64HNE0R000063"
    assert ident_text("SAMSUNG MZQL23T8HCLS-00A07", "S64HNE0R000063", 10, "S64H…00063") == "S64H…00063"
    assert ident_text(None, None, 10) == "-"


def test_scan_of_the_256_disk_host_shows_every_nvme_serial_whole(
    bigtree: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: all 64 NVMe disks showed "S64HN", cut with no sign of it."""
    from mdtui.cli.main import main

    tree = tmp_path / "host"
    bigtree.build(tree, 256)  # type: ignore[attr-defined]
    assert main(["--root", str(tree), "scan"]) == 0
    out = capsys.readouterr().out
    for serial in SERIALS:
        assert f"/ {serial} " in out, serial
