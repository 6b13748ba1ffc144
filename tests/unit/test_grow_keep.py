"""What `mdtui grow` reads and keeps: a filesystem's own size from its superblock (real mkfs.ext4 images; xfs
and LVM labels written from their documented layouts, since neither tool is on the development machines), the
place a backup file would go (the attacks: a link, a world-writable directory, a tmpfs), the reshape journal (a
damaged or hostile entry is skipped), mdadm --examine's room, and a command that leaves a child running."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.execute.state import ReshapeEntry, ReshapeJournal
from mdtui.keep.grow_facts import backup_place, default_backup_path, parse_examine
from mdtui.probe.contents import ext_size, kind_of, lvm_pv_size, xfs_size
from mdtui.probe.mounts import parse_mountinfo, parse_proc_mounts
from mdtui.probe.root import SystemRoot

MIB = 1 << 20
TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "lab-standard"


def mkfs_ext4(tmp_path: Path, size_mib: int, *options: str) -> bytes:
    if shutil.which("mkfs.ext4") is None:
        pytest.fail("mkfs.ext4 is missing (e2fsprogs)")
    image = tmp_path / "fs.img"
    with image.open("wb") as fh:
        fh.truncate(size_mib * MIB)
    subprocess.run(["mkfs.ext4", "-q", "-F", *options, str(image)], check=True)
    return image.read_bytes()[:4096]


def test_ext4_size_from_a_real_superblock(tmp_path: Path) -> None:
    head = mkfs_ext4(tmp_path, 24)
    assert ext_size(head) == 24 * MIB
    assert kind_of(head) == "ext4"


def test_ext4_64bit_and_block_size(tmp_path: Path) -> None:
    head = mkfs_ext4(tmp_path, 40, "-O", "64bit", "-b", "4096")
    assert ext_size(head) == 40 * MIB


def test_a_damaged_superblock_gives_no_size(tmp_path: Path) -> None:
    head = bytearray(mkfs_ext4(tmp_path, 24))
    struct.pack_into("<I", head, 1024 + 0x18, 40)  # a block size of 1 KiB << 40
    assert ext_size(bytes(head)) is None
    assert ext_size(b"\0" * 4096) is None and ext_size(b"") is None


def xfs_head(blocks: int, block_size: int) -> bytes:
    # xfs(5) on-disk superblock: "XFSB", sb_blocksize (be32), sb_dblocks (be64) at the start of the device.
    return b"XFSB" + struct.pack(">IQ", block_size, blocks) + b"\0" * 4080


def test_xfs_size_from_its_superblock_layout() -> None:
    assert xfs_size(xfs_head(25600, 4096)) == 100 * MIB
    assert kind_of(xfs_head(25600, 4096)) == "xfs"
    assert xfs_size(xfs_head(25600, 3000)) is None  # not a power of two


def lvm_head(device_size: int, sector: int = 1) -> bytes:
    # LVM2's label (lib/label/label.h): "LABELONE", sector, crc, offset of the pv_header, "LVM2 001"; then the
    # pv_header: a 32-byte UUID and the device size in bytes (le64).
    label = b"LABELONE" + struct.pack("<QII", sector, 0, 32) + b"LVM2 001"
    header = b"U" * 32 + struct.pack("<Q", device_size)
    head = bytearray(4096)
    head[sector * 512 : sector * 512 + len(label) + len(header)] = label + header
    return bytes(head)


def test_lvm_pv_size_from_its_label() -> None:
    assert lvm_pv_size(lvm_head(117 * MIB)) == 117 * MIB
    assert lvm_pv_size(lvm_head(117 * MIB, sector=3)) == 117 * MIB
    assert kind_of(lvm_head(117 * MIB)) == "LVM2_member"
    damaged = bytearray(lvm_head(117 * MIB))
    struct.pack_into("<I", damaged, 512 + 20, 4000)  # the header beyond what was read
    assert lvm_pv_size(bytes(damaged)) is None


def test_parse_examine() -> None:
    text = """/dev/nvme0n1:
          Magic : a92b4efc
    Data Offset : 2048 sectors
   Super Offset : 8 sectors
   Unused Space : before=1968 sectors, after=0 sectors
"""
    assert parse_examine(text) == (2048, 1968, 0)
    assert parse_examine("Version : 0.90.00\n") == (None, None, None)


@pytest.mark.parametrize(
    "uuid",
    [
        "d4d41c85:895e5776:71782047:35012576",  # mdadm --detail (MD_UUID=, UUID :)
        "d4d41c85-895e-5776-7178-204735012576",  # md/uuid in sysfs
        "D4D41C85:895E5776:71782047:35012576",
    ],
)
def test_files_named_after_a_uuid_take_its_digits_from_normalize_uuid(uuid: str) -> None:
    """The reshape journal's file and the default backup file take the UUID's digits from one place
    (model.array.normalize_uuid), with the names they had from their own regexes."""
    assert ReshapeJournal._file(uuid) == re.sub(r"[^0-9a-f]", "", uuid.lower()) + ".json"
    assert ReshapeJournal._file(uuid) == "d4d41c85895e57767178204735012576.json"
    assert default_backup_path("md0", uuid).endswith("/md0-d4d41c85.backup")
    assert default_backup_path("md0", None).endswith("/md0-nouuid.backup")
    with pytest.raises(MdtuiError, match="not an md UUID"):
        ReshapeJournal._file("")


def test_backup_place_on_a_real_directory(tmp_path: Path) -> None:
    place_dir = tmp_path / "keep"
    place_dir.mkdir(mode=0o700)
    place = backup_place(SystemRoot("/"), str(place_dir / "md0.backup"), chosen=True)
    assert place.directory_exists and not place.exists
    assert place.directory_owner_uid == os.geteuid() and place.directory_mode is not None
    assert not place.directory_mode & 0o022
    assert place.free_bytes is not None and place.free_bytes > 0
    assert place.fs_type is not None


def test_the_attacks_on_the_backup_file(tmp_path: Path) -> None:
    # A file or link planted at the path: mdadm would open it (O_EXCL refuses, but it is refused first).
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "md0.backup").symlink_to("/etc/passwd")
    place = backup_place(SystemRoot("/"), str(shared / "md0.backup"), chosen=True)
    assert place.exists
    assert place.directory_mode is not None and place.directory_mode & 0o022
    # A directory that is a link: resolved once, and the resolved path is what mdadm gets.
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "via").symlink_to(real)
    place = backup_place(SystemRoot("/"), str(tmp_path / "via" / "md0.backup"), chosen=True)
    assert place.path == str(real / "md0.backup")


def test_a_read_only_mount_whose_point_has_a_space_is_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mountinfo escapes a space as \\040; the mount's options come from the one parse (probe.mounts), which
    unescapes the mount point, so a read-only mount at "a b" is read-only."""
    place_dir = tmp_path / "a b"
    place_dir.mkdir(mode=0o700)
    info = place_dir.stat()
    escaped = str(place_dir).replace(" ", "\\040")
    device = f"{os.major(info.st_dev)}:{os.minor(info.st_dev)}"
    mountinfo = f"36 25 {device} / {escaped} ro,relatime shared:1 - ext4 /dev/sdz1 rw\n"
    system = SystemRoot("/")
    monkeypatch.setattr(system, "read_table", lambda path, **_: mountinfo if path == "/proc/self/mountinfo" else None)
    place = backup_place(system, str(place_dir / "md0.backup"), chosen=True)
    assert place.mount_point == str(place_dir) and place.fs_type == "ext4"
    assert place.read_only
    (mount,) = parse_mountinfo(mountinfo)
    assert mount.mount_point == str(place_dir) and mount.options == ("ro", "relatime")
    (mount,) = parse_proc_mounts("/dev/sdz1 /mnt/a\\040b ext4 ro,relatime 0 0\n")
    assert mount.mount_point == "/mnt/a b" and mount.options == ("ro", "relatime")


def test_a_tmpfs_is_seen_as_one() -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or "tmpfs" not in Path("/proc/self/mountinfo").read_text():
        pytest.skip("no tmpfs at /dev/shm on this machine")
    place = backup_place(SystemRoot("/"), "/dev/shm/md0.backup", chosen=True)
    assert place.fs_type == "tmpfs"


def entry(**changes: object) -> dict[str, object]:
    made: dict[str, object] = {
        "device": "/dev/md0",
        "uuid": "5791eed8:44c6e233:3dce8248:24f45de7",
        "target_level": "raid6",
        "target_members": 5,
        "target_chunk_bytes": 65536,
        "target_layout": "left-symmetric",
        "target_component_bytes": 40894464,
        "backup_file": "/mnt/keep/md0.backup",
        "member_paths": ["/dev/disk/by-id/nvme-QEMU_G0"],
        "started_at": time.time(),
        "predicted_seconds": 10.0,
        "bound": "md0's sync_speed_max",
    }
    made.update(changes)
    return made


def test_the_reshape_journal_round_trip(tmp_path: Path) -> None:
    journal = ReshapeJournal(tmp_path / "reshapes")
    saved = ReshapeEntry(**{**entry(), "member_paths": ("/dev/disk/by-id/nvme-QEMU_G0",)})  # type: ignore[arg-type]
    journal.add(saved)
    assert journal.find("5791eed8-44c6-e233-3dce-824824f45de7") == saved
    assert oct((tmp_path / "reshapes").stat().st_mode & 0o777) == "0o700"
    journal.remove(saved.uuid)
    assert journal.entries() == []


@pytest.mark.parametrize(
    "changes",
    [
        {"uuid": None},  # nothing that writes may act without a UUID
        {"backup_file": "relative/md0.backup"},
        {"backup_file": "/mnt/../etc/shadow"},
        {"backup_file": "/mnt/keep/x\nmdadm --zero-superblock"},
        {"device": "/dev/../sda"},
        {"member_paths": ["/dev/disk/by-id/../../sda/.."]},
        {"target_members": True},
        {"predicted_seconds": -1},
    ],
)
def test_a_hostile_journal_entry_is_skipped(tmp_path: Path, changes: dict[str, object]) -> None:
    directory = tmp_path / "reshapes"
    directory.mkdir(mode=0o700)
    (directory / "x.json").write_text(json.dumps(entry(**changes)))
    assert ReshapeJournal(directory).entries() == []


def test_a_command_that_leaves_a_child_returns_when_it_exits() -> None:
    # mdadm --grow forks a watcher that keeps its output open: pipes would block until the reshape ends.
    started = time.monotonic()
    result = run_command(["sh", "-c", "echo started; (sleep 5; echo late) & echo done >&2"], leaves_child=True)
    assert time.monotonic() - started < 3, "waited for the child"
    assert (result.returncode, result.stdout, result.stderr) == (0, "started\n", "done\n")


def reshape_tree(tmp_path: Path, mdstat: str, position: str | None = None) -> SystemRoot:
    """A root with /proc/mdstat and, for md0, md/reshape_position: what reshape_states reads of the system."""
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "sys/block").mkdir(parents=True)
    (root / "proc/mdstat").write_text("Personalities : [raid6] [raid5] [raid4]\n" + mdstat + "unused devices: <none>\n")
    if position is not None:
        md = root / "sys/block/md0/md"
        md.mkdir(parents=True)
        (md / "reshape_position").write_text(position + "\n")
        (md / "array_state").write_text("read-auto\n")
        (md / "level").write_text("raid6\n")
    return SystemRoot(root)


def journal_with(tmp_path: Path, backup: Path | None) -> ReshapeJournal:
    journal = ReshapeJournal(tmp_path / "reshapes")
    fields = entry(backup_file=str(backup) if backup else None, member_paths=("/dev/disk/by-id/nvme-QEMU_G0",))
    journal.add(ReshapeEntry(**fields))  # type: ignore[arg-type]
    return journal


def test_an_interrupted_reshape_held_inactive_is_stopped_and_assembled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.keep.grow_resume import plan_resume, reshape_line, reshape_states
    from mdtui.probe.arrays import read_arrays

    backup = tmp_path / "md0.backup"
    backup.write_bytes(b"\0" * 4096)
    journal = journal_with(tmp_path, backup)
    monkeypatch.setattr("mdtui.keep.grow_resume.resolve_member", lambda system, path: "nvme0n1")
    monkeypatch.setattr("mdtui.keep.grow_resume.ReshapeJournal", lambda: journal)
    # What the lab's guest showed after the power cut of a reshape with a backup file: md0 inactive, members (S).
    system = reshape_tree(tmp_path, "md0 : inactive nvme0n1[0](S) nvme1n1[1](S)\n      79872 blocks super 1.2\n\n")
    states = reshape_states(system, read_arrays(system), journal)
    assert [s.state for s in states] == ["not assembled"]
    assert "--resume" in reshape_line(states[0]) and str(backup) in reshape_line(states[0])
    plan = plan_resume(system, "/dev/md0")
    assert [step.argv for step in plan.steps] == [
        ("mdadm", "--stop", "/dev/md0"),
        ("mdadm", "--assemble", "/dev/md0", "--uuid=5791eed8:44c6e233:3dce8248:24f45de7", f"--backup-file={backup}",
         "/dev/disk/by-id/nvme-QEMU_G0"),
    ]  # fmt: skip
    backup.unlink()
    with pytest.raises(MdtuiError, match=r"backup file .* is gone"):
        plan_resume(system, "/dev/md0")


def test_a_pending_reshape_of_a_read_only_array_resumes_with_its_first_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.keep.grow_resume import plan_resume, reshape_states
    from mdtui.probe.arrays import read_arrays

    journal = journal_with(tmp_path, None)
    monkeypatch.setattr("mdtui.keep.grow_resume.ReshapeJournal", lambda: journal)
    system = reshape_tree(
        tmp_path,
        "md0 : active (auto-read-only) raid6 nvme0n1[0] nvme1n1[1] nvme2n1[2] nvme3n1[3] nvme4n1[5]\n"
        "      79872 blocks super 1.2 level 6, 128k chunk, algorithm 2 [5/5] [UUUUU]\n\n",
        position="27456",
    )
    arrays = read_arrays(system)
    # The array's UUID is what ties it to the journal: the tree's md0 has none, so give it the entry's.
    arrays = [dataclasses.replace(a, uuid="5791eed8-44c6-e233-3dce-824824f45de7") for a in arrays]
    monkeypatch.setattr("mdtui.probe.arrays.read_arrays", lambda root: arrays)
    states = reshape_states(system, arrays, journal)
    assert [s.state for s in states] == ["pending"] and "first write" in states[0].needs
    assert [step.argv for step in plan_resume(system, "/dev/md0").steps] == [("mdadm", "--readwrite", "/dev/md0")]


def test_a_stale_mdadm_conf_line_is_offered_through_persist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdtui.keep.grow import boot_check

    host = tmp_path / "host"
    shutil.copytree(TREE, host, symlinks=True)
    (host / "etc/mdadm").mkdir(parents=True)
    (host / "etc/os-release").write_text("ID=debian\n")
    uuid = "0a1b2c3d:4e5f6a7b:8c9d0e1f:2a3b4c5d"
    now = f"ARRAY /dev/md2 metadata=1.2 name=lab:2 UUID={uuid}"
    monkeypatch.setattr("mdtui.keep.grow.detail_brief", lambda device: now)
    conf = host / "etc/mdadm/mdadm.conf"
    conf.write_text(f"ARRAY /dev/md2 level=raid10 num-devices=2 metadata=1.2 UUID={uuid}\n")
    stale = boot_check(SystemRoot(host), "/dev/md2")
    assert stale.persist is not None and "describes /dev/md2 as it was" in stale.lines[0]
    conf.write_text("HOMEHOST <system>\n")
    absent = boot_check(SystemRoot(host), "/dev/md2")
    assert absent.persist is None and "mdtui persist /dev/md2" in absent.lines[0]
    conf.write_text(now + "\n")
    same = boot_check(SystemRoot(host), "/dev/md2")
    assert same.persist is None and "nothing is stale" in same.lines[0]


def test_advise_says_a_reshape_is_pending_and_what_it_needs() -> None:
    from mdtui.advise.findings import Severity
    from mdtui.advise.rules import advise
    from mdtui.advise.rules.inputs import AdviceInput
    from mdtui.keep.grow_resume import ReshapeState

    pending = ReshapeState("/dev/md0", "not assembled", "`mdtui grow /dev/md0 --resume`", "/mnt/keep/md0.backup")
    running = ReshapeState("/dev/md1", "running", "nothing: md is reshaping it", None, 0.4)
    found = {f.id: f for f in advise(AdviceInput(reshapes=(pending, running)))}
    assert found["reshape:md0"].severity is Severity.CRITICAL
    assert "--resume" in found["reshape:md0"].title and "/mnt/keep/md0.backup" in str(found["reshape:md0"].evidence)
    assert found["reshape:md1"].severity is Severity.INFO


def test_following_a_stalled_pass_stops_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from mdtui.keep.grow import follow_grow
    from mdtui.model.array import MdArray, SyncStatus
    from mdtui.plan.grow import plan_grow
    from mdtui.plan.grow_request import GrowFacts, GrowRequest, MemberSpace

    stuck = MdArray("md0", "clean", "raid5", raid_disks=3, component_bytes=40 * MIB, chunk_bytes=65536,
                    layout="left-symmetric", metadata="1.2",
                    sync=SyncStatus("reshape", done_sectors=6144, total_sectors=81920))  # fmt: skip
    idle = dataclasses.replace(stuck, sync=None)
    spaces = tuple(MemberSpace(f"nvme{i}n1", 2048, 1968, 0, 41 * MIB) for i in range(3))
    plan = plan_grow(GrowFacts(idle, uuid=None, spaces=spaces, reshape_position="none"), GrowRequest(chunk_kib=128))
    monkeypatch.setattr("mdtui.keep.grow.find_array", lambda system, device: stuck)
    outcome = follow_grow(plan, system=SystemRoot("/"), poll_s=0.01, stall_s=0.2)
    assert outcome.stalled is not None and "has not moved" in outcome.stalled and "7.5%" in outcome.stalled
    assert not outcome.reached


def test_resuming_runs_each_step_through_the_action_log_and_a_started_array_outweighs_assembles_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mdadm 4.2 may exit non-zero after it started the array: the last step's failure then is no failure."""
    from mdtui.actionlog import ActionLog
    from mdtui.command import CommandResult
    from mdtui.errors import CommandError
    from mdtui.keep.grow_resume import ReshapeState, ResumePlan, ResumeStep, execute_resume
    from mdtui.model.array import MdArray

    ran: list[tuple[tuple[str, ...], bool]] = []

    def fake_run(argv: list[str], *, timeout_s: float, leaves_child: bool = False) -> CommandResult:
        ran.append((tuple(argv), leaves_child))
        return CommandResult(tuple(argv), 0 if argv[1] == "--stop" else 1, "", "mdadm: crashed", 0.1)

    monkeypatch.setattr("mdtui.actionlog.run_command", fake_run)
    steps = (
        ResumeStep(("mdadm", "--stop", "/dev/md0"), "stop it"),
        ResumeStep(("mdadm", "--assemble", "/dev/md0"), "assemble it", leaves_child=True),
    )
    plan = ResumePlan("/dev/md0", ReshapeState("/dev/md0", "not assembled", "assembling", None), steps)
    log = ActionLog(tmp_path / "actions.log")
    array = MdArray("md0", "active", "raid6", ())
    monkeypatch.setattr("mdtui.keep.grow_resume.find_array", lambda system, device: array)
    results = execute_resume(plan, confirmed="md0", system=SystemRoot(tmp_path), log=log)
    assert [r.returncode for r in results] == [0, 1] and [leaves for _, leaves in ran] == [False, True]
    assert [e["note"] for e in log.entries()] == ["resume /dev/md0: stop it", "resume /dev/md0: assemble it"]
    array = MdArray("md0", "inactive", "raid6", ())
    with pytest.raises(CommandError):
        execute_resume(plan, confirmed="md0", system=SystemRoot(tmp_path), log=log)


def test_a_resumed_reshape_is_done_only_at_its_whole_shape_layout_included() -> None:
    """grow waited for the plan's layout too, a resumed reshape did not: a raid6 still on the raid5 layout md's
    level change leaves (left-symmetric-6) read as done. Both ask keep.grow.has_shape."""
    from mdtui.keep.grow_resume import _has_target
    from mdtui.model.array import ArrayMember, MdArray

    def raid6(layout: str) -> MdArray:
        members = tuple(ArrayMember(f"nvme{i}n1", i, ("in_sync",)) for i in range(5))
        return MdArray(name="md0", state="clean", level="raid6", members=members, raid_disks=5, chunk_bytes=65536,
                       layout=layout, component_bytes=40894464, metadata="1.2")  # fmt: skip

    target = ReshapeEntry(**entry())  # type: ignore[arg-type]
    assert _has_target(raid6("left-symmetric"), target)
    assert not _has_target(raid6("left-symmetric-6"), target)
