"""`mdtui grow` on a captured tree: --dry-run --json prints the plan with its documented keys, the tree's busy
arrays are refused in one line each, a live action on a tree is refused, and bad input is one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from trees import idle_copy

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "lab-standard"


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdtui", "--root", str(root), "grow", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def idle(tmp_path: Path) -> Path:
    """The tree with md0's resync finished."""
    return idle_copy(tmp_path / "tree", TREE)


def test_dry_run_json_prints_the_plan(idle: Path) -> None:
    done = run(idle, "md0", "--add", "nvme4n1", "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)["plan"]
    assert plan["argv"] == [
        ["mdadm", "--manage", "/dev/md0", "--add", "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_NVMESLOW0"],
        ["mdadm", "--grow", "/dev/md0", "--raid-devices=5"],
    ]
    assert plan["backup_file"] is None
    assert plan["size_after_bytes"] == plan["size_before_bytes"] * 3 // 2  # raid6: 2 data members → 3
    # The tree's md0 runs at md's system limit (2,000 KiB/s): its 1 GiB members take about 8.7 min.
    assert plan["bound"] == "speed_limit_max (2,000 KiB/s)" and 500 < plan["predicted_seconds"] < 540


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("md0", "--add", "nvme4n1"), "resync of /dev/md0 is running"),  # the tree as captured: resyncing
        (("md1", "--size", "max"), "degraded"),
        (("md2", "--add", "nvme4n1"), "far layout"),
        (("md9", "--chunk", "128"), "not an active md array"),
        (("md0", "--size", "lots"), "--size 'lots'"),
    ],
)
def test_refusals_are_one_line_each(args: tuple[str, ...], words: str) -> None:
    done = run(TREE, *args, "--dry-run")
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_live_grow_on_a_tree_is_refused(idle: Path) -> None:
    done = run(idle, "md0", "--add", "nvme4n1", "--yes")
    assert done.returncode == 2 and "read-only" in done.stderr and "mdadm --grow" in done.stderr, done.stderr


def test_follow_shows_the_running_pass_beside_its_prediction(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`grow --follow` predicts the pass it follows once (the stored figures and the disks read before the loop),
    and its progress line carries that prediction on every poll."""
    from mdtui.bench import sync_forecast
    from mdtui.cli import progress
    from mdtui.cli.grow import cmd_grow
    from mdtui.cli.main import build_parser
    from mdtui.execute import mdadm

    predicted: list[str] = []
    real = sync_forecast.running_pass_time

    def counted(*args: object, **kwargs: object) -> object:
        predicted.append("once")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    def follow(device: str, *, root: object, on_update: object, **_: object) -> object:
        array = mdadm.find_array(root, device)  # type: ignore[arg-type]
        for _poll in range(3):
            on_update(array)  # type: ignore[operator]
        return None

    lines: list[str] = []
    monkeypatch.setattr(sync_forecast, "running_pass_time", counted)
    monkeypatch.setattr(mdadm, "follow_sync", follow)
    monkeypatch.setattr(progress.LinePrinter, "live_line", lambda _self, text: lines.append(text))
    argv = ["--root", str(TREE), "grow", "md0", "--follow", "--db", str(tmp_path / "none.db")]
    assert cmd_grow(build_parser(argv).parse_args(argv)) == 0  # the verb itself: run_verb refuses a tree first
    assert len(lines) == 3 and all("resync" in line and " · predicted " in line for line in lines), lines
    assert predicted == ["once"]
