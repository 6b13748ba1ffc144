"""The local half of the trust boundary, written as the attacks that worked before it existed.

- A ':' in a write target made fio open another file (fio splits filename= on ':'): real fio here.
- ``--root DIR`` read the captured tree but ran mdadm, wipefs, fio and update-initramfs on this machine:
  every verb that would act on live devices is refused before any program runs (programs on PATH are
  recorders that note any call), in the CLI and in the app.
- Strings from devices reached the terminal raw: a model with an escape sequence is cleaned where it
  enters a model object, and an error quoting a program's stderr is cleaned before it is printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mdtui.bench.targets import canonical_path, resolve_target
from mdtui.errors import CommandError, PlanError
from mdtui.execute.argv import fio_filename
from mdtui.model.disk import Disk, InUseKind, InUseReason, Transport
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot, live_refusal
from mdtui.text import REPLACEMENT, clean_text

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def mdtui(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdtui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


# --- 1. a ':' in a write target ----------------------------------------------------------------------


@needs_fio
def test_a_colon_in_a_write_target_writes_that_file_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "t12:00").mkdir()
    bystander = tmp_path / "t12"
    bystander.write_bytes(b"keep me")
    target = tmp_path / "t12:00" / "test.dat"
    env = os.environ | {"MDTUI_DB": str(tmp_path / "results.db")}
    done = mdtui(
        "bench", "--preset", "custom", "--rw", "write", "--bs", "64k", "--size", "1m",
        "--target", str(target), "--yes", env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert bystander.read_bytes() == b"keep me"
    assert target.stat().st_size == 1 << 20
    assert not (tmp_path / "00").exists()


@needs_fio
def test_fio_reads_the_escaped_name_back_as_the_same_path(tmp_path: Path) -> None:
    """A backslash before a ':' in the name itself stays a backslash: escaping every ':' is unambiguous."""
    (tmp_path / "p\\").mkdir()
    name = str(tmp_path / "p\\:q")
    subprocess.run(
        ["fio", "--name=x", f"--filename={fio_filename(name)}", "--rw=write", "--size=4k", "--output-format=json"],
        check=True, capture_output=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert Path(name).stat().st_size == 4096
    assert not (tmp_path / "p\\" / "q").exists()


@pytest.mark.parametrize("name", ["/srv/a#b", "/srv/a;b", "/srv/${HOME}", "/srv/a\nb", " /srv/x", "/srv/x "])
def test_names_fio_would_cut_or_expand_are_refused_in_one_line(name: str, tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="fio cannot be given the target") as caught:
        fio_filename(name)
    assert "\n" not in str(caught.value).replace(repr(name), "")


def test_a_file_target_fio_would_misread_is_refused_when_planned(tmp_path: Path) -> None:
    root = SystemRoot(REAL)
    inventory = scan(root, privileged=True)
    with pytest.raises(PlanError, match="'#' starts a comment"):
        resolve_target(str(tmp_path / "bench#1.dat"), inventory, root)


@pytest.mark.parametrize("spelling", ["//dev/nvme4n1", "/./dev/nvme4n1", "/dev/../dev/nvme4n1", "///dev//nvme4n1"])
def test_every_spelling_of_a_device_path_is_the_device(spelling: str) -> None:
    assert canonical_path(spelling) == "/dev/nvme4n1"
    root = SystemRoot(REAL)
    target = resolve_target(spelling, scan(root, privileged=True), root)
    assert (target.kind.value, target.name) == ("disk", "nvme4n1")


# --- 2. --root DIR is read-only ----------------------------------------------------------------------

RECORDED = ("mdadm", "wipefs", "fio", "dd", "update-initramfs", "dracut", "udevadm", "smartctl", "blkid")


@pytest.fixture
def recorders(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """PATH where every program mdtui could run on a live system only notes that it was called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    for program in RECORDED:
        script = bin_dir / program
        script.write_text(f'#!/bin/sh\necho "{program} $*" >> {calls}\nexit 0\n')
        script.chmod(0o755)
    env = os.environ | {"PATH": f"{bin_dir}:{os.environ['PATH']}", "MDTUI_DB": str(tmp_path / "results.db")}
    return env, calls


LIVE_VERBS = [
    ["bench", "--preset", "custom", "--target", "loop0", "--rw", "write", "--yes"],
    ["bench", "--preset", "custom", "--target", "md0", "--rw", "read"],
    ["bench", "--preset", "weakest-link", "--target", "md0", "--quick"],
    ["destroy", "/dev/md2", "--yes"],
    ["create", "--level", "1", "nvme4n1", "loop0", "--allow-mixed-sizes", "--yes"],
    ["persist", "md0", "--yes"],
    ["repair", "md1", "--add", "nvme4n1", "--yes"],
    ["scrub", "md0"],
    ["tune", "md0", "--apply", "stripe_cache_size=4096", "--yes"],
    ["experiment", "parallelism", "--target", "md0"],
    ["experiment", "levels", "nvme4n1", "loop0", "--yes"],
    ["experiment", "knob", "--knob", "stripe_cache_size", "--values", "256,4096", "--target", "md0", "--yes"],
]


@pytest.mark.parametrize("argv", LIVE_VERBS, ids=lambda argv: " ".join(argv[:3]))
def test_a_captured_tree_never_acts_on_this_machine(argv: list[str], recorders: tuple[dict[str, str], Path]) -> None:
    env, calls = recorders
    done = mdtui("--root", str(REAL), *argv, env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "is read-only" in done.stderr and "without --root" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not calls.exists(), calls.read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["create", "--level", "1", "nvme4n1", "loop0", "--allow-mixed-sizes", "--dry-run"],
        ["scan"],
        ["tune", "md0"],
        ["scrub"],
        # Planned from the tree's own udev record; it asked this machine's mdadm before (issue 44).
        ["persist", "md0", "--dry-run"],
        ["scrub", "md2", "--dry-run"],
        ["bench", "--list"],
        ["advise"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_planning_and_reading_a_captured_tree_still_work(
    argv: list[str], recorders: tuple[dict[str, str], Path]
) -> None:
    env, calls = recorders
    done = mdtui("--root", str(REAL), *argv, env=env)
    assert done.returncode in (0, 1), done.stderr  # advise exits 1 when it has warnings
    assert "read-only" not in done.stderr
    assert not calls.exists() or not any(
        line.split()[0] in ("mdadm", "wipefs", "fio", "dd", "update-initramfs")
        for line in calls.read_text().splitlines()
    )


def test_the_live_root_is_not_refused(tmp_path: Path) -> None:
    assert live_refusal("/", "anything") is None
    assert live_refusal(SystemRoot(tmp_path), "creating an array") is not None
    link = tmp_path / "slash"
    link.symlink_to("/")
    assert live_refusal(str(link), "creating an array") is None  # the same system, spelled through a link


# --- terminal: strings from outside ------------------------------------------------------------------

HOSTILE = "Evil\x1b]0;owned\x07\x1b[2J\x1b[31mSSD\x9b1m\x00"


def test_clean_text_leaves_no_control_character() -> None:
    cleaned = clean_text(HOSTILE, one_line=True)
    assert all(ch.isprintable() for ch in cleaned)
    assert cleaned == f"EvilSSD{REPLACEMENT}"  # sequences go whole, a lone control shows as U+FFFD
    assert clean_text("tab\there\nline") == "tab\there\nline"
    text = "Samsung SSD 990 PRO 2TB — ünïcode"
    assert clean_text(text) is text


def test_a_disks_model_serial_and_reasons_never_carry_escapes() -> None:
    disk = Disk(
        name="sdz",
        dev_path="/dev/sdz",
        transport=Transport.SATA,
        model=HOSTILE,
        serial="S\x1b[8mN",
        in_use=(InUseReason(InUseKind.FS_SIGNATURE, "ext4 labelled 'x\x1b[1Ay'"),),
        problems=("odd\x07",),
    )
    for text in (disk.model, disk.serial, str(disk.in_use[0]), *disk.problems):
        assert text is not None and "\x1b" not in text and "\x07" not in text and "\x9b" not in text


def test_an_error_quoting_a_programs_stderr_is_cleaned() -> None:
    error = CommandError(["mdadm", "--create"], 1, "mdadm: \x1b[2Jcannot open /dev/sdz\n")
    assert "\x1b" not in str(error) and "cannot open /dev/sdz" in str(error)


def test_the_cli_prints_a_hostile_message_without_its_escapes(tmp_path: Path) -> None:
    done = mdtui("bench", "--preset", "custom", "--target", str(tmp_path / "no\x1b[2Jdir" / "x.dat"))
    assert done.returncode == 2
    assert "\x1b" not in done.stderr and "no such file" in done.stderr


# --- the environment under sudo: udev rules and themes ---------------------------------------------


def _users_dir(tmp_path: Path) -> Path:
    """A directory another user (nobody, 65534) owns, as $HOME/... of the invoking user is under sudo."""
    place = tmp_path / "user"
    place.mkdir()
    os.chown(place, 65534, 65534)
    return place


def test_under_sudo_root_writes_no_udev_rules_where_the_user_chose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.state_dir import UnsafeStateError
    from mdtui.tune.udev import rules_path

    place = _users_dir(tmp_path)
    monkeypatch.setenv("MDTUI_UDEV_RULES_DIR", str(place))
    assert rules_path().parent == place  # without sudo the variable is the user's own choice
    monkeypatch.setenv("SUDO_UID", "1000")
    with pytest.raises(UnsafeStateError, match="MDTUI_UDEV_RULES_DIR"):
        rules_path()


def test_under_sudo_themes_come_from_roots_config_not_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.state_dir import home_dir
    from mdtui.ui.themes import user_themes_dir

    place = _users_dir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(place))
    monkeypatch.setenv("SUDO_UID", "1000")
    assert user_themes_dir() == home_dir() / ".config" / "mdtui" / "themes"


def test_the_guide_flag_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    from mdtui.advise.guide import mark_guide_seen

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("root's file\n")
    (state / "guide-seen").symlink_to(victim)
    mark_guide_seen(state / "guide-seen")  # the link is replaced by a new file, never written through
    assert victim.read_text() == "root's file\n"
    assert (state / "guide-seen").is_file() and not (state / "guide-seen").is_symlink()


# --- an array's own users, in scan --json and in the fleet's remote check ----------------------------


def test_what_holds_an_array_is_in_scan_json_and_refuses_a_remote_write(tmp_path: Path) -> None:
    """md0 holding an unmounted LV (a dm device): nothing is mounted, yet a write would destroy it."""
    import json

    from mdtui.fleet.hosts import Host
    from mdtui.fleet.remote import RemoteInventory, check_target

    tree = tmp_path / "tree"
    shutil.copytree(REAL, tree, symlinks=True)
    (tree / "sys" / "block" / "md0" / "holders").mkdir(exist_ok=True)
    (tree / "sys" / "block" / "md0" / "holders" / "dm-7").mkdir()
    done = mdtui("--root", str(tree), "scan", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    md0 = next(a for a in data["arrays"] if a["name"] == "md0")
    assert md0["in_use"] == [{"kind": "holder", "detail": "held by dm-7"}]
    assert next(a for a in data["arrays"] if a["name"] == "md2")["in_use"] == []
    inventory = RemoteInventory(Host("203.0.113.1"), data)
    refusals = check_target(inventory.host, "/dev/md0", inventory, writes=True).refusals
    assert any("held by dm-7" in refusal for refusal in refusals), refusals


def test_a_drives_smart_strings_never_carry_escapes() -> None:
    import json

    from mdtui.probe.smart import parse_smartctl_json

    document = {
        "smartctl": {"exit_status": 0},
        "device": {"protocol": "ATA"},
        "model_name": "Evil\x1b[2J\x1b]0;pwned\x07Disk",
        "serial_number": "S\x9b8mN",
        "smart_status": {"passed": True},
    }
    health = parse_smartctl_json("/dev/sdz", json.dumps(document))
    assert health.model == "EvilDisk" and health.serial == "SN"
