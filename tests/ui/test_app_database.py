"""Every screen reads stored runs from the database the app was started with (--db), and an unreadable one leaves
a prediction without member figures, never a screen broken."""

from __future__ import annotations

import ast
from pathlib import Path

import mdtui.ui
from mdtui.bench.member_figures import stored_member_runs


def test_no_screen_reads_member_figures_from_a_database_of_its_own_choosing() -> None:
    """The watch screen, the arrays' forecasts, repair, scrub and grow plans and the resync view once read
    load_member_runs(None), the default database, whatever --db the app was given; the create screen and the
    guide read the app's. All go through stored_member_runs now, and none passes None."""
    package = Path(mdtui.ui.__file__).parent
    readers = ("load_member_runs", "stored_member_runs")
    found = [
        (path.relative_to(package).as_posix(), node.func.id, ast.unparse(node.args[0]))
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in readers
    ]
    assert found and all(name == "stored_member_runs" for _, name, _ in found), found
    assert all(argument != "None" for _, _, argument in found), found


def test_an_unreadable_database_gives_no_member_figures_not_an_error(tmp_path: Path) -> None:
    damaged = tmp_path / "results.db"
    damaged.write_bytes(b"not an SQLite database" * 100)
    assert stored_member_runs(damaged) == []
    assert stored_member_runs(tmp_path / "missing.db") == []
