"""scripts/install-deps.sh: when apt-get fails, the last line names the fix (never a silent drop to the shell)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install-deps.sh"

# What apt-get install says on Debian 12 after an interrupted upgrade left a package half-installed.
UNMET = """Reading package lists...
Building dependency tree...
Reading state information...
You might want to run 'apt --fix-broken install' to correct these.
The following packages have unmet dependencies:
 fio : Depends: libaio1 but it is not going to be installed
E: Unmet dependencies. Try 'apt --fix-broken install' with no packages (or specify a solution).
"""
# What it says while dpkg itself was stopped mid-run (power loss, a killed apt).
INTERRUPTED = "E: dpkg was interrupted, you must manually run 'dpkg --configure -a' to correct the problem.\n"
# A mirror that cannot be reached.
UNREACHABLE = "Err:1 http://deb.debian.org/debian bookworm InRelease\n  Temporary failure resolving\n"


def fake_bin(tmp_path: Path, install_says: str, update_says: str = "") -> Path:
    """A PATH directory where no package is installed and apt-get fails as given, exit 100 as apt does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "update.txt").write_text(update_says)
    (tmp_path / "install.txt").write_text(install_says)
    scripts = {
        "dpkg-query": "#!/bin/sh\nexit 1\n",
        "sudo": '#!/bin/sh\nexec "$@"\n',
        "apt-get": (
            f'#!/bin/sh\nsaid="{tmp_path}/$1.txt"\nif [ -s "$said" ]; then cat "$said"; exit 100; fi\nexit 0\n'
        ),
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def run_script(bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60, check=False)


@pytest.mark.parametrize(
    ("update_says", "install_says", "fix"),
    [
        ("", UNMET, "run 'sudo apt --fix-broken install', then run this again"),
        ("", INTERRUPTED, "run 'sudo dpkg --configure -a', then run this again"),
        (UNREACHABLE, "", "Err:1 http://deb.debian.org/debian bookworm InRelease; fix that"),
    ],
)
def test_an_apt_failure_ends_with_the_fix(tmp_path: Path, update_says: str, install_says: str, fix: str) -> None:
    result = run_script(fake_bin(tmp_path, install_says, update_says))
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("install-deps: apt-get failed") and fix in last
    # What apt said is still shown above it.
    assert (install_says or update_says).splitlines()[0] in result.stderr


def test_a_working_apt_installs_quietly(tmp_path: Path) -> None:
    result = run_script(fake_bin(tmp_path, ""))
    assert result.returncode == 0 and "install-deps: installing mdadm fio" in result.stdout
