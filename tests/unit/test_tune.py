"""mdtui.tune: the knob catalogue read from captured trees, changes journalled and restored (also after a
SIGKILL, by a real child process), the udev rule file, and the `mdtui tune` verb."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from children import killed_when_ready
from unprivileged import public_dir, run_as_nobody

from mdtui.__main__ import main
from mdtui.errors import MdtuiError, PlanError
from mdtui.model.array import ArrayMember, MdArray
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.tune.catalogue import KNOBS_BY_NAME, knob_named
from mdtui.tune.journal import KnobChanger, load_journals, recover_dead
from mdtui.tune.read import knob_context, read_knobs
from mdtui.tune.udev import mdadm_uuid, parse_rules, plan_apply, plan_remove, rules_for, rules_path, write_plan

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "tests" / "fixtures" / "trees" / "lab-standard"
UUID = "d4d41c85-895e-5776-7178-204735012576"


def _tree(tmp_path: Path) -> tuple[SystemRoot, MdArray]:
    """A sysfs-like root with one raid5 array md0 over two members: files the tests can write."""
    md = tmp_path / "sys/block/md0/md"
    md.mkdir(parents=True)
    for name, text in {"stripe_cache_size": "256\n", "group_thread_cnt": "0\n", "uuid": UUID + "\n",
                       "sync_speed_min": "1000 (system)\n"}.items():
        (md / name).write_text(text)
    for member in ("nvme0n1", "nvme1n1"):
        (md / f"dev-{member}").mkdir()
        queue = tmp_path / f"sys/block/{member}/queue"
        queue.mkdir(parents=True)
        (queue / "scheduler").write_text("[none] mq-deadline\n")
    queue = tmp_path / "sys/block/md0/queue"
    queue.mkdir(parents=True)
    (queue / "read_ahead_kb").write_text("128\n")
    array = MdArray(
        "md0", "active", "raid5", (ArrayMember("nvme0n1", 0), ArrayMember("nvme1n1", 1)), raid_disks=2, uuid=UUID
    )
    return SystemRoot(tmp_path), array


def _value(root: SystemRoot, path: str) -> str:
    return root.path(path).read_text().strip()


def test_catalogue_reads_a_captured_raid6(tmp_path: Path) -> None:
    root = SystemRoot(LAB)
    inventory = scan(root)
    md0 = inventory.array("md0")
    assert md0 is not None and md0.level == "raid6"
    readings = {(r.knob.name, r.device): r for r in read_knobs(root, md0, inventory)}
    cache = readings[("stripe_cache_size", "md0")]
    assert cache.value is not None and cache.value.value == "256"
    members = md0.raid_disks or 0
    assert cache.memory_bytes == 256 * 4096 * members, cache.memory_bytes
    assert cache.suggestion.value == "4096" and cache.suggested_memory_bytes == 4096 * 4096 * members
    speed = readings[("sync_speed_min", "md0")]
    assert speed.value is not None and speed.value.restore == "system", speed.value
    assert ("member:scheduler", "nvme0n1") in readings
    assert all(r.knob.field for r in readings.values())
    md1 = inventory.array("md1")
    assert md1 is not None
    names = {r.knob.name for r in read_knobs(root, md1, inventory)}
    assert "stripe_cache_size" not in names and "sync_speed_min" in names, names  # raid1: no stripe cache


def test_values_are_checked_against_the_range() -> None:
    cache = knob_named("stripe_cache_size")
    assert cache.check_value(" 4096 ") == "4096"
    for bad in ("16", "32769", "4k", "", "-1", "²"):
        with pytest.raises(PlanError):
            cache.check_value(bad)
    assert knob_named("sync_speed_max").check_value("system") == "system"
    with pytest.raises(PlanError, match="not offered"):
        knob_named("member:scheduler").check_value("bfq", ("none", "mq-deadline"))
    with pytest.raises(PlanError, match="known knobs"):
        knob_named("stripe_cache")


def test_changes_are_journalled_first_and_restored_after_an_error(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path / "root")
    journals = tmp_path / "journal"
    with pytest.raises(RuntimeError), KnobChanger(root, directory=journals) as changer:
        assert changer.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "4096", array="md0", array_uuid=UUID) == "4096"
        changer.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "1024", array="md0", array_uuid=UUID)
        changer.set(KNOBS_BY_NAME["sync_speed_min"], "md0", "50000", array="md0", array_uuid=UUID)
        [entry] = load_journals(journals)
        assert [(c.knob, c.original) for c in entry.changes] == [("stripe_cache_size", "256"),
                                                                  ("sync_speed_min", "system")]
        raise RuntimeError("the benchmark failed")
    assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "256"
    assert _value(root, "/sys/block/md0/md/sync_speed_min") == "system"  # a real md file would say "1000 (system)"
    assert load_journals(journals) == []
    assert [r.ok for r in changer.restored] == [True, True], [r.text for r in changer.restored]


def test_a_bad_value_changes_nothing(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path / "root")
    with KnobChanger(root, directory=tmp_path / "journal") as changer, pytest.raises(PlanError):
        changer.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "99999")
    assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "256"
    assert load_journals(tmp_path / "journal") == []


def _killed_child(tmp_path: Path, root: SystemRoot, journals: Path) -> None:
    """A real process that changes two knobs through KnobChanger and is then killed with SIGKILL."""
    ready = tmp_path / "ready"
    code = f"""
    import time
    from pathlib import Path
    from mdtui.probe.root import SystemRoot
    from mdtui.tune.catalogue import KNOBS_BY_NAME
    from mdtui.tune.journal import KnobChanger
    changer = KnobChanger(SystemRoot({str(root.root)!r}), purpose="a test sweep", directory=Path({str(journals)!r}))
    changer.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "4096", array="md0", array_uuid={UUID!r})
    changer.set(KNOBS_BY_NAME["member:scheduler"], "nvme1n1", "mq-deadline", array="md0", array_uuid={UUID!r})
    Path({str(ready)!r}).write_text("ready")
    time.sleep(60)
    """
    with killed_when_ready(code, ready, "changed its knobs") as child:
        assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "4096"
        assert [journal.pid for journal in load_journals(journals)] == [child.pid]
        assert recover_dead(root, journals) == []  # its owner is alive: nothing is touched
        with KnobChanger(root, directory=journals) as rival, pytest.raises(MdtuiError, match="a test sweep"):
            rival.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "1024")


def test_a_killed_process_is_undone_by_the_next_start(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path / "root")
    journals = tmp_path / "journal"
    _killed_child(tmp_path, root, journals)
    assert _value(root, "/sys/block/nvme1n1/queue/scheduler") == "mq-deadline"
    lines = recover_dead(root, journals)
    assert len(lines) == 2 and all("restored" in line and "a test sweep" in line for line in lines), lines
    assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "256"
    assert _value(root, "/sys/block/nvme1n1/queue/scheduler") == "none"
    assert load_journals(journals) == [] and recover_dead(root, journals) == []


def test_a_knob_of_an_array_that_is_gone_is_reported_not_forced(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path / "root")
    journals = tmp_path / "journal"
    _killed_child(tmp_path, root, journals)
    # The array was stopped and another one with another UUID now has the name.
    root.path("/sys/block/md0/md/uuid").write_text("00000000-0000-0000-0000-000000000001\n")
    lines = recover_dead(root, journals)
    assert len(lines) == 2 and all("not restored" in line and "another array" in line for line in lines), lines
    assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "4096"  # not forced onto the new array
    assert load_journals(journals) == []


def test_a_knob_of_an_array_whose_uuid_reads_empty_is_not_written(tmp_path: Path) -> None:
    """A UUID md no longer shows is no proof of the same array: the knob journal refuses as the safety journal
    does (both use journal.array_problem; the knob journal wrote the knob back before)."""
    root, _ = _tree(tmp_path / "root")
    changer = KnobChanger(root, directory=tmp_path / "journal")
    changer.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "4096", array="md0", array_uuid=UUID)
    root.path("/sys/block/md0/md/uuid").write_text("\n")  # md0 stopped and its name taken by an inactive array
    [restored] = changer.restore()
    assert not restored.ok and restored.text == (
        "md0 stripe_cache_size not restored: md0 is now another array (UUID unknown) (it was 256)"
    )
    assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "4096"


def test_udev_rule_apply_show_and_remove(tmp_path: Path) -> None:
    _, array = _tree(tmp_path / "root")
    path = tmp_path / "rules.d" / "90-mdtui-tune.rules"
    path.parent.mkdir()
    plan = plan_apply(array, knob_named("stripe_cache_size"), "4096", path)
    assert plan.old == "" and plan.diff.startswith("--- /dev/null") and 'ATTR{md/stripe_cache_size}="4096"' in plan.diff
    assert f'ENV{{MD_UUID}}=="{mdadm_uuid(UUID)}"' in plan.new
    write_plan(plan)
    write_plan(plan_apply(array, knob_named("read_ahead_kb"), "8192", path))
    write_plan(plan_apply(array, knob_named("stripe_cache_size"), "8192", path))  # replaces, not adds
    rules = rules_for(array, path)
    assert {k: r.value for k, r in rules.items()} == {"stripe_cache_size": "8192", "read_ahead_kb": "8192"}
    assert len(parse_rules(path.read_text())) == 2
    other = MdArray("md0", "active", "raid5", uuid="00000000-0000-0000-0000-000000000001")
    assert rules_for(other, path) == {}  # matched on the UUID, not the name
    with pytest.raises(PlanError, match="sysctl"):
        plan_apply(array, knob_named("speed_limit_max"), "500000", path)
    write_plan(plan_remove(array, knob_named("stripe_cache_size"), path))
    write_plan(plan_remove(array, knob_named("read_ahead_kb"), path))
    assert not path.exists()
    with pytest.raises(PlanError, match="nothing to remove"):
        plan_remove(array, knob_named("read_ahead_kb"), path)


def test_knob_context_is_what_sysfs_says(tmp_path: Path) -> None:
    root, array = _tree(tmp_path / "root")
    context = knob_context(root, array)
    assert context["md/stripe_cache_size"] == "256" and context["nvme1n1/scheduler"] == "[none] mq-deadline"
    assert context["queue/read_ahead_kb"] == "128"


def test_tune_verb_on_a_captured_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(LAB), "tune", "md0", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    cache = next(k for k in document["knobs"] if k["name"] == "stripe_cache_size")
    assert cache["value"] == "256" and cache["memory_bytes"] == 256 * 4096 * 4
    assert main(["--root", str(LAB), "tune", "md0"]) == 0
    out = capsys.readouterr().out
    assert "stripe_cache_size" in out and "4.0 MiB" in out and "no measured figure yet" in out
    assert main(["--root", str(LAB), "tune", "md7"]) == 2
    assert "no array 'md7'" in capsys.readouterr().err
    assert main(["--root", str(LAB), "tune", "--apply", "stripe_cache_size=4096", "md0", "--yes"]) == 2
    captured = capsys.readouterr()
    assert 'ATTR{md/stripe_cache_size}="4096"' in captured.out and "captured tree" in captured.err
    assert main(["--root", str(LAB), "tune", "--apply", "stripe_cache_size=5", "md0", "--yes"]) == 2
    assert "out of range" in capsys.readouterr().err


_UNPRIVILEGED_WRITE = """
import json, sys
from pathlib import Path
from mdtui.errors import MdtuiError
from mdtui.probe.root import SystemRoot
from mdtui.tune.catalogue import KNOBS_BY_NAME
from mdtui.tune.journal import KnobChanger, load_journals
base = Path(sys.argv[1])
outcome = {}
try:
    with KnobChanger(SystemRoot(base / "root"), directory=base / "journal") as changer:
        changer.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "4096", array="md0", array_uuid=sys.argv[2])
except MdtuiError as exc:
    outcome["error"] = str(exc)
outcome["kept"] = [c.knob for j in load_journals(base / "journal") for c in j.changes]
print(json.dumps(outcome))
"""


def test_write_errors_are_one_line() -> None:
    """A knob file this user may not write: one line naming root, and the journal keeps the restore for a later
    start as root. Run as nobody in a child, since root writes a read-only file; the child imports a public
    copy of the package (unprivileged.run_as_nobody), so it passes wherever the clone lives."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    with public_dir("mdtui-unprivileged-") as base:
        _tree(base / "root")
        (base / "journal").mkdir(mode=0o700)
        os.chown(base / "journal", 65534, 65534)
        for directory, dirs, files in os.walk(base / "root"):
            for name in dirs + files:
                os.chmod(Path(directory, name), 0o755 if name in dirs else 0o444)
        child = run_as_nobody(
            _UNPRIVILEGED_WRITE, str(base), UUID, cwd=base, env={"XDG_STATE_HOME": str(base / "journal")}
        )
        assert child.returncode == 0, child.stderr
        outcome = json.loads(child.stdout)
        assert "root" in outcome["error"] and "\n" not in outcome["error"]
        assert outcome["kept"] == ["stripe_cache_size"]
        assert _value(SystemRoot(base / "root"), "/sys/block/md0/md/stripe_cache_size") == "256"


def test_a_finished_sweep_is_the_advisor_s_evidence(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from mdtui.advise.findings import Severity
    from mdtui.advise.rules.inputs import AdviceInput
    from mdtui.advise.rules.knobs import rule_knob_sweep
    from mdtui.store.records import Metrics, RunSetup, RunStatus
    from mdtui.store.runs import ResultsStore

    moment = datetime(2026, 5, 1, tzinfo=UTC)
    with ResultsStore(tmp_path / "results.db") as store:
        ids = [
            store.add_run(
                RunSetup(preset="custom", target="/dev/md0", label=f"{name}={value}",
                         context={"knobs": {f"md/{name}": value}}),
                status=RunStatus.COMPLETE, started_at=moment, ended_at=moment,
                metrics=Metrics(write_bw_bytes_per_s=mbps * 1e6),
            )
            for name, value, mbps in (("stripe_cache_size", "256", 100.0), ("stripe_cache_size", "4096", 180.0),
                                      ("group_thread_cnt", "0", 150.0), ("group_thread_cnt", "4", 151.0))
        ]
        runs = tuple(store.list_runs())
    found = {f.id: f for f in rule_knob_sweep(AdviceInput(runs=runs, stripe_cache_pages={"md0": 256}))}
    cache = found["knob-sweep:md0:stripe_cache_size"]
    assert cache.title == f"md0: stripe_cache_size=4096 gave 1.80× the writes of 256 here (run #{ids[1]} vs #{ids[0]})"
    assert cache.severity is Severity.WARNING and "tune --apply stripe_cache_size=4096 md0" in cache.what_to_do
    threads = found["knob-sweep:md0:group_thread_cnt"]
    assert threads.title == (f"md0: group_thread_cnt made no difference worth keeping here: 4 gave 1.01× the writes "
                             f"of 0 (run #{ids[3]} vs #{ids[2]})") and threads.severity is Severity.INFO, threads.title


def test_the_sweep_sees_each_value_and_puts_the_original_back_when_a_run_fails(tmp_path: Path) -> None:
    """The knob handling of mdtui.advise.knob_sweep; the preset runner here only records what sysfs said
    when it was called (the real benchmark engine runs in tests/lab/test_tune.py)."""
    from datetime import UTC, datetime

    from mdtui.advise.experiments import ExperimentCancelled
    from mdtui.advise.knob_sweep import knob_sweep
    from mdtui.store.records import Metrics, RunSetup, RunStatus
    from mdtui.store.runs import ResultsStore

    root, array = _tree(tmp_path / "root")
    journals = tmp_path / "journal"
    seen: list[str] = []
    moment = datetime(2026, 5, 1, tzinfo=UTC)
    with ResultsStore(tmp_path / "results.db") as store:

        def run_preset(preset: str, target: str, *, quick: bool, label: str, **options: object) -> list[int]:
            seen.append(_value(root, "/sys/block/md0/md/stripe_cache_size"))
            assert load_journals(journals), "the original must be journalled before the run"
            return [store.add_run(RunSetup(preset=preset, target=target, label=label), status=RunStatus.COMPLETE,
                                  started_at=moment, ended_at=moment,
                                  metrics=Metrics(write_bw_bytes_per_s=float(seen[-1]) * 1e6))]

        knob = knob_named("stripe_cache_size")
        result = knob_sweep(run_preset, array, knob, ["256", "4096"], root=root, store=store,
                            changer=KnobChanger(root, directory=journals))
        assert seen == ["256", "4096"] and _value(root, "/sys/block/md0/md/stripe_cache_size") == "256"
        assert any(note.startswith("best: stripe_cache_size=4096, 16.00×") for note in result.notes), result.notes
        assert "restored: md0 stripe_cache_size restored to 256" in result.notes

        def stopped(preset: str, target: str, *, quick: bool, label: str, **options: object) -> list[int]:
            raise ExperimentCancelled("stopped by Ctrl-C")

        with pytest.raises(ExperimentCancelled):
            knob_sweep(stopped, array, knob, ["1024"], root=root, store=store,
                       changer=KnobChanger(root, directory=journals))
        assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "256" and load_journals(journals) == []
        with pytest.raises(PlanError, match="out of range"):  # checked before anything changes
            knob_sweep(run_preset, array, knob, ["4096", "99999"], root=root, store=store)
        assert seen == ["256", "4096"]


def test_a_sweep_of_a_speed_knob_is_evidence_too(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from mdtui.advise.findings import Severity
    from mdtui.advise.rules.inputs import AdviceInput
    from mdtui.advise.rules.knobs import rule_knob_sweep
    from mdtui.store.records import Metrics, RunSetup, RunStatus
    from mdtui.store.runs import ResultsStore

    moment = datetime(2026, 5, 1, tzinfo=UTC)
    with ResultsStore(tmp_path / "results.db") as store:
        for value, mbps in (("system", 100.0), ("50000", 130.0)):
            store.add_run(RunSetup(preset="custom", target="/dev/md2", label=f"sync_speed_min={value}",
                                   context={"knobs": {}}), status=RunStatus.COMPLETE, started_at=moment,
                          ended_at=moment, metrics=Metrics(read_bw_bytes_per_s=mbps * 1e6))
        runs = tuple(store.list_runs())
    (finding,) = rule_knob_sweep(AdviceInput(runs=runs, stripe_cache_pages={"md2": 256}))
    assert "sync_speed_min=50000 gave 1.30× the reads of system" in finding.title, finding.title
    assert finding.severity is Severity.INFO


def test_a_knob_is_changed_only_for_an_array_the_journal_can_name(tmp_path: Path) -> None:
    """Without the array's UUID the journal entry could never be acted on, so a crash would leave the knob changed
    for good: refused before anything is written."""
    root, _ = _tree(tmp_path / "root")
    with KnobChanger(root, directory=tmp_path / "journal") as changer, pytest.raises(MdtuiError, match="UUID"):
        changer.set(KNOBS_BY_NAME["stripe_cache_size"], "md0", "4096", array="md0", array_uuid="")
    assert _value(root, "/sys/block/md0/md/stripe_cache_size") == "256"
    assert load_journals(tmp_path / "journal") == []


def _unwritable_rules(root: SystemRoot) -> None:
    """No rules.d: the rule file reads as empty but cannot be written (as on a broken or read-only /etc)."""
    assert not root.path("/etc/udev/rules.d").exists()


def test_apply_puts_the_live_value_back_when_the_rule_cannot_be_written(tmp_path: Path) -> None:
    from mdtui.tune.apply import apply_knob, plan_knob_apply

    root, array = _tree(tmp_path)
    _unwritable_rules(root)
    plan = plan_knob_apply(root, array, knob_named("sync_speed_min"), "50000")
    assert plan.before.raw == "1000 (system)" and plan.confirmation == "md0"
    with pytest.raises(MdtuiError, match=r"cannot write .*; sync_speed_min is back to 1000 \(system\)") as failed:
        apply_knob(plan, confirmed="md0", root=root)
    assert "\n" not in str(failed.value)
    # What md takes to follow the global limit again, not the text it shows ("1000 (system)" is refused).
    assert _value(root, "/sys/block/md0/md/sync_speed_min") == "system"


def test_tune_apply_in_the_cli_restores_the_live_value_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mdtui tune --apply` runs the same sequence as the Tune screen: a rule that cannot be written puts the knob
    back (before, only the screen did). The captured tree stands for a live host here."""
    import mdtui.cli.tune as cli_tune

    tree = tmp_path / "tree"
    shutil.copytree(LAB, tree, symlinks=True)
    root = SystemRoot(tree)
    knob_file = root.path("/sys/block/md0/md/stripe_cache_size")
    assert knob_file.read_text().strip() == "256"
    _unwritable_rules(root)
    monkeypatch.setattr(cli_tune, "require_live", lambda root, action: None)
    assert main(["--root", str(tree), "tune", "--apply", "stripe_cache_size=4096", "md0", "--yes"]) == 2
    err = capsys.readouterr().err
    assert "stripe_cache_size is back to 256" in err and err.count("\n") == 1, err
    assert knob_file.read_text().strip() == "256"
    (tree / "etc/udev/rules.d").mkdir(parents=True)
    assert main(["--root", str(tree), "tune", "--apply", "stripe_cache_size=4096", "md0", "--yes"]) == 0
    assert "md0 stripe_cache_size reads 4096" in capsys.readouterr().out
    assert knob_file.read_text().strip() == "4096"
    assert 'ATTR{md/stripe_cache_size}="4096"' in (tree / "etc/udev/rules.d/90-mdtui-tune.rules").read_text()


def test_the_rule_column_says_none_and_why_instead_of_staying_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: RULE was empty on every row with nothing saying why. Now each row says none (no rule keeps it),
    - (no array rule can: a member's knob, a global limit) or the rule's value, and a line explains the words."""
    tree = tmp_path / "tree"
    shutil.copytree(LAB, tree, symlinks=True)
    assert main(["--root", str(tree), "tune", "md0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("KNOB"))
    start = lines[header].index("RULE")
    rows = {line.split()[0] + " " + line.split()[1]: line[start:].strip() for line in lines[header + 1 :]
            if line[:1].islower() and len(line) > start}  # fmt: skip
    assert rows["stripe_cache_size md0"] == "none" and rows["member:scheduler nvme0n1"] == "-", rows
    assert rows["speed_limit_max (all)"] == "-", rows
    assert any(line.startswith("RULE: ") and "none: not kept after a reboot" in line for line in lines)
    # With a rule (the tree's own rule file, as `tune` reads it under --root), the row carries its value, and
    # says when the live value differs from it.
    root = SystemRoot(tree)
    md0 = scan(root).array("md0")
    assert md0 is not None
    path = root.path(str(rules_path()))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_plan(plan_apply(md0, knob_named("stripe_cache_size"), "4096", path))
    assert main(["--root", str(tree), "tune", "md0"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("stripe_cache_size "))
    assert row.endswith("4096 ≠ live 256"), row
