"""A results database for the results-screen tests, filled through the store with the field's own numbers.

Runs, in ID order (IDs are fixed because the database is new):
1-2   the real fio 3.33 captures of tests/fixtures/store, imported as the CLI imports them;
3-7   finding 4 (docs/findings.md), sequential 1 MiB writes Q8T8 on four SAS3 SSDs (256 KiB chunk): single disk
      1123 MB/s, RAID0 4211, RAID10 1648, RAID5 985, RAID6 951;
8-11  finding 5 (docs/findings.md), a chunk sweep on three 4 TB HDDs (dd 16 MiB direct reads at offset 0): the raw
      disk at 200 MiB/s and RAID5 with 4 KiB, 512 KiB and 2 MiB chunks at 0.20, 0.80 and 0.95 of
      (raw × 2 data disks);
12    a run left "running" by a process that is gone: shown as interrupted.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mdtui.store.fio_import import read_fio_file_runs, store_fio_run
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore
from mdtui.ui.results.render import chunk_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "store"
START = datetime(2024, 5, 2, 9, 0, tzinfo=UTC)
MIB = 1024 * 1024
SAS_SSD = {"model": "KPM5XRUG1T92", "link": "SAS 12.0 Gbit"}
HDD = {"model": "ST4000DM004", "link": "SATA 6.0 Gbps"}
SEQ_WRITE = {"rw": "write", "bs": "1M", "iodepth": 8, "numjobs": 8, "direct": 1, "ioengine": "libaio"}
DD_READ = {"tool": "dd", "bs": "16M", "count": 1024, "iflag": "direct", "offset_pct": 0}
CONTEXT = {"kernel": "6.1.0-18-amd64", "governor": "performance", "fio_version": "fio-3.33"}

# (label, target, level, members, layout, MB/s written, md thread CPU %)
FINDING_4 = (
    ("single SAS SSD", "/dev/sdb", None, 1, None, 1123, None),
    ("raid0 x4", "/dev/md0", "raid0", 4, None, 4211, 0.4),
    ("raid10 x4", "/dev/md0", "raid10", 4, "near=2", 1648, 2.5),
    ("raid5 x4", "/dev/md0", "raid5", 4, "left-symmetric", 985, 38.0),
    ("raid6 x4", "/dev/md0", "raid6", 4, "left-symmetric", 951, 46.0),
)
RAW_HDD_BYTES_PER_S = 200 * MIB
# chunk in KiB → normalised read at offset 0 (value ÷ (raw × 2 data disks))
FINDING_5 = ((4, 0.20), (512, 0.80), (2048, 0.95))


def _members(disk: dict[str, str], count: int, prefix: str) -> list[dict[str, str]]:
    return [{"name": f"{prefix}{chr(ord('b') + i)}", "serial": f"S{i:03d}", **disk} for i in range(count)]


def fill(path: Path) -> dict[str, int]:
    """Make the database at ``path``; returns run IDs by a short name the tests use."""
    ids: dict[str, int] = {}
    with ResultsStore(path) as store:
        ids["fio-read"] = store_fio_run(
            store, read_fio_file_runs(FIXTURES / "fio-3.33-read.json", label="fio read fixture")[0]
        )
        (randrw,) = read_fio_file_runs(FIXTURES / "fio-3.33-randrw-numjobs2.json")
        ids["fio-randrw"] = store_fio_run(store, randrw)
        moment = START
        for label, target, level, members, layout, mb_s, md_cpu in FINDING_4:
            array = {}
            if level:
                array = {
                    "level": level,
                    "raid_disks": members,
                    "chunk_bytes": 256 * 1024,
                    "bitmap": "none",
                    "members": _members(SAS_SSD, members, "sd"),
                }
                if layout:
                    array["layout"] = layout
            bandwidth = mb_s * 1e6
            metrics = Metrics(
                write_bw_bytes_per_s=bandwidth,
                write_iops=bandwidth / MIB,
                write_lat_mean_ns=8 * 8 * MIB / bandwidth * 1e9,
                cpu_usr_pct=3.0,
                cpu_sys_pct=12.0,
                md_thread_cpu_pct=md_cpu,
            )
            setup = RunSetup("disk_mark", dict(SEQ_WRITE), target, array, dict(CONTEXT), label=label)
            ids[label] = store.add_run(
                setup,
                status=RunStatus.COMPLETE,
                started_at=moment,
                ended_at=moment + timedelta(seconds=30),
                metrics=metrics,
            )
            moment += timedelta(minutes=7)
        raw = RunSetup("offset_sweep", dict(DD_READ), "/dev/sdc", {}, dict(CONTEXT), label="raw hdd")
        ids["raw hdd"] = store.add_run(
            raw,
            status=RunStatus.COMPLETE,
            started_at=moment,
            ended_at=moment + timedelta(seconds=90),
            metrics=Metrics(read_bw_bytes_per_s=RAW_HDD_BYTES_PER_S),
        )
        for chunk_kib, fraction in FINDING_5:
            moment += timedelta(minutes=11)
            array = {
                "level": "raid5",
                "raid_disks": 3,
                "chunk_bytes": chunk_kib * 1024,
                "layout": "left-symmetric",
                "members": _members(HDD, 3, "sd"),
            }
            setup = RunSetup(
                "offset_sweep",
                dict(DD_READ),
                "/dev/md1",
                array,
                dict(CONTEXT),
                label=f"raid5 {chunk_text(chunk_kib * 1024)}",
            )
            ids[setup.label] = store.add_run(
                setup,
                status=RunStatus.COMPLETE,
                started_at=moment,
                ended_at=moment + timedelta(seconds=90),
                metrics=Metrics(read_bw_bytes_per_s=fraction * RAW_HDD_BYTES_PER_S * 2),
            )
        crashed = RunSetup("weakest_link", {"rw": "read", "bs": "4M"}, "/dev/md0", {}, dict(CONTEXT))
        ids["crashed"] = store.begin_run(crashed, started_at=moment + timedelta(hours=1))
    # The run's owner is a process that no longer exists (another boot): as after a crash.
    conn = sqlite3.connect(path)
    conn.execute("UPDATE runs SET owner = 'gone-boot/1/1' WHERE id = ?", (ids["crashed"],))
    conn.commit()
    conn.close()
    return ids


@contextmanager
def utc_clock() -> Iterator[None]:
    """Local time is UTC while inside, so the local times the screens show are the same on every machine."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()
