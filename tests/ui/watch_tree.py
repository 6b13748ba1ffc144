"""A synthetic /proc and /sys for the watch dashboard tests: an md array whose counters advance each tick."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual.pilot import Pilot

from mdtui.model.snapshot import Snapshot
from mdtui.probe.root import SystemRoot
from mdtui.sample.sampler import Sampler

if TYPE_CHECKING:
    from mdtui.ui.watch.screen import WatchScreen

SECTOR = 512
MEMBERS = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")
MDSTAT = {
    "raid0": "Personalities : [raid0]\n"
    "md0 : active raid0 nvme3n1[3] nvme2n1[2] nvme1n1[1] nvme0n1[0]\n"
    "      4188160 blocks super 1.2 512k chunks\n\nunused devices: <none>\n",
    "raid6": "Personalities : [raid6] [raid5] [raid4]\n"
    "md0 : active raid6 nvme3n1[3] nvme2n1[2] nvme1n1[1] nvme0n1[0]\n"
    "      2093056 blocks super 1.2 level 6, 512k chunk, algorithm 2 [4/4] [UUUU]\n\nunused devices: <none>\n",
}


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@dataclass
class WatchTree:
    """Each tick the array reads array_bytes_per_s, split evenly over the members (raid0 striping).

    busy_percent gives each member's io_ticks per second of wall time and await_ms its time per
    read, so a test can make one member the slow one. Time is the tick number: no clock is read.
    """

    root: Path
    level: str = "raid0"
    cpufreq: bool = True
    array_bytes_per_s: int = 400_000_000
    request_bytes: int = 1_000_000
    busy_percent: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MEMBERS, 40.0))
    await_ms: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MEMBERS, 2.0))
    frequencies_mhz: tuple[int, ...] = (2400, 3100)
    tick: int = 0

    def __post_init__(self) -> None:
        write(self.root, "proc/mdstat", MDSTAT[self.level])
        for name in (*MEMBERS, "md0", "vda"):
            write(self.root, f"sys/block/{name}/dev", "259:0\n")
        if self.level == "raid6":
            write(self.root, "proc/300/comm", "md0_raid6\n")
        if self.cpufreq:
            for cpu in range(len(self.frequencies_mhz)):
                policy = f"sys/devices/system/cpu/cpufreq/policy{cpu}"
                for name, value in (
                    ("affected_cpus", str(cpu)),
                    ("scaling_governor", "powersave"),
                    ("scaling_driver", "intel_pstate"),
                    ("cpuinfo_max_freq", "4200000"),
                    ("cpuinfo_min_freq", "800000"),
                    ("scaling_max_freq", "4200000"),
                    ("energy_performance_preference", "balance_power"),
                ):
                    write(self.root, f"{policy}/{name}", value + "\n")
            write(self.root, "sys/devices/system/cpu/intel_pstate/status", "active\n")
        self._write_counters()

    def _line(self, minor: int, name: str, reads: int, sectors: int, read_ms: int, io_ms: int) -> str:
        counters = (reads, 0, sectors, read_ms, 0, 0, 0, 0, 0, io_ms, read_ms)
        return f" 259 {minor:7d} {name} {' '.join(map(str, counters))}\n"

    def _write_counters(self) -> None:
        t = self.tick
        per_member = self.array_bytes_per_s // len(MEMBERS)
        lines = [self._line(0, "vda", 100, 800, 10, 10)]
        for minor, name in enumerate(MEMBERS, start=1):
            reads = 1000 + t * per_member // self.request_bytes
            lines.append(
                self._line(
                    minor,
                    name,
                    reads,
                    8000 + t * per_member // SECTOR,
                    int(1000 + t * (per_member // self.request_bytes) * self.await_ms[name]),
                    int(1000 + t * self.busy_percent[name] * 10),
                )
            )
        array_reads = 4000 + t * self.array_bytes_per_s // self.request_bytes
        lines.append(self._line(9, "md0", array_reads, 32000 + t * self.array_bytes_per_s // SECTOR, 0, 0))
        write(self.root, "proc/diskstats", "".join(lines))
        # Two CPUs: 30 % busy, 10 % iowait each second; the frequencies drift up a little per tick.
        cpu = [f"cpu{n} {300 + t * 30} 0 0 {600 + t * 60} {100 + t * 10} 0 0 0 0 0\n" for n in range(2)]
        total = f"cpu  {600 + t * 60} 0 0 {1200 + t * 120} {200 + t * 20} 0 0 0 0 0\n"
        write(self.root, "proc/stat", total + "".join(cpu) + "intr 0\n")
        if self.cpufreq:
            for cpu_number, mhz in enumerate(self.frequencies_mhz):
                khz = (mhz + 50 * (t % 4)) * 1000
                write(self.root, f"sys/devices/system/cpu/cpufreq/policy{cpu_number}/scaling_cur_freq", f"{khz}\n")
        if self.level == "raid6":
            fields = ["S", "2"] + ["0"] * 9 + [str(5 * t), str(5 * t)] + ["0"] * 23 + ["1"] + ["0"] * 13
            write(self.root, "proc/300/stat", f"300 (md0_raid6) {' '.join(fields)}\n")

    def advance(self) -> None:
        self.tick += 1
        self._write_counters()

    def snapshots(self, ticks: int) -> tuple[Snapshot, ...]:
        """ticks + 1 samples, one second apart, from a fresh Sampler over the tree (the first has no rates)."""
        sampler = Sampler(SystemRoot(self.root), clock_ticks_per_s=100)
        try:
            sampler.sample(now=1000.0 + self.tick)
            for _ in range(ticks):
                self.advance()
                sampler.sample(now=1000.0 + self.tick)
            return sampler.history.snapshots()
        finally:
            sampler.close()


async def show_snapshots(pilot: Pilot[None], snapshots: tuple[Snapshot, ...], disks: frozenset[str]) -> WatchScreen:
    """Hand the watch screen a window of snapshots, as its sampler worker does, and let it draw."""
    from mdtui.ui.watch.screen import SnapshotTaken, WatchScreen

    screen = pilot.app.screen
    assert isinstance(screen, WatchScreen)
    screen.post_message(SnapshotTaken(snapshots, disks))
    await pilot.pause()
    await pilot.pause()
    return screen
