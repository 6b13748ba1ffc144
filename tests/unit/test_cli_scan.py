"""`mdtui scan` and `mdtui capture` from the command line, on captured trees and on this machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mdtui.cli.main import main
from mdtui.cli.scan import render_scan
from mdtui.probe.capture import capture
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "trees"
REAL = TREES / "real-links"


def run_cli(*args: str, env: dict[str, str] | None = None, wide: bool = False) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if key != "COLUMNS"} | (env or {})
    argv = [sys.executable, "-m", "mdtui", *args, *(["--wide"] if wide else [])]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=environ)


def test_scan_table_flags_downgraded_links_with_both_values() -> None:
    text = render_scan(scan(REAL, privileged=True))
    lines = text.splitlines()
    assert lines[0].split()[:5] == ["DISK", "TRANSPORT", "SIZE", "TYPE", "LINK"]
    nvme1 = next(line for line in lines if line.startswith("nvme1n1"))
    assert "⚠ Gen1 2.5 GT/s x4 (max Gen3 8 GT/s x4)" in nvme1
    assert "md-member: active member of md0" in nvme1
    assert any(line.startswith("⚠ nvme1n1: link trained at Gen1 2.5 GT/s x4") for line in lines)
    assert next(line for line in lines if line.startswith("nvme4n1")).endswith("free")
    md0 = next(line for line in lines if line.startswith("md0 "))
    assert "raid6" in md0 and "left-symmetric" in md0
    assert any(line.startswith("md0: resync") for line in lines)


def test_scan_fits_the_terminal_and_is_whole_when_wide_or_piped() -> None:
    # Issue 44: `scan` printed lines of about 200 columns into an 80-column terminal.
    inventory = scan(REAL, privileged=True)
    narrow = render_scan(inventory, 80).splitlines()
    assert max(len(line) for line in narrow) <= 80, [line for line in narrow if len(line) > 80]
    nvme1 = next(line for line in narrow if line.startswith("nvme1n1"))
    assert "⚠ Gen1 x4" in nvme1 and nvme1.endswith("md-member")  # the short link, the state's first reason
    assert any(line.startswith("⚠ nvme1n1: link trained at Gen1 2.5 GT/s x4") for line in narrow)  # wrapped, whole
    md0 = next(line for line in narrow if line.startswith("md0 "))
    assert "raid6" in md0 and "…" in md0  # its members cut with how many more
    assert narrow[-1] == "(fitted to 80 columns: --wide shows every column whole)"
    assert render_scan(inventory, 400) == render_scan(inventory, None) == render_scan(inventory)
    # The terminal's width, or COLUMNS as ls and ps read it; piped (as here) and --wide: whole lines.
    fitted = run_cli("--root", str(REAL), "scan", env={"COLUMNS": "80"})
    assert fitted.returncode == 0 and max(len(line) for line in fitted.stdout.splitlines()) <= 80
    whole = run_cli("--root", str(REAL), "scan", env={"COLUMNS": "80"}, wide=True)
    assert whole.stdout.strip() == render_scan(inventory) and "md-member: active member of md0" in whole.stdout
    assert run_cli("--root", str(REAL), "scan").stdout.strip() == render_scan(inventory)


def test_scan_json_is_the_same_data_for_scripts() -> None:
    result = run_cli("--root", str(REAL), "scan", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    disks = {d["name"]: d for d in data["disks"]}
    assert disks["nvme1n1"]["link"]["downgraded"] is True
    assert disks["nvme1n1"]["link"]["bandwidth_bytes_per_s"] == 1_000_000_000
    assert disks["sda"]["in_use"][0] == {"kind": "mounted", "detail": "mounted at /mnt/data (ext4)"}
    assert disks["loop0"]["available"] is True
    assert {a["name"] for a in data["arrays"]} == {"md0", "md1", "md2"}
    assert data["md_available"] is True


def test_bad_root_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    result = run_cli("--root", str(tmp_path / "nope"), "scan")
    assert result.returncode == 2
    assert result.stderr.startswith("mdtui: Root ")
    assert "Traceback" not in result.stderr


def test_this_machine_without_md_says_so_and_marks_its_root_disk() -> None:
    inventory = scan("/")
    text = render_scan(inventory)
    if not Path("/proc/mdstat").exists():
        assert not inventory.md_available
        assert "note: No md driver" in text
    root_disks = [d for d in inventory.disks if any(r.kind.value == "root-filesystem" for r in d.in_use)]
    assert root_disks, "the disk holding / must be found and marked in use"


def test_read_only_mode_explains_what_root_would_add() -> None:
    inventory = scan("/", privileged=False)
    assert any(note.startswith("Read-only mode (not root)") for note in inventory.notes)


def test_capture_then_scan_reads_the_same_inventory(tmp_path: Path) -> None:
    out = tmp_path / "again"
    copied = capture(out, SystemRoot(REAL))
    assert copied > 50
    assert render_scan(scan(out, privileged=True)) == render_scan(scan(REAL, privileged=True))
    assert main(["--root", str(out), "scan"]) == 0
