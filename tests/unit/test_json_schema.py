"""Every verb's --json carries one schema version, put there in one place (mdtui.jsondoc), so scripts can check it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from mdtui import jsondoc
from mdtui.cli.main import main

REPO = Path(__file__).resolve().parents[2]
TREE = REPO / "tests" / "fixtures" / "trees" / "real-links"

# What each verb prints with --json on a captured tree (a command per verb that can run there).
VERBS = (
    ("scan", "--json", "--no-smart"),
    ("advise", "--json"),
    ("doctor", "--json"),
    ("tune", "md0", "--json"),
    ("predict", "--level", "5", "nvme0n1", "nvme1n1", "nvme2n1", "--json"),
    ("scrub", "--json"),
    ("scrub", "md2", "--dry-run", "--json"),
    ("alerts", "--json"),
    ("scrub-schedule", "--json"),
    ("results", "list", "--json"),
    ("create", "--level", "1", "loop0", "nvme4n1", "--allow-mixed-sizes", "--dry-run", "--json"),
    ("repair", "md0", "--fail", "nvme1n1", "--dry-run", "--json"),
    ("persist", "md0", "--dry-run", "--json"),
)


@pytest.mark.parametrize("argv", VERBS, ids=[" ".join(argv[:2]) for argv in VERBS])
def test_every_verb_json_starts_with_the_schema_version(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "results.db"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert main(["--root", str(TREE), *argv]) == 0, capsys.readouterr().err
    document = json.loads(capsys.readouterr().out)
    assert next(iter(document)) == jsondoc.SCHEMA_KEY
    assert document[jsondoc.SCHEMA_KEY] == jsondoc.SCHEMA_VERSION == 1


def test_watch_json_lines_each_carry_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(TREE), "watch", "--json", "--count", "2", "--interval", "0.1"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2 and all(line[jsondoc.SCHEMA_KEY] == jsondoc.SCHEMA_VERSION for line in lines)


def test_no_verb_writes_json_of_its_own() -> None:
    """The guard that keeps it one place: a verb module printing json.dumps itself would leave the version out.

    The one exception is bench's unsaved runs, which are spool documents (their own format and version) for
    `mdtui results import`, printed on stdout only when neither the database nor its spool could take them."""
    allowed = {("bench.py", "dumps")}
    found = []
    for path in sorted((REPO / "mdtui" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "json"
                and node.func.attr in ("dump", "dumps")
                and (path.name, node.func.attr) not in allowed
            ):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []
