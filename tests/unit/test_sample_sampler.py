"""Tests for the Sampler on hand-built /proc and /sys trees advanced between ticks, and on the procfs fixture."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from mdtui.model.snapshot import Snapshot
from mdtui.probe.root import SystemRoot
from mdtui.sample.export import to_json
from mdtui.sample.sampler import History, SampleIntervalError, Sampler


def write(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def diskstats(*lines: tuple[int, int, str, tuple[int, ...]]) -> str:
    return "".join(
        f"{major:4d} {minor:7d} {name} {' '.join(map(str, counters))}\n" for major, minor, name, counters in lines
    )


def stat_line(pid: int, comm: str, utime: int, stime: int) -> str:
    fields = ["S", "2"] + ["0"] * 9 + [str(utime), str(stime)] + ["0"] * 23 + ["1"] + ["0"] * 13
    return f"{pid} ({comm}) {' '.join(fields)}\n"


MDSTAT_RESYNC = """\
Personalities : [raid6] [raid5] [raid4]
md0 : active raid6 sde[3] sdd[2] sdc[1] sdb[0]
      2093056 blocks super 1.2 level 6, 512k chunk, algorithm 2 [4/4] [UUUU]
      [==>..................]  resync = 12.5% (130816/1046528) finish=0.1min speed=130816K/sec

unused devices: <none>
"""
MDSTAT_CLEAN = """\
Personalities : [raid6] [raid5] [raid4]
md0 : active raid6 sde[3] sdd[2] sdc[1] sdb[0]
      2093056 blocks super 1.2 level 6, 512k chunk, algorithm 2 [4/4] [UUUU]

unused devices: <none>
"""


def test_rates_across_ticks_with_wrap_removal_and_addition(tmp_path: Path) -> None:
    root = SystemRoot(tmp_path)
    #         reads merged sectors ms writes merged sectors ms inflight io_ms weighted
    sda0 = (1000, 0, 8000, 500, 200, 0, 4000, 300, 0, 1000, 2000)
    sdb0 = (10, 0, 2**32 - 100, 5, 10, 0, 100, 5, 0, 10, 10)
    sdc0 = (5, 0, 40, 1, 0, 0, 0, 0, 0, 1, 1)
    write(tmp_path, {"proc/diskstats": diskstats((8, 0, "sda", sda0), (8, 16, "sdb", sdb0), (8, 32, "sdc", sdc0))})
    sampler = Sampler(root, ["sda", "sdb", "sdc", "nvme0n1"])
    first = sampler.sample(now=100.0)
    assert first.interval is None
    assert [d.name for d in first.devices] == ["sda", "sdb", "sdc"]
    assert all(d.read_bytes_per_s is None for d in first.devices)

    # Two seconds later: sdb's 32-bit sector counter wrapped, sdc is gone, nvme0n1 appeared.
    sda1 = (1100, 0, 10048, 700, 250, 0, 4400, 400, 3, 2500, 5000)
    sdb1 = (20, 0, 412, 6, 20, 0, 2148, 6, 0, 20, 20)
    nvme1 = (1, 0, 8, 1, 0, 0, 0, 0, 0, 1, 1)
    text = diskstats((8, 0, "sda", sda1), (8, 16, "sdb", sdb1), (259, 0, "nvme0n1", nvme1))
    write(tmp_path, {"proc/diskstats": text})
    second = sampler.sample(now=102.0)
    assert second.interval == 2.0
    assert [d.name for d in second.devices] == ["nvme0n1", "sda", "sdb"]
    sda = second.device("sda")
    assert sda is not None
    assert (sda.read_bytes_per_s, sda.write_bytes_per_s) == (524288.0, 102400.0)
    assert (sda.read_iops, sda.write_iops) == (50.0, 25.0)
    assert (sda.utilisation_percent, sda.average_queue, sda.in_flight) == (75.0, 1.5, 3)
    sdb = second.device("sdb")
    assert sdb is not None
    assert sdb.read_bytes_per_s is None  # wrapped: no rate, not a negative or giant one
    assert sdb.read_iops == 5.0
    assert sdb.write_bytes_per_s == 2048 * 512 / 2
    nvme = second.device("nvme0n1")
    assert nvme is not None and nvme.read_bytes_per_s is None and nvme.read_bytes == 8 * 512

    # sdc comes back: its counters may have restarted, so it starts again without rates.
    nvme2 = (101, 0, 2056, 11, 0, 0, 0, 0, 0, 501, 501)
    write(
        tmp_path,
        {"proc/diskstats": diskstats((8, 0, "sda", sda1), (8, 32, "sdc", sdc0), (259, 0, "nvme0n1", nvme2))},
    )
    third = sampler.sample(now=102.5)
    assert third.interval == 0.5
    sdc = third.device("sdc")
    assert sdc is not None and sdc.read_bytes_per_s is None
    nvme = third.device("nvme0n1")
    assert nvme is not None
    assert (nvme.read_bytes_per_s, nvme.read_iops, nvme.utilisation_percent) == (2048 * 512 / 0.5, 200.0, 100.0)
    sda = third.device("sda")
    assert sda is not None and sda.read_bytes_per_s == 0.0 and sda.utilisation_percent == 0.0
    assert len(sampler.history) == 3


def test_device_filters(tmp_path: Path) -> None:
    idle = (0,) * 11
    busy = (1, 0, 8, 1, 0, 0, 0, 0, 0, 1, 1)
    text = diskstats((1, 0, "ram0", idle), (7, 0, "loop0", idle), (8, 0, "sda", busy), (8, 1, "sda1", busy))
    write(tmp_path, {"proc/diskstats": text})
    root = SystemRoot(tmp_path)
    # By default devices that never did I/O (brd ram disks, unused loops) are left out.
    assert [d.name for d in Sampler(root).sample(now=1.0).devices] == ["sda", "sda1"]
    assert [d.name for d in Sampler(root, lambda name: name.startswith("loop")).sample(now=1.0).devices] == ["loop0"]
    assert [d.name for d in Sampler(root, {"ram0", "sdz"}).sample(now=1.0).devices] == ["ram0"]


def test_sysfs_fallback_without_diskstats(tmp_path: Path) -> None:
    write(tmp_path, {"sys/block/vda/stat": "10 0 80 1 0 0 0 0 0 1 1\n", "sys/block/vda/dev": "254:0\n"})
    sampler = Sampler(SystemRoot(tmp_path))
    sampler.sample(now=1.0)
    write(tmp_path, {"sys/block/vda/stat": "20 0 2128 2 0 0 0 0 0 2 2\n"})
    vda = sampler.sample(now=2.0).device("vda")
    assert vda is not None and vda.read_bytes_per_s == 2048 * 512


def test_cpu_rates_and_missing_cpufreq(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/stat": "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\n"
            "cpu1 50 0 50 350 50 0 0 0 0 0\nintr 1 2 3\nctxt 5\n",
            "sys/devices/system/cpu/cpu0/online": "1\n",
        },
    )
    sampler = Sampler(SystemRoot(tmp_path))
    first = sampler.sample(now=10.0)
    assert first.cpu.total_busy_percent is None
    write(
        tmp_path,
        {
            "proc/stat": "cpu  150 0 150 1000 200 0 0 0 0 0\ncpu0 100 0 100 350 50 0 0 0 0 0\n"
            "cpu1 50 0 50 650 150 0 0 0 0 0\nintr 1 2 3\n"
        },
    )
    cpu = sampler.sample(now=11.0).cpu
    assert (cpu.total_busy_percent, cpu.iowait_percent) == (20.0, 20.0)
    assert [(c.cpu, c.busy_percent, c.iowait_percent) for c in cpu.cores] == [(0, 100.0, 0.0), (1, 0.0, 25.0)]
    assert not cpu.cpufreq_available
    assert all(c.freq_mhz is None and c.governor is None for c in cpu.cores)


def test_cpufreq_settings_refresh_on_their_own_clock(tmp_path: Path) -> None:
    cpufreq = "sys/devices/system/cpu/cpu0/cpufreq"
    write(
        tmp_path,
        {
            f"{cpufreq}/scaling_cur_freq": "800000\n",
            f"{cpufreq}/scaling_governor": "powersave\n",
            f"{cpufreq}/cpuinfo_max_freq": "4200000\n",
            f"{cpufreq}/scaling_max_freq": "3000000\n",
            f"{cpufreq}/energy_performance_preference": "power\n",
            "sys/devices/system/cpu/intel_pstate/status": "active\n",
        },
    )
    sampler = Sampler(SystemRoot(tmp_path), settings_refresh_s=5.0)
    cpu = sampler.sample(now=0.0).cpu
    assert cpu.cpufreq_available and (cpu.pstate_driver, cpu.pstate_status) == ("intel_pstate", "active")
    core = cpu.cores[0]
    assert (core.freq_mhz, core.max_freq_mhz, core.scaling_max_freq_mhz) == (800.0, 4200.0, 3000.0)
    assert (core.governor, core.epp) == ("powersave", "power")
    write(tmp_path, {f"{cpufreq}/scaling_cur_freq": "4100000\n", f"{cpufreq}/scaling_governor": "performance\n"})
    core = sampler.sample(now=1.0).cpu.cores[0]
    assert (core.freq_mhz, core.governor) == (4100.0, "powersave")
    core = sampler.sample(now=5.0).cpu.cores[0]
    assert core.governor == "performance"
    assert sampler.sample(now=6.0).cpu.governors == ("performance",)


def md_tree(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "proc/mdstat": MDSTAT_RESYNC,
            "proc/100/comm": "md0_raid6\n",
            "proc/100/stat": stat_line(100, "md0_raid6", 10, 90),
            "proc/101/comm": "md0_resync\n",
            "proc/101/stat": stat_line(101, "md0_resync", 0, 500),
            "proc/7/comm": "kworker/0:1\n",
            "proc/7/stat": stat_line(7, "kworker/0:1", 1, 1),
        },
    )


def test_md_threads_and_arrays(tmp_path: Path) -> None:
    md_tree(tmp_path)
    sampler = Sampler(SystemRoot(tmp_path), clock_ticks_per_s=100)
    first = sampler.sample(now=0.0)
    assert [a.name for a in first.arrays] == ["md0"]
    md0 = first.array("md0")
    assert md0 is not None and md0.sync is not None and md0.sync.action == "resync"
    assert [(t.pid, t.array, t.role, t.cpu_percent, t.cpu_seconds) for t in first.md_threads] == [
        (100, "md0", "raid6", None, 1.0),
        (101, "md0", "resync", None, 5.0),
    ]
    assert first.md_threads[0].processor == 1

    write(
        tmp_path,
        {"proc/100/stat": stat_line(100, "md0_raid6", 12, 93), "proc/101/stat": stat_line(101, "md0_resync", 0, 540)},
    )
    second = sampler.sample(now=0.5)
    assert [(t.name, t.cpu_percent) for t in second.md_threads] == [("md0_raid6", 10.0), ("md0_resync", 80.0)]
    assert second.arrays is first.arrays  # mdstat unchanged: the sysfs reads were skipped

    # The resync ends: mdstat changes and its thread exits; the raid6 thread carries on.
    (tmp_path / "proc/101/stat").unlink()
    (tmp_path / "proc/101/comm").unlink()
    (tmp_path / "proc/101").rmdir()
    write(tmp_path, {"proc/mdstat": MDSTAT_CLEAN, "proc/100/stat": stat_line(100, "md0_raid6", 14, 96)})
    third = sampler.sample(now=1.0)
    md0 = third.array("md0")
    assert md0 is not None and md0.sync is None
    assert [(t.name, t.cpu_percent) for t in third.md_threads] == [("md0_raid6", 10.0)]


def test_pid_reuse_triggers_a_rescan(tmp_path: Path) -> None:
    md_tree(tmp_path)
    sampler = Sampler(SystemRoot(tmp_path), clock_ticks_per_s=100, rescan_s=3600)
    sampler.sample(now=0.0)
    # pid 101 now belongs to an unrelated process and the resync thread came back as pid 102.
    write(
        tmp_path,
        {
            "proc/101/comm": "bash\n",
            "proc/101/stat": stat_line(101, "bash", 0, 9999),
            "proc/102/comm": "md0_resync\n",
            "proc/102/stat": stat_line(102, "md0_resync", 0, 10),
        },
    )
    threads = sampler.sample(now=1.0).md_threads
    assert [(t.pid, t.name, t.cpu_percent) for t in threads] == [(100, "md0_raid6", 0.0), (102, "md0_resync", None)]


def test_no_md_driver_means_no_proc_scan(tmp_path: Path) -> None:
    write(tmp_path, {"proc/100/comm": "md0_raid6\n", "proc/100/stat": stat_line(100, "md0_raid6", 1, 1)})
    snapshot = Sampler(SystemRoot(tmp_path)).sample(now=0.0)
    assert snapshot.arrays == () and snapshot.md_threads == ()


def test_fixture_tree(procfs_testdata: Path) -> None:
    # Prometheus procfs test data (github.com/prometheus/procfs, testdata/fixtures.ttar, commit 3c943fd,
    # Apache License 2.0): a real diskstats, /proc/stat, cpufreq and many md arrays.
    sampler = Sampler(SystemRoot(procfs_testdata))
    sampler.sample(now=0.0)
    snapshot = sampler.sample(now=1.0)
    names = [d.name for d in snapshot.devices]
    assert "sda" in names and "ram0" not in names and "sr0" not in names
    sdc = snapshot.device("sdc")
    assert sdc is not None and sdc.read_bytes_per_s == 0.0 and sdc.discard_bytes_per_s == 0.0
    assert snapshot.device("sda") is not None and snapshot.device("sda").discard_bytes_per_s is None  # type: ignore[union-attr]
    cpu = snapshot.cpu
    assert cpu.cpufreq_available and cpu.driver == "intel_pstate" and cpu.governors == ("powersave",)
    assert len(cpu.cores) == 8
    assert cpu.cores[0].freq_mhz == 1219.917 and cpu.cores[7].freq_mhz is None
    assert cpu.total_busy_percent is None  # the same /proc/stat twice: no time passed
    assert snapshot.array("md127") is not None


def test_json_lines(tmp_path: Path, procfs_testdata: Path) -> None:
    sampler = Sampler(SystemRoot(procfs_testdata))
    sampler.sample(now=0.0)
    data = to_json(sampler.sample(now=1.0))
    line = json.dumps(data)
    assert json.loads(line) == data
    assert data["interval"] == 1.0
    assert data["devices"]["sda"]["read_bytes_per_s"] == 0.0
    assert data["devices"]["sda"]["discard_bytes_per_s"] is None
    assert "name" not in data["devices"]["sda"]
    assert data["cpu"]["cpufreq_available"] is True and data["cpu"]["governors"] == ["powersave"]
    assert any(array["name"] == "md0" for array in data["arrays"])

    bare = to_json(Sampler(SystemRoot(tmp_path)).sample(now=5.0))
    assert bare["interval"] is None and bare["devices"] == {} and bare["cpu"]["cpufreq_available"] is False


def test_history_is_bounded(tmp_path: Path) -> None:
    sampler = Sampler(SystemRoot(tmp_path), history_length=3)
    for tick in range(5):
        sampler.sample(now=float(tick))
    assert [s.timestamp for s in sampler.history] == [2.0, 3.0, 4.0]
    assert sampler.history.latest() is not None and sampler.history.latest().timestamp == 4.0  # type: ignore[union-attr]
    assert [s.timestamp for s in sampler.history.since(3.0)] == [3.0, 4.0]
    assert History(2).latest() is None


def test_interval_limits(tmp_path: Path) -> None:
    sampler = Sampler(SystemRoot(tmp_path))
    with pytest.raises(SampleIntervalError):
        next(sampler.iterate(0.01))
    with pytest.raises(SampleIntervalError):
        asyncio.run(sampler.run(0.0))
    assert len(list(sampler.iterate(0.25, count=2))) == 2


async def test_slow_consumer_does_not_slow_sampling(tmp_path: Path) -> None:
    sampler = Sampler(SystemRoot(tmp_path))
    received: list[Snapshot] = []

    async def slow(snapshot: Snapshot) -> None:
        await asyncio.sleep(0.35)
        received.append(snapshot)

    started = time.monotonic()
    await sampler.run(0.1, slow, count=6)
    elapsed = time.monotonic() - started
    snapshots = sampler.history.snapshots()
    assert len(snapshots) == 6
    # Six ticks 0.1 s apart take 0.5 s; the callback alone would need 2.1 s for all six.
    assert elapsed < 1.5
    assert snapshots[-1].timestamp - snapshots[0].timestamp < 0.9
    assert received[-1] is snapshots[-1]  # the newest always arrives
    assert len(received) < 6 and sampler.skipped_deliveries == 6 - len(received)


async def test_blocking_callback_runs_off_the_loop(tmp_path: Path) -> None:
    sampler = Sampler(SystemRoot(tmp_path))
    received: list[float] = []

    def blocking(snapshot: Snapshot) -> None:
        time.sleep(0.3)
        received.append(snapshot.timestamp)

    started = time.monotonic()
    await sampler.run(0.1, blocking, count=4)
    assert time.monotonic() - started < 1.2
    assert received[-1] == sampler.history.snapshots()[-1].timestamp


async def test_callback_errors_stop_the_run(tmp_path: Path) -> None:
    def broken(snapshot: Snapshot) -> None:
        raise RuntimeError("display went away")

    with pytest.raises(RuntimeError, match="display went away"):
        await Sampler(SystemRoot(tmp_path)).run(0.1, broken, count=50)


def test_idle_devices_have_zero_rates_and_wake_up(tmp_path: Path) -> None:
    busy = (10, 0, 80, 1, 5, 0, 40, 1, 0, 2, 2)
    write(tmp_path, {"proc/diskstats": diskstats((8, 0, "sda", busy), (8, 16, "sdb", busy))})
    sampler = Sampler(SystemRoot(tmp_path))
    sampler.sample(now=0.0)
    second = sampler.sample(now=1.0)
    sda = second.device("sda")
    assert sda is not None
    assert (sda.read_bytes_per_s, sda.read_iops, sda.utilisation_percent, sda.read_await_ms) == (0.0, 0.0, 0.0, None)
    # Unchanged lines: the same zero rates, whatever the interval.
    third = sampler.sample(now=3.0)
    assert third.device("sda") == sda
    # sdb wakes up: its rates are computed again against the counters it idled at.
    woke = (20, 0, 2128, 1, 5, 0, 40, 1, 0, 4, 4)
    write(tmp_path, {"proc/diskstats": diskstats((8, 0, "sda", busy), (8, 16, "sdb", woke))})
    sdb = sampler.sample(now=4.0).device("sdb")
    assert sdb is not None and (sdb.read_bytes_per_s, sdb.read_iops) == (2048 * 512, 10.0)


def test_forced_refresh_and_cpu_hotplug(tmp_path: Path) -> None:
    cpu = "sys/devices/system/cpu"
    write(
        tmp_path,
        {
            "proc/stat": "cpu  2 0 0 8 0 0 0 0 0 0\ncpu0 1 0 0 4 0 0 0 0 0 0\ncpu1 1 0 0 4 0 0 0 0 0 0\n",
            f"{cpu}/cpu0/cpufreq/scaling_cur_freq": "1000000\n",
            f"{cpu}/cpu0/cpufreq/scaling_governor": "powersave\n",
            f"{cpu}/cpu1/cpufreq/scaling_cur_freq": "1000000\n",
            f"{cpu}/cpu1/cpufreq/scaling_governor": "powersave\n",
        },
    )
    sampler = Sampler(SystemRoot(tmp_path), settings_refresh_s=3600)
    assert sampler.sample(now=0.0).cpu.governors == ("powersave",)
    write(tmp_path, {f"{cpu}/cpu{n}/cpufreq/scaling_governor": "performance\n" for n in (0, 1)})
    assert sampler.sample(now=1.0).cpu.governors == ("powersave",)
    sampler.refresh_settings()  # what an A/B run does right after switching the governor
    assert sampler.sample(now=2.0).cpu.governors == ("performance",)

    # cpu2 comes online: /proc/stat shows it, so its cpufreq policy is found on the same tick.
    write(
        tmp_path,
        {
            "proc/stat": "cpu  6 0 0 24 0 0 0 0 0 0\ncpu0 2 0 0 8 0 0 0 0 0 0\ncpu1 2 0 0 8 0 0 0 0 0 0\n"
            "cpu2 2 0 0 8 0 0 0 0 0 0\n",
            f"{cpu}/cpu2/cpufreq/scaling_cur_freq": "3500000\n",
            f"{cpu}/cpu2/cpufreq/scaling_governor": "performance\n",
        },
    )
    cores = sampler.sample(now=3.0).cpu.cores
    assert [(c.cpu, c.freq_mhz, c.busy_percent) for c in cores] == [
        (0, 1000.0, 20.0),
        (1, 1000.0, 20.0),
        (2, 3500.0, None),
    ]


def test_close_releases_descriptors(tmp_path: Path, procfs_testdata: Path) -> None:
    tree = tmp_path / "procfs"  # a copy of its own: no other test's sampler holds files in it
    shutil.copytree(procfs_testdata, tree, symlinks=True)

    def into_tree() -> list[str]:
        """What this process holds open inside the copied tree."""
        found = []
        for fd in Path("/proc/self/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue  # closed between listing and reading
            if target.startswith(str(tree.resolve())):
                found.append(target)
        return found

    assert into_tree() == []
    with Sampler(SystemRoot(tree)) as sampler:
        sampler.sample(now=0.0)
        assert into_tree(), "the sampler keeps its files open between samples"
    assert into_tree() == []
    # A closed sampler reopens what it needs when sampled again.
    sda = sampler.sample(now=1.0).device("sda")
    assert sda is not None and sda.read_bytes_per_s == 0.0
    sampler.close()
