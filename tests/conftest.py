"""Test paths: the project's own fixture trees and its copy of the Prometheus procfs testdata."""

from __future__ import annotations

import importlib.util
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE_TREES = REPO / "tests" / "fixtures" / "trees"
# Real-format /proc and /sys files from the Prometheus procfs project (Apache-2.0), kept in the
# repository; tests/fixtures/procfs/README.md says what was taken and which tests read it.
PROCFS_FIXTURE = REPO / "tests" / "fixtures" / "procfs"
BIGTREE = REPO / "bench" / "bigtree.py"


# Tests that interrupt, hang up or terminate mdtui, fio or dd need those signals to reach them, and a
# child inherits an ignored signal: a suite started in the background of a non-interactive shell
# ignores SIGINT, one started under nohup SIGHUP, and then mdtui rightly keeps running as asked (the
# fault tests then time out after 20 s). Only the suite's own dispositions are reset. The lab guests'
# agent (tests/lab/agent.py) does the same for the commands it runs there.
_SIGNALS_TESTS_SEND = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)


def pytest_configure(config: pytest.Config) -> None:
    for number in _SIGNALS_TESTS_SEND:
        if signal.getsignal(number) is signal.SIG_IGN:
            handler = signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL
            signal.signal(number, handler)


@pytest.fixture(scope="session")
def bigtree() -> ModuleType:
    """bench/bigtree.py, the generator of big-host trees: bench/ is not a package on the test path."""
    module = sys.modules.get("bigtree")
    if module is None:
        spec = importlib.util.spec_from_file_location("bigtree", BIGTREE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bigtree"] = module  # its dataclasses look their module up while it loads
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def procfs_testdata() -> Path:
    assert PROCFS_FIXTURE.is_dir(), f"{PROCFS_FIXTURE} is missing from the checkout"
    return PROCFS_FIXTURE


@pytest.fixture(autouse=True)
def _private_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the developer's results database, action log, themes or guide flag."""
    home = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in ("MDTUI_DB", "MDTUI_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
    # Nor the machine's system journal: the actions tests record (fake mdadm, a tree's knobs) go to a socket
    # nobody listens on, unless a test binds its own (tests/unit/test_audit.py). In-process only: a verb a
    # test runs as a child process tells /dev/log, as it would for an admin.
    import mdtui.audit

    monkeypatch.setattr(mdtui.audit, "SYSLOG_SOCKET", str(home / "no-syslog-here"))
    # A table is fitted to $COLUMNS (cli.common.output_width): only where a test sets it.
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def tree_stands_for_live(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let an in-process CLI test drive a verb that acts (bench, create, ...) on a captured tree.

    Only for tests whose runners, mdadm and sysfs writes never reach a device (canned fio, fake programs,
    a temporary tree). The real ``--root`` refusal is tested as an attack in tests/unit/test_trust_local.py.
    """
    import mdtui.cli.common as common

    monkeypatch.setattr(common, "live_action", lambda args: None)


@pytest.fixture
def place() -> Iterator[Path]:
    """A directory every user can enter, root's, for a test written as another user's attack (removed after)."""
    from unprivileged import public_dir

    with public_dir("mdtui-attack-") as made:
        yield made
