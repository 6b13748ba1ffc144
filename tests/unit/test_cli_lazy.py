"""A verb imports its own module only: every `mdtui` command paid for importing all of them (~2 s on a host,
~14 s in the lab's emulated guest) before it could run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mdtui.cli.main import COMMANDS, build_parser, verb_of

FIXTURE_ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


def loaded_after(*argv: str) -> set[str]:
    """The mdtui modules a real `python -m mdtui ARGV` process had loaded when it exited."""
    probe = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules if m.startswith('mdtui'))),"
        " file=sys.stderr))\n"
        "from mdtui.__main__ import main\n"
        f"sys.exit(main({list(argv)!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_a_verb_loads_its_own_module_and_not_the_others() -> None:
    loaded = loaded_after("--root", str(FIXTURE_ROOT), "scan", "--json")
    assert "mdtui.cli.scan" in loaded
    assert not loaded & {"mdtui.cli.advise", "mdtui.cli.bench", "mdtui.cli.experiment", "mdtui.advise.rules"}
    assert not any(m.startswith("mdtui.cli.") and m not in ("mdtui.cli.scan",) and m.split(".")[2] in COMMANDS
                   for m in loaded)  # fmt: skip


def test_version_needs_no_verb(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser(["--version"])
    assert parser._subparsers is None  # no verb parser was built
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.startswith("mdtui ")


def test_the_whole_parser_still_has_every_verb_in_order() -> None:
    full = build_parser()
    assert full._subparsers is not None
    action = full._subparsers._group_actions[0]
    assert list(action.choices) == list(COMMANDS)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "verb"),
    [
        (["scan"], "scan"),
        (["--root", "/x", "bench", "--list"], "bench"),
        (["--root=/x", "results", "list"], "results"),
        (["--help"], None),
        (["bogus"], None),
        ([], None),
        (["--root", "scan"], None),  # "scan" is --root's value here, and no verb follows
    ],
)
def test_verb_of(argv: list[str], verb: str | None) -> None:
    assert verb_of(argv) == verb
