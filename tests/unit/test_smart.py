"""smartctl JSON as captured from the lab guest's NVMe and SATA drives (tests/fixtures/smart), read by
mdtui.probe.smart: the fields an admin needs, and nothing crashes on damaged output."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mdtui.probe.smart import ATA_CRC_ATTRIBUTE, NVME_WORN_PERCENT, parse_smartctl_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "smart"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def test_nvme_capture():
    health = parse_smartctl_json("/dev/nvme0n1", (FIXTURES / "qemu-nvme.json").read_text())
    raw = load("qemu-nvme.json")
    log = raw["nvme_smart_health_information_log"]
    assert health.protocol == "NVMe" and health.model == raw["model_name"] and health.serial == raw["serial_number"]
    assert health.passed is raw["smart_status"]["passed"] is True
    assert health.temperature_c == raw["temperature"]["current"]
    assert health.power_on_hours == raw["power_on_time"]["hours"]
    assert (health.media_errors, health.percentage_used, health.critical_warning) == (
        log["media_errors"],
        log["percentage_used"],
        log["critical_warning"],
    )
    assert health.problems == () and not health.failing


def test_sata_capture():
    health = parse_smartctl_json("/dev/sda", (FIXTURES / "qemu-sata.json").read_text())
    raw = load("qemu-sata.json")
    assert health.protocol == "ATA" and health.serial == raw["serial_number"]
    assert health.temperature_c == raw["temperature"]["current"]
    assert health.media_errors == 0  # Reallocated_Sector_Ct is the one media attribute QEMU reports
    assert health.percentage_used is None and health.problems == ()


def test_nvme_errors_and_wear_are_problems():
    raw = load("qemu-nvme.json")
    worn = copy.deepcopy(raw)
    worn["nvme_smart_health_information_log"].update(media_errors=7, percentage_used=NVME_WORN_PERCENT)
    health = parse_smartctl_json("/dev/nvme0n1", json.dumps(worn))
    assert health.problems == ("7 media errors", f"{NVME_WORN_PERCENT}% of its rated endurance used")
    failed = copy.deepcopy(raw)
    failed["smart_status"]["passed"] = False
    failed["nvme_smart_health_information_log"]["critical_warning"] = 4
    health = parse_smartctl_json("/dev/nvme0n1", json.dumps(failed))
    assert health.failing and health.problems[:2] == (
        "SMART overall health: FAILED",
        "NVMe critical warning 0x04: NVM subsystem reliability degraded (media or internal errors)",
    )


def test_ata_media_and_crc_counters():
    raw = load("qemu-sata.json")
    table = raw["ata_smart_attributes"]["table"]
    next(row for row in table if row["id"] == 5)["raw"]["value"] = 3
    table.append({"id": 197, "name": "Current_Pending_Sector", "raw": {"value": 2, "string": "2"}})
    table.append({"id": ATA_CRC_ATTRIBUTE, "name": "UDMA_CRC_Error_Count", "raw": {"value": 41, "string": "41"}})
    health = parse_smartctl_json("/dev/sda", json.dumps(raw))
    assert (health.media_errors, health.crc_errors) == (5, 41)
    assert "41 interface CRC errors (cable or backplane)" in health.problems


@pytest.mark.parametrize(
    "text", ["", "not json", "[]", '{"smart_status": "yes", "temperature": {"current": -5}}', '{"smartctl": 3}']
)
def test_damaged_output_is_unknown_not_an_exception(text: str):
    health = parse_smartctl_json("/dev/sdx", text)
    assert health.passed is None and health.temperature_c is None
    assert health.problems == ()


def test_sas_grown_defects_are_flagged_beside_ata_sectors():
    health = parse_smartctl_json("/dev/sdf", (FIXTURES / "sas-grown-defects.json").read_text())
    assert (health.protocol, health.grown_defects, health.media_errors) == ("SCSI", 56, 0)
    assert health.problems == ("56 grown defects (blocks the drive has reassigned)",)


@pytest.mark.parametrize("where", ["nested", "flat"])
def test_scsi_non_medium_errors_are_flagged(where: str):
    raw = load("sas-grown-defects.json")
    raw["scsi_grown_defect_list"] = 0
    if where == "nested":
        raw["scsi_nonmedium_error"] = {"count": 389}
    else:
        raw["scsi_nonmedium_error_count"] = 389
    health = parse_smartctl_json("/dev/sdf", json.dumps(raw))
    assert health.non_medium_errors == 389
    assert health.problems == ("389 non-medium errors (link, controller or power, not the media)",)


def test_a_raid_volume_temperature_of_0_is_not_reported():
    health = parse_smartctl_json("/dev/sdb", (FIXTURES / "scsi-raid-volume.json").read_text())
    assert health.model == "Intel Raid 1 Volume"
    assert health.temperature_c is None and health.passed is None
    assert health.problems == ()


def test_nvme_critical_warnings_in_nvme_words_never_prefail_attributes():
    health = parse_smartctl_json("/dev/nvme0", (FIXTURES / "nvme-critical-backup.json").read_text())
    assert health.failing
    assert health.problems == (
        "SMART overall health: FAILED",
        "NVMe critical warning 0x10: volatile memory backup device failed",
    )
    assert not any("prefail" in problem for problem in health.problems)


@pytest.mark.parametrize(
    ("bits", "words"),
    [
        (0x01, "available spare below its threshold"),
        (0x02, "temperature beyond a threshold"),
        (0x04, "NVM subsystem reliability degraded (media or internal errors)"),
        (0x08, "media placed in read-only mode"),
        (0x09, "available spare below its threshold; media placed in read-only mode"),
        (0x80, "reserved bits 0x80"),
    ],
)
def test_each_nvme_critical_warning_bit_is_named(bits: int, words: str):
    raw = load("nvme-critical-backup.json")
    raw["nvme_smart_health_information_log"]["critical_warning"] = bits
    health = parse_smartctl_json("/dev/nvme0", json.dumps(raw))
    assert f"NVMe critical warning 0x{bits:02x}: {words}" in health.problems


def test_an_ata_drive_failing_now_still_reads_prefail_attributes():
    raw = load("qemu-sata.json")
    raw["smartctl"]["exit_status"] = 16  # an ATA prefail attribute at or below its threshold
    assert "prefail attributes at or below threshold now" in parse_smartctl_json("/dev/sda", json.dumps(raw)).problems
