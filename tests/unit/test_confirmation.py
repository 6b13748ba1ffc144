"""The one confirmation rule (mdtui.confirmation): every core function that writes or destroys takes what the
user typed and refuses nothing, a bool, or another name before it acts; no core function takes a bool."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mdtui
from mdtui.actionlog import ActionLog
from mdtui.advise.experiments import ArrayTools, temporary_array
from mdtui.confirmation import confirms, require_confirmed
from mdtui.errors import SafetyError
from mdtui.execute import calibrate, mdadm
from mdtui.execute.state import ArrayRegistry, TemporaryArrayJournal
from mdtui.keep import alerts, persist, repair, schedule, scrub
from mdtui.keep.conf import ConfEdit, Distribution
from mdtui.model.array import ArrayMember, MdArray
from mdtui.model.disk import Disk, Transport
from mdtui.plan.create import plan_create
from mdtui.plan.destroy import DestroyPlan
from mdtui.plan.request import CreateRequest
from mdtui.probe.root import SystemRoot
from mdtui.tune.apply import apply_knob, plan_knob_apply, plan_knob_remove, remove_knob_rule
from mdtui.tune.catalogue import knob_named

# What an old caller passed, what a careless one passes, and a near miss of each token.
NOT_CONFIRMED: tuple[Any, ...] = (None, True, "", " ", "md8", "/dev/md9 x", "yes")


def test_the_rule() -> None:
    assert confirms("/dev/md0", "/dev/md0") and confirms("  md0\n", "md0")
    assert not confirms("/dev/MD0", "/dev/md0") and not confirms("md0", "/dev/md0")
    assert not confirms(True, "md0") and not confirms(None, "md0")  # type: ignore[arg-type]
    assert not confirms("", "")  # a plan that cannot name what it writes cannot be confirmed
    with pytest.raises(SafetyError, match=r"creating /dev/md0: confirm by naming it \(type /dev/md0"):
        require_confirmed("md0", "/dev/md0", "creating /dev/md0")


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Any program a refused function would start fails the test instead (it would not be a SafetyError)."""
    started: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        started.append(str(args[0] if args else kwargs))
        raise AssertionError(f"a process was started: {started[-1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(asyncio, "create_subprocess_exec", refuse)
    return started


def _disks() -> tuple[Disk, ...]:
    return tuple(Disk(n, f"/dev/{n}", Transport.NVME, size_bytes=1 << 30) for n in ("nvme2n1", "nvme3n1"))


def _array() -> MdArray:
    return MdArray("md9", "active", "raid1", (ArrayMember("nvme2n1", 0), ArrayMember("nvme3n1", 1)), raid_disks=2)


def _tree(tmp_path: Path) -> SystemRoot:
    """Files the refused writes would change: mdadm.conf, a cron line, md9's knobs and sync_action."""
    (tmp_path / "etc/mdadm").mkdir(parents=True)
    (tmp_path / "etc/mdadm/mdadm.conf").write_text("MAILADDR root\n")
    (tmp_path / "etc/cron.d").mkdir(parents=True)
    (tmp_path / "etc/cron.d/mdadm").write_text("57 0 * * 0 root true\n")
    (tmp_path / "etc/udev/rules.d").mkdir(parents=True)
    md = tmp_path / "sys/block/md9/md"
    md.mkdir(parents=True)
    (md / "stripe_cache_size").write_text("256\n")
    (md / "sync_action").write_text("idle\n")
    return SystemRoot(tmp_path)


def _writers(tmp_path: Path) -> list[tuple[str, str, Callable[[Any], object]]]:
    """(what, the plan's token, a call of the core function with a given confirmation), for every writer."""
    root = _tree(tmp_path)
    log = ActionLog(tmp_path / "state/actions.log")
    registry = ArrayRegistry(tmp_path / "state/registry.json")
    create = plan_create(CreateRequest("/dev/md9", "raid1", _disks()))
    destroy = DestroyPlan("/dev/md9", ("/dev/nvme2n1",), ())
    conf = "/etc/mdadm/mdadm.conf"
    edit = ConfEdit(conf, "MAILADDR root\n", "MAILADDR root\nARRAY /dev/md9\n", "ARRAY /dev/md9", None)
    debian = Distribution("debian", conf, ("update-initramfs", "-u"), "update-initramfs")
    persisting = persist.PersistPlan("/dev/md9", "ARRAY /dev/md9", debian, edit)
    adding = repair.RepairPlan("/dev/md9", None, "add", None, _disks()[0], ())
    repairing = scrub.ScrubPlan("md9", "repair", "/sys/block/md9/md/sync_action")
    alerting = alerts.AlertsPlan(debian, edit, "ops@example.org", None, (("mdadm", "--monitor"),))
    cron = schedule.ScheduleEdit("cron", "/etc/cron.d/mdadm", "57 0 * * 0 root true\n", "0 1 * * 6 root true\n")
    calibrating = calibrate.CalibrationPlan(1, ("mdtui-cal-1-0",), "/dev/md120", False)
    knob = plan_knob_apply(root, _array(), knob_named("stripe_cache_size"), "4096")
    tools = ArrayTools(root, log, registry, journal=TemporaryArrayJournal(tmp_path / "state/journal"))

    def temporary(typed: Any) -> None:
        with temporary_array(create, tools, confirmed=typed):
            raise AssertionError("the block ran")

    root.path("/etc/udev/rules.d/90-mdtui-tune.rules").write_text(knob.rule.new)  # a rule to remove

    def kept_rule(typed: Any) -> None:
        remove_knob_rule(plan_knob_remove(root, _array(), knob.knob), confirmed=typed, root=root)

    return [
        ("create", "/dev/md9", lambda t: mdadm.execute_create(create, confirmed=t, root=root, log=log)),
        ("destroy", "/dev/md9", lambda t: mdadm.execute_destroy(destroy, confirmed=t, root=root, log=log)),
        ("persist", "md9", lambda t: persist.write_conf(persisting, confirmed=t, root=root, log=log)),
        ("initramfs", "md9", lambda t: persist.refresh_initramfs(persisting, confirmed=t, log=log)),
        ("repair", "nvme2n1", lambda t: repair.execute_repair(adding, confirmed=t, root=root, log=log)),
        ("scrub repair", "md9", lambda t: scrub.start_scrub(repairing, confirmed=t, root=root, log=log)),
        ("alerts conf", "alerts", lambda t: alerts.write_alerts_conf(alerting, confirmed=t, root=root, log=log)),
        ("monitor", "alerts", lambda t: alerts.start_monitor(alerting, confirmed=t, log=log)),
        ("schedule", "schedule", lambda t: schedule.write_schedule(cron, confirmed=t, root=root, log=log)),
        ("calibrate", "calibrate", lambda t: calibrate.execute(calibrating, confirmed=t)),
        ("knob apply", "md9", lambda t: apply_knob(knob, confirmed=t, root=root)),
        ("knob rule removal", "md9", kept_rule),
        ("temporary array", "/dev/md9", temporary),
    ]


WRITERS = [
    "create", "destroy", "persist", "initramfs", "repair", "scrub repair", "alerts conf", "monitor", "schedule",
    "calibrate", "knob apply", "knob rule removal", "temporary array",
]  # fmt: skip


@pytest.mark.parametrize("what", WRITERS)
def test_every_writer_refuses_before_it_acts(what: str, tmp_path: Path, no_processes: list[str]) -> None:
    writers = {name: (token, call) for name, token, call in _writers(tmp_path)}
    token, call = writers[what]
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    for typed in (*NOT_CONFIRMED, token.upper() if token.upper() != token else token + "0"):
        with pytest.raises(SafetyError, match=f"type {token}"):
            call(typed)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before and no_processes == []


def test_no_core_function_takes_a_bool_confirmation() -> None:
    """Mechanical: a parameter named ``confirmed`` anywhere in mdtui is what was typed (str), never a bool."""
    found = []
    for info in pkgutil.walk_packages(mdtui.__path__, "mdtui."):
        if info.name.startswith("mdtui.ui") or info.name == "mdtui.__main__":
            continue
        module = importlib.import_module(info.name)
        for _, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ != module.__name__:
                continue
            parameter = inspect.signature(function).parameters.get("confirmed")
            if parameter is not None:
                found.append((f"{info.name}.{function.__qualname__}", str(parameter.annotation)))
    assert len(found) >= 12, found
    assert [f for f in found if f[1] not in ("str | None", "str")] == []
