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
