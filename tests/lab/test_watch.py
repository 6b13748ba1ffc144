"""Sampler fidelity on a real kernel: `mdtui watch --json` against fio's own bandwidth on a raid0 of four NVMe."""

from __future__ import annotations

import json
import time
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import pytest

from mdtui.execute.fio import parse_fio_output

from .harness import Guest, record_timing
from .machines import STANDARD_NVME

pytestmark = pytest.mark.lab

INTERVAL_S = 0.5
FIO_SECONDS = 8
TOLERANCE = 0.03


def cumulative_at(times: Sequence[float], values: Sequence[float], at: float) -> float:
    """fio's cumulative bytes at time `at`, linear between its status documents (one a second)."""
    index = bisect_right(times, at)
    if index == 0 or index == len(times):
        raise AssertionError(f"{at} is outside fio's reports ({times[0]}..{times[-1]})")
    t0, t1 = times[index - 1], times[index]
    v0, v1 = values[index - 1], values[index]
    return v0 + (v1 - v0) * (at - t0) / (t1 - t0)


def weighted_mean(samples: Sequence[dict[str, Any]], device: str) -> float:
    """The mean of a device's read rate over samples, each weighted by its interval (bytes / seconds)."""
    seconds = sum(s["interval"] for s in samples)
    return sum(s["devices"][device]["read_bytes_per_s"] * s["interval"] for s in samples) / seconds


def test_sampler_matches_fio_on_a_raid0(standard_guest: Guest) -> None:
    guest = standard_guest
    started = time.monotonic()
    members = [guest.device(serial) for serial in STANDARD_NVME]
    guest.run(
        ["mdadm", "--create", "/dev/md0", "--run", "--level=0", "--raid-devices=4", "--chunk=512", *members],
        timeout=60,
    )
    member_names = [path.removeprefix("/dev/") for path in members]
    out, pidfile = guest.guest_out("watch.jsonl"), guest.guest_out("watch.pid")
    lines_path = guest.out_path("watch.jsonl")
    # The sampler runs as a user would run it, in its own process beside fio; the shell records its pid
    # so the test stops exactly that process.
    watch = guest.spawn(
        ["sh", "-c", f'echo $$ > {pidfile}; exec {guest.python_exe} -m mdtui watch md0 --json '
         f'--interval {INTERVAL_S} > {out}'],
        timeout=90,
        check=False,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (lines_path.exists() and lines_path.read_text().count("\n") >= 2):
            assert time.monotonic() < deadline, "mdtui watch --json printed nothing in 30 s"
            assert not watch.done(), f"mdtui watch --json stopped: {watch.wait()}"
            time.sleep(0.2)
        fio = guest.run(
            ["fio", "--name=seqread", "--filename=/dev/md0", "--rw=read", "--bs=1M", "--direct=1",
             "--ioengine=libaio", "--iodepth=16", f"--runtime={FIO_SECONDS}", "--time_based",
             "--status-interval=1", "--output-format=json"],
            timeout=60,
        )  # fmt: skip
        time.sleep(2 * INTERVAL_S)
    finally:
        guest.run(["sh", "-c", f"kill $(cat {pidfile})"], check=False)
        watch.wait()
    samples = [json.loads(line) for line in lines_path.read_text().splitlines() if line.strip()]

    documents = parse_fio_output(fio.stdout).documents
    assert len(documents) >= FIO_SECONDS - 1, f"fio printed {len(documents)} status documents"
    final_bw = documents[-1]["jobs"][0]["read"]["bw_bytes"]
    fio_times = [d["timestamp_ms"] / 1000 for d in documents]
    fio_bytes = [float(d["jobs"][0]["read"]["io_bytes"]) for d in documents]

    # The steady part: sampler intervals that lie wholly between fio's first and last status reports,
    # so the start-up ramp and the tail are out, and fio's own count brackets every sample.
    steady = [
        s for s in samples if s["timestamp"] - s["interval"] >= fio_times[0] and s["timestamp"] <= fio_times[-1]
    ]
    assert len(steady) >= 6, f"only {len(steady)} samples inside fio's run: {[s['timestamp'] for s in samples]}"
    window_start, window_end = steady[0]["timestamp"] - steady[0]["interval"], steady[-1]["timestamp"]
    fio_rate = (cumulative_at(fio_times, fio_bytes, window_end) - cumulative_at(fio_times, fio_bytes, window_start)) / (
        window_end - window_start
    )
    sampled = weighted_mean(steady, "md0")
    record_timing("raid0 create + watch + 8 s fio (test_watch)", time.monotonic() - started)
    print(
        f"md0 sampled {sampled / 1e6:.1f} MB/s, fio {fio_rate / 1e6:.1f} MB/s over the same "
        f"{window_end - window_start:.1f} s (fio's whole-run bw {final_bw / 1e6:.1f} MB/s)"
    )
    assert sampled > 0 and fio_rate > 0
    assert abs(sampled - fio_rate) <= TOLERANCE * fio_rate, (sampled, fio_rate)

    # raid0: every byte the array reads is read from exactly one member (read factor 1).
    member_sum = sum(weighted_mean(steady, name) for name in member_names)
    assert abs(member_sum - sampled) <= TOLERANCE * sampled, (member_sum, sampled)
    # Striping spreads a sequential read evenly: each member carries about a quarter.
    for name in member_names:
        assert weighted_mean(steady, name) == pytest.approx(sampled / 4, rel=0.15), name
    # The JSON is the snapshot of the named array only: md0, its members, md0's threads.
    assert set(samples[-1]["devices"]) == {"md0", *member_names}
    assert [a["name"] for a in samples[-1]["arrays"]] == ["md0"]
    assert samples[-1]["cpu"]["cpufreq_available"] is False  # the lab kernel has no cpufreq
