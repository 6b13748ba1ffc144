"""Will the arrays come back after a reboot, and will anyone hear when one fails?

Reads mdadm.conf, the mdadm.conf inside the current initramfs, the mounts that hold /boot or the EFI system
partition, the bootloader, and whether `mdadm --monitor` runs; the advisor turns this into findings
(mdtui.advise.rules.keep) and the inventory shows it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from mdtui.invoker import status_uids
from mdtui.keep.conf import (
    ArrayLine,
    Distribution,
    MdadmConf,
    detect_distribution,
    normalize_uuid,
    parse_conf,
    read_conf,
)
from mdtui.keep.initramfs import CONF_PATHS, InitramfsError, initramfs_path, read_initramfs
from mdtui.model.array import MdArray
from mdtui.probe.arrays import read_arrays
from mdtui.probe.mounts import read_mounts
from mdtui.probe.root import RefusedFileError, SystemRoot

BOOT_MOUNTS = ("/boot", "/boot/efi", "/efi")
ESP_MOUNTS = ("/boot/efi", "/efi")
# Superblocks at the end of the device (or the old format) leave the data where a bootloader or firmware that
# knows nothing of md expects a plain filesystem.
END_METADATA = ("1.0", "0.90", "0.9")
# Names under which a process is mdadm's monitor.
_MONITOR_FLAGS = ("--monitor", "-F", "--follow")
_MAILERS = ("/usr/sbin/sendmail", "/usr/lib/sendmail")


@dataclass(frozen=True)
class ArrayBoot:
    """One running array as the next boot will see it."""

    name: str  # md0
    uuid: str | None  # normalized, 32 hex digits
    metadata: str | None
    conf_line: ArrayLine | None  # its ARRAY line in mdadm.conf
    initramfs_line: ArrayLine | None  # its ARRAY line in the initramfs's copy
    holds: tuple[str, ...] = ()  # boot mount points on it (/boot, /boot/efi)
    named_elsewhere: str | None = None  # mdadm.conf's device for it when the kernel assembled it as another


    @property
    def dev_path(self) -> str:
        return f"/dev/{self.name}"


@dataclass(frozen=True)
class Monitoring:
    """Who would hear about a failed member."""

    monitor_pids: tuple[int, ...]  # running `mdadm --monitor` processes
    mailaddr: str | None
    program: str | None
    mailer: str | None  # a sendmail that MAILADDR's mail would go through

    @property
    def running(self) -> bool:
        return bool(self.monitor_pids)


@dataclass(frozen=True)
class BootState:
    distribution: Distribution
    conf: MdadmConf
    initramfs: str | None  # path of the current kernel's initramfs
    initramfs_conf: MdadmConf | None  # the copy inside it; None when it could not be read
    initramfs_problem: str | None  # why it could not be read
    arrays: tuple[ArrayBoot, ...]
    stale: tuple[ArrayLine, ...]  # ARRAY lines whose UUID no array on this system has
    bootloader: str | None  # grub2, grub-legacy, systemd-boot, syslinux
    monitoring: Monitoring

    def array(self, name: str) -> ArrayBoot | None:
        return next((a for a in self.arrays if a.name == name), None)


def _uuid_of(root: SystemRoot, array: MdArray) -> str | None:
    uuid = normalize_uuid(array.uuid) or normalize_uuid(root.read_text(f"/sys/block/{array.name}/md/uuid"))
    if uuid is None and root.is_live and array.metadata not in (None, "none"):
        from mdtui.execute.mdadm import array_uuid

        uuid = normalize_uuid(array_uuid(array.dev_path))
    return uuid


def _holds(root: SystemRoot, array: MdArray, mounts: Sequence[tuple[str | None, str]]) -> tuple[str, ...]:
    if not any(point in BOOT_MOUNTS for _, point in mounts):
        return ()  # nothing boot-related is mounted: no array holds it (and no sysfs reads per array)
    numbers = {root.read_text(f"/sys/block/{array.name}/dev")}
    for entry in root.listdir(f"/sys/block/{array.name}"):
        if entry.startswith(array.name):
            numbers.add(root.read_text(f"/sys/block/{array.name}/{entry}/dev"))
    numbers = {n.strip() for n in numbers if n}
    held = [point for major_minor, point in mounts if point in BOOT_MOUNTS and major_minor in numbers]
    return tuple(sorted(set(held)))


def detect_bootloader(root: SystemRoot) -> str | None:
    if root.path("/boot/grub/grub.cfg").is_file() or root.path("/boot/grub2/grub.cfg").is_file():
        return "grub2"
    for esp in ESP_MOUNTS:
        if root.path(f"{esp}/loader/loader.conf").is_file():
            return "systemd-boot"
    if root.path("/boot/grub/menu.lst").is_file():
        return "grub-legacy"
    if root.path("/boot/extlinux").is_dir() or root.path("/boot/syslinux").is_dir():
        return "syslinux"
    return None


def monitor_pids(root: SystemRoot) -> tuple[int, ...]:
    """The running `mdadm --monitor` processes: root's own, whose executable is mdadm.

    Any user can start a process whose command line reads `mdadm --monitor` (a copy of mdadm, a script
    named so); only root can start one that runs as root. A process counts when all its user ids are 0
    and its executable (/proc/PID/exe) is mdadm; when mdtui may not read that link (it runs without
    root), the name the kernel keeps for it (/proc/PID/comm), which only the process itself, root's,
    could have set.
    """
    found = []
    for entry in root.listdir("/proc"):
        if not entry.isdigit():
            continue
        raw = root.read_bytes(f"/proc/{entry}/cmdline")
        if not raw:
            continue
        argv = [a.decode("utf-8", "replace") for a in raw.split(b"\x00") if a]
        if not (
            argv
            and os.path.basename(argv[0]) == "mdadm"
            and any(a in _MONITOR_FLAGS or a.startswith("--monitor") for a in argv[1:])
        ):
            continue
        try:
            uids = status_uids(root.read_table(f"/proc/{entry}/status") or "")
        except RefusedFileError:
            uids = None
        if not uids or any(uid != 0 for uid in uids):
            continue
        executable = root.read_link(f"/proc/{entry}/exe")
        if executable is not None:
            # After an upgrade replaced the binary, the kernel adds " (deleted)" to the link.
            if os.path.basename(executable.removesuffix(" (deleted)")) != "mdadm":
                continue
        elif root.read_text(f"/proc/{entry}/comm") != "mdadm":
            continue
        found.append(int(entry))
    return tuple(sorted(found))


def read_monitoring(root: SystemRoot, conf: MdadmConf) -> Monitoring:
    mailer = next((m for m in _MAILERS if root.path(m).exists()), None)
    return Monitoring(monitor_pids(root), conf.mailaddr, conf.program, mailer)


def read_image_conf(
    root: SystemRoot, image: str | None, read_image: bool = True
) -> tuple[MdadmConf | None, str | None]:
    """The mdadm.conf inside the initramfs at ``image`` (an empty one when it has none), or None and why not."""
    if image is None:
        return None, "the running kernel's release is unknown"
    if not read_image:
        return None, "not read"
    if not root.path(image).is_file():
        return None, f"{image} does not exist"
    try:
        contents = read_initramfs(image, host_path=str(root.path(image)))
    except InitramfsError as exc:
        return None, str(exc)
    inside = next((name for name in CONF_PATHS if name in contents.files), None)
    if inside is None:
        return parse_conf(f"{image}:/etc/mdadm.conf", None), None
    return parse_conf(f"{image}:/{inside}", contents.files[inside].decode("utf-8", "replace")), None


def read_boot_state(
    root: SystemRoot,
    *,
    arrays: Sequence[MdArray] | None = None,
    conf_path: str | None = None,
    initramfs: str | None = None,
    read_image: bool = True,
) -> BootState:
    """What the next boot will find. ``conf_path`` and ``initramfs`` override the distribution's own
    (tests, other layouts); ``read_image=False`` skips decompressing the initramfs."""
    distribution = detect_distribution(root)
    if conf_path is not None:
        distribution = Distribution(
            distribution.family, conf_path, distribution.initramfs_argv, distribution.initramfs_tool
        )
    conf = read_conf(root, distribution.conf_path)
    if arrays is None:
        arrays = read_arrays(root)
    try:
        mounts = [(m.major_minor, m.mount_point) for m in read_mounts(root)]
    except RefusedFileError:
        mounts = []
    uuids = {array.name: _uuid_of(root, array) for array in arrays}
    image = initramfs or initramfs_path(root, distribution.family)
    # Decompressing the initramfs takes a second or more; it only matters for arrays mdadm.conf lists.
    listed = any(conf.line_for(uuid) is not None for uuid in uuids.values())
    image_conf, problem = read_image_conf(root, image, read_image and listed)
    boots = []
    for array in arrays:
        uuid = uuids[array.name]
        boots.append(
            ArrayBoot(
                name=array.name,
                uuid=uuid,
                metadata=array.metadata,
                conf_line=conf.line_for(uuid),
                initramfs_line=image_conf.line_for(uuid) if image_conf is not None else None,
                holds=_holds(root, array, mounts),
                named_elsewhere=_named_elsewhere(root, array, conf.line_for(uuid)),
            )
        )
    known = {b.uuid for b in boots if b.uuid}
    stale = tuple(line for line in conf.arrays if line.uuid and line.uuid not in known)
    return BootState(
        distribution=distribution,
        conf=conf,
        initramfs=image,
        initramfs_conf=image_conf,
        initramfs_problem=problem,
        arrays=tuple(boots),
        stale=stale,
        bootloader=detect_bootloader(root),
        monitoring=read_monitoring(root, conf),
    )


def _named_elsewhere(root: SystemRoot, array: MdArray, line: ArrayLine | None) -> str | None:
    """mdadm.conf's device for the array when the kernel assembled it under another name (md127 for md0)."""
    if line is None or line.device is None or not line.device.startswith("/dev/md"):
        return None
    if line.device.startswith("/dev/md/"):
        # /dev/md/NAME is a udev link: fine whatever the number, as long as it leads to this array.
        target = root.resolve(line.device) if root.is_live else None
        if target is None and not root.is_live:
            return None
        return line.device if target is None or target.name != array.name else None
    return line.device if line.device != array.dev_path else None
