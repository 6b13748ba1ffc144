"""One rule for "are we in CI", and a lab that cannot vanish silently under scripts/test or CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci import LAB_REQUIRED_VAR, in_ci, lab_required

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "anything", " true "])
def test_ci_set_to_anything_else_is_ci(value: str) -> None:
    assert in_ci({"CI": value})


@pytest.mark.parametrize("value", ["", "0", "false", "False", "no", "NO", "  ", " 0 "])
def test_ci_empty_zero_false_or_no_is_not_ci(value: str) -> None:
    assert not in_ci({"CI": value})


def test_ci_unset_is_not_ci() -> None:
    assert not in_ci({})


def test_in_ci_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert in_ci()
    monkeypatch.setenv("CI", "false")
    assert not in_ci()
    monkeypatch.delenv("CI")
    assert not in_ci()


def test_lab_required_by_scripts_test_or_ci() -> None:
    assert lab_required({}) is None
    assert lab_required({"CI": "false", LAB_REQUIRED_VAR: "0"}) is None
    assert lab_required({LAB_REQUIRED_VAR: "1"}) == f"{LAB_REQUIRED_VAR} is set (scripts/test sets it)"
    assert lab_required({"CI": "true"}) == "CI is set"
    # Either one is enough: scripts/test requires the lab even when CI says false.
    assert lab_required({"CI": "false", LAB_REQUIRED_VAR: "1"}) is not None


def test_scripts_test_requires_the_lab() -> None:
    script = (REPO / "scripts" / "test").read_text()
    export = script.index(f"export {LAB_REQUIRED_VAR}=1")
    runs = [line for line in script.splitlines() if ".venv/bin/pytest" in line and not line.lstrip().startswith("#")]
    assert runs and export < script.index(".venv/bin/pytest")
    # Without arguments the lab runs as a whole (beside the rest, which alone leaves it out).
    assert any("tests/lab" in line and "not lab" not in line for line in runs), runs


def test_no_other_ci_rule() -> None:
    """Every test that asks "are we in CI" goes through ci.in_ci(); nothing else reads CI."""
    needles = ('environ.get("CI"', 'environ["CI"]', 'getenv("CI"', "environ.get('CI'", "environ['CI']")
    skip = {REPO / "tests" / "ci.py", Path(__file__).resolve()}
    offenders = [
        str(path.relative_to(REPO))
        for root in ("tests", "mdtui")
        for path in (REPO / root).rglob("*.py")
        if "fixtures" not in path.parts and path not in skip
        and any(needle in path.read_text(encoding="utf-8", errors="replace") for needle in needles)
    ]  # fmt: skip
    assert offenders == [], offenders


def _lab_test_without_a_lab(**env: str) -> subprocess.CompletedProcess[str]:
    """Run one lab test with QEMU pointed at nothing: the lab is missing, the guest never boots."""
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", LAB_REQUIRED_VAR)}
    environ.update(MDTUI_LAB_QEMU="/nonexistent/qemu-system-x86_64", **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider",
         "tests/lab/test_smoke.py::test_disk_by_id_links_exist"],
        cwd=REPO, env=environ, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_missing_lab_skips_with_the_reason_for_a_bare_pytest() -> None:
    result = _lab_test_without_a_lab()
    assert result.returncode == 0, result.stdout[-2000:]
    assert "1 skipped" in result.stdout and "qemu-system-x86_64" in result.stdout, result.stdout[-2000:]


@pytest.mark.parametrize(
    ("env", "why"),
    [({LAB_REQUIRED_VAR: "1"}, f"{LAB_REQUIRED_VAR} is set (scripts/test sets it)"), ({"CI": "true"}, "CI is set")],
)
def test_a_missing_lab_fails_under_scripts_test_or_ci(env: dict[str, str], why: str) -> None:
    result = _lab_test_without_a_lab(**env)
    assert result.returncode == 1, result.stdout[-2000:]
    # pytest reports a failure in a test's setup as an error: the run fails, the guest never boots.
    assert "1 error" in result.stdout and "skipped" not in result.stdout, result.stdout[-2000:]
    assert "lab unavailable, missing: qemu-system-x86_64" in result.stdout, result.stdout[-2000:]
    assert f"{why}, so a missing lab fails instead of skipping" in result.stdout, result.stdout[-2000:]
