"""mdtui's own state as another local user would attack it: planted journals, links, FIFOs, foreign files,
and locations from an environment sudo kept. Each test is the attack; none may write, hang or be obeyed."""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdtui.actionlog import ActionLog
from mdtui.errors import MdtuiError
from mdtui.execute.state import ArrayRegistry, CreatedArray, TemporaryArrayJournal
from mdtui.model.array import ArrayMember, MdArray
from mdtui.probe.owner import boot_id, current_owner
from mdtui.probe.root import SystemRoot
from mdtui.tune.journal import load_journals, recover_dead

UUID = "d4d41c85-895e-5776-7178-204735012576"
DEAD_OWNER = "00000000-0000-0000-0000-000000000000/4194303/1"  # a boot that is not this one
NOBODY = 65534


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """A FIFO opened for reading blocks until a writer comes: the test fails instead of hanging."""

    def expired(*_: object) -> None:
        raise TimeoutError("blocked on a state file")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(10)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700, parents=True)
    return state


def _sysfs(tmp_path: Path) -> SystemRoot:
    """A fake root whose md0 stripe cache is a file the test can read back."""
    md = tmp_path / "root/sys/block/md0/md"
    md.mkdir(parents=True)
    (md / "stripe_cache_size").write_text("4096\n")
    (md / "uuid").write_text(UUID + "\n")
    return SystemRoot(tmp_path / "root")


def _journal(directory: Path, *changes: dict, name: str = "knobs.1.1.json") -> Path:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / name
    record = {"owner": DEAD_OWNER, "pid": 4194303, "purpose": "a sweep", "root": "", "created_at": 1.0,
              "changes": list(changes)}  # fmt: skip
    path.write_text(json.dumps(record))
    return path


def _change(**overrides: str) -> dict:
    change = {"knob": "stripe_cache_size", "device": "md0", "path": "/sys/block/md0/md/stripe_cache_size",
              "original": "256", "shown": "256", "array": "md0", "array_uuid": UUID}  # fmt: skip
    change.update(overrides)
    return change


# --- the knob journal ------------------------------------------------------------------------------------


def test_a_planted_journal_with_a_path_outside_sys_writes_nothing(tmp_path: Path) -> None:
    root = _sysfs(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("root's line\n")
    # The attack as reported: a device that climbs out of /sys/block and an empty array (no array check).
    (tmp_path / "root/tmp/x/md").mkdir(parents=True)
    (tmp_path / "root/tmp/x/md/stripe_cache_size").symlink_to(victim)
    journals = tmp_path / "state/knob-journal"
    _journal(journals, _change(device="../../tmp/x", path="/sys/block/../../tmp/x/md/stripe_cache_size",
                               array="", array_uuid="", original="attacker"))  # fmt: skip
    for entry in load_journals(journals):
        entry.root = str(root.root)
    recover_dead(SystemRoot(root.root), journals)
    assert victim.read_text() == "root's line\n"
    assert load_journals(journals) == []


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (_change(device="../md0"), "not a kernel device name"),
        (_change(array=""), "not a kernel device name"),
        (_change(array_uuid=""), "no array UUID"),
        (_change(original="99999999"), "out of range"),
        (_change(knob="read_ahead_kb"), "not where"),
        (_change(knob="no_such_knob"), "not in the catalogue"),
        (_change(original="4096\nmq-deadline"), "not a line of text"),
    ],
)
def test_a_journal_entry_outside_the_schema_is_skipped_with_one_line(
    tmp_path: Path, change: dict, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    journals = tmp_path / "journal"
    path = _journal(journals, change)
    with caplog.at_level(logging.WARNING):
        assert load_journals(journals) == []
    assert [r.getMessage() for r in caplog.records if str(path) in r.getMessage() and why in r.getMessage()]


def test_a_valid_journal_of_a_dead_owner_is_still_restored(tmp_path: Path) -> None:
    root = _sysfs(tmp_path)
    journals = tmp_path / "journal"
    _journal(journals, _change())
    path = journals / "knobs.1.1.json"
    path.write_text(path.read_text().replace('"root": ""', json.dumps({"root": str(root.root)})[1:-1]))
    lines = recover_dead(root, journals)
    assert lines and "restored" in lines[0], lines
    assert root.path("/sys/block/md0/md/stripe_cache_size").read_text() == "256"


def test_a_knob_file_that_is_a_link_out_of_sys_is_not_written(tmp_path: Path) -> None:
    root = _sysfs(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("root's line\n")
    knob = root.path("/sys/block/md0/md/stripe_cache_size")
    knob.unlink()
    knob.symlink_to(victim)
    journals = tmp_path / "journal"
    path = _journal(journals, _change())
    path.write_text(path.read_text().replace('"root": ""', json.dumps({"root": str(root.root)})[1:-1]))
    lines = recover_dead(root, journals)
    assert victim.read_text() == "root's line\n"
    assert lines and "not restored" in lines[0] and "outside" in lines[0], lines


def test_a_fifo_named_json_in_the_journal_directory_does_not_hang(tmp_path: Path) -> None:
    journals = tmp_path / "journal"
    journals.mkdir(mode=0o700)
    os.mkfifo(journals / "knobs.9.9.json")
    assert load_journals(journals) == []
    temporary = tmp_path / "temporary-arrays"
    temporary.mkdir(mode=0o700)
    os.mkfifo(temporary / "md9.1.1.json")
    assert TemporaryArrayJournal(temporary).entries() == []


def test_a_journal_of_another_user_or_writable_by_others_is_not_used(tmp_path: Path) -> None:
    root = _sysfs(tmp_path)
    journals = tmp_path / "journal"
    path = _journal(journals, _change())
    path.write_text(path.read_text().replace('"root": ""', json.dumps({"root": str(root.root)})[1:-1]))
    os.chown(path, NOBODY, NOBODY)
    assert load_journals(journals) == []
    os.chown(path, os.geteuid(), os.getegid())
    path.chmod(0o666)
    assert load_journals(journals) == []
    path.chmod(0o600)
    journals.chmod(0o777)  # anyone could have swapped the files in it
    assert load_journals(journals) == []
    assert root.path("/sys/block/md0/md/stripe_cache_size").read_text() == "4096\n"


def test_a_journal_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    journals = tmp_path / "journal"
    real = _journal(tmp_path / "elsewhere", _change())
    journals.mkdir(mode=0o700)
    (journals / "knobs.1.1.json").symlink_to(real)
    assert load_journals(journals) == []


# --- the registry, the action log and the temporary-array journal -----------------------------------------


def test_a_fixed_name_tmp_link_beside_the_registry_is_not_followed(tmp_path: Path) -> None:
    state = _state(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("root's line\n")
    (state / "created-arrays.tmp").symlink_to(victim)
    registry = ArrayRegistry(state / "created-arrays.json")
    registry.add(CreatedArray("/dev/md9", UUID, (), ("/dev/sdb",), 1.0))
    assert victim.read_text() == "root's line\n"
    assert registry.find("/dev/md9", UUID) is not None
    assert stat.S_IMODE((state / "created-arrays.json").stat().st_mode) == 0o600


def test_an_action_log_link_is_refused_not_followed(tmp_path: Path) -> None:
    from mdtui.command import CommandResult

    state = _state(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("root's line\n")
    (state / "actions.log").symlink_to(victim)
    with pytest.raises(MdtuiError, match="symbolic link"):
        ActionLog(state / "actions.log").record(CommandResult(("mdadm", "--stop", "/dev/md9"), 0, "", "", 0.1))
    assert victim.read_text() == "root's line\n"
    assert ActionLog(state / "actions.log").entries() == []


def test_a_registry_of_another_user_is_not_believed(tmp_path: Path) -> None:
    state = _state(tmp_path)
    path = state / "created-arrays.json"
    ArrayRegistry(path).add(CreatedArray("/dev/md2", UUID, (), ("/dev/sdb",), 1.0))
    os.chown(path, NOBODY, NOBODY)
    assert ArrayRegistry(path).find("/dev/md2", UUID) is None


def test_a_registry_entry_outside_the_schema_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    state = _state(tmp_path)
    path = state / "created-arrays.json"
    path.write_text(json.dumps([
        {"device": "/dev/../etc/md2", "uuid": UUID, "member_paths": ["/dev/sdb"]},
        {"device": "/dev/md3", "uuid": "not-a-uuid", "member_paths": ["/dev/sdb"]},
        {"device": "/dev/md4", "uuid": UUID, "member_paths": ["/dev/sdb"]},
    ]))  # fmt: skip
    with caplog.at_level(logging.WARNING):
        assert [e.device for e in ArrayRegistry(path)._load()] == ["/dev/md4"]
    assert len([r for r in caplog.records if str(path) in r.getMessage()]) == 2


def test_the_state_directory_is_made_0700(tmp_path: Path) -> None:
    state = tmp_path / "new" / "state"
    ArrayRegistry(state / "created-arrays.json").add(CreatedArray("/dev/md9", UUID, (), (), 1.0))
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


def test_a_state_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    state = _state(tmp_path)
    os.chown(state, NOBODY, NOBODY)
    with pytest.raises(MdtuiError, match="uid 65534"):
        ArrayRegistry(state / "created-arrays.json").add(CreatedArray("/dev/md9", UUID, (), (), 1.0))
    assert not (state / "created-arrays.json").exists()


def test_a_temporary_array_entry_with_a_climbing_device_is_skipped(tmp_path: Path) -> None:
    temporary = tmp_path / "temporary-arrays"
    temporary.mkdir(mode=0o700)
    (temporary / "x.1.1.json").write_text(json.dumps(
        {"device": "/dev/../../etc/passwd", "purpose": "x", "owner": current_owner(), "pid": 1}
    ))  # fmt: skip
    assert TemporaryArrayJournal(temporary).entries() == []


# --- locations from the environment under sudo -------------------------------------------------------------


def _users_dir(tmp_path: Path, name: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    os.chown(directory, NOBODY, NOBODY)
    return directory


@pytest.mark.parametrize("variable", ["MDTUI_STATE_DIR", "XDG_STATE_HOME"])
def test_under_sudo_a_state_location_of_the_invoking_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    from mdtui.probe.owner import state_dir

    monkeypatch.setenv(variable, str(_users_dir(tmp_path, "users")))
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    with pytest.raises(MdtuiError, match=f"\\${variable}"):
        state_dir()
    with pytest.raises(MdtuiError, match=f"\\${variable}"):
        ArrayRegistry()
    monkeypatch.delenv("SUDO_UID")
    assert state_dir().is_relative_to(tmp_path / "users")  # the user's own mdtui uses it


def test_under_sudo_a_results_database_of_the_invoking_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.store.runs import ResultsStore

    users = _users_dir(tmp_path, "users")
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    monkeypatch.setenv("MDTUI_DB", str(users / "results.db"))
    with pytest.raises(MdtuiError, match="\\$MDTUI_DB"):
        ResultsStore()
    assert not (users / "results.db").exists()
    monkeypatch.delenv("MDTUI_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(users))
    with pytest.raises(MdtuiError, match="\\$XDG_DATA_HOME"):
        ResultsStore()
    assert not (users / "mdtui").exists()


def test_under_sudo_root_s_own_locations_are_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdtui.probe.owner import state_dir
    from mdtui.store.runs import ResultsStore

    roots = tmp_path / "roots"
    roots.mkdir(mode=0o755)
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    monkeypatch.setenv("XDG_STATE_HOME", str(roots))
    monkeypatch.setenv("MDTUI_DB", str(roots / "results.db"))
    assert state_dir() == roots / "mdtui"
    with ResultsStore() as store:
        assert store.path == roots / "results.db"


def test_under_sudo_a_location_below_a_link_the_user_owns_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.probe.owner import state_dir

    roots = tmp_path / "roots"
    roots.mkdir(mode=0o755)
    users = _users_dir(tmp_path, "users")
    (users / "link").symlink_to(roots)
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    monkeypatch.setenv("XDG_STATE_HOME", str(users / "link"))
    with pytest.raises(MdtuiError, match="XDG_STATE_HOME"):
        state_dir()


# --- a registry entry without a UUID -----------------------------------------------------------------------


def _md2(metadata: str, *members: str, uuid: str | None = None) -> MdArray:
    return MdArray("md2", "active", "raid0", tuple(ArrayMember(m, i) for i, m in enumerate(members)),
                   metadata=metadata, uuid=uuid)  # fmt: skip


def test_a_null_uuid_entry_matches_no_array_with_a_superblock(tmp_path: Path) -> None:
    registry = ArrayRegistry(_state(tmp_path) / "created-arrays.json")
    # What a --build array records; a later, real array took the name md2.
    registry.add(CreatedArray("/dev/md2", None, (), ("/dev/sdb", "/dev/sdc"), 1.0, ("sdb", "sdc")))
    real = _md2("1.2", "sdd", "sde", uuid=UUID)
    assert registry.find("/dev/md2", UUID) is None
    assert registry.find("/dev/md2", None) is None
    assert registry.owner_entry(real, UUID) is None
    assert registry.owner_entry(real, None) is None


def test_a_built_array_is_known_by_its_boot_and_its_members(tmp_path: Path) -> None:
    registry = ArrayRegistry(_state(tmp_path) / "created-arrays.json")
    registry.add(CreatedArray("/dev/md2", None, (), ("/dev/sdb", "/dev/sdc"), 1.0, ("sdb", "sdc")))
    assert registry.owner_entry(_md2("none", "sdc", "sdb"), None) is not None
    # Built again by someone else over other disks, or with a member more: not mdtui's.
    assert registry.owner_entry(_md2("none", "sdd", "sde"), None) is None
    assert registry.owner_entry(_md2("none", "sdb", "sdc", "sdd"), None) is None
    # Recorded in another boot: a built array does not survive a reboot, so this md2 is another one.
    other = ArrayRegistry(_state(tmp_path / "other") / "created-arrays.json")
    other.add(CreatedArray("/dev/md2", None, (), (), 1.0, ("sdb", "sdc"), boot_id="another-boot"))
    assert other.owner_entry(_md2("none", "sdb", "sdc"), None) is None
    # An entry from before member names were recorded has no identity at all.
    legacy = ArrayRegistry(_state(tmp_path / "legacy") / "created-arrays.json")
    legacy.path.write_text(json.dumps([{"device": "/dev/md2", "uuid": None, "member_paths": ["/dev/sdb"]}]))
    assert legacy.owner_entry(_md2("none", "sdb"), None) is None
    assert boot_id()


def test_destroy_dry_run_does_not_plan_wiping_a_real_array_over_a_null_uuid_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdtui.execute import mdadm as md_run
    from mdtui.plan.destroy import plan_destroy
    from mdtui.plan.rejected import PlanRejected

    registry = ArrayRegistry(_state(tmp_path) / "created-arrays.json")
    registry.add(CreatedArray("/dev/md2", None, (), ("/dev/sdb",), 1.0, ("sdb",)))
    monkeypatch.setattr(md_run, "array_uuid", lambda device: UUID)
    real = _md2("1.2", "sdd", "sde", uuid=UUID)
    with pytest.raises(PlanRejected, match="not created by mdtui"):
        plan_destroy(real, None, mounted=False, created_by_tool=md_run.created_by_mdtui(real, registry))
