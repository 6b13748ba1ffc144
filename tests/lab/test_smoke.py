"""Smoke tests of the lab itself: the guest's disks, real md, a throttled member, fio JSON, timeouts."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .harness import (
    BootTimeout,
    CommandTimeout,
    Guest,
    GuestHung,
    GuestPool,
    Machine,
    record_timing,
)
from .machines import SLOW_BPS, SLOW_NVME, STANDARD, STANDARD_NVME, TINY

pytestmark = pytest.mark.lab

EXPECTED_TRAN = {"nvme": "nvme", "sata": "sata", "sas": "sas", "virtio": None}


def _rota(disk_transport: str, rotation_rate: int | None) -> bool:
    if disk_transport == "nvme":
        return False
    if disk_transport in ("sata", "sas"):
        return rotation_rate != 1  # QEMU reports 0 ("not reported") unless set; Linux then assumes rotational
    return True  # virtio-blk does not say


def test_guest_sees_every_disk_with_transport_serial_and_rotation(standard_guest: Guest) -> None:
    seen = {dev["serial"]: dev for dev in standard_guest.lsblk()}
    for disk in STANDARD.disks:
        assert disk.serial in seen, f"{disk.serial} missing from lsblk: {sorted(seen)}"
        dev = seen[disk.serial]
        assert dev["tran"] == EXPECTED_TRAN[disk.transport], (disk, dev)
        assert bool(dev["rota"]) is _rota(disk.transport, disk.rotation_rate), (disk, dev)
        assert int(dev["size"]) == disk.size_bytes, (disk, dev)


def test_disk_by_id_links_exist(standard_guest: Guest) -> None:
    listing = standard_guest.run(["find", "/dev/disk/by-id", "-type", "l", "-printf", "%f %l\n"]).stdout.splitlines()
    links = dict(line.split(" ", 1) for line in listing)
    expected = {
        "nvme": "nvme-QEMU_NVMe_Ctrl_{serial}",
        "sata": "ata-QEMU_HARDDISK_{serial}",
        "virtio": "virtio-{serial}",
    }
    devices = {dev["serial"]: dev["name"] for dev in standard_guest.lsblk()}
    for disk in STANDARD.disks:
        if disk.transport == "sas":  # SAS disks are named by their SAS address (wwn)
            mine = [name for name, target in links.items() if target.endswith("/" + devices[disk.serial])]
            assert any(name.startswith("wwn-0x5000c500") for name in mine), (disk.serial, mine)
            continue
        name = expected[disk.transport].format(serial=disk.serial)
        assert name in links, f"/dev/disk/by-id/{name} missing; have {sorted(links)}"
        assert links[name].endswith("/" + devices[disk.serial])


def test_raid6_resync_shows_in_mdstat_and_fio_json_comes_back(standard_guest: Guest) -> None:
    """Boot-to-result: mdadm --create a raid6 over four NVMe, see the resync, run fio 5 s on it."""
    guest = standard_guest
    started = time.monotonic()
    members = [f"/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_{serial}" for serial in STANDARD_NVME]
    created = guest.run(
        ["mdadm", "--create", "/dev/md0", "--run", "--level=6", "--raid-devices=4", "--chunk=64", *members],
        timeout=120,
    )
    assert "started" in created.stderr
    mdstat = guest.read_file("/proc/mdstat")
    assert "md0 : active raid6" in mdstat
    assert "resync" in mdstat, mdstat
    assert guest.read_file("/sys/block/md0/md/sync_action").strip() == "resync"
    assert "md0_raid6" in guest.run(["ps", "-eo", "comm"]).stdout

    guest.run(
        ["fio", "--name=md0-read", "--filename=/dev/md0", "--rw=randread", "--bs=64k", "--direct=1",
         "--ioengine=libaio", "--iodepth=8", "--runtime=5", "--time_based",
         "--output-format=json", f"--output={guest.guest_out('md0-read.json')}"],
        timeout=60,
    )  # fmt: skip
    report = json.loads(guest.out_path("md0-read.json").read_text())
    job = report["jobs"][0]
    assert job["jobname"] == "md0-read"
    assert job["read"]["io_bytes"] > 0 and job["read"]["bw_bytes"] > 0
    elapsed = time.monotonic() - started
    boot_seconds = guest.boot_seconds or 0.0
    record_timing("raid6 create + 5 s fio on the standard guest", elapsed)
    record_timing("boot + raid6 create + 5 s fio (boot-to-result)", boot_seconds + elapsed)

    guest.run(["mdadm", "--stop", "/dev/md0"])
    guest.run(["mdadm", "--zero-superblock", *members])
    assert "md0" not in guest.read_file("/proc/mdstat")


def test_throttled_member_reads_measurably_slower(standard_guest: Guest) -> None:
    guest = standard_guest
    fast, slow = guest.device(STANDARD_NVME[0]), guest.device(SLOW_NVME)
    output = guest.guest_out("throttle.json")
    guest.run(
        ["fio", "--rw=read", "--bs=1M", "--direct=1", "--ioengine=libaio", "--iodepth=4",
         "--runtime=3", "--time_based", "--output-format=json", f"--output={output}",
         "--name=fast", f"--filename={fast}", "--name=slow", f"--filename={slow}"],
        timeout=60,
    )  # fmt: skip
    report = json.loads(guest.out_path("throttle.json").read_text())
    jobs: dict[str, Any] = {job["jobname"]: job for job in report["jobs"]}
    fast_bw, slow_bw = jobs["fast"]["read"]["bw_bytes"], jobs["slow"]["read"]["bw_bytes"]
    assert slow_bw < 0.5 * fast_bw, f"throttled {slow_bw / 1e6:.1f} MB/s vs unthrottled {fast_bw / 1e6:.1f} MB/s"
    assert slow_bw < 1.5 * SLOW_BPS, f"throttled member read {slow_bw / 1e6:.1f} MB/s, limit {SLOW_BPS / 1e6} MB/s"


def test_guest_files_reach_the_host(standard_guest: Guest) -> None:
    standard_guest.sh(f"uname -r > {standard_guest.guest_out('uname.txt')}")
    assert standard_guest.kernel is not None
    assert standard_guest.out_path("uname.txt").read_text().strip() == standard_guest.kernel.version


def test_guest_imports_mdtui_from_the_checkout(standard_guest: Guest) -> None:
    result = standard_guest.python("import mdtui, sys; print(mdtui.__file__); print(sys.executable)")
    module_file, executable = result.stdout.split()
    assert module_file.startswith(str(standard_guest.checkout))
    assert executable == standard_guest.python_exe


def test_command_timeout_kills_the_command_and_keeps_the_guest(standard_guest: Guest) -> None:
    started = time.monotonic()
    with pytest.raises(CommandTimeout, match="timed out") as excinfo:
        standard_guest.run(["sleep", "30"], timeout=2)
    assert time.monotonic() - started < 15
    assert excinfo.value.result.timed_out
    assert standard_guest.alive
    assert standard_guest.run(["echo", "still here"]).stdout == "still here\n"
    assert standard_guest.run(["pgrep", "-x", "sleep"], check=False).rc == 1  # the agent killed it


def test_nvme_hot_unplug(lab_pool: GuestPool) -> None:
    guest = lab_pool.get(TINY)  # shared with the hang test below, which kills it anyway
    guest.unplug("TINY1")
    assert [dev["serial"] for dev in guest.lsblk()] == ["TINY0"]


def test_hung_guest_is_killed_and_the_error_shows_its_console(lab_pool: GuestPool) -> None:
    guest = lab_pool.get(TINY)
    guest.hang_grace = 2.0
    guest.qmp("stop")  # freeze the vCPUs: the agent can no longer answer
    started = time.monotonic()
    with pytest.raises(GuestHung) as excinfo:
        guest.run(["true"], timeout=1)
    assert time.monotonic() - started < 10
    assert not guest.alive and guest.proc is not None and guest.proc.poll() is not None
    message = str(excinfo.value)
    assert "guest console (tail)" in message and "lab-init" in message


def test_boot_that_never_reaches_the_agent_times_out() -> None:
    never = Machine(name="never", cpus=1, memory_mb=256, qemu_args=("-S",))  # -S: CPUs never start
    guest = Guest(never)
    started = time.monotonic()
    with pytest.raises(BootTimeout, match=r"boot timeout|agent socket"):
        guest.start(boot_timeout=3)
    assert time.monotonic() - started < 10
    assert guest.proc is not None and guest.proc.poll() is not None
