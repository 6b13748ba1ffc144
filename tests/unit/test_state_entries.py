"""The one loader of a state directory's JSON entries, shared by the temporary-array and knob journals."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mdtui.state_dir import BadEntry, load_json_entries


def parse(raw: Any, path: Path) -> str:
    if not isinstance(raw, dict):
        raise BadEntry("not an object")
    return str(raw["name"])  # KeyError when it is missing


def test_only_entries_that_pass_are_loaded_and_every_other_is_named(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    for name, text in {
        "a.json": '{"name": "kept"}',
        "b.json": "{not json",
        "c.json": "[1, 2]",
        "d.json": '{"other": 1}',
        "e.txt": '{"name": "not an entry"}',
    }.items():
        (state / name).write_text(text)
        os.chmod(state / name, 0o600)
    skipped: list[tuple[Path, str]] = []
    found = load_json_entries(state, parse, "test entry", lambda where, why: skipped.append((where, str(why))))
    assert found == ["kept"]
    assert skipped == [
        (state / "b.json", "not a test entry"),
        (state / "c.json", "not an object"),
        (state / "d.json", "not a test entry"),
    ]


def test_a_planted_link_is_skipped_not_followed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"name": "planted"}')
    (state / "a.json").symlink_to(target)
    skipped: list[Path] = []
    assert load_json_entries(state, parse, "test entry", lambda where, why: skipped.append(where)) == []
    assert skipped == [state / "a.json"]


def test_a_missing_directory_holds_nothing(tmp_path: Path) -> None:
    assert load_json_entries(tmp_path / "absent", parse, "test entry", lambda where, why: None) == []
