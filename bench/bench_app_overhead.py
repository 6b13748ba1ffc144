"""Whole-app overhead: CPU of the watch dashboard (in tmux and headless) against `iostat -x 1`, during a read job.

Needs root (a loop device), tmux, fio and iostat (sysstat). A rate-limited fio read runs on a loop
device the whole time so the dashboard has a live job to show; mdtui in a real tmux pane, mdtui
headless (App.run_test in a child process) and `iostat -x 1` in a tmux pane of the same size all run
over the same window, and each one's CPU is read the same way: utime + stime (every thread) from
/proc/PID/stat before and after. Figures are % of one core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.probe.procstat import read_pid_stat
from mdtui.probe.root import SystemRoot

TARGET_PERCENT = 5.0  # the whole TUI under 5 % of one core at a 1 s interval
LOOP_FILE_BYTES = 256 * 1024 * 1024
LOAD_RATE = "100m"  # fio --rate (MiB/s): enough traffic to show, little enough to leave the shared cores alone
LIVE = SystemRoot("/")
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Measured:
    label: str
    pid: int
    start_ticks: int = 0
    start_time: float = 0.0
    percent: float | None = None

    def begin(self) -> None:
        self.start_ticks, self.start_time = cpu_ticks(self.pid), time.monotonic()

    def end(self) -> None:
        ticks = cpu_ticks(self.pid) - self.start_ticks
        self.percent = ticks * 100.0 / (os.sysconf("SC_CLK_TCK") * (time.monotonic() - self.start_time))


def cpu_ticks(pid: int) -> int:
    stat = read_pid_stat(LIVE, pid)
    if stat is None:
        raise MdtuiError(f"process {pid} is gone: it exited before the measurement ended")
    return stat.cpu_ticks


def headless_child(seconds: float, interval: float, size: tuple[int, int]) -> int:
    """Run the dashboard on the live host under App.run_test for `seconds` (the parent measures this process)."""
    from mdtui.ui.app import MdtuiApp
    from mdtui.ui.watch.screen import WatchScreen

    async def run() -> None:
        app = MdtuiApp("/", start_screen=lambda: WatchScreen("/", None, interval))
        async with app.run_test(size=size) as pilot:
            await asyncio.sleep(seconds)
            await pilot.press("escape")

    asyncio.run(run())
    return 0


class Bench:
    """Owns everything the run starts (loop device, fio, tmux sessions, child) and removes it again."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.session = f"mdtui-bench-{os.getpid()}"
        self.directory = Path(tempfile.mkdtemp(prefix="mdtui-bench-app-"))
        self.loop: str | None = None
        self.fio: subprocess.Popen[bytes] | None = None
        self.child: subprocess.Popen[bytes] | None = None
        self.tmux_started = False

    def tmux(self, *argv: str) -> str:
        return run_command(["tmux", *argv], check=True, timeout_s=10).stdout.strip()

    def pane(self, window: str, command: list[str]) -> int:
        """A tmux window of the benchmark's size running command (exec'd, not through a shell); its pid."""
        width, height = self.args.size
        if not self.tmux_started:
            self.tmux(
                "new-session", "-d", "-s", self.session, "-n", window, "-c", str(REPO),
                "-x", str(width), "-y", str(height), *command,
            )  # fmt: skip
            self.tmux_started = True
        else:
            self.tmux("new-window", "-d", "-t", self.session, "-n", window, "-c", str(REPO), *command)
        self.tmux("resize-window", "-t", f"{self.session}:{window}", "-x", str(width), "-y", str(height))
        return int(self.tmux("display-message", "-p", "-t", f"{self.session}:{window}", "#{pane_pid}"))

    def start_load(self) -> None:
        backing = self.directory / "loop.img"
        with backing.open("wb") as file:
            file.truncate(LOOP_FILE_BYTES)
        self.loop = run_command(["losetup", "--find", "--show", str(backing)], check=True).stdout.strip()
        runtime = self.args.warmup + self.args.seconds + 30
        self.fio = subprocess.Popen(
            ["fio", "--name=overhead-load", f"--filename={self.loop}", "--rw=read", "--bs=1M", "--direct=1",
             "--ioengine=libaio", "--iodepth=4", f"--rate={LOAD_RATE}", "--time_based", f"--runtime={runtime}",
             "--readonly", "--output-format=json"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def run(self) -> list[Measured]:
        python = sys.executable
        interval = str(self.args.interval)
        self.start_load()
        watch = [python, "-m", "mdtui", "watch", "--interval", interval]
        measured = [
            Measured("mdtui watch in tmux", self.pane("mdtui", watch)),
            Measured("iostat -x 1 in tmux", self.pane("iostat", ["iostat", "-x", "1"])),
        ]
        if not self.args.no_headless:
            width, height = self.args.size
            self.child = subprocess.Popen(
                [python, "-m", "bench.bench_app_overhead", "--headless-child",
                 str(self.args.warmup + self.args.seconds + 5), "--interval", interval, "--size", f"{width}x{height}"],
                stdin=subprocess.DEVNULL,
                cwd=REPO,
            )  # fmt: skip
            measured.insert(1, Measured("mdtui watch headless (App.run_test)", self.child.pid))
        time.sleep(self.args.warmup)  # imports, first sample and first full draw are not the steady state
        for item in measured:
            item.begin()
        time.sleep(self.args.seconds)
        for item in measured:
            item.end()
        self.screen = self.tmux("capture-pane", "-p", "-t", f"{self.session}:mdtui")
        return measured

    def close(self) -> None:
        if self.tmux_started:
            run_command(["tmux", "kill-session", "-t", self.session], timeout_s=10)
        for process in (self.child, self.fio):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if self.loop is not None:
            run_command(["losetup", "--detach", self.loop], timeout_s=10)
        shutil.rmtree(self.directory, ignore_errors=True)


def size_arg(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window (default 30)")
    parser.add_argument("--warmup", type=float, default=6.0, help="seconds before measuring (default 6)")
    parser.add_argument("--interval", type=float, default=1.0, help="dashboard sampling interval (default 1)")
    parser.add_argument("--size", type=size_arg, default=(160, 48), help="terminal WxH (default 160x48)")
    parser.add_argument("--no-headless", action="store_true", help="skip the headless App.run_test instance")
    parser.add_argument("--headless-child", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.headless_child is not None:
        return headless_child(args.headless_child, args.interval, args.size)

    missing = [tool for tool in ("tmux", "fio", "iostat", "losetup") if shutil.which(tool) is None]
    if missing:
        print(f"bench_app_overhead: needs {', '.join(missing)} (apt-get install tmux fio sysstat)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("bench_app_overhead: needs root for the loop device the read job runs on", file=sys.stderr)
        return 2

    bench = Bench(args)
    try:
        measured = bench.run()
    finally:
        bench.close()
    width, height = args.size
    print(
        f"CPU over {args.seconds:g} s (after {args.warmup:g} s warm-up), % of one core; terminal {width}x{height}, "
        f"dashboard interval {args.interval:g} s; fio reading {bench.loop} at {LOAD_RATE.removesuffix('m')} MiB/s; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    for item in measured:
        print(f"  {item.label:<38} {item.percent:6.2f} %")
    app = next(item for item in measured if item.label.startswith("mdtui watch in tmux"))
    reference = next(item for item in measured if item.label.startswith("iostat"))
    assert app.percent is not None and reference.percent is not None
    if args.interval == 1.0:
        met = app.percent < TARGET_PERCENT
        print(f"  target: the whole TUI under {TARGET_PERCENT:g} % of one core: {'met' if met else 'MISSED'}")
    else:
        met = True  # the target is set for the default 1 s interval; other intervals are reported only
        print(f"  target (under {TARGET_PERCENT:g} % of one core) is for a 1 s interval; not judged here")
    shown = [line for line in bench.screen.splitlines() if (bench.loop or "?").removeprefix("/dev/") in line]
    print(f"  the dashboard showed the job: {shown[0].strip() if shown else 'NOT FOUND'}")
    return 0 if met and shown else 1


if __name__ == "__main__":
    sys.exit(main())
