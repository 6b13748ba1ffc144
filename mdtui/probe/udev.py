"""udev properties of block devices: pyudev on a live system, the udev database files under a root."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mdtui.probe.root import RefusedFileError, SystemRoot


@dataclass(frozen=True)
class UdevInfo:
    properties: dict[str, str] = field(default_factory=dict)
    links: tuple[str, ...] = ()  # absolute /dev/... symlinks such as /dev/disk/by-id/...
    problem: str | None = None  # why the record could not be read, when it exists but is unusable

    def get(self, key: str) -> str | None:
        value = self.properties.get(key)
        return value or None


# udev writes *_ENC properties with each byte it will not keep as is (a space, a backslash, ...) as "\xNN".
_ENCODED_BYTE = re.compile(r"\\x([0-9a-fA-F]{2})")


def decode_udev_enc(value: str) -> str:
    """An ``*_ENC`` property's text: ``KINGSTON\\x20SH103S3240G\\x20\\x20`` -> ``KINGSTON SH103S3240G  ``."""
    raw = _ENCODED_BYTE.sub(lambda m: chr(int(m.group(1), 16)), value)
    # Bytes above 0x7f were UTF-8 before udev encoded them: put the bytes back together.
    try:
        return raw.encode("latin-1").decode("utf-8", "replace")
    except UnicodeEncodeError:  # characters udev left unencoded beyond latin-1: already text
        return raw


def udev_model(info: UdevInfo) -> str | None:
    """The model as the drive reports it, from udev: ID_MODEL_ENC decoded, words single-spaced.

    ID_MODEL has every space made "_", so a real underscore cannot be told from a space there; it is
    used (its "_" read as spaces) only when there is no ID_MODEL_ENC.
    """
    encoded = info.get("ID_MODEL_ENC")
    text = decode_udev_enc(encoded) if encoded is not None else (info.get("ID_MODEL") or "").replace("_", " ")
    text = " ".join(text.split())
    return text or None


class UdevReader:
    """Looks up a device's udev record by its major:minor.

    On the live system pyudev is used (it asks libudev, which reads the same database); on a captured
    tree the database files ``/run/udev/data/b<major>:<minor>`` are parsed directly.
    """

    def __init__(self, root: SystemRoot) -> None:
        self.root = root
        self._context = None
        self.available = bool(root.listdir("/run/udev/data"))
        if self.available and root.is_live:
            try:
                import pyudev

                self._context = pyudev.Context()
            except Exception:  # libudev missing: the database files still work
                self._context = None

    def lookup(self, major_minor: str | None, sys_name: str) -> UdevInfo:
        if not self.available or not major_minor:
            return UdevInfo()
        if self._context is not None:
            info = self._lookup_pyudev(sys_name)
            if info is not None:
                return info
        return self._lookup_file(major_minor)

    def _lookup_pyudev(self, sys_name: str) -> UdevInfo | None:
        import pyudev

        try:
            device = pyudev.Devices.from_name(self._context, "block", sys_name)
            properties = {str(k): str(v) for k, v in device.properties.items()}
            links = tuple(sorted(str(link) for link in device.device_links))
        except Exception:
            return None
        return UdevInfo(properties, links)

    def _lookup_file(self, major_minor: str) -> UdevInfo:
        """The record's properties; one that exists but is refused (see mdtui.probe.root) says why.

        An unreadable record is a problem, not an empty one: signatures it would have listed are unknown.
        """
        try:
            text = self.root.read_table(f"/run/udev/data/b{major_minor}")
        except RefusedFileError as exc:
            return UdevInfo(problem=f"udev record unreadable: {exc}")
        if text is None:
            return UdevInfo()
        return parse_udev_database(text)


def parse_udev_database(text: str) -> UdevInfo:
    """Parse one udev database record: ``E:KEY=value`` properties and ``S:`` symlinks below /dev."""
    properties: dict[str, str] = {}
    links: list[str] = []
    for line in text.splitlines():
        if line.startswith("E:") and "=" in line:
            key, _, value = line[2:].partition("=")
            properties[key] = value
        elif line.startswith("S:"):
            links.append("/dev/" + line[2:].strip())
    return UdevInfo(properties, tuple(sorted(links)))
