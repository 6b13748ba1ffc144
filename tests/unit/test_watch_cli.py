"""`mdtui watch`: argument checks, the JSON lines stream, and the dashboard dispatch that keeps the CLI free of UI."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mdtui.__main__ import main as entry_main
from mdtui.cli.main import build_parser
from mdtui.cli.main import main as cli_main
from mdtui.cli.watch import WatchRequest, check_watch_args, stream_json
from mdtui.errors import MdtuiError
from mdtui.probe.arrays import read_arrays
from mdtui.probe.root import SystemRoot

# Captured in the lab: md0 raid6 (resyncing), md1 raid1 (degraded), md2 raid10; counters stand still.
TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "lab-standard"


def args(*argv: str):
    return build_parser().parse_args(["--root", str(TREE), "watch", *argv])


def test_arguments_are_checked_before_anything_starts() -> None:
    request = check_watch_args(args("/dev/md0", "--interval", "0.25"))
    md0 = next(a for a in read_arrays(SystemRoot(TREE)) if a.name == "md0")
    assert request == WatchRequest(str(TREE), "md0", 0.25, tuple(m.name for m in md0.members))
    with pytest.raises(MdtuiError, match=r"no md array 'md7' \(arrays: md0, md1, md2\)"):
        check_watch_args(args("md7"))
    with pytest.raises(MdtuiError, match="too short"):
        check_watch_args(args("--interval", "0.01"))
    with pytest.raises(MdtuiError, match="--count goes with --json"):
        check_watch_args(args("--count", "3"))
    with pytest.raises(MdtuiError, match="positive"):
        check_watch_args(args("--json", "--count", "0"))


def test_json_stream_prints_count_lines_each_with_rates() -> None:
    out = io.StringIO()
    assert stream_json(WatchRequest(str(TREE), None, 0.1), 2, out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert line["schema_version"] == 1 and line["interval"] > 0
        # The silent first reading means every printed device has rates (0 here: a captured tree stands still).
        assert line["devices"] and all(d["read_bytes_per_s"] == 0.0 for d in line["devices"].values())
        assert {a["name"] for a in line["arrays"]} == {"md0", "md1", "md2"}
    assert lines[1]["timestamp"] > lines[0]["timestamp"]


def test_json_stream_of_one_array_keeps_its_device_and_members_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["--root", str(TREE), "watch", "md2", "--json", "--count", "1", "--interval", "0.1"]) == 0
    line = json.loads(capsys.readouterr().out)
    md2 = next(a for a in read_arrays(SystemRoot(TREE)) if a.name == "md2")
    assert set(line["devices"]) == {"md2", *(m.name for m in md2.members)}
    assert [a["name"] for a in line["arrays"]] == ["md2"]


def test_bad_arguments_are_a_message_from_both_entry_points(capsys: pytest.CaptureFixture[str]) -> None:
    assert entry_main(["--root", str(TREE), "watch", "md7"]) == 2
    assert "mdtui: no md array 'md7'" in capsys.readouterr().err
    assert cli_main(["--root", str(TREE), "watch", "md7", "--json"]) == 2
    assert "no md array" in capsys.readouterr().err
    # The core CLI has no dashboard; it says where the dashboard is instead of importing the UI.
    assert cli_main(["--root", str(TREE), "watch"]) == 2
    assert "runs from the app" in capsys.readouterr().err


def test_watch_json_never_loads_the_ui() -> None:
    code = (
        "import sys\n"
        "from mdtui.__main__ import main\n"
        f"rc = main(['--root', {str(TREE)!r}, 'watch', '--json', '--count', '1', '--interval', '0.1'])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'textual_plotext', 'plotext')"
        " or m.startswith('mdtui.ui'))\n"
        "print(rc, loaded, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stderr.strip() == "0 []"
    assert json.loads(result.stdout)["schema_version"] == 1
