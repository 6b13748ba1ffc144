"""Root's writers as another local user attacks them (issue 40, cases 1-4 and 13): each test is the attack,
run by a real unprivileged user (nobody) where one is needed, with the race won by renameat2(RENAME_EXCHANGE).

Every writer goes through mdtui.rootsafe; what is asserted is what the attacker wanted and must not get: a
file of root's chmod'ed or written, a file of this machine copied or printed, a directory replaced.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from unprivileged import NOBODY, Attacker, give_to_nobody

from mdtui.actionlog import ActionLog
from mdtui.keep import metrics
from mdtui.keep.conf import ConfEdit
from mdtui.keep.persist import write_planned_conf
from mdtui.model.array import MdArray
from mdtui.output_file import write_text
from mdtui.probe.root import SystemRoot
from mdtui.tune.catalogue import knob_named
from mdtui.tune.udev import plan_apply, write_plan

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks are on root's writes: run as root")

REPO = Path(__file__).resolve().parents[2]
TREE = REPO / "tests" / "fixtures" / "trees" / "real-links"
SECRET = "root:$y$j9T$only-root-may-read-this:19000:0:99999:7:::\n"
# A command that could hang (a FIFO opened for reading) is given this long before the test calls it a hang.
HANG_S = 20.0
UUID = "d4d41c85-895e-5776-7178-204735012576"


def _secret(place: Path) -> Path:
    """A file only root may read or change, as /etc/shadow is."""
    secret = place / "shadow"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    return secret


def _mdtui(*argv: str, timeout: float = HANG_S) -> subprocess.CompletedProcess[str]:
    """This checkout's mdtui as root, as a separate process (so a hang is a timeout, not a stuck suite)."""
    return subprocess.run(
        [sys.executable, "-m", "mdtui", *argv], capture_output=True, text=True, timeout=timeout, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True,
    )  # fmt: skip


# --- cases 2 and 3: the chmod race in a directory another user can write -----------------------------


@contextlib.contextmanager
def _attacked_at_fsync(attacker: Attacker, directory: Path, link: Path, keep: tuple[str, ...]) -> Iterator[list[str]]:
    """While root syncs the new file it is writing in ``directory``, the attacker exchanges that file's name
    with ``link`` (renameat2 RENAME_EXCHANGE): what root does next by that name goes to where the link points.

    Syncing is where a write waits for the disk; the hook only lets the attacker act inside that window on
    every run (a slow disk gives the same window for real), it does not change what root does.
    """
    real_fsync = os.fsync
    answers: list[str] = []

    def fsync(fd: int) -> None:
        with contextlib.suppress(OSError):
            where = os.readlink(f"/proc/self/fd/{fd}")
            if not answers and os.path.dirname(where) == str(directory) and os.path.basename(where) not in keep:
                answers.append(attacker.ask("swap-new", directory, link, *keep))
        real_fsync(fd)

    os.fsync = fsync
    try:
        yield answers
    finally:
        os.fsync = real_fsync


def _textfile(directory: Path) -> None:
    metrics.write_textfile(directory, "# HELP mdtui_up 1\nmdtui_up 1\n")


def _export(directory: Path) -> None:
    write_text(directory / "results.md", "| run | MB/s |\n", replace=True)


def _rule_file(directory: Path) -> None:
    array = MdArray("md0", "active", "raid6", uuid=UUID)
    write_plan(plan_apply(array, knob_named("stripe_cache_size"), "4096", directory / "90-mdtui-tune.rules"))


def _mdadm_conf(directory: Path) -> None:
    root = directory.parent.parent  # <root>/etc/mdadm
    edit = ConfEdit("/etc/mdadm/mdadm.conf", "", "MAILADDR root\n", "MAILADDR root", None, by="alerts")
    write_planned_conf(SystemRoot(root), edit, "alerts", "test", ActionLog(root / "actions.log"))


@pytest.mark.parametrize(
    ("writer", "where", "target"),
    [
        (_textfile, "textfile", "mdtui.prom"),  # case 2: metrics --textfile, a collector dir of its user's
        (_export, "exports", "results.md"),  # case 3: an export (-o, the app's dialog)
        (_rule_file, "rules.d", "90-mdtui-tune.rules"),  # case 3: tune --apply's udev rule file
        (_mdadm_conf, "root/etc/mdadm", "mdadm.conf"),  # case 3: persist and alerts
    ],
)
def test_a_user_who_can_write_the_directory_cannot_turn_roots_chmod_or_write_onto_another_file(
    place: Path, writer: Callable[[Path], None], where: str, target: str
) -> None:
    secret = _secret(place)
    directory = place / where
    directory.mkdir(parents=True)
    give_to_nobody(directory, 0o755)  # node_exporter's collector dir is its user's; others are 0777
    link = directory / "planted"
    with Attacker() as attacker:
        assert attacker.ask("symlink", secret, link) == "ok"
        # A write refused is fine; what matters is the secret.
        with _attacked_at_fsync(attacker, directory, link, (target,)) as answers, contextlib.suppress(Exception):
            writer(directory)
    assert answers and answers[0].startswith("swapped"), f"the attacker never got to act: {answers}"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600, "root's chmod went through the swapped-in link"
    assert secret.read_text() == SECRET and secret.stat().st_uid == 0


# --- case 1: capturing a tree someone sent ------------------------------------------------------------


def _hostile_tree(place: Path, secret: Path, victim: Path) -> Path:
    """real-links with three links that, on 3b6999e, make a capture write a file of the tree's choosing in
    ``victim`` (a cron directory in the report), and a serial that is /etc/shadow."""
    tree = place / "tree"
    shutil.copytree(TREE, tree, symlinks=True)
    by_id = tree / "dev/disk/by-id"
    shutil.rmtree(by_id)
    by_id.symlink_to("../..")  # the by-id entries the capture recreates are now the tree's top entries
    (tree / "evil").symlink_to(victim)  # ... and one of them points at the victim, absolutely
    (tree / ".evil").mkdir()
    (tree / ".evil/sata_spd").write_text("* * * * * root touch /tmp/mdtui-pwned\n")  # a cron line
    (tree / "sys/class/ata_link").mkdir(parents=True)
    (tree / "sys/class/ata_link/link9").symlink_to("../../../.evil")  # a file read at ".evil/..." lands at "evil/..."
    serial = (tree / "sys/block/sda/device").resolve() / "serial"
    serial.unlink(missing_ok=True)
    serial.symlink_to(secret)  # the read side: a drive's serial that is the shadow file
    for directory, dirs, files in os.walk(tree):
        for name in dirs + files:
            os.lchown(os.path.join(directory, name), NOBODY, NOBODY)  # the tree is the sender's, not root's
    return tree


def test_a_captured_tree_writes_nothing_outside_the_capture_and_copies_no_file_of_this_machine(
    place: Path,
) -> None:
    secret = _secret(place)
    victim = place / "cron.d"
    victim.mkdir()
    tree = _hostile_tree(place, secret, victim)
    out = place / "out"
    done = _mdtui("--root", str(tree), "capture", str(out))
    assert list(victim.iterdir()) == [], f"the capture wrote into {victim}: {os.listdir(victim)}\n{done.stderr}"
    copied = [p for p in out.rglob("*") if p.is_file() and not p.is_symlink()] if out.exists() else []
    assert not [p for p in copied if SECRET.strip() in p.read_text(errors="replace")], "shadow was copied"
    escaping = [p for p in out.rglob("*") if p.is_symlink() and os.readlink(p).startswith("/")] if out.exists() else []
    assert escaping == [], f"links out of the capture were recreated: {escaping}"
    assert done.returncode == 0, done.stderr
    refusals = done.stderr.strip().splitlines()
    assert refusals and all(line.startswith("mdtui: ") and "leads out of" in line for line in refusals), refusals


def test_a_tree_s_serial_that_links_out_is_not_read_when_scanned(place: Path) -> None:
    secret = _secret(place)
    tree = place / "tree"
    shutil.copytree(TREE, tree, symlinks=True)
    serial = (tree / "sys/block/nvme0n1/device").resolve() / "serial"
    serial.unlink()
    serial.symlink_to(secret)
    done = _mdtui("--root", str(tree), "scan", "--json")
    assert done.returncode == 0, done.stderr
    assert "only-root-may-read-this" not in done.stdout


# --- case 4: capture into a name another user planted ----------------------------------------------------


def test_capture_into_a_link_another_user_planted_replaces_nothing(place: Path) -> None:
    sticky = place / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)  # as /tmp
    victim = place / "crontabs"  # an empty directory of root's (/var/spool/cron/crontabs)
    victim.mkdir(mode=0o700)
    before = victim.stat().st_ino
    with Attacker() as attacker:
        assert attacker.ask("symlink", victim, sticky / "report") == "ok"
    done = _mdtui("--root", str(TREE), "capture", str(sticky / "report"))
    assert victim.is_dir() and victim.stat().st_ino == before and list(victim.iterdir()) == []
    assert (sticky / "report").is_symlink()
    assert done.returncode != 0 and "symbolic link" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


# --- case 13: a captured tree's udev rule file -----------------------------------------------------------


def _tree_with_rules(place: Path) -> tuple[Path, Path]:
    tree = place / "tree"
    shutil.copytree(TREE, tree, symlinks=True)
    rules = tree / "etc/udev/rules.d/90-mdtui-tune.rules"
    rules.parent.mkdir(parents=True)
    return tree, rules


def test_a_tree_s_rule_file_that_is_a_fifo_does_not_hang_tune(place: Path) -> None:
    tree, rules = _tree_with_rules(place)
    os.mkfifo(rules)
    try:
        done = _mdtui("--root", str(tree), "tune", "md0", "--apply", "stripe_cache_size=4096")
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"tune hung for {HANG_S:g} s opening the tree's FIFO") from exc
    assert done.returncode != 0 and "FIFO" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_tree_s_rule_file_that_links_out_is_never_printed(place: Path) -> None:
    secret = _secret(place)
    tree, rules = _tree_with_rules(place)
    rules.symlink_to(secret)
    done = _mdtui("--root", str(tree), "tune", "md0", "--apply", "stripe_cache_size=4096")
    assert "only-root-may-read-this" not in done.stdout + done.stderr
    assert done.returncode != 0 and "leads out of" in done.stderr
