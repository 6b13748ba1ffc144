"""Watching a kept array on a real kernel: `mdtui alerts --program` makes mdadm's own monitor run a program
that writes a file, a member failed in the guest makes that file appear (seconds from the fault measured), and
`mdtui metrics` taken in the guest parses with Prometheus' own parser and shows the degraded array.

The guest has no systemd (its PID 1 is the lab's init script), so alerts starts the monitor as
`mdadm --monitor --scan --daemonise`, as it does on any system without systemd.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .harness import CommandResult, Guest, Machine, boot, nvme, record_timing

WATCH = Machine(
    name="watch",
    cpus=2,
    memory_mb=1024,
    disks=tuple(nvme(f"WATCH{i}", "32M") for i in range(3)),
)
STATE_ENV = {"MDTUI_STATE_DIR": "/tmp/mdtui-watch-state"}
CONF = "/etc/mdadm/mdadm.conf"
PROGRAM = "/usr/local/sbin/md-alert"
EVENTS = "/root/md-events"
# mdadm's monitor waits on /proc/mdstat for a change, so a Fail event is seconds away; under TCG on a loaded
# 2-core host, give it a minute before calling it lost (its own poll, --delay, is 60 s).
ALERT_WITHIN_S = 90.0


@pytest.fixture(scope="module")
def guest() -> Iterator[Guest]:
    guest = boot(WATCH)
    try:
        yield guest
    finally:
        guest.close()


def mdtui(guest: Guest, *args: str, check: bool = True, timeout: float = 240) -> CommandResult:
    return guest.run([guest.python_exe, "-m", "mdtui", *args], env=STATE_ENV, check=check, timeout=timeout)


def parsed(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_a_failed_member_runs_the_alert_program_and_metrics_show_it(guest: Guest) -> None:
    members = [guest.device(f"WATCH{i}") for i in range(2)]
    mdtui(guest, "create", "--level", "1", "--device", "/dev/md0", "--assume-clean", "--yes", *members)
    guest.sh(
        f"mkdir -p /usr/local/sbin && printf '%s\\n' '#!/bin/sh' "
        f"'echo \"$(date +%s.%N) $*\" >> {EVENTS}' > {PROGRAM} && chmod 755 {PROGRAM} && chown root:root {PROGRAM}"
    )
    before = parsed(mdtui(guest, "metrics", "--no-smart").stdout)
    assert before[("mdtui_array_degraded_members", (("array", "md0"),))] == 0, before
    assert before.get(("mdtui_array_monitored", (("array", "md0"),))) == 0, "no monitor runs yet: not monitored"

    refused = mdtui(guest, "alerts", "--program", "/tmp/../usr/local/sbin/md-alert", "--yes", check=False)
    assert refused.rc == 2 and "plain absolute path" in refused.stderr, refused.stderr

    started = time.monotonic()
    done = json.loads(mdtui(guest, "alerts", "--program", PROGRAM, "--yes", "--json").stdout)
    record_timing("watch: mdtui alerts --program (conf, monitor, test alert)", time.monotonic() - started)
    assert f"PROGRAM {PROGRAM}" in guest.read_file(CONF)
    assert done["monitor_pids"], done
    runs = done["test"]["program_runs"]
    assert any(run["arguments"] == "TestMessage /dev/md0" and run["status"] == 0 for run in runs), done
    test_lines = guest.read_file(EVENTS)
    assert "TestMessage /dev/md0" in test_lines, test_lines
    shown = mdtui(guest, "alerts").stdout
    assert f"runs {PROGRAM}" in shown and "mdadm --monitor: runs" in shown, shown

    guest.sh(f": > {EVENTS}")
    fault = guest.sh(f"date +%s.%N; mdadm /dev/md0 --fail {members[1]}").stdout.split()[0]
    waited = time.monotonic()
    events = ""
    while "Fail" not in events:
        assert time.monotonic() - waited < ALERT_WITHIN_S, f"no Fail event within {ALERT_WITHIN_S} s: {events!r}"
        time.sleep(0.5)
        events = guest.read_file(EVENTS)
    line = next(line for line in events.splitlines() if " Fail " in f"{line} ")
    record_timing("watch: mdadm --fail to PROGRAM's Fail line (guest clock)", float(line.split()[0]) - float(fault))
    record_timing("watch: mdadm --fail to the file seen from the host", time.monotonic() - waited)
    assert "/dev/md0" in line, events

    started = time.monotonic()
    text = mdtui(guest, "metrics", "--textfile", "/lab-out").stdout
    record_timing("watch: mdtui metrics --textfile (with SMART)", time.monotonic() - started)
    assert "wrote /lab-out/mdtui.prom" in text, text
    after = parsed(guest.out_path("mdtui.prom").read_text())
    assert after[("mdtui_array_degraded_members", (("array", "md0"),))] == 1, after
    assert after[("mdtui_array_failed_members", (("array", "md0"),))] == 1, after
    assert after[("mdtui_array_monitored", (("array", "md0"),))] == 1, after
    smart = {labels for name, labels in after if name == "mdtui_disk_smart_healthy"}
    assert smart, "SMART of the NVMe members is exported"


def test_scrub_schedule_shows_the_last_check_and_a_timer_drop_in_is_verified(guest: Guest) -> None:
    guest.sh("mdadm --stop /dev/md0 2>/dev/null; true")
    members = [guest.device(f"WATCH{i}") for i in (0, 2)]
    guest.sh(f"mdadm --zero-superblock {' '.join(members)} 2>/dev/null; true")
    mdtui(guest, "create", "--level", "1", "--device", "/dev/md1", "--assume-clean", "--yes", *members)
    started = time.monotonic()
    checked = json.loads(mdtui(guest, "scrub", "md1", "--json").stdout)
    record_timing("watch: mdtui scrub md1 (32 MiB raid1 check, followed)", time.monotonic() - started)
    assert checked["mismatch_sectors"] == 0, checked

    shown = json.loads(mdtui(guest, "scrub-schedule", "--json").stdout)
    md1 = next(row for row in shown["arrays"] if row["array"] == "md1")
    assert md1["last_action"] == "check" and md1["mismatch_sectors"] == 0, md1
    # The guest has no journald: the times come from the kernel's ring buffer (dmesg).
    assert md1["last_outcome"] == "done" and md1["last_seconds"] is not None and md1["last_seconds"] >= 0, md1
    record_timing("watch: md1's last check as the kernel log dates it", md1["last_seconds"])
    cron = next(m for m in shown["mechanisms"] if m["kind"] == "cron")
    assert cron["first_week"] and cron["next"], cron

    spec = "Sat *-*-1..7 03:00"
    done = json.loads(mdtui(guest, "scrub-schedule", "--timer", spec, "--yes", "--json").stdout)
    assert done["verified"] and done["wrote"], done
    drop_in = guest.read_file("/etc/systemd/system/mdcheck_start.timer.d/mdtui-schedule.conf")
    assert f"OnCalendar={spec}" in drop_in, drop_in
    # The guest's own systemd-analyze on the unit as installed, drop-in included.
    verify = guest.run(["systemd-analyze", "verify", "mdcheck_start.timer"], check=False)
    assert verify.rc == 0 and "mdtui-schedule" not in verify.stderr, verify.stderr
    timer = next(m for m in json.loads(mdtui(guest, "scrub-schedule", "--json").stdout)["mechanisms"]
                 if m["kind"] == "timer")  # fmt: skip
    assert timer["when"] == spec, timer
