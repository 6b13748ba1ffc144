"""Fixtures for the real-kernel lab (see tests/lab/README.md).

Tests marked ``lab`` (every test in tests/lab is marked automatically) FAIL with the reason when
QEMU, a suitable kernel or busybox is missing and either ``MDTUI_LAB_REQUIRED`` (scripts/test
exports it) or ``CI`` is set (the rule is ``ci.lab_required``/``ci.in_ci`` in tests/ci.py), so
neither the README's test command nor a broken CI image can silently drop the only tests that touch
real md. A bare ``pytest`` outside CI skips them with the reason; ``-m "not lab"`` leaves them out.

Fixtures:

- ``lab_pool`` (session): a :class:`GuestPool`; ``lab_pool.get(machine)`` boots ``machine`` once and
  shares it with every later caller (rebooting it if a test killed it).
- ``standard_guest``: the shared guest of :data:`machines.STANDARD`. After each test any md array
  left running is stopped and the superblocks wiped, so tests start from bare disks.
- ``lab_boot``: a factory, ``lab_boot(machine, **kwargs) -> Guest``, for guests of your own that
  are powered off when the test ends (use it for tests that break their guest).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from ci import lab_required

from .harness import TIMINGS, Guest, GuestPool, Machine, boot, lab_problem
from .machines import STANDARD

LAB_DIR = Path(__file__).resolve().parent


@cache
def _problem() -> str | None:
    return lab_problem()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if LAB_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.lab)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("lab") is None:
        return
    problem = _problem()
    if problem is None:
        return
    required = lab_required()
    if required:
        pytest.fail(f"{problem}. {required}, so a missing lab fails instead of skipping.", pytrace=False)
    pytest.skip(problem)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On a failing lab test, attach the console tail of every guest the test used."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    funcargs: dict[str, Any] = getattr(item, "funcargs", {})
    for name, value in funcargs.items():
        if isinstance(value, Guest):
            report.sections.append((f"guest console ({name}, tail)", value.console_tail(40)))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS:
        return
    terminalreporter.section("mdtui lab timings")
    for label, seconds in TIMINGS:
        terminalreporter.write_line(f"{seconds:7.1f} s  {label}")


@pytest.fixture(scope="session")
def lab_pool() -> Iterator[GuestPool]:
    pool = GuestPool()
    yield pool
    pool.close()


@pytest.fixture
def standard_guest(lab_pool: GuestPool, record_property: Callable[[str, object], None]) -> Iterator[Guest]:
    guest = lab_pool.get(STANDARD)
    record_property("lab_boot_seconds", round(guest.boot_seconds or 0.0, 2))
    yield guest
    if guest.alive:
        mdstat = guest.run(["cat", "/proc/mdstat"], check=False).stdout
        if any(line.startswith("md") for line in mdstat.splitlines()):
            guest.reset_md()


@pytest.fixture
def lab_boot() -> Iterator[Callable[..., Guest]]:
    guests: list[Guest] = []

    def _boot(machine: Machine, **kwargs: Any) -> Guest:
        guest = boot(machine, **kwargs)
        guests.append(guest)
        return guest

    yield _boot
    for guest in guests:
        guest.close()
