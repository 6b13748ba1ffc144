"""Tests for /proc/stat cpu lines, cpufreq discovery and the pstate driver status."""

from __future__ import annotations

from pathlib import Path

from mdtui.probe.cpu import PROC_STAT, CpufreqReader, CpuTimes, parse_proc_stat
from mdtui.probe.root import SystemRoot

# tests/fixtures/procfs holds the Prometheus procfs test data (github.com/prometheus/procfs,
# testdata/fixtures.ttar, commit 3c943fd, Apache License 2.0). Its cpu0/cpufreq is a captured
# symlink (a file holding "../cpufreq/policy0"); its cpu1/cpufreq is a plain directory.


def write(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def test_fixture_proc_stat(procfs_testdata: Path) -> None:
    text = SystemRoot(procfs_testdata).read_table(PROC_STAT)
    parsed = parse_proc_stat(text) if text is not None else None
    assert parsed is not None
    assert parsed.total == CpuTimes(301854, 612, 111922, 8979004, 3552, 2, 3944, 0, 0, 0)
    assert sorted(parsed.per_cpu) == list(range(8))
    assert parsed.per_cpu[7] == CpuTimes(29098, 268, 10164, 1139282, 555, 0, 31, 0, 0, 0)


def test_guest_time_is_not_counted_twice() -> None:
    times = CpuTimes(user=100, nice=10, system=50, idle=800, iowait=40, guest=60, guest_nice=5)
    assert times.total == 1000
    assert times.busy == 160


def test_old_kernels_print_fewer_fields() -> None:
    parsed = parse_proc_stat("cpu  10 0 5 85\ncpu0 10 0 5 85 3 1 2\nintr 1 2 3\ncpu9 junk\n")
    assert parsed.total == CpuTimes(10, 0, 5, 85)
    assert parsed.per_cpu == {0: CpuTimes(10, 0, 5, 85, 3, 1, 2)}


def test_fixture_cpufreq(procfs_testdata: Path) -> None:
    state = CpufreqReader(SystemRoot(procfs_testdata)).read()
    assert state.available
    cpu0, cpu1 = state.cores
    # cpu0 follows the captured link to policy0, which has scaling_cur_freq.
    assert (cpu0.cpu, cpu0.cur_khz) == (0, 1219917)
    assert cpu0.settings.governor == "powersave"
    assert cpu0.settings.driver == "intel_pstate"
    assert (cpu0.settings.cpuinfo_max_khz, cpu0.settings.scaling_max_khz) == (2400000, 2400000)
    # cpu1 has only cpuinfo_cur_freq, the fallback.
    assert (cpu1.cpu, cpu1.cur_khz) == (1, 1200195)
    assert cpu1.settings.cpuinfo_max_khz == 3300000
    assert cpu1.settings.epp is None
    assert state.pstate_driver is None


def test_no_cpufreq_is_not_available(tmp_path: Path) -> None:
    # A VM: CPUs and an empty cpufreq directory, but no policy anywhere.
    write(tmp_path, {"sys/devices/system/cpu/cpu0/online": "1\n", "sys/devices/system/cpu/cpu1/online": "1\n"})
    (tmp_path / "sys/devices/system/cpu/cpufreq").mkdir()
    state = CpufreqReader(SystemRoot(tmp_path)).read()
    assert not state.available
    assert state.cores == ()


def test_pstate_status_epp_and_policy_only_trees(tmp_path: Path) -> None:
    policy = "sys/devices/system/cpu/cpufreq/policy0"
    write(
        tmp_path,
        {
            "sys/devices/system/cpu/intel_pstate/status": "active\n",
            f"{policy}/affected_cpus": "0 1\n",
            f"{policy}/scaling_cur_freq": "4200000\n",
            f"{policy}/scaling_governor": "performance\n",
            f"{policy}/scaling_driver": "intel_pstate\n",
            f"{policy}/energy_performance_preference": "balance_performance\n",
        },
    )
    state = CpufreqReader(SystemRoot(tmp_path)).read()
    assert (state.pstate_driver, state.pstate_status) == ("intel_pstate", "active")
    assert [core.cpu for core in state.cores] == [0, 1]
    assert {core.settings.epp for core in state.cores} == {"balance_performance"}
    assert {core.cur_khz for core in state.cores} == {4200000}


def test_amd_pstate_and_live_changes(tmp_path: Path) -> None:
    cpufreq = "sys/devices/system/cpu/cpu0/cpufreq"
    write(
        tmp_path,
        {
            "sys/devices/system/cpu/amd_pstate/status": "guided\n",
            f"{cpufreq}/scaling_cur_freq": "1000000\n",
            f"{cpufreq}/scaling_governor": "schedutil\n",
        },
    )
    reader = CpufreqReader(SystemRoot(tmp_path))
    assert reader.read().pstate_status == "guided"
    write(tmp_path, {f"{cpufreq}/scaling_cur_freq": "3000000\n", f"{cpufreq}/scaling_governor": "performance\n"})
    # Frequencies are read every time; settings only after refresh_settings().
    core = reader.read().cores[0]
    assert (core.cur_khz, core.settings.governor) == (3000000, "schedutil")
    reader.refresh_settings()
    assert reader.read().cores[0].settings.governor == "performance"
    assert reader.current_khz() == {0: 3000000}

    # CPU hotplug: a second CPU appears only after discover().
    write(tmp_path, {"sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq": "900000\n"})
    assert list(reader.settings()) == [0]
    reader.discover()
    assert reader.current_khz() == {0: 3000000, 1: 900000}
