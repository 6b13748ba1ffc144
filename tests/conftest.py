"""Shared test paths: the project's own fixture trees and the shared procfs testdata."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE_TREES = REPO / "tests" / "fixtures" / "trees"
# ../shared sits beside the clone in CI and on developer machines; a missing one is a broken setup.
PROCFS_TESTDATA = REPO.parent / "shared" / "fixtures" / "procfs-testdata"


@pytest.fixture(scope="session")
def procfs_testdata() -> Path:
    assert PROCFS_TESTDATA.is_dir(), f"{PROCFS_TESTDATA} is missing: ../shared must sit beside the checkout"
    return PROCFS_TESTDATA


@pytest.fixture(autouse=True)
def _private_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the developer's results database, action log, themes or guide flag."""
    home = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in ("MDTUI_DB", "MDTUI_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
