"""scripts/install-links.sh: after it, a new shell finds `mdtui`, its man page and its completion."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install-links.sh"


def link_into(prefix: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MDTUI_PREFIX": str(prefix)}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60, check=True)


def test_a_new_shell_runs_mdtui_from_the_links(tmp_path: Path) -> None:
    result = link_into(tmp_path)
    assert (tmp_path / "bin" / "mdtui").resolve() == (REPO / ".venv" / "bin" / "mdtui").resolve()
    for shipped in (
        "share/man/man8/mdtui.8",
        "share/bash-completion/completions/mdtui",
        "share/zsh/site-functions/_mdtui",
        "share/fish/vendor_completions.d/mdtui.fish",
    ):
        assert (tmp_path / shipped).resolve() == (REPO / shipped).resolve()
    # The prefix is not on a login shell's PATH: the script says exactly what to add.
    assert f'add it: export PATH="{tmp_path}/bin:$PATH"' in result.stdout
    fresh = subprocess.run(
        ["env", "-i", f"HOME={tmp_path}", f"PATH={tmp_path}/bin:/usr/bin:/bin", "bash", "-c", "mdtui --version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert fresh.returncode == 0 and fresh.stdout.startswith("mdtui ")


def test_someone_elses_file_is_left_alone(tmp_path: Path) -> None:
    theirs = tmp_path / "bin" / "mdtui"
    theirs.parent.mkdir()
    theirs.write_text("#!/bin/sh\necho theirs\n")
    result = link_into(tmp_path)
    assert theirs.read_text() == "#!/bin/sh\necho theirs\n" and not theirs.is_symlink()
    assert f"{theirs} exists and is not a link; left alone" in result.stdout
