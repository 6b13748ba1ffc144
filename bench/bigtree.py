"""A generated system root of a big host: N disks (SAS behind expanders, NVMe on PCIe), md arrays, some resyncing.

`mdtui --root DIR` reads it as it reads a real host. Every shape is copied from the captured trees in
tests/fixtures/trees (real-links: a Debian 6.1 kernel's sysfs, procfs and udev database) and scaled up:

- SAS disks sit in JBOD enclosures: an HBA (mpt3sas, PCIe function) has a 4-phy wide port to each of
  two expanders, and each expander has one phy per drive (``expander-H:E/phy-H:E:P/sas_phy/...``
  with ``negotiated_linkrate``); the end device's port links its phy (``port-H:E:P/phy-H:E:P``), as
  the kernel's SAS transport class lays them out. One drive in ``SAS_SLOW_EVERY`` trained at 6.0 Gbit.
- NVMe namespaces sit behind their own PCIe root port (``current_link_speed`` / ``max_link_speed``
  on both), spread over PCI domains as a many-socket host does; one in ``NVME_SLOW_EVERY`` runs a
  Gen4 drive at Gen3 speed, one in ``NVME_NARROW_EVERY`` at x2.
- md arrays: raid6 of ``RAID6_MEMBERS`` SAS disks and raid10 of ``RAID10_MEMBERS`` NVMe, alternating,
  ``arrays_for(N)`` of them; every ``RESYNC_EVERY``-th one resyncing (mdstat progress line and md/sync_*
  files), and md threads (``mdN_raid6``, ``mdN_resync``) in /proc/PID.
- The first NVMe carries the root filesystem on a partition; /proc/diskstats, /proc/stat, cpufreq
  policies (``CPUS`` CPUs), /proc/self/mountinfo and udev records ``/run/udev/data/bMAJ:MIN`` complete it.

Nothing is committed: the tree is written at run time into a directory the caller names (a 256-disk
tree is ~9,000 small files, ~2 s to write on a slow disk, mostly metadata). :meth:`BigTree.advance`
rewrites the counters so a sampler or dashboard sees every disk busy.
"""

from __future__ import annotations

import argparse
import os
import string
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CPUS = 32
RAID6_MEMBERS = 10
RAID10_MEMBERS = 4
RESYNC_EVERY = 4  # arrays md0, md4, md8, ... resync
SAS_PER_EXPANDER = 48
EXPANDERS_PER_HBA = 2
WIDE_PORT_PHYS = 4
SAS_SLOW_EVERY = 40
NVME_SLOW_EVERY = 16
NVME_NARROW_EVERY = 23
NVME_PER_DOMAIN = 96
SAS_SECTORS = 31251759104  # 16 TB
NVME_SECTORS = 7501476528  # 3.84 TB
RAID6_CHUNK = 512 * 1024
# The sd driver's sixteen block majors (16 disks each); past 256 disks it hands out extended numbers on 259.
SD_MAJORS = (8, 65, 66, 67, 68, 69, 70, 71, 128, 129, 130, 131, 132, 133, 134, 135)
BLKEXT_MAJOR = 259
MD_MAJOR = 9
FIRST_MD_PID = 4000


def sd_name(index: int) -> str:
    """sda … sdz, sdaa … as the sd driver names disks."""
    letters = string.ascii_lowercase
    name = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        name = letters[remainder] + name
    return "sd" + name


def arrays_for(disks: int) -> int:
    """How many arrays a host of this size gets: one per 32 disks, at least two."""
    return max(2, disks // 32)


@dataclass
class Device:
    name: str
    transport: str  # "sas", "nvme", "md", "part"
    major_minor: str
    sys_path: str  # absolute /sys/devices/... path of the block directory
    sectors: int
    holder: str | None = None


@dataclass
class Array:
    name: str
    level: str
    members: list[str]
    resyncing: bool
    degraded: int = 0
    pid: int = 0


@dataclass
class BigTree:
    """What was generated, so tests and benchmarks can check what a probe finds against it."""

    base: Path
    disks: list[Device] = field(default_factory=list)
    arrays: list[Array] = field(default_factory=list)
    partitions: list[Device] = field(default_factory=list)
    slow_links: list[str] = field(default_factory=list)  # disks whose link trained below its maximum
    root_disk: str = ""

    @property
    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for disk in self.disks:
            counts[disk.transport] = counts.get(disk.transport, 0) + 1
        return counts

    def diskstats(self, tick: int) -> str:
        """/proc/diskstats with every disk busy: counters grow with tick, each disk at its own pace."""
        lines = []
        for number, device in enumerate((*self.disks, *self.partitions, *self.md_devices())):
            major, minor = device.major_minor.split(":")
            base = (number % 97 + 1) * 1000 + tick * (40 + number % 13)
            reads = (base, base // 7, base * 8, base // 2)
            writes = (base // 2, base // 9, base * 16, base // 3)
            counters = (*reads, *writes, number % 3, base // 4, base, 0, 0, 0, 0, base // 50, 5)
            lines.append(f"{major:>4} {minor:>7} {device.name} {' '.join(map(str, counters))}\n")
        return "".join(lines)

    def proc_stat(self, tick: int) -> str:
        def line(label: str, scale: int) -> str:
            return (
                f"{label} {tick * scale * 30} 0 {tick * scale * 10} {tick * scale * 55} {tick * scale * 5} 0 0 0 0 0\n"
            )

        lines = [line("cpu ", CPUS)] + [line(f"cpu{cpu}", 1) for cpu in range(CPUS)]
        lines.append(f"intr {tick}" + " 0" * 256 + f"\nctxt {tick}\nbtime 1700000000\nprocesses 1\n")
        lines.append("procs_running 1\nprocs_blocked 0\n")
        return "".join(lines)

    def md_devices(self) -> list[Device]:
        return [
            Device(array.name, "md", f"{MD_MAJOR}:{number}", f"/sys/devices/virtual/block/{array.name}", 0)
            for number, array in enumerate(self.arrays)
        ]

    def mdstat(self, tick: int) -> str:
        out = ["Personalities : [raid0] [raid1] [raid10] [raid6] [raid5] [raid4] [linear] \n"]
        for array in self.arrays:
            members = " ".join(f"{name}[{slot}]" for slot, name in reversed(list(enumerate(array.members))))
            raid_disks = len(array.members) + array.degraded
            up = "U" * len(array.members) + "_" * array.degraded
            component = self._component_kib(array)
            out.append(f"{array.name} : active {array.level} {members}\n")
            if array.level == "raid6":
                blocks = component * (raid_disks - 2)
                out.append(
                    f"      {blocks} blocks super 1.2 level 6, {RAID6_CHUNK // 1024}k chunk, algorithm 2 "
                    f"[{raid_disks}/{len(array.members)}] [{up}]\n"
                )
            else:
                blocks = component * raid_disks // 2
                out.append(
                    f"      {blocks} blocks super 1.2 512K chunks 2 near-copies [{raid_disks}/{raid_disks}] [{up}]\n"
                )
            if array.resyncing:
                done = self._sync_done_kib(array, tick)
                percent = done * 100 / component
                bar = int(percent / 5)
                out.append(
                    f"      [{'=' * bar}>{'.' * (19 - bar)}]  resync = {percent:4.1f}% ({done}/{component}) "
                    f"finish={(component - done) / 200000 / 60:.1f}min speed=200000K/sec\n"
                )
            out.append(f"      bitmap: 0/{component // 65536 + 1} pages [0KB], 65536KB chunk\n      \n")
        out.append("unused devices: <none>\n")
        return "".join(out)

    def _component_kib(self, array: Array) -> int:
        disk = next(d for d in self.disks if d.name == array.members[0])
        return (disk.sectors - 264192) // 2  # what mdadm leaves after its 128 MiB data offset

    def _sync_done_kib(self, array: Array, tick: int) -> int:
        # Each resync at its own point (a tenth further per array), 200 MB/s from there.
        component = self._component_kib(array)
        start = component * (int(array.name[2:]) % 9 + 1) // 10
        return min(component - 1, start + tick * 200000)

    def advance(self, tick: int) -> None:
        """New counters for every disk and CPU, and resync progress, as one tick of a busy host."""
        proc = self.base / "proc"
        _replace(proc / "diskstats", self.diskstats(tick))
        _replace(proc / "stat", self.proc_stat(tick))
        _replace(proc / "mdstat", self.mdstat(tick))
        for array in self.arrays:
            if array.resyncing:
                md = self.base / "sys/devices/virtual/block" / array.name / "md"
                done = self._sync_done_kib(array, tick) * 2
                _replace(md / "sync_completed", f"{done} / {self._component_kib(array) * 2}\n")
            for pid in (array.pid, array.pid + 1) if array.resyncing else (array.pid,):
                comm = (self.base / "proc" / str(pid) / "comm").read_text().strip()
                _replace(self.base / "proc" / str(pid) / "stat", _pid_stat(pid, comm, tick * 3 + pid % 7, tick))


def _replace(path: Path, text: str) -> None:
    """Rewrite a file in place, as the kernel regenerates it: the sampler keeps /proc files open and
    re-reads them from offset 0, so a file renamed over the old one would never be seen. One write
    of the whole text, then a truncate to its length (counters only grow, so it seldom shrinks)."""
    data = text.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _pid_stat(pid: int, comm: str, utime: int, stime: int) -> str:
    return f"{pid} ({comm}) S 2" + " 0" * 9 + f" {utime} {stime}" + " 0" * 23 + f" {pid % CPUS}" + " 0" * 13 + "\n"


class _Writer:
    """Creates files and links below a base directory, making each directory once."""

    def __init__(self, base: Path) -> None:
        self.base = str(base)
        self.made: set[str] = set()

    def _dir(self, directory: str) -> None:
        if directory not in self.made:
            os.makedirs(directory, exist_ok=True)
            self.made.add(directory)

    def files(self, directory: str, values: dict[str, str | bytes]) -> None:
        where = self.base + directory
        self._dir(where)
        for name, value in values.items():
            path = f"{where}/{name}"
            if "/" in name:
                self._dir(os.path.dirname(path))
            data = value if isinstance(value, bytes) else (value + "\n").encode()
            with open(path, "wb") as file:
                file.write(data)

    def link(self, at: str, target: str) -> None:
        """A symlink at the absolute system path `at` pointing to `target` (relative, as sysfs's are)."""
        path = self.base + at
        self._dir(os.path.dirname(path))
        os.symlink(target, path)

    def link_abs(self, at: str, to: str) -> None:
        """A relative symlink at `at` to the absolute system path `to`."""
        self.link(at, os.path.relpath(to, os.path.dirname(at)))

    def mkdir(self, directory: str) -> None:
        self._dir(self.base + directory)


def _block_files(major_minor: str, sectors: int, rotational: bool, block: int = 512) -> dict[str, str | bytes]:
    return {
        "dev": major_minor,
        "size": str(sectors),
        "queue/rotational": "1" if rotational else "0",
        "queue/logical_block_size": str(block),
        "queue/physical_block_size": "4096",
    }


def build(base: str | os.PathLike[str], disks: int, *, nvme_share: float = 0.25) -> BigTree:
    """Write a root with `disks` disks (a quarter NVMe by default, the rest SAS) into base (created)."""
    if disks < 8:
        raise ValueError(f"a big tree needs at least 8 disks, not {disks}")
    base = Path(base)
    tree = BigTree(base)
    writer = _Writer(base)
    nvme_count = max(4, int(disks * nvme_share))
    sas_count = disks - nvme_count
    ext_minor = 0
    udev: dict[str, str] = {}

    # -- SAS: HBAs, expanders, drives ---------------------------------------------------------
    for index in range(sas_count):
        per_hba = SAS_PER_EXPANDER * EXPANDERS_PER_HBA
        hba, within = divmod(index, per_hba)
        expander, phy = divmod(within, SAS_PER_EXPANDER)
        host = hba + 2
        pci_root = f"/sys/devices/pci0000:{0x80 + hba:02x}"  # each HBA on its own root complex, as in a 2-socket box
        bridge = f"{pci_root}/0000:{0x80 + hba:02x}:01.0"
        function = f"{bridge}/0000:{0x81 + hba:02x}:00.0"
        if within == 0:
            writer.mkdir(function)
            writer.link(f"{function}/driver", "../../../../bus/pci/drivers/mpt3sas")
        hba_port = f"{function}/host{host}/port-{host}:{expander}"
        expander_dir = f"{hba_port}/expander-{host}:{expander}"
        if phy == 0:
            for lane in range(WIDE_PORT_PHYS):
                phy_name = f"phy-{host}:{expander * WIDE_PORT_PHYS + lane}"
                writer.files(f"{function}/host{host}/{phy_name}/sas_phy/{phy_name}", _phy_files(12.0))
                writer.link(f"{hba_port}/{phy_name}", f"../{phy_name}")
        phy_name = f"phy-{host}:{expander}:{phy}"
        slow = index % SAS_SLOW_EVERY == SAS_SLOW_EVERY - 1
        writer.files(f"{expander_dir}/{phy_name}/sas_phy/{phy_name}", _phy_files(6.0 if slow else 12.0))
        port = f"{expander_dir}/port-{host}:{expander}:{phy}"
        writer.link(f"{port}/{phy_name}", f"../{phy_name}")
        lun = f"{host}:0:{within}:0"
        scsi = f"{port}/end_device-{host}:{expander}:{phy}/target{host}:0:{within}/{lun}"
        name = sd_name(index)
        serial = f"ZL2{index:05d}"
        wwn = f"0x5000c500{0xA0000000 + index:08x}"
        writer.files(
            scsi,
            {
                "vendor": "SEAGATE ", "model": "ST16000NM004J   ",
                "wwid": f"naa.{wwn[2:]}", "vpd_pg80": b"\x00\x80\x00\x14" + serial.ljust(20).encode(),
            },
        )  # fmt: skip
        writer.link(f"{scsi}/driver", "../../../../../../../../../../../bus/scsi/drivers/sd")
        if index < 16 * len(SD_MAJORS):
            major_minor = f"{SD_MAJORS[index // 16]}:{(index % 16) * 16}"
        else:
            major_minor, ext_minor = f"{BLKEXT_MAJOR}:{ext_minor}", ext_minor + 1
        block = f"{scsi}/block/{name}"
        writer.files(block, _block_files(major_minor, SAS_SECTORS, True))
        writer.link(f"{block}/device", "../../../" + lun)
        writer.link(f"/sys/block/{name}", os.path.relpath(block, "/sys/block"))
        tree.disks.append(Device(name, "sas", major_minor, block, SAS_SECTORS))
        if slow:
            tree.slow_links.append(name)
        path_id = f"pci-0000:{0x81 + hba:02x}:00.0-sas-exp0x500056b3{host:04x}{expander:04x}-phy{phy}-lun-0"
        udev[major_minor] = (
            f"S:disk/by-id/scsi-3{wwn[2:]}\nS:disk/by-id/wwn-{wwn}\nS:disk/by-path/{path_id}\n"
            "E:ID_SCSI=1\nE:ID_VENDOR=SEAGATE\nE:ID_MODEL=ST16000NM004J\nE:ID_REVISION=E004\nE:ID_TYPE=disk\n"
            f"E:ID_SERIAL=3{wwn[2:]}\nE:ID_SERIAL_SHORT={wwn[2:]}\nE:ID_WWN={wwn}\nE:ID_SCSI_SERIAL={serial}\n"
            f"E:ID_BUS=scsi\nE:ID_PATH={path_id}\n"
        )

    # -- NVMe: one root port and function per drive ---------------------------------------------
    for index in range(nvme_count):
        domain, slot = divmod(index, NVME_PER_DOMAIN)
        root_port = f"/sys/devices/pci{domain:04x}:00/{domain:04x}:00:{slot // 8 + 1:02x}.{slot % 8}"
        function = f"{root_port}/{domain:04x}:{slot + 1:02x}:00.0"
        slow = index % NVME_SLOW_EVERY == NVME_SLOW_EVERY - 1
        narrow = index % NVME_NARROW_EVERY == NVME_NARROW_EVERY - 1
        writer.files(root_port, _pcie_files(16.0, 4, 16.0, 4))
        writer.link(f"{root_port}/driver", "../../../bus/pci/drivers/pcieport")
        writer.files(function, _pcie_files(8.0 if slow else 16.0, 2 if narrow else 4, 16.0, 4))
        writer.link(f"{function}/driver", "../../../../bus/pci/drivers/nvme")
        controller = f"{function}/nvme/nvme{index}"
        serial = f"S64HNE0R{index:06d}"
        writer.files(
            controller,
            {"model": "SAMSUNG MZQL23T8HCLS-00A07".ljust(40), "serial": serial.ljust(20), "firmware_rev": "GDC5602Q",
             "state": "live", "transport": "pcie"},
        )  # fmt: skip
        writer.link(f"{controller}/device", "../../../" + function.rsplit("/", 1)[1])
        name = f"nvme{index}n1"
        major_minor, ext_minor = f"{BLKEXT_MAJOR}:{ext_minor}", ext_minor + 1
        block = f"{controller}/{name}"
        files = _block_files(major_minor, NVME_SECTORS, False)
        files["wwid"] = f"eui.36434830{index:08x}0025384500000001"
        writer.files(block, files)
        writer.link(f"{block}/device", f"../../nvme{index}")
        writer.link(f"/sys/block/{name}", os.path.relpath(block, "/sys/block"))
        tree.disks.append(Device(name, "nvme", major_minor, block, NVME_SECTORS))
        if slow or narrow:
            tree.slow_links.append(name)
        path_id = f"pci-{function.rsplit('/', 1)[1]}-nvme-1"
        udev[major_minor] = (
            f"S:disk/by-id/nvme-SAMSUNG_MZQL23T8HCLS-00A07_{serial}\nS:disk/by-id/nvme-eui.36434830{index:08x}\n"
            f"S:disk/by-path/{path_id}\nE:ID_SERIAL_SHORT={serial}\nE:ID_MODEL=SAMSUNG MZQL23T8HCLS-00A07\n"
            f"E:ID_REVISION=GDC5602Q\nE:ID_NSID=1\nE:ID_SERIAL=SAMSUNG_MZQL23T8HCLS-00A07_{serial}\nE:ID_PATH={path_id}\n"
        )

    # -- the root filesystem on the first NVMe's partition ---------------------------------------
    root_disk = next(d for d in tree.disks if d.transport == "nvme")
    tree.root_disk = root_disk.name
    part_name = f"{root_disk.name}p1"
    part_mm, ext_minor = f"{BLKEXT_MAJOR}:{ext_minor}", ext_minor + 1
    part_dir = f"{root_disk.sys_path}/{part_name}"
    writer.files(part_dir, {"dev": part_mm, "partition": "1", "start": "2048", "size": str(NVME_SECTORS - 4096)})
    writer.mkdir(f"{part_dir}/holders")
    tree.partitions.append(Device(part_name, "part", part_mm, part_dir, NVME_SECTORS - 4096))
    udev[root_disk.major_minor] += (
        "E:ID_PART_TABLE_TYPE=gpt\nE:ID_PART_TABLE_UUID=6f0b5a3c-1d2e-4f3a-9b8c-7d6e5f4a3b2c\n"
    )
    udev[part_mm] = "E:ID_FS_TYPE=ext4\nE:ID_FS_USAGE=filesystem\nE:ID_FS_LABEL=root\nE:ID_PART_ENTRY_NUMBER=1\n"

    # -- md arrays --------------------------------------------------------------------------------
    free_sas = [d for d in tree.disks if d.transport == "sas"]
    free_nvme = [d for d in tree.disks if d.transport == "nvme" and d is not root_disk]
    for number in range(arrays_for(disks)):
        raid6 = number % 2 == 0
        pool, size = (free_sas, RAID6_MEMBERS) if raid6 else (free_nvme, RAID10_MEMBERS)
        if len(pool) < size:
            break
        members, pool[:] = pool[:size], pool[size:]
        degraded = 1 if number == 2 else 0  # one raid6 runs a member short, as after a pulled drive
        if degraded:
            members = members[:-1]
        array = Array(f"md{number}", "raid6" if raid6 else "raid10", [m.name for m in members],
                      resyncing=number % RESYNC_EVERY == 0, degraded=degraded,
                      pid=FIRST_MD_PID + number * 10)  # fmt: skip
        tree.arrays.append(array)
        for member in members:
            member.holder = array.name
    for number, (array, device) in enumerate(zip(tree.arrays, tree.md_devices(), strict=True)):
        _write_array(writer, tree, array, device)
        udev[device.major_minor] = f"S:disk/by-id/md-name-bighost:{number}\nE:MD_LEVEL={array.level}\n"
        uuid = _uuid(number)
        for member in array.members:
            disk = next(d for d in tree.disks if d.name == member)
            udev[disk.major_minor] += (
                f"E:ID_FS_UUID={uuid}\nE:ID_FS_LABEL=bighost:{number}\nE:ID_FS_VERSION=1.2\n"
                "E:ID_FS_TYPE=linux_raid_member\nE:ID_FS_USAGE=raid\n"
            )

    # -- holders directories for every disk, udev database ---------------------------------------
    for disk in tree.disks:
        writer.mkdir(f"{disk.sys_path}/holders")
        if disk.holder is not None:
            writer.link_abs(f"{disk.sys_path}/holders/{disk.holder}", f"/sys/devices/virtual/block/{disk.holder}")
    for major_minor, text in udev.items():
        writer.files("/run/udev/data", {f"b{major_minor}": text + "G:systemd\nQ:systemd\nV:1"})

    # -- /proc and cpufreq ------------------------------------------------------------------------
    writer.files(
        "/proc",
        {
            "diskstats": tree.diskstats(0).rstrip("\n"),
            "stat": tree.proc_stat(0).rstrip("\n"),
            "mdstat": tree.mdstat(0).rstrip("\n"),
            "loadavg": "0.52 0.58 0.59 1/1234 98765",
            "swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority",
            "self/mountinfo": (
                f"28 1 {part_mm} / / rw,relatime - ext4 /dev/{part_name} rw\n"
                "21 28 0:19 / /proc rw,relatime - proc proc rw\n22 28 0:20 / /sys rw,relatime - sysfs sysfs rw"
            ),
        },
    )
    for array in tree.arrays:
        threads = [(array.pid, f"{array.name}_{array.level}")]
        if array.resyncing:
            threads.append((array.pid + 1, f"{array.name}_resync"))
        for pid, comm in threads:
            writer.files(f"/proc/{pid}", {"comm": comm, "stat": _pid_stat(pid, comm, 12, 345).rstrip("\n")})
    cpu = "/sys/devices/system/cpu"
    for number in range(CPUS):
        writer.files(
            f"{cpu}/cpufreq/policy{number}",
            {"affected_cpus": str(number), "scaling_cur_freq": "2400000", "scaling_governor": "performance",
             "scaling_driver": "intel_pstate", "cpuinfo_max_freq": "3900000", "cpuinfo_min_freq": "800000",
             "scaling_max_freq": "3900000", "scaling_min_freq": "800000",
             "energy_performance_preference": "performance"},
        )  # fmt: skip
        writer.link(f"{cpu}/cpu{number}/cpufreq", f"../cpufreq/policy{number}")
    writer.files(f"{cpu}/intel_pstate", {"status": "active"})
    return tree


def scratch_directory(prefix: str = "mdtui-bigtree-") -> str:
    """A new directory for a tree: in /dev/shm when it is there (a tree is thousands of tiny files), else $TMPDIR."""
    shm = "/dev/shm"
    where = shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None
    return tempfile.mkdtemp(prefix=prefix, dir=where)


def _uuid(number: int) -> str:
    return f"5d1e{number:04x}:9a3b7c21:0e4f6a58:b2c3d4e5"


def _phy_files(rate: float) -> dict[str, str | bytes]:
    return {
        "negotiated_linkrate": f"{rate:.1f} Gbit",
        "maximum_linkrate_hw": "12.0 Gbit",
    }


def _pcie_files(speed: float, width: int, max_speed: float, max_width: int) -> dict[str, str | bytes]:
    return {
        "current_link_speed": f"{speed:.1f} GT/s PCIe",
        "current_link_width": str(width),
        "max_link_speed": f"{max_speed:.1f} GT/s PCIe",
        "max_link_width": str(max_width),
    }


def _write_array(writer: _Writer, tree: BigTree, array: Array, device: Device) -> None:
    md_dir = device.sys_path
    component = tree._component_kib(array)
    raid_disks = len(array.members) + array.degraded
    data = raid_disks - 2 if array.level == "raid6" else raid_disks // 2
    writer.files(md_dir, _block_files(device.major_minor, component * 2 * data, False))
    done = tree._sync_done_kib(array, 0) * 2
    writer.files(
        f"{md_dir}/md",
        {
            "level": array.level,
            "raid_disks": str(raid_disks),
            "chunk_size": str(RAID6_CHUNK),
            "layout": "2" if array.level == "raid6" else "258",
            "metadata_version": "1.2",
            "degraded": str(array.degraded),
            "uuid": _uuid(int(array.name[2:])).replace(":", "-"),
            "array_state": "active" if array.resyncing else "clean",
            "sync_action": "resync" if array.resyncing else "idle",
            "sync_completed": f"{done} / {component * 2}" if array.resyncing else "none",
            "sync_speed": "200000" if array.resyncing else "none",
            "bitmap/location": "+8",
        },
    )
    for slot, member in enumerate(array.members):
        disk = next(d for d in tree.disks if d.name == member)
        writer.files(
            f"{md_dir}/md/dev-{member}",
            {"slot": str(slot), "state": "in_sync"},
        )
        writer.link_abs(f"{md_dir}/md/dev-{member}/block", disk.sys_path)
        writer.link(f"{md_dir}/md/rd{slot}", f"dev-{member}")
        writer.link_abs(f"{md_dir}/slaves/{member}", disk.sys_path)
    writer.mkdir(f"{md_dir}/holders")
    writer.link(f"/sys/block/{array.name}", f"../devices/virtual/block/{array.name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("disks", type=int, help="how many disks (a quarter NVMe, the rest SAS)")
    parser.add_argument("directory", nargs="?", help="where to write the root (default: a new temporary directory)")
    args = parser.parse_args(argv)
    directory = args.directory or scratch_directory(f"mdtui-bigtree-{args.disks}-")
    tree = build(directory, args.disks)
    counts = ", ".join(f"{count} {kind}" for kind, count in sorted(tree.counts.items()))
    resyncing = sum(array.resyncing for array in tree.arrays)
    print(f"{directory}: {counts}, {len(tree.arrays)} arrays ({resyncing} resyncing); mdtui --root {directory} scan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
