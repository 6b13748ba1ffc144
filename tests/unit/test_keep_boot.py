"""Persistence and boot checks: mdadm.conf parsing and editing, reading mdadm.conf out of a real initramfs
image (made here with real gzip/zstd, and the host's own when it has one, checked against lsinitramfs), and
the boot findings on small trees."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.keep import rule_boot, rule_monitoring
from mdtui.keep.boot import read_boot_state
from mdtui.keep.conf import add_array_line, detect_distribution, parse_conf
from mdtui.keep.initramfs import InitramfsError, read_initramfs
from mdtui.model.array import ArrayMember, MdArray, normalize_uuid
from mdtui.probe.root import SystemRoot

UUID = "3f1a2b4c:5d6e7f80:91a2b3c4:d5e6f708"
OTHER = "aaaaaaaa:bbbbbbbb:cccccccc:dddddddd"
BRIEF = f"ARRAY /dev/md0 metadata=1.2 name=lab:0 UUID={UUID}"
DEBIAN_CONF = "HOMEHOST <system>\nMAILADDR root\n"
RELEASE = "6.1.0-test"


def newc(files: dict[str, bytes]) -> bytes:
    """A newc cpio archive as the kernel and cpio -H newc write it."""
    out = bytearray()
    entries = [(name, data, 0o100644) for name, data in files.items()] + [("TRAILER!!!", b"", 0)]
    for ino, (name, data, mode) in enumerate(entries, start=1):
        raw = name.encode() + b"\x00"
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(raw), 0]
        header = b"070701" + b"".join(f"{f:08x}".encode() for f in fields)
        out += header + raw
        out += b"\x00" * ((4 - len(out) % 4) % 4)
        out += data
        out += b"\x00" * ((4 - len(out) % 4) % 4)
    return bytes(out)


def image(conf: str | None, compress: str = "gzip") -> bytes:
    """An initramfs as Debian's mkinitramfs builds it: an uncompressed early archive, zero padding, then the
    compressed main archive."""
    early = newc({"kernel/x86/microcode/GenuineIntel.bin": b"\x01" * 100})
    early += b"\x00" * ((512 - len(early) % 512) % 512)
    files = {"init": b"#!/bin/sh\n", "usr/sbin/mdadm": b"\x7fELF"}
    if conf is not None:
        files["etc/mdadm/mdadm.conf"] = conf.encode()
    main = newc(files)
    if compress == "gzip":
        packed = gzip.compress(main)
    else:
        packed = subprocess.run([compress, "-c", "-q"], input=main, capture_output=True, check=True).stdout
    return early + packed


def tree(tmp_path: Path, *, conf: str | None = DEBIAN_CONF, initramfs_conf: str | None = DEBIAN_CONF,
         os_id: str = "debian", mounts: str = "") -> SystemRoot:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text(f'ID={os_id}\nPRETTY_NAME="test"\n')
    conf_dir = tmp_path / ("etc/mdadm" if os_id == "debian" else "etc")
    conf_dir.mkdir(exist_ok=True)
    if conf is not None:
        (conf_dir / "mdadm.conf").write_text(conf)
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/osrelease").write_text(RELEASE + "\n")
    (tmp_path / "proc/self").mkdir()
    (tmp_path / "proc/self/mountinfo").write_text(mounts)
    (tmp_path / "boot").mkdir()
    (tmp_path / "boot" / f"initrd.img-{RELEASE}").write_bytes(image(initramfs_conf))
    (tmp_path / "sys/block/md0").mkdir(parents=True)
    (tmp_path / "sys/block/md0/dev").write_text("9:0\n")
    return SystemRoot(tmp_path)


def md0(name: str = "md0", uuid: str | None = UUID, metadata: str = "1.2") -> MdArray:
    return MdArray(name=name, state="clean", level="raid1", members=(ArrayMember("sdb", 0, ("in_sync",)),),
                   metadata=metadata, uuid=uuid)


def ids(findings) -> list[str]:
    return sorted(f.id for f in findings)


# --- mdadm.conf ---------------------------------------------------------------------------------------------


def test_uuid_forms_normalize_alike():
    dashed = "3f1a2b4c-5d6e-7f80-91a2-b3c4d5e6f708"
    assert normalize_uuid(UUID) == normalize_uuid(dashed) == "3f1a2b4c5d6e7f8091a2b3c4d5e6f708"
    assert normalize_uuid("not-a-uuid") is None


def test_parse_conf_reads_arrays_mail_program_and_continuations():
    text = (
        "MAILADDR admin@example.org\nPROGRAM /usr/local/bin/alert\n"
        f"ARRAY /dev/md0 metadata=1.2\n   name=lab:0 UUID={UUID}  # comment\nARRAY <ignore> UUID={OTHER}\n"
    )
    conf = parse_conf("/etc/mdadm/mdadm.conf", text)
    assert conf.mailaddr == "admin@example.org" and conf.program == "/usr/local/bin/alert"
    assert [(a.line_no, a.device, a.name) for a in conf.arrays] == [(3, "/dev/md0", "lab:0"), (5, "<ignore>", None)]
    assert conf.line_for("3f1a2b4c-5d6e-7f80-91a2-b3c4d5e6f708") is conf.arrays[0]


def test_add_array_line_appends_once_and_replaces_a_stale_line_in_place():
    edit = add_array_line(parse_conf("/c", DEBIAN_CONF), BRIEF)
    assert edit.changed and edit.new_text == DEBIAN_CONF + "# added by mdtui persist\n" + BRIEF + "\n"
    assert "+" + BRIEF in edit.diff()
    again = add_array_line(parse_conf("/c", edit.new_text), BRIEF)
    assert not again.changed, "the same line twice"
    stale = DEBIAN_CONF + f"ARRAY /dev/md9 metadata=1.2\n  UUID={UUID}\nMAILADDR x\n"
    edit = add_array_line(parse_conf("/c", stale), BRIEF)
    assert edit.new_text == DEBIAN_CONF + BRIEF + "\nMAILADDR x\n"
    assert edit.replaced is not None and "/dev/md9" in edit.replaced
    with pytest.raises(ValueError):
        add_array_line(parse_conf("/c", ""), "ARRAY /dev/md0 metadata=1.2")


def test_distribution_from_os_release(tmp_path: Path):
    root = tree(tmp_path, os_id="fedora")
    found = detect_distribution(root)
    assert (found.conf_path, found.initramfs_argv) == ("/etc/mdadm.conf", ("dracut", "-f"))
    (tmp_path / "etc/os-release").write_text('ID=ubuntu\nID_LIKE=debian\n')
    found = detect_distribution(root)
    assert (found.conf_path, found.initramfs_argv) == ("/etc/mdadm/mdadm.conf", ("update-initramfs", "-u"))


# --- initramfs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("compress", ["gzip", "zstd", "xz"])
def test_initramfs_conf_read_through_the_real_decompressor(tmp_path: Path, compress: str):
    if shutil.which(compress) is None:
        pytest.skip(f"{compress} is not installed")
    path = tmp_path / "initrd.img"
    path.write_bytes(image(DEBIAN_CONF + BRIEF + "\n", compress))
    contents = read_initramfs(str(path))
    assert contents.compression == compress
    assert contents.files["etc/mdadm/mdadm.conf"].decode().endswith(BRIEF + "\n")
    assert "kernel/x86/microcode/GenuineIntel.bin" in contents.names and "usr/sbin/mdadm" in contents.names


def test_damaged_initramfs_is_an_error_not_a_crash(tmp_path: Path):
    path = tmp_path / "initrd.img"
    path.write_bytes(b"070701" + b"zz" * 60)
    with pytest.raises(InitramfsError):
        read_initramfs(str(path))
    path.write_bytes(b"\x99\x98garbage")
    with pytest.raises(InitramfsError, match="unknown compression"):
        read_initramfs(str(path))
    path.write_bytes(image(DEBIAN_CONF)[:-40])  # cut inside the compressed part
    with pytest.raises(InitramfsError):
        read_initramfs(str(path))


def test_host_initramfs_lists_what_lsinitramfs_lists():
    """The host's own image (Debian: early microcode archive + zstd main archive) against its own tool."""
    # The images of installed kernels only: not an update-initramfs leftover such as initrd.img-VERSION.new or
    # a dpkg backup, which lsinitramfs may read differently or not at all.
    kernels = {path.name.removeprefix("vmlinuz-") for path in Path("/boot").glob("vmlinuz-*")}
    images = sorted(p for p in Path("/boot").glob("initrd.img-*") if p.name.removeprefix("initrd.img-") in kernels)
    if not images or shutil.which("lsinitramfs") is None:
        pytest.skip("no Debian initramfs or lsinitramfs on this host")
    listed = subprocess.run(["lsinitramfs", str(images[-1])], capture_output=True, text=True, check=True).stdout
    contents = read_initramfs(str(images[-1]))
    assert sorted(contents.names) == sorted(listed.splitlines())


# --- boot findings ---------------------------------------------------------------------------------------------


def test_unlisted_array_is_a_finding_naming_persist(tmp_path: Path):
    root = tree(tmp_path)
    state = read_boot_state(root, arrays=[md0()])
    findings = rule_boot(AdviceInput(boot=state))
    assert ids(findings) == ["boot-unlisted:md0"]
    assert "mdtui persist md0" in findings[0].what_to_do and "update-initramfs -u" in findings[0].what_to_do


def test_listed_but_not_in_initramfs_then_fixed(tmp_path: Path):
    root = tree(tmp_path, conf=DEBIAN_CONF + BRIEF + "\n", initramfs_conf=DEBIAN_CONF)
    state = read_boot_state(root, arrays=[md0()])
    assert state.initramfs == f"/boot/initrd.img-{RELEASE}" and state.initramfs_problem is None
    assert ids(rule_boot(AdviceInput(boot=state))) == ["boot-initramfs:md0"]
    (tmp_path / "boot" / f"initrd.img-{RELEASE}").write_bytes(image(DEBIAN_CONF + BRIEF + "\n"))
    assert rule_boot(AdviceInput(boot=read_boot_state(root, arrays=[md0()]))) == []


def test_stale_line_and_md127_and_initramfs_without_conf(tmp_path: Path):
    conf = DEBIAN_CONF + BRIEF + "\n" + f"ARRAY /dev/md5 metadata=1.2 UUID={OTHER}\n"
    root = tree(tmp_path, conf=conf, initramfs_conf=None)
    state = read_boot_state(root, arrays=[md0(name="md127")])
    assert [line.line_no for line in state.stale] == [4]
    found = ids(rule_boot(AdviceInput(boot=state)))
    assert found == ["boot-initramfs:md127", "boot-name:md127", "boot-stale:aaaaaaaa"], found


def test_boot_metadata_on_esp_and_boot(tmp_path: Path):
    mounts = "30 1 9:0 / /boot/efi rw - vfat /dev/md0 rw\n"
    root = tree(tmp_path, conf=DEBIAN_CONF + BRIEF + "\n", initramfs_conf=DEBIAN_CONF + BRIEF + "\n", mounts=mounts)
    findings = rule_boot(AdviceInput(boot=read_boot_state(root, arrays=[md0()])))
    assert [(f.id, f.severity.value) for f in findings] == [("boot-metadata:md0", "critical")]
    assert rule_boot(AdviceInput(boot=read_boot_state(root, arrays=[md0(metadata="1.0")]))) == []
    (tmp_path / "proc/self/mountinfo").write_text("30 1 9:0 / /boot rw - ext4 /dev/md0 rw\n")
    assert rule_boot(AdviceInput(boot=read_boot_state(root, arrays=[md0()]))) != []  # no grub.cfg: unknown loader
    (tmp_path / "boot/grub").mkdir()
    (tmp_path / "boot/grub/grub.cfg").write_text("")
    assert rule_boot(AdviceInput(boot=read_boot_state(root, arrays=[md0()]))) == []  # GRUB 2 reads 1.2


def test_monitoring_finding(tmp_path: Path):
    root = tree(tmp_path, conf="HOMEHOST <system>\n")
    state = read_boot_state(root, arrays=[md0()])
    findings = rule_monitoring(AdviceInput(boot=state))
    assert [f.id for f in findings] == ["monitor"]
    assert "no `mdadm --monitor`" in findings[0].title and "neither MAILADDR nor PROGRAM" in findings[0].title
    (tmp_path / "proc/4242").mkdir()
    (tmp_path / "proc/4242/cmdline").write_bytes(b"/sbin/mdadm\x00--monitor\x00--scan\x00")
    (tmp_path / "proc/4242/status").write_text("Name:\tmdadm\nUid:\t0\t0\t0\t0\n")  # root's own monitor
    (tmp_path / "proc/4242/exe").symlink_to("/usr/sbin/mdadm")
    (tmp_path / "etc/mdadm/mdadm.conf").write_text("PROGRAM /usr/local/bin/alert\n")
    state = read_boot_state(root, arrays=[md0()])
    assert state.monitoring.monitor_pids == (4242,)
    assert rule_monitoring(AdviceInput(boot=state)) == []
    assert rule_monitoring(AdviceInput(boot=read_boot_state(root, arrays=[]))) == []  # no arrays: nothing to hear


def test_keep_lines_for_the_inventory_detail(tmp_path: Path):
    from mdtui.keep.summary import keep_lines

    root = tree(tmp_path)
    (tmp_path / "sys/block/md0/md").mkdir()
    (tmp_path / "sys/block/md0/md/last_sync_action").write_text("check\n")
    (tmp_path / "sys/block/md0/md/mismatch_cnt").write_text("256\n")
    lines = {line.label: line for line in keep_lines(root, md0())}
    assert lines["Boot"].problem and "mdtui persist md0" in lines["Boot"].text
    assert lines["Monitor"].problem and "no mdadm --monitor" in lines["Monitor"].text
    assert lines["Last check"].problem and "mismatch_cnt 256" in lines["Last check"].text
    (tmp_path / "etc/mdadm/mdadm.conf").write_text(DEBIAN_CONF + BRIEF + "\n")
    lines = {line.label: line for line in keep_lines(root, md0())}
    assert not lines["Boot"].problem and lines["Boot"].text == "in /etc/mdadm/mdadm.conf (line 3)"
