"""Write safety chosen knowingly: what md and mdadm accept, the mdadm --grow steps between two choices, where a bitmap
file may go (and the attacks on it), the restore journal of an experiment, and `mdtui safety` on a captured tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mdtui.actionlog import ActionLog
from mdtui.cli.main import main
from mdtui.command import CommandResult
from mdtui.errors import MdtuiError
from mdtui.model.safety import LiveSafety
from mdtui.plan.figures import GIVEN, MemberFigures
from mdtui.plan.levels import level_from_name
from mdtui.plan.write_safety import SafetyChoice, change_steps, cost_lines, costs, live_problems, problems
from mdtui.probe.arrays import read_arrays
from mdtui.probe.root import SystemRoot
from mdtui.probe.safety import bitmap_file_problems, read_live_safety
from mdtui.tune import safety_journal
from mdtui.tune.safety_journal import SafetyChanger, chunk_kib, load_entries, recover_dead

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
RAID5 = level_from_name("raid5")
MEMBER = MemberFigures(
    seq_read_bytes_per_s=1e9,
    seq_write_bytes_per_s=1e9,
    rand_read_iops=100e3,
    rand_write_iops=100e3,
    q1_read_latency_s=80e-6,
    q1_write_latency_s=20e-6,
    rotational=False,
    basis=GIVEN,
)
UUID = "d4d41c85-895e-5776-7178-204735012576"


def test_the_grow_steps_between_two_choices_go_through_none_and_keep_ppl_apart_from_a_bitmap() -> None:
    internal = LiveSafety("internal", 64 << 20, "bitmap")
    # A new chunk: mdadm changes a bitmap only from none.
    assert change_steps("/dev/md0", internal, SafetyChoice("internal", 4)) == [
        ("mdadm", "--grow", "/dev/md0", "--bitmap=none"),
        ("mdadm", "--grow", "/dev/md0", "--bitmap=internal", "--bitmap-chunk=4K"),
    ]
    # ppl: the bitmap goes first, then the policy.
    assert change_steps("/dev/md0", internal, SafetyChoice("none", None, "ppl")) == [
        ("mdadm", "--grow", "/dev/md0", "--bitmap=none"),
        ("mdadm", "--grow", "/dev/md0", "--consistency-policy=ppl"),
    ]
    # Back from ppl to a bitmap: the policy first, then the bitmap.
    assert change_steps("/dev/md0", LiveSafety("none", None, "ppl"), SafetyChoice("internal", 65536)) == [
        ("mdadm", "--grow", "/dev/md0", "--consistency-policy=resync"),
        ("mdadm", "--grow", "/dev/md0", "--bitmap=internal", "--bitmap-chunk=65536K"),
    ]
    assert change_steps("/dev/md0", internal, SafetyChoice("internal", 65536)) == []
    assert change_steps("/dev/md0", internal, SafetyChoice("internal")) == []  # no chunk asked: as it is


def test_a_journal_is_no_live_change() -> None:
    now = LiveSafety("none", None, "resync")
    assert "only at create" in live_problems(RAID5, now, SafetyChoice("none", None, "journal"), kernel="6.1")[0]
    journalled = LiveSafety("none", None, "journal")
    assert "not a live change" in live_problems(RAID5, journalled, SafetyChoice("none"), kernel="6.1")[0]
    assert live_problems(RAID5, journalled, SafetyChoice("none", None, "journal"), kernel="6.1") == []


@pytest.mark.parametrize(
    ("choice", "fragment"),
    [
        (SafetyChoice("bogus"), "give none, internal, lockless or an absolute file path"),
        (SafetyChoice("internal", 96), "power of two"),
        (SafetyChoice("none", 64), "needs a bitmap"),
        (SafetyChoice("none", None, "ppl"), ""),
        (SafetyChoice("internal", None, "ppl"), "refuses ppl with a bitmap"),
        (SafetyChoice("lockless"), "kernel 6.18 or newer"),
        (SafetyChoice("/srv//md0.bitmap"), "plain absolute path"),
    ],
)
def test_what_md_and_mdadm_refuse_is_one_line_each(choice: SafetyChoice, fragment: str) -> None:
    found = problems(RAID5, choice, kernel="6.1.0-56-amd64")
    if not fragment:
        assert found == []
        return
    assert any(fragment in line for line in found), found
    assert all("\n" not in line for line in found)


def test_costs_come_from_the_one_model_and_say_what_each_choice_protects() -> None:
    found, chosen = costs(RAID5, [MEMBER] * 4, SafetyChoice("internal", 4), array_bytes=3 * 10**12)
    by_name = {cost.workload: cost for cost in found}
    assert by_name["Q1 write latency"].ratio is not None and by_name["Q1 write latency"].ratio < 1
    assert chosen.q1_write_latency_s.value is not None
    lines = cost_lines(RAID5, [MEMBER] * 4, SafetyChoice("none", None, "ppl"))
    assert any("partial parity log" in line for line in lines)
    assert any(line.strip().startswith("costs") and "random write" in line for line in lines)
    assert cost_lines(RAID5, None, SafetyChoice("internal"))[0] == "write safety      bitmap internal, policy resync"


# --- where a bitmap file may go ----------------------------------------------------------------------------------


def test_a_bitmap_file_is_refused_where_it_would_overwrite_or_could_be_redirected(tmp_path: Path) -> None:
    live = SystemRoot("/")
    existing = tmp_path / "existing.bitmap"
    existing.write_text("someone's data")
    # The attack: a file mdtui did not create would be overwritten.
    assert "exists" in bitmap_file_problems(live, str(existing), [])[0]
    # The attack: another user can write the directory, so could plant a link where the bitmap goes.
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    assert any("written by someone other than root" in p for p in bitmap_file_problems(live, f"{open_dir}/b", []))
    # The attack: a directory reached through a link.
    link = tmp_path / "link"
    link.symlink_to(open_dir)
    assert any("through a link" in p for p in bitmap_file_problems(live, f"{link}/b", []))
    # Under --root nothing is written at all.
    assert "--root" in bitmap_file_problems(SystemRoot(str(TREE)), "/srv/b", [])[0]


@pytest.mark.parametrize("owner, mode", [(0, 0o777), (4242, 0o755)])
def test_a_bitmap_file_below_a_directory_another_user_can_change_is_refused(
    tmp_path: Path, owner: int, mode: int
) -> None:
    """The attack: root's own directory, inside one another user can write (or owns). That user renames root's
    directory away and puts one of theirs, holding a link where the bitmap goes, in its place: every directory
    on the way must be root's alone, not only the last (rootsafe.path_problem)."""
    if os.geteuid() != 0:
        pytest.skip("the directories must be root's and another user's")
    parent = tmp_path / "theirs"
    parent.mkdir()
    inner = parent / "roots"
    inner.mkdir(mode=0o755)
    os.chown(parent, owner, owner)
    parent.chmod(mode)
    found = bitmap_file_problems(SystemRoot("/"), f"{inner}/b", [])
    assert any("another user could change the way to" in p and str(parent) in p for p in found), found


def test_a_bitmap_file_on_a_member_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bitmap must outlive what it protects: a directory on one of the array's members (here the filesystem
    holding tmp_path, whatever device that is) is refused, and so is one on an md array."""
    root = SystemRoot("/")
    holder = root.resolve(f"/sys/dev/block/{os.major(tmp_path.stat().st_dev)}:{os.minor(tmp_path.stat().st_dev)}")
    if holder is None:
        pytest.skip("this filesystem has no block device (overlay or tmpfs)")
    directory = tmp_path / "root-owned"
    directory.mkdir(mode=0o755)
    if os.geteuid() != 0:
        pytest.skip("the directory must be root's")
    found = bitmap_file_problems(root, f"{directory}/b", [holder.name])
    assert any("a member of this array" in p for p in found), found


def test_the_live_safety_reads_sysfs() -> None:
    root = SystemRoot(str(TREE))
    found = read_live_safety(root, "md0")
    assert found is not None and found.bitmap == "none" and found.choice_policy == "resync"
    assert read_live_safety(root, "md99") is None


@pytest.mark.parametrize("types", ["llbitmap", "none bitmap [llbitmap]"])
def test_a_lockless_bitmap_is_one_kind_to_the_scan_and_to_the_safety_plan(tmp_path: Path, types: str) -> None:
    """md/bitmap/location and md/bitmap_type are read once (probe.safety.bitmap_kind): the scan's array and the
    safety plan say lockless alike, whether bitmap_type is the lone word or kernel 6.18's list with the array's
    type in brackets."""
    files = {
        "proc/mdstat": (
            "md3 : active raid1 sdb[1] sda[0]\n"
            "      1046528 blocks super 1.2 [2/2] [UU]\n"
            "      bitmap: 0/1 pages [0KB], 65536KB chunk\n"
        ),
        "sys/block/md3/md/level": "raid1\n",
        "sys/block/md3/md/array_state": "clean\n",
        "sys/block/md3/md/consistency_policy": "bitmap\n",
        "sys/block/md3/md/bitmap/location": "+8\n",
        "sys/block/md3/md/bitmap_type": types + "\n",
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    root = SystemRoot(str(tmp_path))
    (array,) = read_arrays(root)
    live = read_live_safety(root, "md3")
    assert live is not None
    assert array.bitmap == live.bitmap == "lockless"
    scanned = read_live_safety(root, "md3", bitmap=array.bitmap)
    assert scanned is not None and scanned.bitmap == "lockless"


# --- the restore journal -----------------------------------------------------------------------------------------


class FakeMd:
    """A live array's sysfs in a temporary tree, and mdadm --grow acting on it."""

    def __init__(self, tmp_path: Path, bitmap: str = "internal") -> None:
        self.root = SystemRoot(str(tmp_path / "sys-root"))
        self.md = tmp_path / "sys-root" / "sys" / "block" / "md7" / "md"
        (self.md / "bitmap").mkdir(parents=True)
        (self.md / "uuid").write_text(UUID + "\n")
        self.set(bitmap, 64 << 20 if bitmap != "none" else 0, "bitmap" if bitmap != "none" else "resync")
        self.ran: list[list[str]] = []

    def set(self, bitmap: str, chunk: int, policy: str) -> None:
        (self.md / "bitmap" / "location").write_text("+8\n" if bitmap == "internal" else "none\n")
        (self.md / "bitmap" / "chunksize").write_text(f"{chunk}\n")
        (self.md / "consistency_policy").write_text(policy + "\n")

    def now(self) -> LiveSafety | None:
        return read_live_safety(self.root, "md7")

    def run(self, argv: list[str], note: str = "") -> CommandResult:
        self.ran.append(argv)
        option = argv[-1] if len(argv) == 4 else argv[3]
        now = self.now()
        assert now is not None
        if option == "--bitmap=none":
            self.set("none", 0, "resync" if now.policy == "bitmap" else now.policy)
        elif option.startswith("--bitmap=internal"):
            chunk = chunk_kib(argv[-1].split("=")[1]) * 1024 if argv[-1].startswith("--bitmap-chunk") else 64 << 20
            self.set("internal", chunk, "bitmap")
        elif option.startswith("--consistency-policy="):
            self.set(now.bitmap, now.bitmap_chunk_bytes or 0, option.split("=")[1])
        return CommandResult(tuple(argv), 0, "", "", 0.0)


def test_an_experiments_change_is_journalled_first_and_put_back(tmp_path: Path) -> None:
    md = FakeMd(tmp_path)
    journal = tmp_path / "journal"
    with SafetyChanger(md.root, purpose="a test A/B", directory=journal, runner=md.run) as changer:
        changer.set("md7", UUID, RAID5, SafetyChoice("internal", 4), "6.1")
        assert md.now() == LiveSafety("internal", 4096, "bitmap")
        (entry,) = load_entries(journal)
        assert (entry.array, entry.bitmap, entry.bitmap_chunk_bytes) == ("md7", "internal", 64 << 20)
        changer.set("md7", UUID, RAID5, SafetyChoice("none", None, "ppl"), "6.1")
        assert md.now() == LiveSafety("none", None, "ppl")
    assert md.now() == LiveSafety("internal", 64 << 20, "bitmap")
    assert load_entries(journal) == []


def test_a_killed_experiments_change_is_put_back_at_the_next_start_on_that_array_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    md = FakeMd(tmp_path)
    journal = tmp_path / "journal"
    changer = SafetyChanger(md.root, purpose="a killed A/B", directory=journal, runner=md.run)
    changer.set("md7", UUID, RAID5, SafetyChoice("none"), "6.1")
    # The process dies here (no restore); its owner token is then dead.
    monkeypatch.setattr(safety_journal, "owner_alive", lambda owner: False)
    # The attack: the name md7 now carries another array; nothing is written to it.
    (md.md / "uuid").write_text("00000000-0000-0000-0000-000000000001\n")
    lines = recover_dead(md.root, journal, runner=md.run)
    assert "another array" in lines[0] and md.now() == LiveSafety("none", None, "resync")
    assert load_entries(journal) == []  # an entry for a gone array is not kept to act on later


def test_a_failed_restore_keeps_its_journal_whatever_mdadm_said(tmp_path: Path) -> None:
    """Whether the journal is dropped is restore_entry's answer, not words found in mdadm's message (a failure
    whose stderr said "no longer exists" dropped the journal before, and the array stayed changed)."""
    md = FakeMd(tmp_path)
    journal = tmp_path / "journal"
    changer = SafetyChanger(md.root, directory=journal, runner=md.run)
    changer.set("md7", UUID, RAID5, SafetyChoice("none"), "6.1")

    def refused(argv: list[str], note: str = "") -> CommandResult:
        return CommandResult(tuple(argv), 1, "", "mdadm: the bitmap no longer exists", 0.0)

    changer.runner = refused
    [text] = changer.restore()
    assert "not restored" in text and "no longer exists" in text
    assert [entry.array for entry in load_entries(journal)] == ["md7"]  # kept for the next start
    assert md.now() == LiveSafety("none", None, "resync")


def test_a_change_and_its_restore_are_in_the_action_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mdadm --grow run as root by an experiment, its restore and a dead one's recovery are logged like any other
    command (they ran without the action log before)."""
    md = FakeMd(tmp_path)
    journal = tmp_path / "journal"
    monkeypatch.setattr("mdtui.actionlog.run_command", lambda argv, **kw: md.run(list(argv)))
    with SafetyChanger(md.root, purpose="a test A/B", directory=journal) as changer:
        changer.set("md7", UUID, RAID5, SafetyChoice("none"), "6.1")
    changer = SafetyChanger(md.root, purpose="a killed A/B", directory=journal)
    changer.set("md7", UUID, RAID5, SafetyChoice("none"), "6.1")
    monkeypatch.setattr(safety_journal, "owner_alive", lambda owner: False)
    recover_dead(md.root, journal)
    logged = [(entry["argv"], entry["note"]) for entry in ActionLog().entries()]
    assert logged == [
        (["mdadm", "--grow", "/dev/md7", "--bitmap=none"], "a test A/B: write safety of /dev/md7"),
        (
            ["mdadm", "--grow", "/dev/md7", "--bitmap=internal", "--bitmap-chunk=65536K"],
            f"put back the write safety of /dev/md7 changed by a test A/B (pid {os.getpid()})",
        ),
        (["mdadm", "--grow", "/dev/md7", "--bitmap=none"], "a killed A/B: write safety of /dev/md7"),
        (
            ["mdadm", "--grow", "/dev/md7", "--bitmap=internal", "--bitmap-chunk=65536K"],
            f"put back the write safety of /dev/md7 changed by a killed A/B (pid {os.getpid()})",
        ),
    ]
    assert md.now() == LiveSafety("internal", 64 << 20, "bitmap")


def test_a_tampered_journal_is_never_acted_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    md = FakeMd(tmp_path, bitmap="none")
    journal = tmp_path / "journal"
    journal.mkdir(mode=0o700)
    entry = {"owner": "x", "pid": 1, "purpose": "p", "root": str(md.root.root), "created_at": 0, "array": "md7",
             "array_uuid": UUID, "bitmap": "/etc/shadow", "bitmap_chunk_bytes": None, "policy": "resync"}  # fmt: skip
    (journal / "safety.1.json").write_text(json.dumps(entry))
    (journal / "safety.1.json").chmod(0o600)
    monkeypatch.setattr(safety_journal, "owner_alive", lambda owner: False)
    assert recover_dead(md.root, journal, runner=md.run) == [] and md.ran == []


def test_an_array_with_a_bitmap_file_is_not_changed_by_an_experiment(tmp_path: Path) -> None:
    md = FakeMd(tmp_path)
    (md.md / "bitmap" / "location").write_text("file\n")
    changer = SafetyChanger(md.root, directory=tmp_path / "journal", runner=md.run)
    with pytest.raises(MdtuiError, match="could not put that back"):
        changer.set("md7", UUID, RAID5, SafetyChoice("none"), "6.1")
    assert md.ran == []


def test_chunk_sizes_read_as_mdadm_writes_them() -> None:
    assert (chunk_kib("64M"), chunk_kib("4K"), chunk_kib("65536"), chunk_kib("1G")) == (65536, 4, 65536, 1 << 20)
    with pytest.raises(MdtuiError):
        chunk_kib("lots")


# --- the verb ----------------------------------------------------------------------------------------------------


def test_safety_shows_the_plan_then_refuses_a_captured_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(TREE), "safety", "md0"]) == 0
    out = capsys.readouterr().out
    assert "now: bitmap none, policy resync" in out and "protects" in out
    assert main(["--root", str(TREE), "safety", "md0", "--bitmap", "internal", "--bitmap-chunk", "64M", "--yes"]) == 2
    captured = capsys.readouterr()
    assert "mdadm --grow /dev/md0 --bitmap=internal --bitmap-chunk=65536K" in captured.out
    assert "read-only" in captured.err and "Traceback" not in captured.err
    assert main(["--root", str(TREE), "safety", "md0", "--policy", "ppl", "--dry-run"]) == 2
    assert "raid5's only" in capsys.readouterr().err


def test_a_live_change_runs_each_step_through_the_action_log_and_stops_at_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.errors import CommandError
    from mdtui.execute.write_safety import SafetyChangePlan, execute_safety_change

    md = FakeMd(tmp_path)
    now = md.now()
    assert now is not None
    want = SafetyChoice("none", None, "ppl")
    steps = tuple(change_steps("/dev/md7", now, want))
    plan = SafetyChangePlan("md7", UUID, RAID5, ("sdb", "sdc", "sdd"), now, want, steps)
    monkeypatch.setattr("mdtui.actionlog.run_command", lambda argv, **kw: md.run(list(argv)))
    log = ActionLog(tmp_path / "actions.log")
    results = execute_safety_change(plan, confirmed="md7", root=md.root, log=log)
    assert [r.argv for r in results] == list(steps) and md.now() == LiveSafety("none", None, "ppl")
    assert [(tuple(e["argv"]), e["note"]) for e in log.entries()] == [(s, "write safety of /dev/md7") for s in steps]
    after = md.now()
    assert after is not None
    two = (("mdadm", "x"), ("mdadm", "y"))
    failing = SafetyChangePlan("md7", UUID, RAID5, (), after, SafetyChoice("internal"), two)
    monkeypatch.setattr("mdtui.actionlog.run_command", lambda argv, **kw: CommandResult(tuple(argv), 1, "", "no", 0.0))
    with pytest.raises(CommandError):
        execute_safety_change(failing, confirmed="md7", root=md.root, log=log)
    assert [e["argv"] for e in log.entries()][-1] == ["mdadm", "x"]  # logged, and the next step never ran
