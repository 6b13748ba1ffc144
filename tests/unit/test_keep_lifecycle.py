"""The inventory's lifecycle line (mdtui.keep.summary.lifecycle): persisted · monitored · last scrub · metrics,
on small trees standing for the cases an admin meets."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mdtui.keep.schedule import LastScrub
from mdtui.keep.summary import ago, lifecycle
from mdtui.model.array import ArrayMember, MdArray
from mdtui.probe.root import SystemRoot

UUID = "3f1a2b4c:5d6e7f80:91a2b3c4:d5e6f708"
BRIEF = f"ARRAY /dev/md0 metadata=1.2 name=lab:0 UUID={UUID}"
RELEASE = "6.1.0-test"
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
PROM = "/var/lib/prometheus/node-exporter/mdtui.prom"


def md0(level: str = "raid1") -> MdArray:
    return MdArray(name="md0", state="clean", level=level, members=(ArrayMember("sdb", 0, ("in_sync",)),),
                   metadata="1.2", uuid=UUID)  # fmt: skip


def host(tmp_path: Path, *, conf: str = "HOMEHOST <system>\n", monitor: bool = False) -> SystemRoot:
    """A Debian host as far as the line reads it: mdadm.conf, an initramfs, md0's sysfs, processes."""
    (tmp_path / "etc/mdadm").mkdir(parents=True)
    (tmp_path / "etc/os-release").write_text("ID=debian\n")
    (tmp_path / "etc/mdadm/mdadm.conf").write_text(conf)
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/osrelease").write_text(RELEASE + "\n")
    (tmp_path / "proc/1").mkdir()
    (tmp_path / "proc/1/cmdline").write_bytes(b"/sbin/init\x00")
    if monitor:
        (tmp_path / "proc/812").mkdir()
        (tmp_path / "proc/812/cmdline").write_bytes(b"/sbin/mdadm\x00--monitor\x00--scan\x00")
        (tmp_path / "proc/812/status").write_text("Name:\tmdadm\nUid:\t0\t0\t0\t0\n")  # root's own monitor
        (tmp_path / "proc/812/exe").symlink_to("/usr/sbin/mdadm")
    (tmp_path / "boot").mkdir()
    (tmp_path / f"boot/initrd.img-{RELEASE}").write_bytes(b"\x00" * 16)
    (tmp_path / "sys/block/md0/md").mkdir(parents=True)
    (tmp_path / "sys/block/md0/dev").write_text("9:0\n")
    (tmp_path / "var/lib/prometheus/node-exporter").mkdir(parents=True)
    return SystemRoot(tmp_path)


def age(path: Path, seconds: float) -> None:
    when = NOW.timestamp() - seconds
    os.utime(path, (when, when))


def test_a_fresh_array_nobody_keeps_reads_as_four_gaps(tmp_path: Path) -> None:
    # The state after `mdadm --create` on a Debian host: nothing in mdadm.conf, no monitor, no scrub yet.
    root = host(tmp_path)
    (tmp_path / "sys/block/md0/md/last_sync_action").write_text("resync\n")
    kept = lifecycle(root, md0(), scrubs={}, now=NOW)
    assert [f.problem for f in kept.facts] == [True, True, True, True]
    assert kept.line == (
        "✗ not persisted (not in /etc/mdadm/mdadm.conf) · ✗ nobody monitors (no mdadm --monitor) · "
        "✗ never scrubbed (none in the kernel log) · ✗ metrics not exported"
    )


def test_a_kept_array_reads_as_four_ticks_with_ages(tmp_path: Path) -> None:
    root = host(tmp_path, conf=f"MAILADDR root\n{BRIEF}\n", monitor=True)
    (tmp_path / "usr/sbin").mkdir(parents=True)
    (tmp_path / "usr/sbin/sendmail").write_text("")
    age(tmp_path / "etc/mdadm/mdadm.conf", 3600)
    age(tmp_path / f"boot/initrd.img-{RELEASE}", 60)  # rebuilt after the conf changed
    (tmp_path / "sys/block/md0/md/last_sync_action").write_text("check\n")
    (tmp_path / "sys/block/md0/md/mismatch_cnt").write_text("0\n")
    prom = tmp_path / PROM.lstrip("/")
    prom.write_text('mdtui_array_degraded_members{array="md0"} 0\n')
    age(prom, 120)
    ended = NOW - timedelta(days=3, hours=2)
    scrubs = {"md0": LastScrub("md0", "check", ended - timedelta(hours=1), ended, "done")}
    kept = lifecycle(root, md0(), scrubs=scrubs, now=NOW)
    assert [f.problem for f in kept.facts] == [False, False, False, False]
    assert kept.line == (
        "✓ persisted (mdadm.conf, initramfs) · ✓ monitored: mail root · ✓ last check 3 d ago, mismatch 0 · "
        f"✓ metrics: {PROM} 2 min old"
    )


def test_gaps_that_look_kept_are_named(tmp_path: Path) -> None:
    # In mdadm.conf but the initramfs predates it (persist stopped before update-initramfs); MAILADDR set
    # but no sendmail to carry it; mismatches found; a metrics file nobody refreshes and one without md0.
    root = host(tmp_path, conf=f"MAILADDR ops@example.org\n{BRIEF}\n", monitor=True)
    age(tmp_path / f"boot/initrd.img-{RELEASE}", 7200)
    age(tmp_path / "etc/mdadm/mdadm.conf", 60)
    (tmp_path / "sys/block/md0/md/last_sync_action").write_text("check\n")
    (tmp_path / "sys/block/md0/md/mismatch_cnt").write_text("256\n")
    prom = tmp_path / PROM.lstrip("/")
    prom.write_text('mdtui_array_degraded_members{array="md0"} 0\n')
    age(prom, 3 * 3600)
    kept = lifecycle(root, md0(), scrubs=None, now=NOW)
    assert kept.persisted.problem and "initramfs older" in kept.persisted.text
    assert kept.monitored.problem and "no sendmail" in kept.monitored.text
    assert kept.scrubbed.problem and kept.scrubbed.text == "last check since boot, mismatch 256"
    assert kept.metrics.problem and kept.metrics.text.endswith("3 h old (stale)")
    prom.write_text('mdtui_array_degraded_members{array="md10"} 0\n')  # md10 is not md0
    age(prom, 30)
    assert lifecycle(root, md0(), now=NOW).metrics.text == f"metrics: {PROM} 30 s old, md0 not in it"


def test_a_captured_tree_says_what_it_did_not_capture(tmp_path: Path) -> None:
    # mdtui capture takes /sys, /proc (no processes), /run/udev and /dev: no /etc, no /var.
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/mdstat").write_text("")
    (tmp_path / "sys/block/md0/md").mkdir(parents=True)
    kept = lifecycle(SystemRoot(tmp_path), md0(), now=NOW)
    assert [f.problem for f in kept.facts] == [None, None, None, None]
    assert kept.line.count("?") == 4 and "not captured" in kept.persisted.text


def test_an_array_without_redundancy_is_not_called_unscrubbed(tmp_path: Path) -> None:
    kept = lifecycle(host(tmp_path), md0("raid0"), scrubs={}, now=NOW)
    assert kept.scrubbed.problem is None and "no redundancy" in kept.scrubbed.text


def test_ages() -> None:
    assert [ago(s) for s in (-5, 40, 61, 7200, 3 * 86400 + 5)] == ["0 s", "40 s", "1 min", "2 h", "3 d"]
