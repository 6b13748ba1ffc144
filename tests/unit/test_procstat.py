"""Tests for /proc/PID/stat parsing and md kernel-thread discovery."""

from __future__ import annotations

from pathlib import Path

from mdtui.probe.procstat import MdThread, find_md_threads, md_thread_name, parse_pid_stat, read_pid_stat
from mdtui.probe.root import SystemRoot

# A real md127_raid6 line (Linux 6.1), 52 fields; utime is field 14, stime 15, processor 39.
RAID6_STAT = (
    "1234 (md127_raid6) S 2 0 0 0 -1 2129984 0 0 0 0 17 4250 0 0 20 0 1 0 1530 0 0 18446744073709551615 0 0 0 0 0 0"
    " 0 2147483647 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
)


def stat_line(pid: int, comm: str, utime: int, stime: int, processor: int = 0) -> str:
    fields = ["S", "2"] + ["0"] * 9 + [str(utime), str(stime)] + ["0"] * 23 + [str(processor)] + ["0"] * 13
    return f"{pid} ({comm}) {' '.join(fields)}\n"


def test_real_line() -> None:
    stat = parse_pid_stat(RAID6_STAT)
    assert stat is not None
    assert (stat.pid, stat.comm, stat.state) == (1234, "md127_raid6", "S")
    assert (stat.utime_ticks, stat.stime_ticks, stat.cpu_ticks) == (17, 4250, 4267)
    assert stat.processor == 3


def test_comm_with_spaces_and_parentheses() -> None:
    stat = parse_pid_stat(stat_line(42, "a) b (c) S 9 9", 7, 8, 1))
    assert stat is not None
    assert stat.comm == "a) b (c) S 9 9"
    assert (stat.utime_ticks, stat.stime_ticks, stat.processor) == (7, 8, 1)


def test_short_and_broken_lines() -> None:
    assert parse_pid_stat("") is None
    assert parse_pid_stat("12 (x) S 1 2 3") is None
    assert parse_pid_stat("12 x) S") is None
    # Old kernels stop before field 39: no processor, times still read.
    stat = parse_pid_stat("12 (md0_raid1) S 2 0 0 0 -1 0 0 0 0 0 5 6")
    assert stat is not None and stat.processor is None and stat.cpu_ticks == 11


def test_thread_names() -> None:
    assert md_thread_name("md0_raid6") == ("md0", "raid6")
    assert md_thread_name("md127_raid10") == ("md127", "raid10")
    assert md_thread_name("md0_resync") == ("md0", "resync")
    assert md_thread_name("md_d0_reshape") == ("md_d0", "reshape")
    assert md_thread_name("mdadm") is None
    assert md_thread_name("md0_raid6x") is None
    assert md_thread_name("kworker/u8:md0_raid1") is None


def test_discovery_in_a_proc_tree(tmp_path: Path) -> None:
    comms = {100: "md0_raid6", 101: "md0_resync", 7: "kworker/0:1", 300: "mdadm", 12: "md10_raid1", 13: "md2_raid5"}
    for pid, comm in comms.items():
        (tmp_path / "proc" / str(pid)).mkdir(parents=True)
        (tmp_path / "proc" / str(pid) / "comm").write_text(comm + "\n")
        (tmp_path / "proc" / str(pid) / "stat").write_text(stat_line(pid, comm, pid, 1))
    (tmp_path / "proc" / "self").mkdir()
    (tmp_path / "proc" / "555").mkdir()  # exited between listing and reading: no comm
    root = SystemRoot(tmp_path)
    assert find_md_threads(root) == [
        MdThread(100, "md0_raid6", "md0", "raid6"),
        MdThread(101, "md0_resync", "md0", "resync"),
        MdThread(13, "md2_raid5", "md2", "raid5"),
        MdThread(12, "md10_raid1", "md10", "raid1"),
    ]
    stat = read_pid_stat(root, 101)
    assert stat is not None and stat.cpu_ticks == 102
    assert read_pid_stat(root, 555) is None
