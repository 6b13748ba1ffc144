"""Refreshing cpufreq settings from each file's bytes (issue 17) gives what read_policy_settings gives.

The sampler hands CpufreqReader a reader of the setting files' bytes: a policy whose three files hold
the bytes of the last refresh keeps its settings untouched. Here two readers of one tree, one with the
bytes reader and one without (every file decoded and parsed), are refreshed after each of a run of
generated changes (governor, cap and EPP words, empty, damaged and missing files, the pstate status):
their settings and pstate status stay equal, and the settings dict stays the same object exactly
while nothing changed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.probe.cpu import CpufreqReader
from mdtui.probe.kept import KeptFile
from mdtui.probe.root import SystemRoot

POLICIES = 3
FILES = ("scaling_governor", "scaling_max_freq", "energy_performance_preference")
VALUES = st.sampled_from(
    ["performance\n", "powersave\n", "3900000\n", "2000000\n", "balance_power\n", "", "  \n", "x9\n", "\xff\n", None]
)


def policy(base: Path, number: int) -> Path:
    return base / "sys/devices/system/cpu/cpufreq" / f"policy{number}"


def build(base: Path) -> None:
    for number in range(POLICIES):
        directory = policy(base, number)
        directory.mkdir(parents=True)
        for name, value in (
            ("affected_cpus", str(number)), ("scaling_cur_freq", "2400000"), ("scaling_driver", "intel_pstate"),
            ("cpuinfo_max_freq", "3900000"), ("cpuinfo_min_freq", "800000"), ("scaling_governor", "powersave"),
            ("scaling_max_freq", "3900000"), ("energy_performance_preference", "balance_performance"),
        ):  # fmt: skip
            (directory / name).write_text(value + "\n")
    status = base / "sys/devices/system/cpu/intel_pstate/status"
    status.parent.mkdir(parents=True)
    status.write_text("active\n")


def set_file(path: Path, value: str | None) -> None:
    """Rewrite in place (a kept descriptor sees it, as it sees sysfs), or remove."""
    if value is None:
        path.unlink(missing_ok=True)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, value.encode("latin-1"))
    finally:
        os.close(fd)


changes = st.lists(
    st.lists(
        st.one_of(
            st.tuples(st.integers(0, POLICIES - 1), st.sampled_from(FILES), VALUES),
            st.tuples(st.just(-1), st.just("status"), st.sampled_from(["active\n", "passive\n", "", None])),
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(changes)
def test_refresh_from_bytes_equals_refresh_by_parsing(steps: list[list[tuple[int, str, str | None]]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        build(base)
        root = SystemRoot(base)
        kept: dict[str, KeptFile] = {}

        def read_bytes(path: str) -> bytes | None:
            return kept.setdefault(path, KeptFile(path)).read_small()

        def read_text(path: str) -> str | None:
            data = read_bytes(path)
            return (data.decode(errors="replace").strip() or None) if data is not None else None

        fast = CpufreqReader(root, read_text, read_bytes)
        slow = CpufreqReader(root, read_text)
        assert fast.settings() == slow.settings()
        for step in steps:
            before_fast, before_slow = fast.settings(), slow.settings()
            for number, name, value in step:
                if number < 0:
                    set_file(base / "sys/devices/system/cpu/intel_pstate/status", value)
                else:
                    set_file(policy(base, number) / name, value)
            fast.refresh_settings()
            slow.refresh_settings()
            assert fast.settings() == slow.settings()
            assert (fast.pstate_driver, fast.pstate_status) == (slow.pstate_driver, slow.pstate_status)
            # Unchanged settings keep the same dict, which tells the sampler it need not lay out again.
            assert (fast.settings() is before_fast) == (slow.settings() is before_slow)
        for file in kept.values():
            file.close()
