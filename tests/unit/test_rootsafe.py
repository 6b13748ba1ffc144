"""mdtui.rootsafe and mdtui.rootwrite, the one way root finds and writes a file: which links it follows, what it
replaces, where a captured tree's reads may lead (the kernel's openat2 and the walk by hand, the same answers),
scratch space."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from unprivileged import give_to_nobody

from mdtui.errors import MdtuiError
from mdtui.rootsafe import UnsafePathError, locate, open_beneath
from mdtui.rootwrite import OutputExistsError, scratch_base, scratch_directory, write_file

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="another user's links and directories need chown")


def _tree(tmp_path: Path) -> Path:
    top = tmp_path / "tree"
    (top / "sys/devices/pci/block/sda").mkdir(parents=True)
    (top / "sys/devices/pci/block/sda/size").write_text("2048\n")
    (top / "sys/block").mkdir()
    (top / "sys/block/sda").symlink_to("../devices/pci/block/sda")
    (tmp_path / "outside").write_text("not the tree's\n")
    return top


@pytest.mark.parametrize("kernel", [True, False], ids=["openat2", "walk"])
def test_a_tree_is_read_beneath_itself_only(tmp_path: Path, kernel: bool) -> None:
    top = _tree(tmp_path)
    fd = open_beneath(top, "/sys/block/sda/size", os.O_RDONLY, kernel=kernel)
    try:
        assert os.read(fd, 100) == b"2048\n"
    finally:
        os.close(fd)
    (top / "sys/block/abs").symlink_to(tmp_path / "outside")
    (top / "sys/block/up").symlink_to("../../../outside")
    (top / "sys/block/inside").symlink_to("../devices/../devices/pci")  # ".." that stays inside is fine
    for name in ("abs", "up"):
        with pytest.raises(UnsafePathError, match="leads out of"):
            open_beneath(top, f"/sys/block/{name}", os.O_RDONLY, kernel=kernel)
    with pytest.raises(UnsafePathError, match="leads out of"):
        open_beneath(top, "/../outside", os.O_RDONLY, kernel=kernel)
    os.close(open_beneath(top, "/sys/block/inside/block", os.O_RDONLY | os.O_DIRECTORY, kernel=kernel))
    with pytest.raises(FileNotFoundError):
        open_beneath(top, "/sys/block/missing", os.O_RDONLY, kernel=kernel)


@needs_root
def test_a_link_another_user_can_change_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    theirs = tmp_path / "theirs"
    theirs.symlink_to(target)
    give_to_nobody(theirs)
    with pytest.raises(UnsafePathError, match="link of uid 65534"):
        write_file(theirs / "x", b"", replace=False)
    shared = tmp_path / "shared"
    shared.mkdir()
    give_to_nobody(shared, 0o777)
    (shared / "roots").symlink_to(target)  # root's own link, but anyone may rename it and put theirs there
    with pytest.raises(UnsafePathError, match="in a directory of uid 65534"):
        write_file(shared / "roots" / "x", b"", replace=False)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)  # /tmp: others may add names, not replace root's
    (sticky / "roots").symlink_to(target)
    write_file(sticky / "roots" / "x", b"ok", replace=False)
    assert (target / "x").read_bytes() == b"ok"


def test_what_is_at_the_target_decides_what_is_written(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_file(target, b"one", replace=False)
    with pytest.raises(OutputExistsError):
        write_file(target, b"two", replace=False)
    target.chmod(0o640)
    write_file(target, b"two", replace=True)
    assert target.read_bytes() == b"two" and stat.S_IMODE(target.stat().st_mode) == 0o640  # the mode kept
    other = tmp_path / "other.txt"
    other.write_text("kept")
    link = tmp_path / "link.txt"
    link.symlink_to(other)
    write_file(link, b"new", replace=True)  # the link is replaced, never written through
    assert not link.is_symlink() and other.read_text() == "kept"
    dangling = tmp_path / "dangling.conf"
    dangling.symlink_to(tmp_path / "nowhere.conf")
    with pytest.raises(MdtuiError, match="does not exist"):
        write_file(dangling, b"x", replace=True, follow_last=True)
    followed = tmp_path / "followed.conf"
    followed.symlink_to(other)
    write_file(followed, b"through", replace=True, follow_last=True)  # mdadm.conf through its link
    assert followed.is_symlink() and other.read_text() == "through"
    (tmp_path / "dir").mkdir()
    with pytest.raises(MdtuiError, match="is a directory"):
        write_file(tmp_path / "dir", b"x", replace=True)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(MdtuiError, match="not a regular file"):
        write_file(tmp_path / "fifo", b"x", replace=True)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_missing_directories_are_made_only_when_asked(tmp_path: Path) -> None:
    with pytest.raises(MdtuiError, match="does not exist"):
        write_file(tmp_path / "a/b/c.conf", b"x", replace=True)
    write_file(tmp_path / "a/b/c.conf", b"x", replace=True, make_mode=0o750)
    assert stat.S_IMODE((tmp_path / "a/b").stat().st_mode) == 0o750 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@needs_root
def test_scratch_space_is_never_a_tmpdir_another_user_can_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    give_to_nobody(theirs, 0o755)
    monkeypatch.setenv("TMPDIR", str(theirs))
    assert scratch_base() != str(theirs)
    with scratch_directory("mdtui-test-") as made:
        assert made.parent != theirs and stat.S_IMODE(made.stat().st_mode) == 0o700
    assert not made.exists()
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # root's own: used
    assert scratch_base() == str(tmp_path)


def test_a_walk_reports_where_it_ended(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    with locate(tmp_path / "alias" / "file") as where:
        assert where.name == "file" and where.info is None and where.path == tmp_path / "real" / "file"
    with locate(tmp_path / "alias", follow_last=False) as where:
        assert where.name == "alias" and where.info is not None and stat.S_ISLNK(where.info.st_mode)
