"""persist and mdadm.conf as an admin's system has them: a conf that is a link, and '#' inside words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mdtui.actionlog import ActionLog
from mdtui.errors import MdtuiError
from mdtui.keep import persist
from mdtui.keep.conf import Distribution, add_array_line, parse_conf, read_conf, strip_comment
from mdtui.probe.root import SystemRoot

BRIEF = "ARRAY /dev/md0 metadata=1.2 UUID=d4d41c85:895e5776:71782047:35012576"
OLD = "# mdadm.conf\nMAILADDR root\n"


def _plan(root: SystemRoot) -> persist.PersistPlan:
    conf = read_conf(root, "/etc/mdadm/mdadm.conf")
    distribution = Distribution("debian", "/etc/mdadm/mdadm.conf", ("update-initramfs", "-u"), "update-initramfs")
    return persist.PersistPlan("/dev/md0", BRIEF, distribution, add_array_line(conf, BRIEF))


def _write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: SystemRoot) -> None:
    monkeypatch.setattr(persist, "detail_brief", lambda device: BRIEF)
    plan = _plan(root)
    persist.write_conf(plan, confirmed="md0", root=root, log=ActionLog(tmp_path / "state" / "actions.log"))


def test_a_linked_mdadm_conf_is_written_through_to_its_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Configuration kept in one place (etckeeper-style, or a shared /srv/config) and linked into /etc.
    target = tmp_path / "root/srv/config/mdadm.conf"
    target.parent.mkdir(parents=True)
    target.write_text(OLD)
    link = tmp_path / "root/etc/mdadm/mdadm.conf"
    link.parent.mkdir(parents=True)
    link.symlink_to("../../srv/config/mdadm.conf")
    _write(tmp_path, monkeypatch, SystemRoot(tmp_path / "root"))
    assert link.is_symlink(), "the link was replaced by a plain file"
    assert target.read_text() == OLD + "# added by mdtui persist\n" + BRIEF + "\n"


def test_a_link_to_something_else_than_a_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link = tmp_path / "root/etc/mdadm/mdadm.conf"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(MdtuiError, match=r"is a link to .*nowhere"):
        _write(tmp_path, monkeypatch, SystemRoot(tmp_path / "root"))
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()
    os.mkfifo(tmp_path / "nowhere")
    with pytest.raises(MdtuiError, match="not a regular file"):
        _write(tmp_path, monkeypatch, SystemRoot(tmp_path / "root"))
    assert link.is_symlink()


def test_a_hash_inside_a_word_is_not_a_comment() -> None:
    # mdadm's conf_word starts a comment only where a word would start.
    text = (
        "ARRAY /dev/md/data#1 metadata=1.2 name=host#1 UUID=d4d41c85:895e5776:71782047:35012576 # mine\n"
        "MAILADDR ops#raid@example.org\n"
        "  #a continuation that is only a comment\n"
        "ARRAY /dev/md1 name='a #quoted' UUID=00000000:00000000:00000000:00000001\n"
    )
    conf = parse_conf("/etc/mdadm/mdadm.conf", text)
    first, second = conf.arrays
    assert (first.device, first.name, first.uuid) == (
        "/dev/md/data#1",
        "host#1",
        "d4d41c85895e5776717820473501257" + "6",
    )
    assert second.name == "a #quoted"
    assert conf.mailaddr == "ops#raid@example.org"
    assert strip_comment("DEVICE partitions #all of them") == "DEVICE partitions "
    assert strip_comment("#ARRAY /dev/md9") == ""


REAL_LINKS = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


def test_persist_dry_run_plans_from_a_captured_tree(capsys: pytest.CaptureFixture[str]) -> None:
    """It was refused even with --dry-run (it asked the live mdadm); the tree's udev record has the line."""
    from mdtui.cli.main import main

    assert main(["--root", str(REAL_LINKS), "persist", "md0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "ARRAY line: ARRAY /dev/md0 metadata=1.2 name=mdtui-lab:0 UUID=d4d41c85:895e5776:71782047:35012576" in out
    assert "+ARRAY /dev/md0 metadata=1.2" in out
    assert main(["--root", str(REAL_LINKS), "persist", "md0"]) == 2  # without --dry-run: read-only
    assert "read-only" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("record", "expect"),
    [
        ("E:MD_METADATA=1.2\nE:MD_NAME=evil host\nE:MD_UUID=d4d41c85:895e5776:71782047:35012576\n", "no name"),
        ("E:MD_METADATA=1.2\nE:MD_NAME=h:0\nE:MD_UUID=d4d41c85:895e5776:71782047:35012576 DEVICES=/dev/sda\n", None),
        ("E:MD_METADATA=1.2\nE:MD_UUID=d4d41c85:895e5776:71782047:35012576\nE:MD_NAME=x\\nARRAY /dev/md9\n", "no name"),
        ("E:MD_METADATA=1.2 auto=yes\nE:MD_UUID=d4d41c85:895e5776:71782047:35012576\n", None),
        ("E:MD_NAME=h:0\n", None),
    ],
)
def test_a_tree_s_udev_record_cannot_put_words_of_its_own_in_the_array_line(
    tmp_path: Path, record: str, expect: str | None
) -> None:
    """The attack: a captured tree's record is a file anyone could have edited; only what looks like mdadm's
    metadata, name and UUID goes into a planned ARRAY line (no extra words, no second line)."""
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(REAL_LINKS, tree, symlinks=True)
    (tree / "run/udev/data/b9:0").write_text(record)
    system = SystemRoot(tree)
    array = persist.find_array(system, "/dev/md0")
    assert array is not None
    if expect is None:
        with pytest.raises(MdtuiError, match="no usable udev record"):
            persist.tree_brief(system, array)
        return
    line = persist.tree_brief(system, array)
    assert line == "ARRAY /dev/md0 metadata=1.2 UUID=d4d41c85:895e5776:71782047:35012576", line
