"""The results screen describes a run through the core (store.describe), never through the CLI's text."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdtui.cli.results import render_run
from mdtui.store.describe import describe_run
from mdtui.store.runs import ResultsStore

from .results_data import fill, utc_clock

UI = Path(__file__).resolve().parents[2] / "mdtui" / "ui"


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    with utc_clock():
        yield


def test_every_stored_run_is_described_as_results_show_prints_it(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    ids = fill(path)
    with ResultsStore(path) as store:
        runs = [store.get_run(run_id) for run_id in ids.values()]
    assert len(runs) >= 10
    for run in runs:
        assert describe_run(run) == render_run(run)


def test_no_ui_module_imports_the_cli() -> None:
    importers = []
    for module in sorted(UI.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            if any(name == "mdtui.cli" or name.startswith("mdtui.cli.") for name in names):
                importers.append(str(module.relative_to(UI)))
    assert importers == []
