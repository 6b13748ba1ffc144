"""SMART health of a disk through smartctl's JSON output (`smartctl -j -a DEV`, smartmontools 7+).

What an admin needs to decide whether a member is failing: the overall verdict, temperature, power-on hours,
media errors (NVMe media errors; ATA reallocated, pending and uncorrectable sectors; SCSI uncorrected errors),
SCSI grown defects and non-medium errors, interface CRC errors (a cable or backplane, not the disk), how much
of its rated endurance an NVMe has used and NVMe critical warnings, each in its own protocol's words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.format import plural
from mdtui.text import clean_optional

SMARTCTL_TIMEOUT_S = 20.0
# smartctl's exit status is a bit mask (smartctl(8), EXIT STATUS).
EXIT_COMMAND_LINE = 1 << 0
EXIT_OPEN_FAILED = 1 << 1
EXIT_SMART_COMMAND_FAILED = 1 << 2
EXIT_DISK_FAILING = 1 << 3
EXIT_PREFAIL_NOW = 1 << 4
EXIT_PREFAIL_PAST = 1 << 5
EXIT_ERROR_LOG = 1 << 6
EXIT_SELF_TEST_LOG = 1 << 7
# ATA attributes whose raw value counts damaged media, and the interface CRC counter.
ATA_MEDIA_ATTRIBUTES = {5: "reallocated", 187: "reported uncorrectable", 197: "pending", 198: "offline uncorrectable"}
ATA_CRC_ATTRIBUTE = 199
# NVMe drives rate their endurance as percentage used (may pass 100); past this, plan a replacement.
NVME_WORN_PERCENT = 90
PARALLEL_DISKS = 8
# The NVMe SMART / Health log's Critical Warning bits (NVMe base specification, log page 02h, byte 0).
NVME_CRITICAL_WARNINGS = (
    (0x01, "available spare below its threshold"),
    (0x02, "temperature beyond a threshold"),
    (0x04, "NVM subsystem reliability degraded (media or internal errors)"),
    (0x08, "media placed in read-only mode"),
    (0x10, "volatile memory backup device failed"),
    (0x20, "persistent memory region read-only or unreliable"),
)
# A raw counter this large is a damaged reading, not a count.
_COUNTER_LIMIT = 1 << 48


@dataclass(frozen=True)
class SmartHealth:
    device: str  # /dev/nvme0n1

    __json_extras__ = ("problems", "failing")
    protocol: str | None = None  # NVMe, ATA, SCSI
    model: str | None = None
    serial: str | None = None
    passed: bool | None = None  # the drive's overall self-assessment; None when it gave none
    temperature_c: int | None = None
    power_on_hours: int | None = None
    media_errors: int | None = None  # NVMe media_errors; ATA sum of ATA_MEDIA_ATTRIBUTES; SCSI uncorrected
    crc_errors: int | None = None  # ATA UDMA_CRC_Error_Count
    grown_defects: int | None = None  # SCSI grown defect list: blocks the drive has reassigned
    non_medium_errors: int | None = None  # SCSI non-medium errors (link, controller, power; not the media)
    percentage_used: int | None = None  # NVMe endurance used
    critical_warning: int | None = None  # NVMe critical_warning bits
    error_log_entries: int | None = None  # NVMe num_err_log_entries / ATA error log count
    exit_status: int | None = None
    error: str | None = None  # why nothing (or not everything) could be read

    def __post_init__(self) -> None:
        # The drive's firmware writes its model and serial, smartctl its messages: never shown raw.
        for name in ("protocol", "model", "serial", "error"):
            value = getattr(self, name)
            cleaned = clean_optional(value)
            if cleaned is not value:
                object.__setattr__(self, name, cleaned)

    @property
    def problems(self) -> tuple[str, ...]:
        """What about this drive is worth a finding, in words."""
        found = []
        if self.passed is False:
            found.append("SMART overall health: FAILED")
        if self.critical_warning:
            words = nvme_warning_text(self.critical_warning)
            found.append(f"NVMe critical warning 0x{self.critical_warning:02x}: {words}")
        if self.media_errors:
            found.append(plural(self.media_errors, "media error"))
        if self.grown_defects:
            found.append(f"{plural(self.grown_defects, 'grown defect')} (blocks the drive has reassigned)")
        if self.non_medium_errors:
            found.append(
                f"{plural(self.non_medium_errors, 'non-medium error')} (link, controller or power, not the media)"
            )
        if self.crc_errors:
            found.append(f"{plural(self.crc_errors, 'interface CRC error')} (cable or backplane)")
        if self.percentage_used is not None and self.percentage_used >= NVME_WORN_PERCENT:
            found.append(f"{self.percentage_used}% of its rated endurance used")
        if self.exit_status is not None:
            if self.exit_status & EXIT_DISK_FAILING and self.passed is not False:
                found.append("smartctl reports the disk failing")
            # Prefail attributes are ATA's; smartctl's bit is set for no other protocol's reason.
            if self.exit_status & EXIT_PREFAIL_NOW and self.protocol == "ATA":
                found.append("prefail attributes at or below threshold now")
        return tuple(found)

    @property
    def failing(self) -> bool:
        return (
            self.passed is False
            or bool(self.critical_warning)
            or bool(self.exit_status is not None and self.exit_status & (EXIT_DISK_FAILING | EXIT_PREFAIL_NOW))
        )


def nvme_warning_text(bits: int) -> str:
    """An NVMe Critical Warning byte in the specification's words, e.g. "available spare below its threshold"."""
    named = [text for bit, text in NVME_CRITICAL_WARNINGS if bits & bit]
    unknown = bits & ~sum(bit for bit, _ in NVME_CRITICAL_WARNINGS)
    if unknown:
        named.append(f"reserved bits 0x{unknown:02x}")
    return "; ".join(named)


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value < _COUNTER_LIMIT else None


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def parse_smartctl_json(device: str, text: str) -> SmartHealth:
    """Read what matters from smartctl's JSON; anything missing or malformed is None, never an exception."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return SmartHealth(device, error="smartctl printed no JSON (smartmontools older than 7.0?)")
    if not isinstance(data, Mapping):
        return SmartHealth(device, error="smartctl printed unexpected JSON")
    exit_status = _int(_get(data, "smartctl", "exit_status"))
    messages = _get(data, "smartctl", "messages")
    error = None
    if isinstance(messages, list):
        errors = [m.get("string") for m in messages if isinstance(m, Mapping) and m.get("severity") == "error"]
        error = "; ".join(str(e) for e in errors if e) or None
    passed = _get(data, "smart_status", "passed")
    nvme = _get(data, "nvme_smart_health_information_log")
    nvme = nvme if isinstance(nvme, Mapping) else {}
    media = crc = None
    table = _get(data, "ata_smart_attributes", "table")
    if isinstance(table, list):
        raws = {}
        for row in table:
            if isinstance(row, Mapping) and isinstance(row.get("id"), int):
                raws[row["id"]] = _int(_get(row, "raw", "value"))
        counted = [raws[i] for i in ATA_MEDIA_ATTRIBUTES if raws.get(i) is not None]
        media = sum(v for v in counted if v is not None) if counted else None
        crc = raws.get(ATA_CRC_ATTRIBUTE)
    if nvme:
        media = _int(nvme.get("media_errors"))
    scsi_errors = [
        _int(_get(data, "scsi_error_counter_log", direction, "total_uncorrected_errors"))
        for direction in ("read", "write", "verify")
    ]
    if media is None and any(v is not None for v in scsi_errors):
        media = sum(v for v in scsi_errors if v is not None)
    protocol = _get(data, "device", "protocol")
    # smartctl writes the non-medium error count to JSON under one of these names, where it writes it at
    # all (older versions print it only as text).
    non_medium = _int(_get(data, "scsi_nonmedium_error", "count"))
    if non_medium is None:
        non_medium = _int(data.get("scsi_nonmedium_error_count"))
    temperature = _int(_get(data, "temperature", "current"))
    if temperature == 0:
        # No drive in service sits at 0 °C: a RAID volume or a bridge with no sensor fills the field with 0.
        temperature = None
    model = data.get("model_name") or data.get("scsi_model_name")
    ata_errors = _int(_get(data, "ata_smart_error_log", "summary", "count"))
    return SmartHealth(
        device=device,
        protocol=protocol if isinstance(protocol, str) else None,
        model=model if isinstance(model, str) else None,
        serial=data.get("serial_number") if isinstance(data.get("serial_number"), str) else None,
        passed=passed if isinstance(passed, bool) else None,
        temperature_c=temperature,
        power_on_hours=_int(_get(data, "power_on_time", "hours")),
        media_errors=media,
        crc_errors=crc,
        grown_defects=_int(data.get("scsi_grown_defect_list")),
        non_medium_errors=non_medium,
        percentage_used=_int(nvme.get("percentage_used")) if nvme else None,
        critical_warning=_int(nvme.get("critical_warning")) if nvme else None,
        error_log_entries=_int(nvme.get("num_err_log_entries")) if nvme else ata_errors,
        exit_status=exit_status,
        error=error,
    )


def read_smart(device: str, *, timeout_s: float = SMARTCTL_TIMEOUT_S) -> SmartHealth:
    """`smartctl -j -a DEVICE`; a missing smartctl, a timeout or an unreadable device is ``error``."""
    try:
        result = run_command(["smartctl", "-j", "-a", device], timeout_s=timeout_s)
    except MdtuiError as exc:
        return SmartHealth(device, error=str(exc))
    health = parse_smartctl_json(device, result.stdout)
    if health.error is None and result.returncode & (EXIT_COMMAND_LINE | EXIT_OPEN_FAILED):
        return SmartHealth(device, exit_status=result.returncode, error=f"smartctl could not open {device}")
    return health


def read_smart_all(devices: Iterable[str], *, timeout_s: float = SMARTCTL_TIMEOUT_S) -> dict[str, SmartHealth]:
    """SMART of many disks, a few at a time (each smartctl waits on its disk, not the CPU)."""
    wanted = list(dict.fromkeys(devices))
    if not wanted:
        return {}
    with ThreadPoolExecutor(max_workers=min(PARALLEL_DISKS, len(wanted))) as pool:
        results = pool.map(lambda dev: read_smart(dev, timeout_s=timeout_s), wanted)
        return dict(zip(wanted, results, strict=True))
