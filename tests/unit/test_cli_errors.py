"""Argument errors are one line and a hint (`see mdtui bench --help`), not argparse's usage block."""

from __future__ import annotations

import pytest

from mdtui.cli.main import main
from mdtui.format import plural


@pytest.mark.parametrize(
    ("argv", "said", "hint"),
    [
        (["bench", "--bs", "3q"], "argument --bs: size '3q'", "see mdtui bench --help"),
        (["bench", "--rw", "sideways"], "argument --rw: invalid choice: 'sideways'", "see mdtui bench --help"),
        (["--bogus"], "unrecognized arguments: --bogus", "see mdtui --help"),
        (["bogus"], "invalid choice: 'bogus'", "see mdtui --help"),
        (["results", "bogus"], "invalid choice: 'bogus'", "see mdtui results --help"),
    ],
)
def test_argument_error_is_one_line_and_a_hint(
    argv: list[str], said: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 2, captured.err
    assert lines[0].startswith("mdtui: error: ") and said in lines[0]
    assert lines[1].strip() == hint
    assert "usage:" not in captured.err
    assert captured.out == ""


def test_help_still_prints_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: mdtui bench")


@pytest.mark.parametrize(
    ("count", "noun", "many", "text"),
    [(1, "disk", None, "1 disk"), (0, "disk", None, "0 disks"), (2, "member", None, "2 members"),
     (1, "copy", "copies", "1 copy"), (3, "copy", "copies", "3 copies"), (1200, "run", None, "1,200 runs")],
)  # fmt: skip
def test_plural(count: int, noun: str, many: str | None, text: str) -> None:
    assert plural(count, noun, many) == text
