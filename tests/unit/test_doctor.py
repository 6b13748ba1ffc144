"""`mdtui doctor`: one line per piece of the host, what a missing one costs, and JSON for scripts."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from mdtui.cli.main import main
from mdtui.errors import MdtuiError
from mdtui.probe.host import TOOLS, Status, check_location, check_tool, host_checks
from mdtui.probe.root import SystemRoot

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"

# What each tool prints for --version on Debian 12 (mdadm writes it to stderr; both are passed on joined).
VERSION_OUTPUT = {
    "mdadm": "\nmdadm - v4.2 - 2021-12-30 - Debian 4.2-5\n",
    "fio": "fio-3.33\n",
    "smartctl": "smartctl 7.3 2022-02-28 r5338 [x86_64-linux-6.1.0-18-amd64] (local build)\nCopyright (C) 2002-22\n",
    "udevadm": "252\n",
}


def fake_run(argv: Sequence[str]) -> str | None:
    return VERSION_OUTPUT[argv[0]]


def test_each_tool_shows_its_version() -> None:
    found = {tool.name: check_tool(tool, lambda name: f"/usr/sbin/{name}", fake_run) for tool in TOOLS}
    assert {name: check.found for name, check in found.items()} == {
        "mdadm": "v4.2 (/usr/sbin/mdadm)",
        "fio": "3.33 (/usr/sbin/fio)",
        "smartctl": "7.3 (/usr/sbin/smartctl)",
        "udevadm": "252 (/usr/sbin/udevadm)",
    }
    assert all(check.status is Status.OK for check in found.values())


def test_a_missing_tool_says_what_it_costs() -> None:
    fio = next(tool for tool in TOOLS if tool.name == "fio")
    check = check_tool(fio, lambda _name: None, fake_run)
    assert check.status is Status.MISSING
    assert check.line() == "✖ fio        not found on PATH — cannot benchmark (bench, experiment)"


def test_a_tool_that_prints_no_version_is_a_warning_not_a_crash() -> None:
    check = check_tool(TOOLS[0], lambda name: f"/bin/{name}", lambda _argv: None)
    assert check.status is Status.WARN and "version unknown" in check.found


def test_a_captured_tree_answers_for_its_machine(tmp_path: Path) -> None:
    checks = {c.name: c for c in host_checks(SystemRoot(TREES / "real-links"), [], which=lambda _n: None, euid=1000)}
    assert checks["md driver"].found == "loaded; personalities raid0 raid1 raid10 raid6 raid5 raid4 linear"
    assert checks["udev db"].status is Status.OK
    assert checks["root"].status is Status.WARN and "SMART" in (checks["root"].cost or "")
    empty = {c.name: c for c in host_checks(SystemRoot(tmp_path), [], which=shutil.which)}
    assert empty["md driver"].status is Status.MISSING and "modprobe md_mod" in (empty["md driver"].cost or "")
    assert empty["cpufreq"].status is Status.MISSING and empty["udev db"].status is Status.MISSING


def test_cpufreq_names_driver_and_governor(tmp_path: Path) -> None:
    # A two-CPU host with intel_pstate in powersave, as /sys/devices/system/cpu lays it out.
    for cpu in (0, 1):
        policy = tmp_path / f"sys/devices/system/cpu/cpufreq/policy{cpu}"
        policy.mkdir(parents=True)
        (policy / "affected_cpus").write_text(f"{cpu}\n")
        (policy / "scaling_driver").write_text("intel_pstate\n")
        (policy / "scaling_governor").write_text("powersave\n")
    (check,) = [c for c in host_checks(SystemRoot(tmp_path), []) if c.name == "cpufreq"]
    assert check.found == "2 CPUs, driver intel_pstate, governor powersave"


def test_locations_show_mode_and_refusals(tmp_path: Path) -> None:
    made = tmp_path / "state"
    made.mkdir(mode=0o700)
    assert check_location("state", made, "x").found == f"{made} (mode 0700, uid {os.geteuid()})"
    assert check_location("state", tmp_path / "later" / "db", "x").found.endswith("(made on first use)")
    open_to_all = tmp_path / "shared"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    warned = check_location("results", open_to_all / "results.db", "benchmark results")
    assert warned.status is Status.WARN and "writable" in (warned.cost or "")
    refused = host_checks(SystemRoot(tmp_path), [("state", MdtuiError("$XDG_STATE_HOME is not root's"), "x")])
    (state,) = [c for c in refused if c.name == "state"]
    assert state.status is Status.WARN and state.cost == "$XDG_STATE_HOME is not root's"


def test_doctor_prints_one_line_each_and_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "results.db"))
    monkeypatch.setenv("MDTUI_STATE_DIR", str(tmp_path / "state"))
    tree = str(TREES / "real-links")
    assert main(["--root", tree, "doctor"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[1] for line in lines[1:-1]]
    assert names == [
        "mdadm",
        "fio",
        "smartctl",
        "udevadm",
        "udev",
        "md",
        "root",
        "cpufreq",
        "state",
        "results",
        "textual",
    ]
    assert any(line.startswith("✓ results") and str(tmp_path / "results.db") in line for line in lines)
    assert main(["--root", tree, "doctor", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["root"] == tree
    by_name = {check["name"]: check for check in document["checks"]}
    assert by_name["md driver"]["status"] == "ok" and by_name["cpufreq"]["status"] == "missing"
    assert by_name["cpufreq"]["cost"] and by_name["textual"]["found"]


def test_the_first_run_names_only_what_is_missing_without_running_anything(tmp_path: Path) -> None:
    from mdtui.probe.host import missing_pieces

    ran: list[str] = []

    def which(name: str) -> str | None:
        ran.append(name)
        return None if name == "fio" else f"/usr/bin/{name}"

    (tmp_path / "proc").mkdir()
    missing = missing_pieces(SystemRoot(tmp_path), which)
    assert [line.split(":")[0] for line in missing] == ["fio", "md driver"]
    assert "cannot benchmark" in missing[0]
    (tmp_path / "proc" / "mdstat").write_text("Personalities : [raid1]\nunused devices: <none>\n")
    assert [line.split(":")[0] for line in missing_pieces(SystemRoot(tmp_path), which)] == ["fio"]
