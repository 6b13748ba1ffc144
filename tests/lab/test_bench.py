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
from .harness import create_md0 as create
from .machines import SLOW_BPS, SLOW_NVME, STANDARD_NVME

pytestmark = pytest.mark.lab

DB = "/tmp/mdtui-bench.db"
MEMBER_KIB = 65536  # 64 MiB per member: a check pass of the whole array takes seconds under TCG

# What each tolerance measures (the measured figure is printed with -s and in every assertion):
# - the weakest-link array's read vs the slowest member alone × N (finding 1: a stripe runs at the
#   slowest member's pace): array / (slowest × N) within 1 ± WEAKEST_LINK_TOLERANCE;
WEAKEST_LINK_TOLERANCE = 0.15
# - the throttled member's read alone vs QEMU's throttle on it (SLOW_BPS, 20 MB/s):
#   alone / SLOW_BPS within 1 ± THROTTLE_TOLERANCE;
THROTTLE_TOLERANCE = 0.15
# - a step's bandwidth and IOPS vs fio's own final JSON stored with its run: the same numbers summed
#   over fio's jobs, so only floating-point summation order may differ.
FIO_FIGURE_REL_TOLERANCE = 1e-9


def bench(guest: Guest, *args: str, timeout: float = 240) -> CommandResult:
    return guest.run(
        [guest.python_exe, "-m", "mdtui", "bench", *args], env={"MDTUI_DB": DB}, timeout=timeout, check=False
    )


def bench_json(guest: Guest, *args: str, timeout: float = 240) -> dict[str, Any]:
    result = bench(guest, *args, "--json", timeout=timeout)
    assert result.rc == 0, f"rc {result.rc}\n{result.stderr[-3000:]}"
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def stored_runs(guest: Guest, run_ids: list[int]) -> dict[int, dict[str, Any]]:
    """The runs as the store exports them with --raw: metrics, and fio's own final JSON under "fio"."""
    exported = guest.run(
        [guest.python_exe, "-m", "mdtui", "results", "export", *map(str, run_ids), "--format", "json", "--raw"],
        env={"MDTUI_DB": DB},
        timeout=120,
    )
    return {run["id"]: run for run in json.loads(exported.stdout)["runs"]}


def fio_documents(run: dict[str, Any]) -> list[dict[str, Any]]:
    """fio's own final JSON stored raw with a run (one document per fio process of the step)."""
    assert run["fio"], f"run {run['id']} has no fio JSON"
    return run["fio"] if isinstance(run["fio"], list) else [run["fio"]]


def stored_fio_documents(guest: Guest, run_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    return {run_id: fio_documents(run) for run_id, run in stored_runs(guest, run_ids).items()}


def fio_sums(documents: list[dict[str, Any]]) -> dict[str, float]:
    """Bandwidth and IOPS per direction as fio's own JSON has them, summed over every job of every document."""
    jobs = [job for doc in documents for job in doc["jobs"]]
    return {
        "read_bytes_per_s": sum(job["read"]["bw_bytes"] for job in jobs),
        "write_bytes_per_s": sum(job["write"]["bw_bytes"] for job in jobs),
        "iops": sum(job["read"]["iops"] + job["write"]["iops"] for job in jobs),
    }


def assert_step_is_fios(step: dict[str, Any], documents: list[dict[str, Any]], where: str) -> None:
    """The step's figures are fio's own final JSON (stored raw with its run), not merely positive."""
    assert len(documents) == len(step["jobs"]), (where, len(documents), len(step["jobs"]))
    expected = fio_sums(documents)
    expected["bytes_per_s"] = expected["read_bytes_per_s"] + expected["write_bytes_per_s"]
    for key, value in expected.items():
        assert step[key] == pytest.approx(value, rel=FIO_FIGURE_REL_TOLERANCE, abs=1e-6), (
            f"{where}: step {key} {step[key]} vs fio JSON {value}"
        )
    assert step["bytes_per_s"] > 0, (where, step)


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
    # QEMU throttles NVMESLOW0 to SLOW_BPS (20 MB/s); the others read far faster.
    throttled = speeds[slow] / SLOW_BPS
    ratio = report["array_vs_slowest_times_n"]
    others = sorted(round(speed / 1e6) for device, speed in speeds.items() if device != slow)
    print(
        f"\nweakest link: throttled member {speeds[slow] / 1e6:.2f} MB/s alone = {throttled:.3f} × its "
        f"{SLOW_BPS / 1e6:.0f} MB/s throttle; array {report['array_bytes_per_s'] / 1e6:.2f} MB/s = {ratio:.3f} × "
        f"slowest × 4 ({report['slowest_times_n_bytes_per_s'] / 1e6:.2f} MB/s), "
        f"{report['array_vs_sum']:.3f} × the sum; the others alone {others} MB/s"
    )
    assert abs(throttled - 1) <= THROTTLE_TOLERANCE, (
        f"throttled member read {speeds[slow] / 1e6:.2f} MB/s alone, {throttled:.3f} × its {SLOW_BPS / 1e6:.0f} MB/s "
        f"throttle (allowed 1 ± {THROTTLE_TOLERANCE})"
    )
    assert all(speed > 3 * speeds[slow] for device, speed in speeds.items() if device != slow), speeds
    assert report["slowest_times_n_bytes_per_s"] == pytest.approx(speeds[slow] * 4)
    # A stripe runs at the slowest member's pace: the array lands at slowest × 4, far below the sum.
    assert abs(ratio - 1) <= WEAKEST_LINK_TOLERANCE, (
        f"array read {report['array_bytes_per_s'] / 1e6:.2f} MB/s = {ratio:.3f} × slowest × 4 "
        f"({report['slowest_times_n_bytes_per_s'] / 1e6:.2f} MB/s; allowed 1 ± {WEAKEST_LINK_TOLERANCE})"
    )
    assert report["array_vs_sum"] < 0.5
    assert any(f"Slowest member: {slow}" in f and "holds the array back" in f for f in report["findings"])
    # The reported bandwidth is fio's own final JSON, stored raw with each run.
    stored = stored_fio_documents(guest, document["run_ids"])
    for step in document["steps"]:
        assert_step_is_fios(step, stored[step["run_id"]], f"weakest-link {step['label']}")


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
        stored = stored_runs(guest, document["run_ids"])
        for step in document["steps"]:
            assert step["status"] == "complete", (preset, step)
            where = f"{preset} {step['label']}"
            run = stored[step["run_id"]]
            if all(job["argv"][0] == "fio" for job in step["jobs"]):
                # fio steps: every figure is fio's own final JSON, stored raw with the run.
                assert_step_is_fios(step, fio_documents(run), where)
            else:
                # dd steps (offset-sweep) have no fio JSON; dd reports a read rate, stored as the run's.
                assert all(job["argv"][0] == "dd" for job in step["jobs"]), (where, step["jobs"])
                assert run["fio"] is None, where
                assert step["read_bytes_per_s"] > 0 and step["write_bytes_per_s"] == 0, (where, step)
                assert step["read_bytes_per_s"] == pytest.approx(
                    sum(job["read_bytes_per_s"] for job in step["jobs"]), rel=FIO_FIGURE_REL_TOLERANCE
                ), where
            # What the store keeps for the run is the step's figure too.
            for direction in ("read", "write"):
                kept = run["metrics"].get(f"{direction}_bw_bytes_per_s", 0.0)
                shown = step[f"{direction}_bytes_per_s"]
                assert kept == pytest.approx(shown, rel=FIO_FIGURE_REL_TOLERANCE), (where, direction, kept, shown)
            print(f"{where}: read {step['read_bytes_per_s'] / 1e6:.2f} MB/s, write "
                  f"{step['write_bytes_per_s'] / 1e6:.2f} MB/s, {step['iops']:.0f} IOPS")  # fmt: skip
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
