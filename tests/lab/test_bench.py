"""`mdtui bench` on real md in the lab: every preset (quick, short steps), fio's own figures, the weakest link,
cancel, and the refusal to write to a mounted disk.

Steps are cut to 1-2 s and the weakest-link job to 2 jobs × iodepth 4 (the field's 16 × 12 × 4 MiB buffers
per member would not fit the guest's 2 GiB with four members at once); the file stays under ~4 minutes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import CommandResult, Guest
from .machines import SLOW_NVME, STANDARD_NVME

pytestmark = pytest.mark.lab

DB = "/tmp/mdtui-bench.db"
MEMBER_KIB = 65536  # 64 MiB per member: a check pass of the whole array takes seconds under TCG


def bench(guest: Guest, *args: str, timeout: float = 240) -> CommandResult:
    return guest.run(
        [guest.python_exe, "-m", "mdtui", "bench", *args], env={"MDTUI_DB": DB}, timeout=timeout, check=False
    )


def bench_json(guest: Guest, *args: str, timeout: float = 240) -> dict[str, Any]:
    result = bench(guest, *args, "--json", timeout=timeout)
    assert result.rc == 0, f"rc {result.rc}\n{result.stderr[-3000:]}"
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def stored_fio_documents(guest: Guest, run_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """fio's own final JSON as stored raw with each run (one document per fio process of the step)."""
    exported = guest.run(
        [guest.python_exe, "-m", "mdtui", "results", "export", *map(str, run_ids), "--format", "json", "--raw"],
        env={"MDTUI_DB": DB},
        timeout=120,
    )
    runs = json.loads(exported.stdout)["runs"]
    return {run["id"]: run["fio"] if isinstance(run["fio"], list) else [run["fio"]] for run in runs}


def create(guest: Guest, level: str, serials: tuple[str, ...], *extra: str) -> list[str]:
    devices = [guest.device(serial) for serial in serials]
    # raid0 has neither a bitmap nor a resync; redundant levels skip the resync so nothing disturbs the runs.
    redundant = [] if level == "0" else ["--bitmap=none", "--assume-clean"]
    guest.run(
        ["mdadm", "--create", "/dev/md0", "--run", f"--level={level}", f"--raid-devices={len(devices)}",
         *redundant, *extra, *devices],
        timeout=120,
    )  # fmt: skip
    guest.run(["udevadm", "settle"], timeout=60)
    return devices


@pytest.fixture
def guest(standard_guest: Guest) -> Iterator[Guest]:
    standard_guest.run(["rm", "-f", DB, DB + "-wal", DB + "-shm"])
    yield standard_guest
    standard_guest.reset_md()


def test_weakest_link_names_the_throttled_member(guest: Guest) -> None:
    members = create(guest, "0", (*STANDARD_NVME[:3], SLOW_NVME), "--chunk=512")
    slow = guest.device(SLOW_NVME)
    document = bench_json(
        guest, "--preset", "weakest-link", "--target", "/dev/md0", "--quick", "--runtime", "2",
        "--numjobs", "2", "--iodepth", "4",
    )  # fmt: skip
    assert document["status"] == "complete", document["error"]
    assert [s["status"] for s in document["steps"]] == ["complete"] * (len(members) + 2)
    report = document["weakest_link"]
    assert report["slowest"] == slow
    speeds = {m["device"]: m["alone_bytes_per_s"] for m in report["members"]}
    # QEMU throttles NVMESLOW0 to 20 MB/s; the others read far faster.
    assert 10e6 < speeds[slow] < 30e6
    assert all(speed > 3 * speeds[slow] for device, speed in speeds.items() if device != slow)
    assert report["slowest_times_n_bytes_per_s"] == pytest.approx(speeds[slow] * 4)
    # A stripe runs at the slowest member's pace: the array lands near slowest × 4, far below the sum.
    assert 0.5 < report["array_vs_slowest_times_n"] < 1.5
    assert report["array_vs_sum"] < 0.5
    assert any(f"Slowest member: {slow}" in f and "holds the array back" in f for f in report["findings"])
    # The reported bandwidth is fio's own final JSON, stored raw with each run.
    stored = stored_fio_documents(guest, document["run_ids"])
    for step in document["steps"]:
        documents = stored[step["run_id"]]
        assert sum(job["read"]["bw_bytes"] for doc in documents for job in doc["jobs"]) == step["read_bytes_per_s"]
        assert len(documents) == len(step["jobs"])


# Each preset in quick mode with short steps; parity-cost last, its check pass reads the whole array.
PRESET_ARGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("custom", ("--rw", "randread", "--bs", "64k", "--iodepth", "4", "--runtime", "2")),
    ("disk-mark", ("--runtime", "1", "--yes")),
    ("sync-random", ("--size", "8m", "--yes")),
    ("offset-sweep", ()),
    ("parity-cost", ("--runtime", "2", "--yes")),
)


def test_every_preset_quick_on_a_raid5(guest: Guest) -> None:
    # One array for all presets: creating and wiping one per preset would cost more than the runs.
    create(guest, "5", STANDARD_NVME[:3], "--chunk=64", f"--size={MEMBER_KIB}")
    kernel = guest.run(["uname", "-r"]).stdout.strip()
    run_ids: list[int] = []
    for preset, args in PRESET_ARGS:
        document = bench_json(guest, "--preset", preset, "--target", "/dev/md0", "--quick", *args)
        assert document["status"] == "complete", (preset, document["error"])
        assert document["not_run"] == [] and document["target_kind"] == "array", preset
        assert document["array"]["level"] == "raid5"
        for step in document["steps"]:
            assert step["status"] == "complete" and step["bytes_per_s"] > 0, (preset, step)
        assert len(document["run_ids"]) == len(document["steps"]) + (1 if preset == "parity-cost" else 0)
        run_ids += document["run_ids"]
        context = document["context"]
        assert context["governor"] == "not available", preset  # the guest has no cpufreq
        assert context["kernel"] == kernel
        assert context["fio_version"].startswith("fio-") and "mdadm" in context["mdadm_version"]
        samples = document["samples"]
        assert any("md0.read_bytes_per_s" in s or "md0.write_bytes_per_s" in s for s in samples), preset
        if preset == "parity-cost":
            write, read = document["steps"]
            assert write["write_bytes_per_s"] > 0 and read["read_bytes_per_s"] > 0
            assert write["md_threads"] == ["md0_raid5"] and write["md_thread_cpu_pct"] > 0
            check = document["check"]
            assert check["status"] == "complete" and not check["skipped"]
            assert check["component_bytes"] == MEMBER_KIB * 1024 and check["duration_s"] > 0
            assert check["mismatch_sectors"] == 0 and check["md_thread_cpu_pct"] is not None
            assert guest.read_file("/sys/block/md0/md/sync_action").strip() == "idle"
    assert len(set(run_ids)) == len(run_ids)
    listing = guest.run([guest.python_exe, "-m", "mdtui", "results", "list"], env={"MDTUI_DB": DB}, timeout=120)
    assert len([line for line in listing.stdout.splitlines() if " /dev/md0 " in line]) == len(run_ids)


def test_cancel_mid_run_leaves_no_fio(guest: Guest) -> None:
    create(guest, "0", STANDARD_NVME[:2], "--chunk=512")

    def sectors_read() -> int:
        return int(guest.read_file("/sys/block/md0/stat").split()[2])

    before = sectors_read()  # udev's probe of the new array reads a little
    pending = guest.spawn(
        [guest.python_exe, "-m", "mdtui", "bench", "--preset", "custom", "--target", "/dev/md0", "--runtime", "60",
         "--json"],
        env={"MDTUI_DB": DB},
        timeout=120,
        check=False,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    # Wait until fio reads the array (sectors read in /sys/block/md0/stat), then let it report a while.
    while time.monotonic() < deadline and sectors_read() < before + 8192:
        time.sleep(0.5)
    time.sleep(3)
    mdtui_pid = guest.run(["pgrep", "-f", "mdtui bench --preset custom"]).stdout.split()[0]
    guest.run(["kill", "-INT", mdtui_pid])
    result = pending.wait()
    assert result.rc == 130, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["status"] == "cancelled" and document["partial"] is True
    assert document["steps"][0]["read_bytes_per_s"] > 0
    assert guest.run(["pgrep", "fio"], check=False).rc == 1, "a fio process outlived the cancel"


def test_write_on_a_mounted_disk_is_refused(guest: Guest) -> None:
    disk = guest.device("SATA_HDD0")
    guest.sh(f"mkfs.ext4 -q -F {disk} && mkdir -p /mnt/bt && mount {disk} /mnt/bt && echo kept > /mnt/bt/marker")
    try:
        result = bench(guest, "--preset", "custom", "--rw", "write", "--target", disk, "--yes")
        assert result.rc == 2
        assert f"refusing to run custom on {disk}: it writes" in result.stderr
        assert "mounted at /mnt/bt" in result.stderr
        assert guest.run(["pgrep", "fio"], check=False).rc == 1
        assert guest.read_file("/mnt/bt/marker") == "kept\n"
    finally:
        guest.run(["umount", "/mnt/bt"], check=False)
    assert guest.run(["e2fsck", "-fn", disk], check=False).rc == 0
    guest.run(["wipefs", "-a", disk])
