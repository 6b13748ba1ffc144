"""The real-kernel lab: describe a machine, boot it under QEMU, run commands in it, collect results.

The host kernel has no md driver, so the lab boots a Debian kernel under ``qemu-system-x86_64 -accel
tcg``. The host's ``/`` is shared read-only over 9p and becomes the lower layer of an overlayfs in the
guest, so the guest runs the host's Python, mdadm, fio and this checkout with nothing to install. A
small agent (``agent.py``) inside the guest answers JSON-line requests over a virtio-serial port; a
writable 9p share of a host directory is mounted at ``/lab-out`` for files the guest writes.

Typical use::

    machine = Machine(disks=(nvme("NVME0"), nvme("NVME1"), sata("SATA0", rotation_rate=7200)))
    with boot(machine) as guest:
        print(guest.run(["lsblk", "-J"]).stdout)
        guest.run(["fio", ..., "--output=/lab-out/fio.json"])
        data = json.loads(guest.out_path("fio.json").read_text())
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import dataclasses
import gzip
import hashlib
import io
import itertools
import json
import lzma
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

HERE = Path(__file__).resolve().parent
AGENT_SCRIPT = HERE / "agent.py"
GUEST_INIT = HERE / "guest_init.sh"
CHECKOUT = Path(os.environ.get("MDTUI_LAB_SRC", HERE.parents[1])).resolve()
GUEST_OUT = "/lab-out"  # where the writable share is mounted in the guest
AGENT_PORT = "mdtui.agent"

Transport = Literal["nvme", "sata", "sas", "virtio"]

# Modules the initramfs insmods, in dependency order, to mount the host's / over 9p (see LAB.md).
INITRAMFS_MODULES = (
    "virtio_ring", "virtio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio_pci",
    "netfs", "fscache", "9pnet", "9pnet_virtio", "9p", "overlay",
)  # fmt: skip

# Stage 1, PID 1 in the initramfs: mount the host's / read-only as the lower layer of an overlayfs
# with a tmpfs upper, then hand over to guest_init.sh (stage 2) from the checkout.
INITRAMFS_INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
fail() { echo "lab-initramfs: FATAL: $*"; sleep 1; echo o > /proc/sysrq-trigger; sleep 30; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.list); do
    insmod /modules/$m.ko || echo "lab-initramfs: insmod $m failed"
done
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose hostroot /lower \\
    || fail "cannot mount the host's / (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /upper
mkdir -p /upper/data /upper/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work /newroot \\
    || fail "cannot mount the overlay root"
[ -f "/newroot$labinit" ] || fail "stage 2 init $labinit not visible in the guest"
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/sh "$labinit"
"""


# --------------------------------------------------------------------------------------------------
# Errors: every one carries the tail of the guest's console so a failing test shows what happened.


class LabError(RuntimeError):
    """Something went wrong with a lab guest; ``console`` holds the tail of its console log."""

    def __init__(self, message: str, console: str = "") -> None:
        self.console = console
        text = message
        if console:
            text += "\n---- guest console (tail) ----\n" + console.rstrip() + "\n---- end of console ----"
        super().__init__(text)


class LabUnavailable(LabError):
    """QEMU, a suitable kernel or busybox-static is missing on this host."""


class BootTimeout(LabError):
    """The guest did not answer the agent's ping in time; QEMU was killed."""


class GuestDied(LabError):
    """QEMU exited (or the agent channel closed) while we were waiting for the guest."""


class GuestHung(LabError):
    """A command's answer never came back (the guest or its agent hangs); QEMU was killed."""


class CommandTimeout(LabError):
    """The command outlived its timeout; the agent killed it. The guest is still usable."""

    def __init__(self, result: CommandResult) -> None:
        self.result = result
        super().__init__(
            f"guest command {shlex_join(result.argv)} timed out after {result.duration:.1f}s "
            f"and was killed (the guest is still usable)\nstdout tail:\n{_tail(result.stdout)}"
            f"\nstderr tail:\n{_tail(result.stderr)}"
        )


class CommandFailed(LabError):
    """The command exited non-zero and ``check`` was true."""

    def __init__(self, result: CommandResult) -> None:
        self.result = result
        super().__init__(
            f"guest command {shlex_join(result.argv)} exited {result.rc}\n"
            f"stdout tail:\n{_tail(result.stdout)}\nstderr tail:\n{_tail(result.stderr)}"
        )


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def shlex_join(argv: Sequence[str]) -> str:
    import shlex

    return shlex.join(argv)


# --------------------------------------------------------------------------------------------------
# Timings, reported by tests/lab/conftest.py at the end of the session.

TIMINGS: list[tuple[str, float]] = []


def record_timing(label: str, seconds: float) -> None:
    TIMINGS.append((label, seconds))


# --------------------------------------------------------------------------------------------------
# Machine description


_SERIAL_RE = re.compile(r"^[A-Za-z0-9_.-]{1,20}$")


def parse_size(size: int | str) -> int:
    """Bytes from ``1073741824``, ``"1G"``, ``"512M"``, ``"64K"`` (binary units)."""
    if isinstance(size, int):
        return size
    match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", size, re.IGNORECASE)
    if not match:
        raise ValueError(f"bad size {size!r}")
    power = " KMGT".index(match.group(2).upper() or " ")
    return int(match.group(1)) * 1024**power


@dataclass(frozen=True)
class Disk:
    """One drive of a lab machine.

    ``bps_total`` throttles the drive in QEMU's block layer (``throttling.bps-total``, bytes/s),
    the way to get a slow member. ``bps_total_max`` for ``bps_total_max_length`` seconds (and the same
    for IOPS) is a burst above that throttle, QEMU's ``throttling.bps-total-max``/``-max-length``: a drive
    whose write cache holds a faster figure for a while before it falls to the sustained one.
    ``link_speed``/``link_width`` set an NVMe drive's PCIe root port
    (``x-speed`` one of ``2_5 5 8 16`` GT/s, ``x-width`` lanes). ``rotation_rate`` is reported
    to the guest by SATA and SAS drives (1 = non-rotational, 7200 = a spinning disk).
    """

    transport: Transport
    serial: str
    size: int | str = "1G"
    bps_total: int | None = None
    iops_total: int | None = None
    rotation_rate: int | None = None
    link_speed: str | None = None
    link_width: int | None = None
    bps_total_max: int | None = None
    bps_total_max_length: int | None = None
    iops_total_max: int | None = None
    iops_total_max_length: int | None = None

    def __post_init__(self) -> None:
        if self.transport not in ("nvme", "sata", "sas", "virtio"):
            raise ValueError(f"unknown transport {self.transport!r}")
        if not _SERIAL_RE.match(self.serial):
            raise ValueError(f"serial {self.serial!r}: use 1-20 of [A-Za-z0-9_.-]")
        if (self.link_speed or self.link_width) and self.transport != "nvme":
            raise ValueError("link_speed/link_width only apply to NVMe drives")
        if self.rotation_rate is not None and self.transport not in ("sata", "sas"):
            raise ValueError("rotation_rate only applies to SATA and SAS drives")
        for rate, burst, length, what in (
            (self.bps_total, self.bps_total_max, self.bps_total_max_length, "bps_total"),
            (self.iops_total, self.iops_total_max, self.iops_total_max_length, "iops_total"),
        ):
            # QEMU refuses a burst without the throttle it bursts above, and a length without a burst.
            if burst is not None and (rate is None or burst <= rate):
                raise ValueError(f"{what}_max needs {what} set and below it")
            if length is not None and burst is None:
                raise ValueError(f"{what}_max_length needs {what}_max")
        parse_size(self.size)

    @property
    def size_bytes(self) -> int:
        return parse_size(self.size)

    def throttled(self, bps_total: int) -> Disk:
        """A copy of this drive limited to ``bps_total`` bytes/s (reads + writes)."""
        return dataclasses.replace(self, bps_total=bps_total)


def nvme(
    serial: str,
    size: int | str = "1G",
    *,
    link_speed: str | None = None,
    link_width: int | None = None,
    bps_total: int | None = None,
) -> Disk:
    return Disk("nvme", serial, size, bps_total=bps_total, link_speed=link_speed, link_width=link_width)


def sata(
    serial: str, size: int | str = "1G", *, rotation_rate: int | None = None, bps_total: int | None = None
) -> Disk:
    return Disk("sata", serial, size, bps_total=bps_total, rotation_rate=rotation_rate)


def sas(serial: str, size: int | str = "1G", *, rotation_rate: int | None = None, bps_total: int | None = None) -> Disk:
    return Disk("sas", serial, size, bps_total=bps_total, rotation_rate=rotation_rate)


def virtio(serial: str, size: int | str = "1G", *, bps_total: int | None = None) -> Disk:
    return Disk("virtio", serial, size, bps_total=bps_total)


@dataclass(frozen=True)
class Machine:
    """A lab machine: drives, CPUs, memory, and escape hatches for kernel and QEMU arguments.

    Frozen and hashable, so it can key a cache of shared guests.
    """

    disks: tuple[Disk, ...] = ()
    cpus: int = 2
    memory_mb: int = 2048
    name: str = "lab"
    kernel_args: tuple[str, ...] = ()
    qemu_args: tuple[str, ...] = ()
    # Opt-in network: (host port on 127.0.0.1, guest port) pairs forwarded through QEMU user networking
    # to a virtio-net interface the guest configures as 10.0.2.15/24 (gateway 10.0.2.2).
    forward_ports: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        serials = [d.serial for d in self.disks]
        if len(set(serials)) != len(serials):
            raise ValueError(f"duplicate disk serials in {serials}")
        if sum(d.transport == "sata" for d in self.disks) > 6:
            raise ValueError("q35's AHCI controller has 6 ports")
        if sum(d.transport == "sas" for d in self.disks) > 8:
            raise ValueError("the lab's mptsas1068 takes at most 8 drives")

    def with_disks(self, *disks: Disk) -> Machine:
        """A copy with ``disks`` appended."""
        return dataclasses.replace(self, disks=self.disks + tuple(disks))

    def disk(self, serial: str) -> Disk:
        for d in self.disks:
            if d.serial == serial:
                return d
        raise KeyError(serial)


# --------------------------------------------------------------------------------------------------
# Host prerequisites: QEMU, kernel, busybox-static


@dataclass(frozen=True)
class Kernel:
    version: str
    image: Path
    modules: Path


def qemu_binary() -> str | None:
    explicit = os.environ.get("MDTUI_LAB_QEMU")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("qemu-system-x86_64")


def _version_key(version: str) -> list[tuple[int, int | str]]:
    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.\-+~]", version)]


def find_kernel() -> Kernel | None:
    """The kernel to boot: ``$MDTUI_LAB_KERNEL`` (a version or a vmlinuz path) or the newest
    ``/boot/vmlinuz-*`` whose modules include md's raid456."""
    boot = Path(os.environ.get("MDTUI_LAB_BOOT", "/boot"))
    moddir = Path(os.environ.get("MDTUI_LAB_MODULES", "/lib/modules"))
    wanted = os.environ.get("MDTUI_LAB_KERNEL")
    candidates: list[Kernel] = []
    images = [Path(wanted)] if wanted and "/" in wanted else sorted(boot.glob("vmlinuz-*"))
    for image in images:
        version = image.name.removeprefix("vmlinuz-")
        if wanted and "/" not in wanted and version != wanted:
            continue
        modules = moddir / version
        readable = image.is_file() and os.access(image, os.R_OK)
        if readable and any((modules / "kernel/drivers/md").glob("raid456.ko*")):
            candidates.append(Kernel(version, image, modules))
    if not candidates:
        return None
    return max(candidates, key=lambda k: _version_key(k.version))


def busybox_static() -> Path | None:
    for candidate in (os.environ.get("MDTUI_LAB_BUSYBOX"), "/bin/busybox", "/usr/bin/busybox"):
        if candidate and Path(candidate).is_file() and _is_static_elf(Path(candidate)):
            return Path(candidate)
    return None


def _is_static_elf(path: Path) -> bool:
    """True if the ELF64 file has no PT_INTERP program header (no dynamic loader)."""
    with path.open("rb") as fh:
        head = fh.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return False
        phoff = int.from_bytes(head[32:40], "little")
        phentsize = int.from_bytes(head[54:56], "little")
        phnum = int.from_bytes(head[56:58], "little")
        fh.seek(phoff)
        table = fh.read(phentsize * phnum)
    return all(int.from_bytes(table[i * phentsize : i * phentsize + 4], "little") != 3 for i in range(phnum))


def lab_problem() -> str | None:
    """Why the lab cannot run on this host, or None if it can."""
    missing = []
    if qemu_binary() is None:
        missing.append("qemu-system-x86_64 (apt install qemu-system-x86)")
    if find_kernel() is None:
        boot = Path(os.environ.get("MDTUI_LAB_BOOT", "/boot"))
        unreadable = [str(p) for p in sorted(boot.glob("vmlinuz-*")) if not os.access(p, os.R_OK)]
        if unreadable:
            missing.append(f"a readable kernel image ({', '.join(unreadable)} unreadable: chmod 0644 it)")
        else:
            missing.append("a kernel in /boot with md modules in /lib/modules (apt install linux-image-amd64)")
    if busybox_static() is None:
        missing.append("a static busybox (apt install busybox-static)")
    if not missing:
        return None
    return "lab unavailable, missing: " + "; ".join(missing) + " (scripts/install-deps.sh installs them)"


# --------------------------------------------------------------------------------------------------
# The initramfs: busybox-static, the 9p/overlay modules and INITRAMFS_INIT, cached on disk.


def cache_dir() -> Path:
    base = os.environ.get("MDTUI_LAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mdtui-lab"
    )
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


class _Cpio:
    """Just enough of the "newc" cpio format for an initramfs."""

    def __init__(self) -> None:
        self.buf = io.BytesIO()
        self.ino = itertools.count(1)

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)) -> None:
        encoded = name.encode() + b"\0"
        fields = [next(self.ino), mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(encoded), 0]
        self.buf.write(b"070701" + b"".join(b"%08X" % f for f in fields) + encoded)
        self.buf.write(b"\0" * (-self.buf.tell() % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * (-self.buf.tell() % 4))

    def dir(self, name: str) -> None:
        self._entry(name, 0o040755)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._entry(name, 0o100000 | mode, data)

    def chardev(self, name: str, major: int, minor: int) -> None:
        self._entry(name, 0o020600, rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return self.buf.getvalue()


def _module_paths(kernel: Kernel, names: Iterable[str]) -> list[tuple[str, Path]]:
    """(name, path) for each module that is not built in, resolved through modules.dep."""
    dep = (kernel.modules / "modules.dep").read_text()
    by_name: dict[str, Path] = {}
    for line in dep.splitlines():
        rel = line.split(":", 1)[0]
        stem = Path(rel).name.split(".ko")[0].replace("-", "_")
        by_name[stem] = kernel.modules / rel
    builtin_file = kernel.modules / "modules.builtin"
    builtin = {
        Path(line).name.split(".ko")[0].replace("-", "_")
        for line in (builtin_file.read_text().splitlines() if builtin_file.exists() else [])
    }
    found = []
    for name in names:
        if name in builtin:
            continue
        if name not in by_name:
            raise LabUnavailable(f"kernel {kernel.version} has no module {name!r}")
        found.append((name, by_name[name]))
    return found


def _read_module(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith(".xz"):
        return lzma.decompress(data)
    if path.name.endswith(".gz"):
        return gzip.decompress(data)
    if path.name.endswith(".zst"):
        raise LabUnavailable(f"{path}: zstd-compressed modules are not supported by the lab yet")
    return data


def boot_image(kernel: Kernel) -> Path:
    """What to pass to ``-kernel``: the uncompressed ELF vmlinux when the kernel supports PVH boot.

    QEMU boots an ELF vmlinux through its PVH entry point, which skips the firmware's real-mode
    setup and the in-guest decompression of the bzImage (xz in Debian: ~2 s under TCG). The
    vmlinux is extracted once and cached. ``MDTUI_LAB_PVH=0`` boots the bzImage as is.
    """
    if os.environ.get("MDTUI_LAB_PVH", "1") == "0":
        return kernel.image
    config = kernel.image.parent / f"config-{kernel.version}"
    if not config.exists() or "CONFIG_PVH=y" not in config.read_text(errors="replace"):
        return kernel.image
    stat = kernel.image.stat()
    target = cache_dir() / f"vmlinux-{kernel.version}-{stat.st_size}-{stat.st_mtime_ns}"
    if target.exists():
        return target
    data = kernel.image.read_bytes()
    elf: bytes | None = None
    xz_at, gz_at = data.find(b"\xfd7zXZ\x00"), data.find(b"\x1f\x8b\x08\x00")
    try:
        if xz_at >= 0:
            elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[xz_at:])
        elif gz_at >= 0:
            elf = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[gz_at:])
    except (lzma.LZMAError, zlib.error):
        elf = None
    if not elf or elf[:4] != b"\x7fELF":
        return kernel.image  # zstd, lz4, ...: boot the bzImage
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(elf)
    tmp.replace(target)
    return target


def build_initramfs(kernel: Kernel, busybox: Path | None = None) -> Path:
    """The initramfs for ``kernel``, built once and cached (keyed by kernel, init script, busybox)."""
    busybox = busybox or busybox_static()
    if busybox is None:
        raise LabUnavailable("no static busybox")
    modules = _module_paths(kernel, INITRAMFS_MODULES)
    stat = busybox.stat()
    key = hashlib.sha256(
        "\0".join(
            [
                kernel.version,
                INITRAMFS_INIT,
                *(n for n, _ in modules),
                str(busybox),
                str(stat.st_size),
                str(stat.st_mtime_ns),
            ]
        ).encode()
    ).hexdigest()[:16]
    target = cache_dir() / f"initramfs-{kernel.version}-{key}.cpio"
    if target.exists():
        return target
    cpio = _Cpio()
    for d in ("bin", "dev", "proc", "sys", "lower", "upper", "newroot", "modules"):
        cpio.dir(d)
    cpio.chardev("dev/console", 5, 1)
    cpio.file("bin/busybox", busybox.read_bytes(), 0o755)
    cpio.file("init", INITRAMFS_INIT.encode(), 0o755)
    cpio.file("modules.list", "\n".join(n for n, _ in modules).encode() + b"\n")
    for name, path in modules:
        cpio.file(f"modules/{name}.ko", _read_module(path))
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(cpio.finish())
    tmp.replace(target)
    return target


# --------------------------------------------------------------------------------------------------
# QEMU command line


def _qemu_escape(value: str) -> str:
    return value.replace(",", ",,")


def qemu_id(disk: Disk) -> str:
    """The QEMU device id of ``disk`` (for QMP, e.g. ``guest.qmp("device_del", id=qemu_id(disk))``)."""
    return f"disk-{disk.serial}"


def disk_args(machine: Machine, images: Sequence[Path]) -> list[str]:
    """QEMU arguments for the machine's drives, ``images[i]`` backing ``machine.disks[i]``."""
    args: list[str] = []
    sata_port = itertools.count()
    sas_id = itertools.count()
    if any(d.transport == "sas" for d in machine.disks):
        args += ["-device", "mptsas1068,id=sas0"]
    for i, (disk, image) in enumerate(zip(machine.disks, images, strict=True)):
        drive = f"file={_qemu_escape(str(image))},if=none,id=d{i},format=raw,cache=none,aio=native"
        if disk.bps_total:
            drive += f",throttling.bps-total={disk.bps_total}"
        if disk.iops_total:
            drive += f",throttling.iops-total={disk.iops_total}"
        for option, value in (
            ("bps-total-max", disk.bps_total_max),
            ("bps-total-max-length", disk.bps_total_max_length),
            ("iops-total-max", disk.iops_total_max),
            ("iops-total-max-length", disk.iops_total_max_length),
        ):
            if value:
                drive += f",throttling.{option}={value}"
        args += ["-drive", drive]
        if disk.transport == "nvme":
            port = f"pcie-root-port,id=rp{i},chassis={i + 1}"
            if disk.link_speed:
                port += f",x-speed={disk.link_speed}"
            if disk.link_width:
                port += f",x-width={disk.link_width}"
            args += ["-device", port, "-device", f"nvme,id={qemu_id(disk)},drive=d{i},serial={disk.serial},bus=rp{i}"]
        elif disk.transport == "sata":
            dev = f"ide-hd,id={qemu_id(disk)},drive=d{i},bus=ide.{next(sata_port)},serial={disk.serial}"
            if disk.rotation_rate is not None:
                dev += f",rotation_rate={disk.rotation_rate}"
            args += ["-device", dev]
        elif disk.transport == "sas":
            # A SAS address (wwn) is required: Linux's mptsas ignores end devices whose address is 0.
            target = next(sas_id)
            dev = (
                f"scsi-hd,id={qemu_id(disk)},drive=d{i},bus=sas0.0,scsi-id={target},serial={disk.serial},"
                f"wwn=0x5000c50000{target:06x}"
            )
            if disk.rotation_rate is not None:
                dev += f",rotation_rate={disk.rotation_rate}"
            args += ["-device", dev]
        else:
            args += ["-device", f"virtio-blk-pci,id={qemu_id(disk)},drive=d{i},serial={disk.serial}"]
    return args


@dataclass(frozen=True)
class GuestPaths:
    """Where a running guest keeps its things on the host."""

    workdir: Path

    @property
    def console(self) -> Path:
        return self.workdir / "console.log"

    @property
    def qemu_log(self) -> Path:
        return self.workdir / "qemu.log"

    @property
    def agent_socket(self) -> Path:
        return self.workdir / "agent.sock"

    @property
    def qmp_socket(self) -> Path:
        return self.workdir / "qmp.sock"

    @property
    def out(self) -> Path:
        return self.workdir / "out"

    def image(self, index: int) -> Path:
        return self.workdir / f"disk{index}.img"


def kernel_cmdline(machine: Machine, python: str, checkout: Path) -> str:
    drivers = {"nvme": ["nvme"], "sata": ["ahci", "sd_mod"], "sas": ["mptsas", "sd_mod"], "virtio": ["virtio_blk"]}
    modules = sorted({m for d in machine.disks for m in drivers[d.transport]})
    values = {
        "labmods": ",".join(modules),
        "labinit": str(GUEST_INIT),
        "labagent": str(AGENT_SCRIPT),
        "labpy": python,
        "labsrc": str(checkout),
    }
    for key, value in values.items():
        if any(c.isspace() for c in value):
            raise LabError(f"{key}={value!r}: the lab cannot pass paths with spaces to the guest")
    if machine.forward_ports:
        values["labnet"] = "1"
    base = ["console=ttyS0", "panic=-1", "quiet", "mitigations=off"]
    return " ".join([*base, *(f"{k}={v}" for k, v in values.items()), *machine.kernel_args])


def network_args(machine: Machine) -> list[str]:
    """QEMU user networking with the machine's port forwards, only when it asks for any."""
    if not machine.forward_ports:
        return []
    forwards = "".join(f",hostfwd=tcp:127.0.0.1:{host}-:{guest}" for host, guest in machine.forward_ports)
    return ["-netdev", f"user,id=n0{forwards}", "-device", "virtio-net-pci,netdev=n0"]


def qemu_argv(
    machine: Machine,
    paths: GuestPaths,
    kernel: Kernel,
    initramfs: Path,
    python: str = sys.executable,
    checkout: Path = CHECKOUT,
) -> list[str]:
    qemu = qemu_binary()
    if qemu is None:
        raise LabUnavailable("qemu-system-x86_64 not found")
    accel = os.environ.get("MDTUI_LAB_ACCEL", "tcg")
    return [
        qemu, "-accel", accel, "-M", "q35", "-smp", str(machine.cpus), "-m", str(machine.memory_mb),
        "-nodefaults", "-display", "none", "-no-reboot",
        "-serial", f"file:{paths.console}",
        "-kernel", str(boot_image(kernel)), "-initrd", str(initramfs),
        "-append", kernel_cmdline(machine, python, checkout),
        "-virtfs", "local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap",
        "-virtfs", f"local,path={_qemu_escape(str(paths.out))},mount_tag=labout,security_model=none,"
                   "multidevs=remap",
        "-device", "virtio-serial",
        "-chardev", f"socket,id=agent,path={paths.agent_socket},server=on,wait=off",
        "-device", f"virtserialport,chardev=agent,name={AGENT_PORT}",
        "-qmp", f"unix:{paths.qmp_socket},server=on,wait=off",
        *disk_args(machine, [paths.image(i) for i in range(len(machine.disks))]),
        *network_args(machine),
        *machine.qemu_args,
    ]  # fmt: skip


# --------------------------------------------------------------------------------------------------
# Never leave QEMU behind: kill live guests at exit, and ask the kernel to kill QEMU if we die.

_LIVE_GUESTS: weakref.WeakSet[Guest] = weakref.WeakSet()
_PR_SET_PDEATHSIG = 1
_LIBC: Any = None
with contextlib.suppress(OSError):
    _LIBC = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@atexit.register
def _kill_live_guests() -> None:
    for guest in list(_LIVE_GUESTS):
        guest.kill()


# --------------------------------------------------------------------------------------------------
# A running guest


@dataclass
class CommandResult:
    argv: list[str]
    rc: int
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out

    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass
class Pending:
    """A command running in the guest; ``wait()`` for its result."""

    guest: Guest
    id: int
    argv: list[str]
    timeout: float
    check: bool
    started: float = field(default_factory=time.monotonic)
    _event: threading.Event = field(default_factory=threading.Event)
    _reply: dict[str, Any] | None = None

    def done(self) -> bool:
        return self._event.is_set()

    def wait(self) -> CommandResult:
        return self.guest._finish(self)


class Guest:
    """A booted lab machine. Use :func:`boot` to get one; ``close()`` (or ``with``) powers it off.

    ``hang_grace`` is how long past a command's own timeout the host waits for the agent's answer
    before it declares the guest hung and kills QEMU.
    """

    def __init__(
        self,
        machine: Machine,
        *,
        kernel: Kernel | None = None,
        workdir: Path | None = None,
        python: str = sys.executable,
        checkout: Path = CHECKOUT,
        hang_grace: float = 15.0,
        keep: bool | None = None,
        reuse_images: bool = False,
    ) -> None:
        self.machine = machine
        # Boot over the disk images already in ``workdir`` (a power cut's next boot) instead of blank ones.
        self.reuse_images = reuse_images
        self.kernel = kernel or find_kernel()
        if self.kernel is None:
            raise LabUnavailable(lab_problem() or "no kernel")
        self.python_exe = python
        self.checkout = checkout
        self.hang_grace = hang_grace
        self.keep = bool(os.environ.get("MDTUI_LAB_KEEP")) if keep is None else keep
        self.paths = GuestPaths(workdir or Path(tempfile.mkdtemp(prefix=f"mdtui-{machine.name}-")))
        self.proc: subprocess.Popen[bytes] | None = None
        self.boot_seconds: float | None = None
        self._sock: socket.socket | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, Pending] = {}
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._channel_closed = threading.Event()
        self._qemu_log: io.BufferedWriter | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self, boot_timeout: float = 120.0) -> Guest:
        assert self.kernel is not None
        started = time.monotonic()
        self.paths.workdir.mkdir(parents=True, exist_ok=True)
        self.paths.out.mkdir(exist_ok=True)
        self.paths.out.chmod(0o777)
        for i, disk in enumerate(self.machine.disks):
            image = self.paths.image(i)
            if self.reuse_images and image.is_file() and image.stat().st_size == disk.size_bytes:
                continue
            if self.reuse_images:
                raise LabError(f"{image} is missing or not {disk.size_bytes} bytes: nothing to boot over")
            with image.open("wb") as fh:  # sparse
                fh.truncate(disk.size_bytes)
        for stale in (self.paths.agent_socket, self.paths.qmp_socket):  # a killed QEMU leaves its sockets
            stale.unlink(missing_ok=True)
        initramfs = build_initramfs(self.kernel)
        argv = qemu_argv(self.machine, self.paths, self.kernel, initramfs, self.python_exe, self.checkout)
        (self.paths.workdir / "qemu.argv").write_text(json.dumps(argv, indent=1) + "\n")
        self._qemu_log = self.paths.qemu_log.open("wb")
        in_main_thread = threading.current_thread() is threading.main_thread()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._qemu_log,
            stderr=subprocess.STDOUT,
            # QEMU dies with us even if we are SIGKILLed (the death signal follows the forking
            # *thread*, so only ask for it from the main thread).
            preexec_fn=_die_with_parent if in_main_thread else None,
        )
        _LIVE_GUESTS.add(self)
        try:
            self._connect(started + boot_timeout)
            reply = self._request({"op": "ping"}, started + boot_timeout, what="boot")
        except LabError:
            self.close()
            raise
        if not reply.get("ok"):
            self.close()
            raise GuestDied(f"agent answered the ping with {reply}", self.console_tail())
        self.boot_seconds = time.monotonic() - started
        record_timing(f"boot {self.machine.name} ({len(self.machine.disks)} disks)", self.boot_seconds)
        return self

    def _connect(self, deadline: float) -> None:
        while True:
            self._check_alive("booting")
            if self.paths.agent_socket.exists():
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    sock.connect(str(self.paths.agent_socket))
                except OSError:
                    sock.close()
                else:
                    self._sock = sock
                    break
            if time.monotonic() > deadline:
                self.kill()
                raise BootTimeout("QEMU never opened the agent socket", self.console_tail())
            time.sleep(0.05)
        self._reader = threading.Thread(target=self._read_loop, name="lab-agent-reader", daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self._channel_closed.is_set()

    def kill(self) -> None:
        """Kill QEMU at once (SIGKILL to the process we started)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close_channel()

    def power_cut(self, boot_timeout: float = 120.0) -> Guest:
        """Kill QEMU at once (no shutdown, no sync: the guest loses power) and boot a new guest of the same
        machine over the same disk images; returns the new guest, which now owns the work directory.

        What the kernel had not written to the images is lost, as on a real power cut (the drives run with
        ``cache=none``). The old console is kept as ``console-before-cut.log`` next to the new one.
        """
        self.kill()
        if self._qemu_log is not None:
            self._qemu_log.close()
            self._qemu_log = None
        if self.paths.console.exists():
            self.paths.console.replace(self.paths.workdir / "console-before-cut.log")
        owner_keeps = self.keep
        self.keep = True  # this guest's close() must not remove the directory the new guest boots from
        guest = Guest(
            self.machine,
            kernel=self.kernel,
            workdir=self.paths.workdir,
            python=self.python_exe,
            checkout=self.checkout,
            hang_grace=self.hang_grace,
            keep=owner_keeps,
            reuse_images=True,
        )
        return guest.start(boot_timeout)

    def poweroff(self, timeout: float = 20.0) -> None:
        """Power the guest off (sysrq ``o`` through the agent); kill QEMU if it does not stop."""
        if self.proc is None or self.proc.poll() is not None:
            self._close_channel()
            return
        if self.alive:
            with contextlib.suppress(OSError):
                self._send({"id": next(self._ids), "op": "poweroff"})
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close_channel()

    def close(self) -> None:
        """Power off and remove the work directory (kept when ``keep`` or $MDTUI_LAB_KEEP)."""
        self.poweroff()
        if self._qemu_log is not None:
            self._qemu_log.close()
            self._qemu_log = None
        if not self.keep:
            shutil.rmtree(self.paths.workdir, ignore_errors=True)

    def __enter__(self) -> Guest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- diagnostics -----------------------------------------------------------------------------

    def console_tail(self, lines: int = 60) -> str:
        """The last lines of the guest's serial console (plus QEMU's own messages, if any)."""
        parts = []
        for path, label in ((self.paths.console, ""), (self.paths.qemu_log, "[qemu] ")):
            try:
                text = path.read_bytes().decode(errors="replace")
            except OSError:
                continue
            text = text.replace("\r", "")
            parts += [label + line for line in text.splitlines()[-lines:]]
        return "\n".join(parts) if parts else "(console empty)"

    # -- the command channel ---------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        if self._sock is None:
            raise GuestDied("no agent channel", self.console_tail())
        data = (json.dumps(message) + "\n").encode()
        with self._lock:
            self._sock.sendall(data)

    def _read_loop(self) -> None:
        assert self._sock is not None
        buffer = b""
        try:
            while True:
                chunk = self._sock.recv(1 << 16)
                if not chunk:
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    try:
                        reply = json.loads(line)
                    except ValueError:
                        continue
                    with self._lock:
                        pending = self._pending.pop(reply.get("id"), None)
                    if pending is not None:
                        pending._reply = reply
                        pending._event.set()
        except OSError:
            pass
        finally:
            self._channel_closed.set()

    def _close_channel(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
        self._channel_closed.set()

    def _check_alive(self, doing: str) -> None:
        assert self.proc is not None
        rc = self.proc.poll()
        if rc is not None:
            self._close_channel()
            raise GuestDied(f"QEMU exited with status {rc} while {doing}", self.console_tail())
        if self._channel_closed.is_set() and self._sock is not None:
            self.kill()
            raise GuestDied(f"the agent channel closed while {doing}", self.console_tail())

    def _request(self, message: dict[str, Any], deadline: float, what: str) -> dict[str, Any]:
        """Send ``message`` and wait for its answer until ``deadline`` (monotonic)."""
        pending = Pending(self, next(self._ids), [], 0.0, False)
        with self._lock:
            self._pending[pending.id] = pending
        self._send({"id": pending.id, **message})
        return self._await(pending, deadline, what)

    def _await(self, pending: Pending, deadline: float, what: str) -> dict[str, Any]:
        while not pending._event.wait(0.1):
            self._check_alive(what)
            if time.monotonic() > deadline:
                self.kill()
                if what == "boot":
                    raise BootTimeout("the guest's agent did not answer before the boot timeout", self.console_tail())
                raise GuestHung(f"no answer from the guest for {what}; QEMU killed", self.console_tail())
        assert pending._reply is not None
        return pending._reply

    def spawn(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        input: str | None = None,
        check: bool = True,
    ) -> Pending:
        """Start ``argv`` in the guest and return at once; ``.wait()`` gives the result."""
        if not self.alive:
            raise GuestDied("the guest is not running", self.console_tail())
        pending = Pending(self, next(self._ids), [str(a) for a in argv], timeout, check)
        with self._lock:
            self._pending[pending.id] = pending
        self._send(
            {
                "id": pending.id,
                "op": "exec",
                "argv": pending.argv,
                "timeout": timeout,
                "env": dict(env or {}),
                "cwd": cwd,
                "input": input,
            }
        )
        return pending

    def _finish(self, pending: Pending) -> CommandResult:
        reply = self._await(
            pending,
            pending.started + pending.timeout + self.hang_grace,
            f"command {shlex_join(pending.argv)} (timeout {pending.timeout}s)",
        )
        if "error" in reply:
            raise LabError(f"agent error for {shlex_join(pending.argv)}: {reply['error']}", self.console_tail(20))
        result = CommandResult(
            pending.argv,
            reply["rc"],
            reply["stdout"],
            reply["stderr"],
            reply["duration"],
            reply.get("timed_out", False),
        )
        if result.timed_out:
            raise CommandTimeout(result)
        if pending.check and result.rc != 0:
            raise CommandFailed(result)
        return result

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        input: str | None = None,
        check: bool = True,
    ) -> CommandResult:
        """Run ``argv`` in the guest and wait for it.

        Raises :class:`CommandTimeout` if it outlives ``timeout`` (the agent kills it, the guest
        stays usable), :class:`CommandFailed` if it exits non-zero and ``check`` is true, and
        :class:`GuestHung`/:class:`GuestDied` (with the console tail) if the guest stops answering.
        """
        return self.spawn(argv, timeout=timeout, env=env, cwd=cwd, input=input, check=check).wait()

    def sh(self, script: str, **kwargs: Any) -> CommandResult:
        """Run a shell snippet in the guest (``/bin/sh -c script``); same keywords as :meth:`run`."""
        return self.run(["/bin/sh", "-c", script], **kwargs)

    def python(self, code: str, **kwargs: Any) -> CommandResult:
        """Run Python code in the guest with the host's interpreter; ``import mdtui`` works."""
        return self.run([self.python_exe, "-c", code], **kwargs)

    # -- files and devices -----------------------------------------------------------------------

    def out_path(self, name: str) -> Path:
        """Host path of ``/lab-out/<name>``, the guest's writable share."""
        return self.paths.out / name

    @staticmethod
    def guest_out(name: str) -> str:
        """Guest path of a file in the writable share."""
        return f"{GUEST_OUT}/{name}"

    def read_file(self, path: str) -> str:
        return self.run(["cat", path]).stdout

    def lsblk(self) -> list[dict[str, Any]]:
        """``lsblk -J -d -o NAME,TRAN,SERIAL,ROTA,SIZE`` in the guest: one dict per whole disk."""
        result = self.run(["lsblk", "-J", "-d", "-b", "-o", "NAME,TRAN,SERIAL,ROTA,SIZE"])
        return list(result.json()["blockdevices"])

    def device(self, serial: str) -> str:
        """The guest's ``/dev/...`` for the drive with ``serial``."""
        for dev in self.lsblk():
            if dev.get("serial") == serial:
                return f"/dev/{dev['name']}"
        raise KeyError(f"no disk with serial {serial!r} in the guest")

    def unplug(self, serial: str, timeout: float = 30.0) -> None:
        """Hot-unplug the drive with ``serial`` (QMP ``device_del``) and wait until the guest lost it.

        Works for NVMe (PCIe hotplug through its root port) and virtio-blk; the machine description
        still lists the drive, so do this on a guest you own (not the shared standard guest).
        """
        disk = self.machine.disk(serial)
        self.qmp("device_del", id=qemu_id(disk))
        deadline = time.monotonic() + timeout
        while any(dev.get("serial") == serial for dev in self.lsblk()):
            if time.monotonic() > deadline:
                raise LabError(f"{serial} still visible {timeout}s after device_del", self.console_tail(20))
            time.sleep(0.2)

    def throttle(self, serial: str, bps_total: int) -> None:
        """Set the drive's QEMU throttle (``throttling.bps-total``, bytes/s; 0 lifts it) while the guest runs
        (QMP ``block_set_io_throttle``). A shared guest's drives must be set back to what its machine says."""
        index = next(i for i, disk in enumerate(self.machine.disks) if disk.serial == serial)
        limits = dict.fromkeys(("bps_rd", "bps_wr", "iops", "iops_rd", "iops_wr"), 0)
        self.qmp("block_set_io_throttle", device=f"d{index}", bps=bps_total, **limits)

    def reset_md(self) -> None:
        """Stop every md array, wipe md superblocks and signatures from every disk and restore md's
        resync speed limits (for shared guests)."""
        self.sh(
            "mdadm --stop --scan 2>/dev/null; "
            'for md in /dev/md[0-9]*; do [ -b "$md" ] && mdadm --stop "$md" 2>/dev/null; done; '
            'for d in $(lsblk -dnpo NAME -e 9); do mdadm --zero-superblock --force "$d" 2>/dev/null; '
            'wipefs -aq "$d" 2>/dev/null; done; '
            "echo 1000 > /proc/sys/dev/raid/speed_limit_min; echo 200000 > /proc/sys/dev/raid/speed_limit_max; "
            "udevadm settle; true",
            timeout=120,
        )

    # -- QEMU monitor ----------------------------------------------------------------------------

    def qmp(self, command: str, **arguments: Any) -> Any:
        """Run one QMP command (e.g. ``stop``, ``device_del``) and return its ``return`` value."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(str(self.paths.qmp_socket))
            reader = sock.makefile("rb")

            def exchange(message: dict[str, Any] | None) -> Any:
                if message is not None:
                    sock.sendall((json.dumps(message) + "\n").encode())
                for line in reader:
                    reply = json.loads(line)
                    if "error" in reply:
                        raise LabError(f"QMP {command}: {reply['error']}")
                    if "return" in reply or "QMP" in reply:
                        return reply.get("return")
                raise GuestDied("QMP connection closed", self.console_tail())

            exchange(None)  # greeting
            exchange({"execute": "qmp_capabilities"})
            message: dict[str, Any] = {"execute": command}
            if arguments:
                message["arguments"] = arguments
            return exchange(message)


def boot(machine: Machine, *, boot_timeout: float = 120.0, **kwargs: Any) -> Guest:
    """Boot ``machine`` and return the running :class:`Guest` once its agent answers."""
    return Guest(machine, **kwargs).start(boot_timeout)


def create_md0(guest: Guest, level: str, serials: Sequence[str], *extra: str) -> list[str]:
    """/dev/md0 at ``level`` over the drives with these serials (mdadm's own argv); their device paths.

    raid0 has neither a bitmap nor a resync; redundant levels skip the resync so nothing disturbs the runs.
    """
    devices = [guest.device(serial) for serial in serials]
    redundant = [] if level == "0" else ["--bitmap=none", "--assume-clean"]
    guest.run(
        ["mdadm", "--create", "/dev/md0", "--run", f"--level={level}", f"--raid-devices={len(devices)}",
         *redundant, *extra, *devices],
        timeout=120,
    )  # fmt: skip
    guest.run(["udevadm", "settle"], timeout=60)
    return devices


@dataclass
class GuestPool:
    """Shares booted guests between tests: one guest per :class:`Machine`, rebooted if it died."""

    guests: dict[Machine, Guest] = field(default_factory=dict)

    def get(self, machine: Machine, boot_timeout: float = 120.0) -> Guest:
        guest = self.guests.get(machine)
        if guest is not None and guest.alive:
            return guest
        if guest is not None:
            guest.close()
        guest = boot(machine, boot_timeout=boot_timeout)
        self.guests[machine] = guest
        return guest

    def close(self) -> None:
        for guest in self.guests.values():
            guest.close()
        self.guests.clear()

    def __iter__(self) -> Iterator[Guest]:
        return iter(self.guests.values())


def mdtui_json(guest: Guest, *args: str, env: Mapping[str, str], timeout: float = 900) -> dict[str, Any]:
    """`mdtui ARGS` in the guest, whose stdout is one JSON document; a failure ends the calling benchmark."""
    result = guest.run([guest.python_exe, "-m", "mdtui", *args], env=dict(env), timeout=timeout, check=False)
    if result.rc != 0:
        raise SystemExit(f"mdtui {' '.join(args)}: rc {result.rc}\n{result.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(result.stdout)
    return document
