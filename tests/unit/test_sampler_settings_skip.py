"""A settings refresh skipped because every file holds last refresh's bytes changes nothing (issue 17).

The sampler notes each file a cpufreq settings refresh reads and the bytes it gets; at the next refresh,
when every one of them still holds those bytes, it keeps everything instead of refreshing. Here two
samplers of one tree, one that always refreshes (the reference) and one that may skip, sample after
each of a run of generated changes (governor, cap and EPP words, empty, damaged and missing files, the
pstate status, files changed back to what they held): their snapshots stay equal, and a skip happens
exactly when no file changed since the last refresh.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdtui.probe.root import SystemRoot
from mdtui.sample.sampler import Sampler

POLICIES = 3
STATUS = "sys/devices/system/cpu/intel_pstate/status"
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
    status = base / STATUS
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


def write_stat(base: Path, tick: int) -> None:
    lines = [f"cpu  {tick * 30} 0 {tick * 10} {tick * 55} {tick * 5} 0 0 0 0 0\n"]
    lines += [f"cpu{cpu} {tick * 10} 0 {tick * 3} {tick * 18} {tick} 0 0 0 0 0\n" for cpu in range(POLICIES)]
    (base / "proc").mkdir(exist_ok=True)
    set_file(base / "proc/stat", "".join(lines) + "intr 0\nctxt 1\n")


changes = st.lists(
    st.lists(
        st.one_of(
            st.tuples(st.integers(0, POLICIES - 1), st.sampled_from(FILES), VALUES),
            st.tuples(st.just(-1), st.just("status"), st.sampled_from(["active\n", "passive\n", "", None])),
        ),
        max_size=3,
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=100, deadline=None)
@given(changes)
def test_a_skipped_refresh_gives_the_snapshots_of_a_refresh(steps: list[list[tuple[int, str, str | None]]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        build(base)
        write_stat(base, 0)
        root = SystemRoot(base)
        with Sampler(root, settings_refresh_s=0.0) as fast, Sampler(root, settings_refresh_s=0.0) as slow:
            slow.cpu._settings_unchanged = lambda: False  # type: ignore[method-assign]
            skips = 0
            original = fast.cpu._refresh_settings

            def counted() -> None:
                nonlocal skips
                skips -= 1
                original()

            fast.cpu._refresh_settings = counted  # type: ignore[method-assign]
            assert fast.sample(now=0.0) == slow.sample(now=0.0)
            removed = False
            for tick, step in enumerate(steps, start=1):
                contents = {}
                for number, name, _ in step:
                    path = base / STATUS if number < 0 else policy(base, number) / name
                    contents[path] = path.read_bytes() if path.exists() else None
                for number, name, value in step:
                    set_file(base / STATUS if number < 0 else policy(base, number) / name, value)
                write_stat(base, tick)
                skips += 1
                before = skips
                assert fast.sample(now=float(tick)) == slow.sample(now=float(tick))
                refreshed = skips != before
                changed = any((path.read_bytes() if path.exists() else None) != old for path, old in contents.items())
                # A kept descriptor may go on reading a removed file's bytes (both samplers do), even after
                # a new file takes its path: from then on only the snapshots are compared.
                removed = removed or any(value is None for _, _, value in step)
                if removed:
                    continue
                if tick > 1 and not changed:
                    assert not refreshed  # nothing changed since the last refresh: skipped
                if changed:
                    assert refreshed


def test_a_refresh_after_hotplug_is_never_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    write_stat(tmp_path, 0)
    with Sampler(SystemRoot(tmp_path), settings_refresh_s=0.0) as sampler:
        sampler.sample(now=0.0)
        sampler.sample(now=1.0)
        assert sampler.cpu._settings_reads  # the refresh of tick 1 noted what it read
        assert sampler.cpu._settings_unchanged()
        set_file(policy(tmp_path, 1) / "scaling_governor", "performance\n")
        assert not sampler.cpu._settings_unchanged()
        snapshot = sampler.sample(now=2.0)
        assert [core.governor for core in snapshot.cpu.cores] == ["powersave", "performance", "powersave"]
        assert sampler.cpu._settings_unchanged()
