"""Discover the block devices a user could put in an array, with identity, link and in-use reasons."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable
from pathlib import Path

from mdtui.errors import MdtuiError
from mdtui.format import plural
from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.model.link import Link
from mdtui.model.names import kernel_name_key
from mdtui.probe.arrays import MAX_SECTORS
from mdtui.probe.blocktree import BlockTree
from mdtui.probe.links import PCI_ADDRESS, pcie_link, sas_link, sata_link
from mdtui.probe.mounts import Mount, read_mounts, read_swaps
from mdtui.probe.root import SystemRoot, read_attribute
from mdtui.probe.udev import UdevInfo, UdevReader, udev_model

# Devices that are never array members in their own right: RAM disks, compressed swap, optical
# drives, floppies, and the md and dm devices built on top of real disks.
_NOT_CANDIDATES = re.compile(r"^(ram|zram|md|dm-|sr|fd)\d*")
# Logical and physical block sizes are powers of two up to a few MiB; more is a damaged file.
_MAX_BLOCK_SIZE = 1 << 30
# Preferred by-id names: the ones that carry model and serial, before WWN and EUI forms.
_BY_ID_ORDER = ("nvme-", "ata-", "scsi-S", "scsi-3", "virtio-", "usb-", "scsi-", "wwn-")


def is_file_backed(name: str) -> bool:
    """A loop device: its bytes are a file's, which reach the disk holding the file (and are counted there)
    or no disk at all (a file in RAM), so they are never a disk's traffic of their own."""
    return name.startswith("loop")


def candidate_name(name: str) -> bool:
    """Whether a block device of this name can be a disk mdtui lists (not a RAM disk, md, dm, optical...)."""
    return _NOT_CANDIDATES.match(name) is None


def is_candidate(root: SystemRoot, name: str) -> bool:
    """Whether the whole block device ``name`` is a disk the inventory lists (and watch shows): the one rule.

    Left out: what candidate_name leaves out, an unattached loop device, a device with no medium."""
    if not candidate_name(name):
        return False
    if is_file_backed(name) and root.read_text(f"/sys/block/{name}/loop/backing_file") is None:
        return False  # an unattached loop device
    return root.read_text(f"/sys/block/{name}/size") != "0"  # no medium: empty card reader, unconnected nbd


def transport_of(name: str, device_path: str) -> Transport:
    """Classify a disk by where it sits in the device tree."""
    if is_file_backed(name):
        return Transport.LOOP
    if name.startswith("nvme") or "/nvme" in device_path:
        return Transport.NVME
    if "/usb" in device_path:
        return Transport.USB
    if re.search(r"/ata\d+/", device_path):
        return Transport.SATA
    if "/end_device-" in device_path or "/sas_" in device_path:
        return Transport.SAS
    if "/virtio" in device_path:
        return Transport.VIRTIO
    return Transport.OTHER


def _pick_by_id(links: Iterable[str]) -> str | None:
    by_id = [link for link in links if link.startswith("/dev/disk/by-id/")]
    for prefix in _BY_ID_ORDER:
        for link in by_id:
            name = link.rsplit("/", 1)[1]
            if name.startswith(prefix) and not name.startswith("nvme-eui.") and not name.startswith("nvme-nvme."):
                return link
    return by_id[0] if by_id else None


def _by_id_from_dev(root: SystemRoot, name: str) -> str | None:
    directory = root.path("/dev/disk/by-id")
    links = []
    for entry in root.listdir(directory):
        if root.link_name(directory / entry) == name:
            links.append(f"/dev/disk/by-id/{entry}")
    return _pick_by_id(links)


def _vpd_serial(root: SystemRoot, path: Path) -> str | None:
    data = root.read_bytes(path)
    if data is None:
        return None
    # VPD page 0x80: a 4-byte header, then the unit serial number in ASCII.
    serial = data[4:].decode("ascii", errors="replace").strip(" \x00")
    return serial or None


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text or None


def _driver(root: SystemRoot, sys_path: Path, transport: Transport) -> str | None:
    if transport is Transport.VIRTIO:
        driver = root.link_name(sys_path / "device" / "driver")
        if driver is not None:
            return driver
    for candidate in [sys_path, *sys_path.parents]:
        if PCI_ADDRESS.match(candidate.name):
            driver = root.link_name(candidate / "driver")
            if driver is not None:
                return driver
    return root.link_name(sys_path / "device" / "driver")


def _probe_link(root: SystemRoot, name: str, sys_path: Path, transport: Transport) -> Link | None:
    if transport is Transport.NVME:
        link = pcie_link(root, sys_path)
        if link is None:
            # Native NVMe multipath puts the namespace under a virtual subsystem; the controllers
            # inside it lead to the PCI function.
            device = root.resolve(f"/sys/block/{name}/device")
            controllers = [e for e in root.listdir(device) if re.match(r"^nvme\d+$", e)] if device is not None else []
            for entry in controllers:
                if device is not None:
                    controller_device = root.resolve(device / entry / "device")
                    if controller_device is not None:
                        link = pcie_link(root, controller_device)
                        if link is not None:
                            return link
        return link
    if transport is Transport.SATA:
        return sata_link(root, sys_path)
    if transport is Transport.SAS:
        return sas_link(root, sys_path)
    return None


class DiskProber:
    """Probes every candidate disk under one root; shared lookups are read once per scan."""

    def __init__(self, root: SystemRoot, *, privileged: bool | None = None) -> None:
        self.root = root
        self.live = root.is_live
        self.privileged = (os.geteuid() == 0) if privileged is None else privileged
        self.tree = BlockTree.read(root)
        self.udev = UdevReader(root)
        self.mounts = read_mounts(root)
        self.swaps = read_swaps(root)
        # Traced down to whole disks once per scan, not once per disk.
        self.traced_mounts = self._trace_mounts()
        self.traced_swaps = self._trace_swaps()

    def candidates(self) -> list[str]:
        names = [name for name in self.tree.top_level if is_candidate(self.root, name)]
        # The kernel's order, not sysfs's: nvme2n1 before nvme10n1, sdz before sdaa.
        names.sort(key=kernel_name_key)
        return names

    def probe(self, name: str) -> Disk:
        root = self.root
        base = f"/sys/block/{name}"
        problems: list[str] = []
        sys_path = root.resolve(base)
        if sys_path is None:
            problems.append(f"{base} could not be resolved")
            sys_path = root.path(base)
        device_path = root.to_system(sys_path)
        transport = transport_of(name, device_path)
        major_minor = self.tree.major_minor.get(name)
        if major_minor is None:
            problems.append("device number (dev) unreadable")
        udev = self.udev.lookup(major_minor, name)
        if udev.problem is not None:
            problems.append(udev.problem)

        sectors = root.read_int(f"{base}/size", hi=MAX_SECTORS)
        if sectors is None:
            problems.append("size unreadable")
        rotational_text = root.read_text(f"{base}/queue/rotational")
        rotational = None if rotational_text not in ("0", "1") else rotational_text == "1"
        if rotational is None:
            problems.append("rotational flag unreadable")

        model = _clean(root.read_text(f"{base}/device/model"))
        full_model = udev_model(udev)
        # sysfs's model of a SATA disk is the SCSI inquiry product, cut to 16 characters
        # ("KINGSTON SH103S3"); udev's is the drive's own, whole ("KINGSTON SH103S3240G").
        if full_model and (model is None or (len(full_model) > len(model) and full_model.startswith(model))):
            model = full_model
        vendor = _clean(root.read_text(f"{base}/device/vendor"))
        if model and vendor and transport is Transport.SAS and vendor not in ("ATA",):
            model = f"{vendor} {model}"
        serial = _clean(root.read_text(f"{base}/device/serial")) or _clean(root.read_text(f"{base}/serial"))
        if serial is None and transport in (Transport.SAS, Transport.OTHER, Transport.USB):
            # For SCSI, udev's ID_SERIAL_SHORT is the page-0x83 designator (often the WWN); the unit
            # serial printed on the drive is VPD page 0x80.
            serial = udev.get("ID_SCSI_SERIAL") or _vpd_serial(root, root.path(f"{base}/device/vpd_pg80"))
        if serial is None:
            serial = udev.get("ID_SERIAL_SHORT") or _vpd_serial(root, root.path(f"{base}/device/vpd_pg80"))
        wwn = udev.get("ID_WWN")
        if wwn is None:
            wwid = _clean(root.read_text(f"{base}/wwid")) or _clean(root.read_text(f"{base}/device/wwid"))
            # Only NAA and EUI-64 identifiers are world wide names; t10 vendor IDs are not.
            wwn = wwid if wwid and wwid.startswith(("naa.", "eui.")) else None
        by_id = _pick_by_id(udev.links) if udev.links else _by_id_from_dev(root, name)
        by_path = next((link for link in udev.links if link.startswith("/dev/disk/by-path/")), None)

        link = _probe_link(root, name, sys_path, transport)
        if transport in (Transport.NVME, Transport.SATA, Transport.SAS) and link is None:
            problems.append(f"{transport.value} link speed unreadable")

        partitions = tuple(self.tree.partitions.get(name, []))
        in_use = tuple(self._in_use(name, partitions, udev, problems))
        return Disk(
            name=name,
            dev_path=f"/dev/{name}",
            transport=transport,
            size_bytes=sectors * 512 if sectors is not None else None,
            by_id_path=by_id,
            by_path=by_path,
            model=model,
            serial=serial,
            wwn=wwn,
            logical_sector_bytes=root.read_int(f"{base}/queue/logical_block_size", hi=_MAX_BLOCK_SIZE),
            physical_sector_bytes=root.read_int(f"{base}/queue/physical_block_size", hi=_MAX_BLOCK_SIZE),
            rotational=rotational,
            driver=_driver(root, sys_path, transport),
            major_minor=major_minor,
            link=link,
            partitions=partitions,
            in_use=in_use,
            backing_file=root.read_text(f"{base}/loop/backing_file") if transport is Transport.LOOP else None,
            problems=tuple(problems),
        )

    # -- in-use rules -------------------------------------------------------------------------

    def _in_use(self, name: str, partitions: tuple[str, ...], udev: UdevInfo, problems: list[str]) -> list[InUseReason]:
        reasons: list[InUseReason] = []
        nodes = (name, *partitions)
        reasons += self._mount_reasons(name)
        reasons += self._swap_reasons(name)
        reasons += self._holder_reasons(nodes)
        signatures = self._signatures(name, partitions, udev, problems)
        held_by_md = any(r.kind is InUseKind.MD_MEMBER for r in reasons)
        active_swap = any(r.kind is InUseKind.SWAP for r in reasons)
        for node, fs_type, label in signatures:
            where = "" if node == name else f" on {node}"
            if fs_type == "linux_raid_member":
                if not held_by_md:
                    array = f" (array {label})" if label else ""
                    reasons.append(InUseReason(InUseKind.MD_SUPERBLOCK, f"md superblock{where}{array}, not assembled"))
            elif fs_type == "LVM2_member":
                reasons.append(InUseReason(InUseKind.LVM_PV, f"LVM physical volume{where}"))
            elif fs_type == "swap":
                if not active_swap:
                    reasons.append(InUseReason(InUseKind.SWAP, f"swap signature{where} (not active)"))
            elif fs_type.startswith("PTTYPE:"):
                kind = fs_type.split(":", 1)[1]
                count = f" with {plural(len(partitions), 'partition')}" if partitions else ""
                reasons.append(InUseReason(InUseKind.PARTITION_TABLE, f"{kind} partition table{count}"))
            else:
                labelled = f" labelled '{label}'" if label else ""
                reasons.append(InUseReason(InUseKind.FS_SIGNATURE, f"{fs_type} filesystem{where}{labelled}"))
        if partitions and not any(r.kind is InUseKind.PARTITION_TABLE for r in reasons):
            reasons.append(InUseReason(InUseKind.PARTITION_TABLE, f"partitioned: {', '.join(partitions)}"))
        if not reasons and self.live and self.privileged:
            reasons += self._exclusive_reasons(nodes)
        return reasons

    def _trace_mounts(self) -> list[tuple[Mount, str, set[str]]]:
        """Each mount with the node it sits on and the whole disks under that node."""
        traced = []
        for mount in self.mounts:
            node = None
            if mount.major_minor and not mount.major_minor.startswith("0:"):
                node = self.tree.node_by_major_minor(mount.major_minor)
            if node is None:
                node = self.tree.node_for_source(mount.source)
            if node is not None:
                traced.append((mount, node, self.tree.disks_under(node)))
        return traced

    def _trace_swaps(self) -> list[tuple[str, set[str]]]:
        traced = []
        for source in self.swaps:
            node = self.tree.node_for_source(source)
            if node is not None:
                traced.append((node, self.tree.disks_under(node)))
        return traced

    def _mount_reasons(self, disk: str) -> list[InUseReason]:
        reasons = []
        for mount, node, disks in self.traced_mounts:
            if disk not in disks:
                continue
            via = "" if node == disk else f" via {self.tree.describe(node)}"
            if mount.mount_point == "/":
                reasons.append(InUseReason(InUseKind.ROOT_FS, f"holds the running root filesystem{via}"))
            else:
                reasons.append(InUseReason(InUseKind.MOUNTED, f"mounted at {mount.mount_point} ({mount.fs_type}){via}"))
        return reasons

    def _swap_reasons(self, disk: str) -> list[InUseReason]:
        reasons = []
        for node, disks in self.traced_swaps:
            if disk in disks:
                via = "" if node == disk else f" via {self.tree.describe(node)}"
                reasons.append(InUseReason(InUseKind.SWAP, f"active swap{via}"))
        return reasons

    def _holder_reasons(self, nodes: tuple[str, ...]) -> list[InUseReason]:
        reasons = []
        for node in nodes:
            for holder in self.tree.holders.get(node, []):
                via = "" if node == nodes[0] else f" via {node}"
                if holder.startswith("md"):
                    reasons.append(InUseReason(InUseKind.MD_MEMBER, f"active member of {holder}{via}"))
                else:
                    reasons.append(InUseReason(InUseKind.HOLDER, f"held by {self.tree.describe(holder)}{via}"))
        return reasons

    def _signatures(
        self, name: str, partitions: tuple[str, ...], udev: UdevInfo, problems: list[str]
    ) -> list[tuple[str, str, str | None]]:
        """(node, type, label) for every signature found; "PTTYPE:gpt" for a partition table."""
        found: list[tuple[str, str, str | None]] = []
        if self.udev.available:
            records = [(name, udev)]
            for part in partitions:
                records.append((part, self.udev.lookup(self.tree.major_minor.get(part), part)))
            for node, info in records:
                if info.problem is not None and node != name:
                    problems.append(f"{node}: {info.problem}")
                if info.get("ID_PART_TABLE_TYPE") and node == name:
                    found.append((node, f"PTTYPE:{info.get('ID_PART_TABLE_TYPE')}", None))
                if info.get("ID_FS_TYPE"):
                    found.append((node, info.get("ID_FS_TYPE") or "", info.get("ID_FS_LABEL")))
            return found
        if self.live and self.privileged:
            for node in (name, *partitions):
                found += self._blkid(node, problems)
            return found
        problems.append("signatures not checked (no udev database; run as root to probe with blkid)")
        return found

    def _blkid(self, node: str, problems: list[str]) -> list[tuple[str, str, str | None]]:
        from mdtui.command import run_command

        try:
            result = run_command(["blkid", "-p", "-o", "export", f"/dev/{node}"], timeout_s=15)
        except MdtuiError as exc:
            problems.append(f"signatures not checked: {exc}")
            return []
        if result.returncode == 2:  # blkid: nothing found
            return []
        if not result.ok:
            problems.append(f"signatures not checked: blkid exited {result.returncode}")
            return []
        values = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
        found: list[tuple[str, str, str | None]] = []
        if values.get("PTTYPE"):
            found.append((node, f"PTTYPE:{values['PTTYPE']}", None))
        if values.get("TYPE"):
            found.append((node, values["TYPE"], values.get("LABEL")))
        return found

    def _exclusive_reasons(self, nodes: tuple[str, ...]) -> list[InUseReason]:
        reasons = []
        for node in nodes:
            try:
                fd = os.open(f"/dev/{node}", os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
            except OSError as exc:
                if exc.errno == errno.EBUSY:
                    who = _openers(node)
                    by = f" by {who}" if who else ""
                    reasons.append(InUseReason(InUseKind.OPEN_EXCLUSIVE, f"/dev/{node} is open exclusively{by}"))
                continue
            os.close(fd)
        return reasons


def _openers(node: str) -> str | None:
    """Name the processes that hold /dev/NODE open, from /proc/PID/fd (best effort, root only)."""
    target = f"/dev/{node}"
    names = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            for fd in os.listdir(fd_dir):
                if os.readlink(f"{fd_dir}/{fd}") == target:
                    names.append(f"{read_attribute(f'/proc/{pid}/comm') or '?'} (pid {pid})")
                    break
        except OSError:
            continue
    return ", ".join(names) or None
