"""Every action that writes is in the system journal: real systemd-journald in the guest, real mdadm, `journalctl`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import Guest, GuestPool, record_timing
from .machines import STANDARD

pytestmark = pytest.mark.lab

STATE_ENV = {"MDTUI_STATE_DIR": "/tmp/mdtui-journal-state"}
# How long journald may take to open /run/systemd/journal/dev-log after it starts (it takes ~1 s under TCG).
JOURNALD_READY_S = 20

# The guest runs no init: journald is started by hand, as systemd would. It needs the cgroup2 hierarchy
# mounted to start at all, and journald's own dev-log socket is what /dev/log links to on a systemd host.
START_JOURNALD = f"""
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
mkdir -p /run/systemd/journal
setsid -f sh -c 'echo $$ > /tmp/mdtui-journald.pid; exec /lib/systemd/systemd-journald' </dev/null >/dev/null 2>&1
i=0
while [ ! -S /run/systemd/journal/dev-log ] && [ $i -lt {JOURNALD_READY_S * 10} ]; do sleep 0.1; i=$((i+1)); done
[ -S /run/systemd/journal/dev-log ] && ln -sf /run/systemd/journal/dev-log /dev/log
"""


@pytest.fixture
def journald(lab_pool: GuestPool) -> Iterator[Guest]:
    guest = lab_pool.get(STANDARD)
    guest.reset_md()
    started = time.monotonic()
    guest.sh(START_JOURNALD, timeout=JOURNALD_READY_S + 10)
    record_timing("journald start in the guest", time.monotonic() - started)
    try:
        yield guest
    finally:
        # Only the journald this test started, by its pid; /dev/log goes with it so later tests see none.
        guest.sh('kill "$(cat /tmp/mdtui-journald.pid)"; rm -f /dev/log /tmp/mdtui-journald.pid', check=False)
        guest.reset_md()


def journal_entries(guest: Guest) -> list[dict[str, Any]]:
    lines = guest.run(["journalctl", "-t", "mdtui", "-o", "json", "--no-pager"]).stdout.splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_create_and_destroy_are_in_the_journal_with_who_ran_them(journald: Guest) -> None:
    guest = journald
    a, b = guest.device("NVME0"), guest.device("NVME1")
    env = {**STATE_ENV, "SUDO_USER": "alice"}
    started = time.monotonic()
    guest.run(
        [guest.python_exe, "-m", "mdtui", "create", "--level", "1", "--device", "/dev/md0", "--assume-clean",
         "--no-follow", "--yes", a, b],
        env=env, timeout=180,
    )  # fmt: skip
    guest.run([guest.python_exe, "-m", "mdtui", "destroy", "/dev/md0", "--yes"], env=env, timeout=180)
    record_timing("create + destroy with journald", time.monotonic() - started)
    entries = journal_entries(guest)
    messages = [entry["MESSAGE"] for entry in entries]
    create = [entry for entry in entries if entry["MESSAGE"].startswith("create /dev/md0: ran mdadm --create")]
    assert len(create) == 1, messages
    [entry] = create
    assert entry["SYSLOG_IDENTIFIER"] == "mdtui" and entry["PRIORITY"] == "5" and entry["_TRANSPORT"] == "syslog"
    message = entry["MESSAGE"]
    assert f"{a} {b}" in message and "(ok, " in message, message
    assert "SUDO_USER alice" in message and "uid 0 (root)" in message, message
    assert "from mdtui create --level 1 --device /dev/md0" in message, message
    # journald's own view of the sender: the process that ran mdadm, not a forwarder.
    assert entry["_COMM"].startswith("python") and entry["SYSLOG_PID"] == entry["_PID"], entry
    # The teardown's commands too, each with how it ended.
    assert any(m.startswith("stop /dev/md0") or "ran mdadm --stop /dev/md0 (ok," in m for m in messages), messages
    assert sum("from mdtui destroy /dev/md0 --yes" in m for m in messages) >= 2, messages
    # Beside the journal, mdtui's own action log says the journal took each entry.
    log = guest.read_file("/tmp/mdtui-journal-state/actions.log").splitlines()
    assert log and all(json.loads(line)["system_log"] is True for line in log), log
