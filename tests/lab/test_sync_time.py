"""Rebuilds, resyncs and checks on real md (issue 42): the predicted time against the kernel's, md's limit
binding, the boost raising the rate and put back (after the rebuild, and after mdtui is SIGKILLed), metrics
during a rebuild, two checks leaving two history rows.

One shared guest (the disk-bound machine the advisor scenarios boot): its four NVMe members are throttled to
THROTTLE_BPS through QMP for this module (and set back after), so QEMU's throttle, not TCG's CPU, sets the
time; each member gives the raid5 SPAN_MIB (mdadm --size), so a rebuild takes seconds. The members' figures
are measured first with fio and stored as the member-matrix stores them: the predictions come from
measurements, as they would on a real host. Measured times are md's own: the kernel log's "recovery of RAID
array" and "recovery done." lines.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .harness import CommandResult, Guest, GuestPool
from .machines import DISK_BOUND, DISK_BOUND_BPS, DISK_BOUND_NVME

# Each member's throttle for this module: 4 MB/s is far under what TCG's CPU moves through md's raid5
# recovery even on a loaded host, so the members set the pace, as disks do on hardware.
THROTTLE_BPS = 4_000_000
SPAN_MIB = 24  # each member's data area (mdadm --size): a rebuild at the throttle takes about 6 s
# Predicted vs measured rebuild time: |predicted - measured| <= this × measured (the issue's ±25 %).
PREDICTED_TIME_TOLERANCE = 0.25
LIMIT_KIB_S = 2000  # speed_limit_max below the members' 4 MB/s: md's own limit sets the pace (~12 s)
# The boosted rebuild's rate vs the same rebuild held at LIMIT_KIB_S: the throttle allows ~1.95×.
BOOST_RATE_RATIO = 1.5
STATE = "/tmp/h42-sync-state"
DB = "/tmp/h42-sync-results.db"
ENV = {"MDTUI_STATE_DIR": STATE, "MDTUI_DB": DB}
MEASURE_S = 3  # each fio measurement of a member (all four at once: each has its own throttle)
CHECK_BPS = 16_000_000  # the members' throttle for the two checks, which need no particular pace
_DMESG = re.compile(r"^\[\s*(\d+\.\d+)\] (.*)$")


@dataclass
class Rig:
    guest: Guest
    devices: dict[str, str]  # serial -> /dev/nvmeXn1
    members: list[str]  # serials in the array now (slot order as added)
    out: list[str]  # serials not in the array
    figures: dict[str, dict[str, float]] = field(default_factory=dict)
    table: list[str] = field(default_factory=list)  # predicted vs measured, printed at the end


def mdtui(guest: Guest, *args: str, check: bool = True, timeout: float = 180) -> CommandResult:
    return guest.run([guest.python_exe, "-m", "mdtui", *args], env=ENV, check=check, timeout=timeout)


MEASURE = """
import asyncio, json, sys
from datetime import UTC, datetime
from mdtui.model.job import MIB, JobSpec, RwMode
from mdtui.execute.presets import member_matrix
from mdtui.execute.runners import run_fio
from mdtui.store.runs import ResultsStore
from mdtui.store.records import Metrics, RunSetup, RunStatus

devices = json.loads(sys.argv[1])
def job(dev, rw):
    return JobSpec(name="m", target=dev, block_size_bytes=MIB, rw=rw, iodepth=8, numjobs=1, runtime_s={runtime})
async def both(rw):
    return await asyncio.gather(*(run_fio(job(dev, rw)) for dev in devices))
reads = asyncio.run(both(RwMode.READ))
writes = asyncio.run(both(RwMode.WRITE))
figures = {{}}
now = datetime.now(UTC)
with ResultsStore({db!r}) as store:
    for dev, r, w in zip(devices, reads, writes):
        read, write = r.total.read.bytes_per_s, w.total.write.bytes_per_s
        figures[dev] = {{"read": read, "write": write}}
        steps = member_matrix(dev)
        # Stored as the member-matrix preset stores its sequential steps (the sync-time model reads only these).
        pairs = ((steps[0], Metrics(read_bw_bytes_per_s=read)), (steps[1], Metrics(write_bw_bytes_per_s=write)))
        for step, metrics in pairs:
            setup = RunSetup(preset="member-matrix", params={{"step": step.label}}, target=dev)
            store.add_run(setup, metrics=metrics, status=RunStatus.COMPLETE, started_at=now, ended_at=now)
print(json.dumps(figures))
"""


def kernel_seconds(guest: Guest, what: str) -> float:
    """How long md's last ``what`` ("recovery", "data-check") of md0 took, from the kernel log's own times."""
    started = ended = None
    for line in guest.run(["dmesg"]).stdout.splitlines():
        match = _DMESG.match(line)
        if not match:
            continue
        stamp, text = float(match.group(1)), match.group(2)
        if text.startswith(f"md: {what} of RAID array md0"):
            started, ended = stamp, None
        elif text.startswith(f"md: md0: {what} done") and started is not None:
            ended = stamp
    assert started is not None and ended is not None, f"no finished {what} of md0 in the kernel log"
    return ended - started


def knobs(guest: Guest) -> tuple[str, str]:
    read = guest.read_file
    return (read("/sys/block/md0/md/sync_speed_min").strip(), read("/sys/block/md0/md/sync_speed_max").strip())


@pytest.fixture(scope="module")
def rig(lab_pool: GuestPool) -> Iterator[Rig]:
    guest = lab_pool.get(DISK_BOUND)
    guest.reset_md()
    guest.run(["rm", "-rf", STATE, DB, DB + "-wal", DB + "-shm"])
    devices = {serial: guest.device(serial) for serial in DISK_BOUND_NVME}
    started = time.monotonic()
    try:
        for serial in DISK_BOUND_NVME:
            guest.throttle(serial, THROTTLE_BPS)
        code = MEASURE.format(runtime=MEASURE_S, db=DB)
        result = guest.run([guest.python_exe, "-c", code, json.dumps(list(devices.values()))], env=ENV, timeout=180)
        figures = json.loads(result.stdout.strip().splitlines()[-1])
        a, b, c, d = DISK_BOUND_NVME
        guest.run(["mdadm", "--create", "/dev/md0", "--run", "--level=5", "--raid-devices=3", f"--size={SPAN_MIB}M",
                   "--bitmap=none", "--assume-clean", devices[a], devices[b], devices[c]], timeout=120)  # fmt: skip
        guest.run(["udevadm", "settle"], timeout=60)
        rig = Rig(guest, devices, [a, b, c], [d], figures)
        yield rig
        print(f"\nsync-time lab ({time.monotonic() - started:.0f} s):\n  " + "\n  ".join(rig.table))
    finally:
        guest.reset_md()
        for serial in DISK_BOUND_NVME:
            guest.throttle(serial, DISK_BOUND_BPS)


def swap_in(rig: Rig, *args: str, follow: bool = True) -> dict[str, Any]:
    """Fail and remove the last member, then `mdtui repair md0 --add` the disk that is out: a rebuild onto it."""
    guest = rig.guest
    leaving, coming = rig.members[-1], rig.out[0]
    guest.run(["mdadm", "/dev/md0", "--fail", rig.devices[leaving]])
    guest.run(["mdadm", "/dev/md0", "--remove", rig.devices[leaving]])
    guest.run(["mdadm", "--zero-superblock", rig.devices[coming]], check=False)  # a disk that was a member before
    guest.run(["udevadm", "settle"], timeout=60)
    flags = () if follow else ("--no-follow",)
    report = json.loads(mdtui(guest, "repair", "md0", "--add", rig.devices[coming], "--yes", "--json",
                              *flags, *args, timeout=240).stdout)  # fmt: skip
    rig.members[-1], rig.out[0] = coming, leaving
    return report


def rate(seconds: float) -> float:
    return SPAN_MIB * 2**20 / seconds


def test_a_rebuild_takes_the_predicted_time(rig: Rig) -> None:
    report = swap_in(rig)
    predicted = report["predicted"]
    measured = kernel_seconds(rig.guest, "recovery")
    line = (
        f"rebuild, members at the throttle: predicted {predicted['predicted_seconds']:.2f} s "
        f"({predicted['bound']}), measured {measured:.2f} s, ratio {predicted['predicted_seconds'] / measured:.2f}"
    )
    rig.table.append(line)
    print(line, "; members:", json.dumps(rig.figures))
    assert predicted["bound"].startswith("members: "), line
    assert predicted["basis"] == "measured", line
    assert abs(predicted["predicted_seconds"] - measured) <= PREDICTED_TIME_TOLERANCE * measured, line


def test_with_speed_limit_max_lowered_md_binds_and_metrics_follow_the_rebuild(rig: Rig) -> None:
    guest = rig.guest
    guest.sh(f"echo {LIMIT_KIB_S} > /proc/sys/dev/raid/speed_limit_max")
    report = swap_in(rig, follow=False)
    # Scraped while md rebuilds: started at once, it reads the array a few seconds into the ~12 s rebuild.
    metrics = mdtui(guest, "metrics", "--no-smart").stdout
    guest.run(["mdadm", "--wait", "/dev/md0"], check=False, timeout=120)
    predicted = report["predicted"]
    measured = kernel_seconds(guest, "recovery")
    rig.figures["limited_rate"] = {"bytes_per_s": rate(measured)}
    line = (
        f"rebuild, speed_limit_max {LIMIT_KIB_S}: predicted {predicted['predicted_seconds']:.2f} s "
        f"({predicted['bound']}), measured {measured:.2f} s, ratio {predicted['predicted_seconds'] / measured:.2f}"
    )
    rig.table.append(line)
    print(line)
    assert predicted["bound"] == f"speed_limit_max ({LIMIT_KIB_S:,} KiB/s)", line
    assert abs(predicted["predicted_seconds"] - measured) <= PREDICTED_TIME_TOLERANCE * measured, line
    found = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(metrics)
             for s in f.samples}  # fmt: skip
    progress = [v for (name, labels), v in found.items() if name == "mdtui_array_sync_progress_ratio"
                and ("array", "md0") in labels]  # fmt: skip
    eta = [v for (name, labels), v in found.items() if name == "mdtui_array_sync_eta_seconds"]
    predicted_now = [v for (name, _), v in found.items() if name == "mdtui_array_sync_predicted_seconds"]
    assert progress and 0 < progress[0] < 1, metrics
    assert eta and eta[0] > 0, metrics
    assert predicted_now and predicted_now[0] == pytest.approx(predicted["predicted_seconds"], rel=0.02), metrics


def test_a_boost_raises_the_rate_and_the_old_values_come_back_after_the_rebuild(rig: Rig) -> None:
    guest = rig.guest
    assert knobs(guest) == ("1000 (system)", f"{LIMIT_KIB_S} (system)")
    report = swap_in(rig, "--boost")
    measured = kernel_seconds(guest, "recovery")
    limited = rig.figures.get("limited_rate", {}).get("bytes_per_s", LIMIT_KIB_S * 1024)
    ratio = rate(measured) / limited
    line = (
        f"boosted rebuild: {report['boost']['kib_s']:,} KiB/s set, measured {measured:.2f} s "
        f"({rate(measured) / 1e6:.2f} MB/s, {ratio:.2f}× the rate at speed_limit_max {LIMIT_KIB_S})"
    )
    rig.table.append(line)
    print(line)
    assert ratio >= BOOST_RATE_RATIO, line
    assert knobs(guest) == ("1000 (system)", f"{LIMIT_KIB_S} (system)"), "the boost was not put back"
    assert [r["ok"] for r in report["recovery"]["boost"]["restored"]] == [True, True]


def test_a_boost_left_by_a_sigkilled_mdtui_is_put_back_at_the_next_start(rig: Rig) -> None:
    guest = rig.guest
    leaving, coming = rig.members[-1], rig.out[0]
    guest.run(["mdadm", "/dev/md0", "--fail", rig.devices[leaving]])
    guest.run(["mdadm", "/dev/md0", "--remove", rig.devices[leaving]])
    guest.run(["mdadm", "--zero-superblock", rig.devices[coming]], check=False)
    guest.run(["udevadm", "settle"], timeout=60)
    command = (f'echo $$ > /tmp/h42-mdtui.pid; exec {guest.python_exe} -m mdtui repair md0 --add '
               f'{rig.devices[coming]} --boost --yes --json')  # fmt: skip
    pending = guest.spawn(["sh", "-c", command], env=ENV, timeout=240, check=False)
    rig.members[-1], rig.out[0] = coming, leaving
    deadline = time.monotonic() + 60
    while "(local)" not in knobs(guest)[0]:
        assert time.monotonic() < deadline, f"the boost never showed: {knobs(guest)}"
        time.sleep(0.2)
    guest.sh("kill -9 $(cat /tmp/h42-mdtui.pid)")
    pending.wait()
    boosted = knobs(guest)
    assert all("(local)" in k for k in boosted), boosted  # nothing ran in the killed mdtui to put them back
    start = mdtui(guest, "scan")
    assert "restored" in start.stderr and "did not finish" in start.stderr, start.stderr
    assert knobs(guest) == ("1000 (system)", f"{LIMIT_KIB_S} (system)"), start.stderr
    rig.table.append(f"SIGKILLed boost: {boosted} → put back by the next start ({start.stderr.strip()[:160]})")
    guest.run(["mdadm", "--wait", "/dev/md0"], check=False, timeout=120)


def test_two_checks_leave_two_history_rows(rig: Rig) -> None:
    guest = rig.guest
    guest.sh("echo 200000 > /proc/sys/dev/raid/speed_limit_max")
    guest.run(["mdadm", "--wait", "/dev/md0"], check=False, timeout=120)
    for number in (1, 2):
        report = json.loads(mdtui(guest, "scrub", "md0", "--json", timeout=240).stdout)
        measured = kernel_seconds(guest, "data-check")
        predicted = report["predicted"]
        if number == 1:  # at the throttle the members were measured at: the prediction holds
            rig.table.append(
                f"check: predicted {predicted['predicted_seconds']:.2f} s ({predicted['bound']}), measured "
                f"{measured:.2f} s, ratio {predicted['predicted_seconds'] / measured:.2f}"
            )
            for serial in DISK_BOUND_NVME:  # the second check only has to happen: faster
                guest.throttle(serial, CHECK_BPS)
        assert report["mismatch_sectors"] == 0 and "agreed" in report["meaning"]
    schedule = json.loads(mdtui(guest, "scrub-schedule", "--json").stdout)
    [md0] = [row for row in schedule["arrays"] if row["array"] == "md0"]
    rows = [row for row in md0["history"] if row["action"] == "check"]
    assert len(rows) == 2, md0["history"]
    assert all(row["seconds"] and row["mismatch_sectors"] == 0 and row["level"] == "raid5" for row in rows), rows
    assert md0["trend"] == "no mismatches in 2 passes"
