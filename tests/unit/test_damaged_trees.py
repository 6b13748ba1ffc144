"""Every read-only verb on captured trees with one file damaged: a message or a result, never a traceback or a hang.

Each damaged tree is a copy of tests/fixtures/trees/lab-standard with one kind of damage (Unicode
digits, numbers too long for int(), 1e400, a FIFO or /dev/zero where /proc/mdstat should be, 20000
arrays, empty files, binary garbage, a directory or a dangling link instead of a file). Every verb
runs in its own ``python -m mdtui`` so a hang is a timeout, not a stuck test run. The runs happen in a
few threads once per session and each test looks up its own (damage, verb) result, so a failure
names both.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"
SOURCE = TREES / "lab-standard"
# Each verb must finish within CPU_LIMIT_S of its own CPU time. A verb still running after HANG_S of
# wall time is a hang (a blocking read): the margin is for a machine busy with other work.
CPU_LIMIT_S = 5.0
HANG_S = 30.0
WORKERS = 2

VERBS: dict[str, tuple[str, ...]] = {
    "scan": ("scan",),
    "scan-json": ("scan", "--json"),
    "watch-json": ("watch", "--json", "--count", "2", "--interval", "0.1"),
    "advise-json": ("advise", "--json"),
    "create-dry-run": ("create", "--dry-run", "--level", "1", "nvme4n1", "loop0", "--allow-mixed-sizes"),
    "destroy-dry-run": ("destroy", "--dry-run", "md0"),
}

HUGE = "9" * 5000  # past int()'s 4300-digit limit
BIG_FLOAT = "9" * 400 + ".5"  # a float() of this is infinity


def _files(tree: Path, pattern: str) -> Iterator[Path]:
    """Regular files matching a glob below the tree, each once however many links lead to it."""
    seen: set[Path] = set()
    for path in sorted(tree.glob(pattern)):
        real = path.resolve()
        if real.is_file() and real not in seen and real.is_relative_to(tree.resolve()):
            seen.add(real)
            yield real


def _write_all(tree: Path, patterns: tuple[str, ...], text: str | bytes) -> None:
    for pattern in patterns:
        for path in _files(tree, pattern):
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text)


SIZES = ("sys/block/*/size", "sys/block/*/*/size")
MD_ATTRS = ("sys/block/md*/md/*", "sys/block/md*/md/dev-*/*")
LINKS = (
    "sys/devices/**/current_link_speed",
    "sys/devices/**/max_link_speed",
    "sys/devices/**/current_link_width",
    "sys/devices/**/max_link_width",
    "sys/devices/**/sata_spd",
    "sys/devices/**/hw_sata_spd_limit",
)
QUEUE = ("sys/block/*/queue/*", "sys/block/*/dev", "sys/block/*/stat")

MDSTAT_NUMBERS = """Personalities : [raid1] [raid6] [raid5] [raid4]
md0 : active raid6 nvme3n1[3] nvme2n1[2] nvme1n1[{huge}] nvme0n1[0]
      {huge} blocks super 1.2 level 6, {huge}k chunk, algorithm {huge} [{huge}/4] [UUUU]
      [>....................]  resync =  2.5% ({huge}/{huge}) finish={big}min speed={huge}K/sec

md1 : active raid1 sdc[0]
      1046528 blocks super 1.2 [2/1] [U_]
      [>....................]  recovery = {big}% (1/2) finish={big}min speed=1K/sec

unused devices: <none>
"""


def _mdstat_unicode(tree: Path) -> None:
    text = (tree / "proc/mdstat").read_text()
    (tree / "proc/mdstat").write_text(text.replace("0", "²").replace("4", "٤").replace("2", "\u0662"))


def _mdstat_many(tree: Path) -> None:
    lines = ["Personalities : [raid1]"]
    for n in range(20_000):
        lines += [f"md{n} : active raid1 loop{n % 8}[0]", "      1024 blocks super 1.2 [1/1] [U]", ""]
    lines.append("unused devices: <none>")
    (tree / "proc/mdstat").write_text("\n".join(lines) + "\n")


def _replace(relative: str, make: Callable[[Path], None]) -> Callable[[Path], None]:
    def damage(tree: Path) -> None:
        path = tree / relative
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        make(path)

    return damage


def _garbage(tree: Path) -> None:
    rng = random.Random(13)
    for pattern in ("proc/*", "proc/self/*", "run/udev/data/*", *SIZES, *MD_ATTRS, *LINKS, *QUEUE):
        for path in _files(tree, pattern):
            path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600))))


def _empty(tree: Path) -> None:
    for path in _files(tree, "**/*"):
        path.write_bytes(b"")


def _proc_text(relative: str, text: str) -> Callable[[Path], None]:
    def damage(tree: Path) -> None:
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_text(text)

    return damage


def _mdstat_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _unicode_digits(tree: Path) -> None:
    _write_all(tree, SIZES, "²\n")
    _write_all(tree, MD_ATTRS, "4²\n")
    _write_all(tree, LINKS, "²\n")
    _write_all(tree, QUEUE, "٤٢\n")  # Arabic-Indic digits, which int() accepts


def _huge_numbers(tree: Path) -> None:
    _write_all(tree, (*SIZES, *MD_ATTRS, *QUEUE), HUGE + "\n")
    _write_all(tree, ("sys/devices/**/current_link_width", "sys/devices/**/max_link_width"), HUGE + "\n")
    _write_all(tree, ("sys/block/md0/md/sync_completed",), f"{HUGE} / {HUGE}\n")


def _cpufreq_damage(tree: Path) -> None:
    policy = tree / "sys/devices/system/cpu/cpufreq/policy0"
    policy.mkdir(parents=True)
    for name, text in (
        ("affected_cpus", "0 ² 1e400 " + HUGE),
        ("scaling_cur_freq", HUGE),
        ("cpuinfo_max_freq", "²"),
        ("cpuinfo_min_freq", "1e400"),
        ("scaling_max_freq", "-5"),
        ("scaling_governor", "performance"),
    ):
        (policy / name).write_text(text + "\n")
    (tree / f"sys/devices/system/cpu/cpu{HUGE[:40]}").mkdir(parents=True)
    (tree / "sys/devices/system/cpu/cpu0").mkdir(parents=True)
    (tree / "sys/devices/system/cpu/cpu0/cpufreq").symlink_to("../cpufreq/policy0")


DAMAGES: dict[str, Callable[[Path], None]] = {
    "unicode-digits": _unicode_digits,
    "numbers-5000-digits": _huge_numbers,
    "numbers-1e400": lambda tree: _write_all(tree, (*SIZES, *MD_ATTRS, *LINKS), "1e400\n"),
    "links-huge-float": lambda tree: _write_all(tree, LINKS, f"{BIG_FLOAT} GT/s PCIe\n"),
    "mdstat-huge-numbers": _proc_text("proc/mdstat", MDSTAT_NUMBERS.format(huge=HUGE, big=BIG_FLOAT)),
    "mdstat-unicode-digits": _mdstat_unicode,
    "mdstat-fifo": _replace("proc/mdstat", lambda path: os.mkfifo(path)),
    "mdstat-dev-zero": _replace("proc/mdstat", _mdstat_zero),
    "mdstat-20000-arrays": _mdstat_many,
    "mdstat-directory": _replace("proc/mdstat", lambda path: path.mkdir()),
    "mdstat-dangling-link": _replace("proc/mdstat", lambda path: path.symlink_to("nowhere")),
    "diskstats-fifo": _replace("proc/diskstats", lambda path: os.mkfifo(path)),
    "diskstats-huge": _proc_text("proc/diskstats", f" 259 0 nvme0n1 {' '.join([HUGE] * 17)}\n 2² 0 vda 1 2 3\n"),
    "stat-dev-zero": _replace("proc/stat", _mdstat_zero),
    "stat-huge-label": _proc_text("proc/stat", f"cpu  1 2 3 4 5 6 7 8 9 10\ncpu{HUGE} 1 2 3\ncpu² 1 2\n"),
    "mountinfo-garbage": _proc_text(
        "proc/self/mountinfo", f"1 2 {HUGE}:{HUGE} / / rw - ext4 /dev/nvme0n1 rw\n\x00\x00 - \n"
    ),
    "udev-huge": lambda tree: _write_all(tree, ("run/udev/data/*",), "E:" + "A" * 100_000 + "\nS:" + HUGE + "\n"),
    "udev-directory": _replace("run/udev/data/b259:4", lambda path: path.mkdir()),
    "size-directory": _replace("sys/devices/pci0000:00/0000:00:0a.0/0000:05:00.0/nvme/nvme4/nvme4n1/size", Path.mkdir),
    "disk-dangling-link": _replace("sys/block/nvme4n1", lambda path: path.symlink_to("../devices/gone")),
    "cpufreq-garbage": _cpufreq_damage,
    "dmesg-huge": _proc_text(
        "dmesg.txt",
        f"[    1.0] raid6: using algorithm avx2x4 gen() {BIG_FLOAT} MB/s\n"
        f"[    1.0] raid6: .... xor() {HUGE} MB/s\n[    1.0] raid6: sse2x1   gen() ²²² MB/s\n"
        f"[    1.0] xor: using function: avx ({BIG_FLOAT} MB/sec)\n",
    ),
    "empty-files": _empty,
    "binary-garbage": _garbage,
}


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None: no answer within HANG_S
    stderr: str
    stdout_bytes: int  # how much the verb printed as its result
    cpu_s: float  # the child's own CPU time, user and system
    wall_s: float


def _run(tree: Path, verb: tuple[str, ...], home: Path, log: Path) -> Outcome:
    """One verb in its own interpreter; its CPU time comes from wait4, so a loaded machine does not skew it."""
    env = {**os.environ, "HOME": str(home), "MDTUI_STATE_DIR": str(home / "state"), "MDTUI_DB": str(home / "db")}
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        env[name] = str(home / name.lower())
    started = time.monotonic()
    with open(log, "w+b") as stderr, open(log.with_suffix(".out"), "w+b") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "mdtui", "--root", str(tree), *verb],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
        )
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                returncode: int | None = os.waitstatus_to_exitcode(status)
                process.returncode = returncode
                break
            if time.monotonic() - started > HANG_S:
                process.kill()
                _, _, usage = os.wait4(process.pid, 0)
                process.returncode = returncode = None
                break
            time.sleep(0.02)
        stderr.seek(0)
        text = stderr.read().decode(errors="replace")
        printed = os.fstat(stdout.fileno()).st_size
    log.with_suffix(".out").unlink()
    return Outcome(returncode, text, printed, usage.ru_utime + usage.ru_stime, time.monotonic() - started)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("damaged")
    built = {}
    for name, damage in DAMAGES.items():
        tree = base / name
        shutil.copytree(SOURCE, tree, symlinks=True)
        damage(tree)
        built[name] = tree
    return built


@pytest.fixture(scope="module")
def outcomes(trees: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Outcome]:
    home = tmp_path_factory.mktemp("home")
    logs = tmp_path_factory.mktemp("logs")
    jobs = [(damage, verb) for damage in DAMAGES for verb in VERBS]
    with ThreadPoolExecutor(WORKERS) as pool:
        results = pool.map(lambda job: _run(trees[job[0]], VERBS[job[1]], home, logs / f"{job[0]}-{job[1]}"), jobs)
        return dict(zip(jobs, results, strict=True))


KNOWN_FAILURES: dict[tuple[str, str], pytest.MarkDecorator] = {}
CASES = [
    pytest.param(damage, verb, id=f"{damage}-{verb}", marks=KNOWN_FAILURES.get((damage, verb), ()))
    for damage in DAMAGES
    for verb in VERBS
]


@pytest.mark.parametrize(("damage", "verb"), CASES)
def test_damaged_tree_gives_a_message_not_a_traceback(
    outcomes: dict[tuple[str, str], Outcome], damage: str, verb: str
) -> None:
    outcome = outcomes[damage, verb]
    assert outcome.returncode is not None, f"{verb} on {damage}: no answer within {HANG_S} s (a hang)"
    assert "Traceback" not in outcome.stderr, f"{verb} on {damage}:\n{outcome.stderr[-3000:]}"
    assert outcome.returncode in (0, 1, 2), f"{verb} on {damage}: exit {outcome.returncode}\n{outcome.stderr[-2000:]}"
    if outcome.returncode == 2:
        # Refused: mdtui says why (a line "mdtui: ...", with the problems it lists under it).
        said = any(line.startswith("mdtui: ") for line in outcome.stderr.splitlines())
        assert said, f"{verb} on {damage}: exit 2 without a message: {outcome.stderr[-500:]!r}"
    else:
        assert outcome.stdout_bytes > 0, f"{verb} on {damage}: exit {outcome.returncode} and printed nothing"
    assert outcome.cpu_s < CPU_LIMIT_S, f"{verb} on {damage}: {outcome.cpu_s:.1f} s of CPU"


def _signature(tree: Path) -> dict[str, object]:
    """Every entry below tree without following links: a link's target, a file's bytes, or its kind."""
    found: dict[str, object] = {}
    for directory, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = Path(directory, name)
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[str(path.relative_to(tree))] = os.readlink(path)
            elif stat.S_ISREG(mode):
                found[str(path.relative_to(tree))] = path.read_bytes()
            else:
                found[str(path.relative_to(tree))] = stat.S_IFMT(mode)
    return found


def test_every_damage_changed_its_tree(trees: dict[str, Path]) -> None:
    """A damage whose globs matched nothing would test the pristine tree under a misleading name."""
    pristine = _signature(SOURCE)
    for name, tree in trees.items():
        assert _signature(tree) != pristine, name
