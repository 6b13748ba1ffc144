"""The generated big-host tree (bench/bigtree.py) is read by the probe and the sampler as a real host is."""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from mdtui.model.disk import InUseKind, Transport
from mdtui.model.link import LinkKind
from mdtui.probe.arrays import ArrayReader, read_arrays
from mdtui.probe.diskstats import parse_diskstats_line, parse_diskstats_lines
from mdtui.probe.inventory import scan, scan_in_steps
from mdtui.probe.root import SystemRoot
from mdtui.sample.dashboard import WholeDisks, build_view
from mdtui.sample.members import MemberSort, member_page
from mdtui.sample.sampler import Sampler
from mdtui.sample.series import ALL_DISKS, DiskTotals
from mdtui.ui.common.render import Palette
from mdtui.ui.watch.render import members_table

REPO = Path(__file__).resolve().parents[2]
DISKS = 256
# Generating and probing 256 disks takes ~0.5 s on tmpfs; far more means the tree or the probe went wrong.
SCAN_BUDGET_S = 10.0


@pytest.fixture(scope="module")
def tree(bigtree: ModuleType) -> Iterator[object]:
    directory = bigtree.scratch_directory()
    try:
        yield bigtree.build(directory, DISKS)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_the_probe_finds_every_disk_with_its_transport_link_and_use(tree) -> None:
    started = time.monotonic()
    inventory = scan(tree.base, privileged=True)
    took = time.monotonic() - started
    assert took < SCAN_BUDGET_S, f"scan of {DISKS} generated disks took {took:.2f} s"
    found = {transport: sum(d.transport is transport for d in inventory.disks) for transport in Transport}
    assert found[Transport.SAS] == tree.counts["sas"] == 192, found
    assert found[Transport.NVME] == tree.counts["nvme"] == 64, found
    assert len(inventory.disks) == DISKS, [
        d.name for d in inventory.disks if d.transport not in (Transport.SAS, Transport.NVME)
    ]
    assert not [d for d in inventory.disks if d.problems], [
        (d.name, d.problems) for d in inventory.disks if d.problems
    ][:3]

    kinds = {d.name: d.link.kind for d in inventory.disks if d.link is not None}
    assert len(kinds) == DISKS, f"{DISKS - len(kinds)} disks without a link"
    assert {kinds[d.name] for d in inventory.disks if d.transport is Transport.SAS} == {LinkKind.SAS}
    assert {kinds[d.name] for d in inventory.disks if d.transport is Transport.NVME} == {LinkKind.PCIE}
    downgraded = sorted(d.name for d in inventory.disks if d.link is not None and d.link.downgraded)
    assert downgraded == sorted(tree.slow_links)
    sas = inventory.disk("sda")
    assert sas is not None and sas.link is not None
    assert "/expander-2:0/" in sas.link.source and sas.link.source.endswith("/phy-2:0:0/sas_phy/phy-2:0:0")
    assert sas.link.current_rate == 12.0
    assert sas.driver == "mpt3sas" and sas.serial == "ZL200000" and sas.model == "SEAGATE ST16000NM004J"

    members = {m for array in tree.arrays for m in array.members}
    in_md = {d.name for d in inventory.disks if InUseKind.MD_MEMBER in {r.kind for r in d.in_use}}
    assert in_md == members
    root = inventory.disk(tree.root_disk)
    assert root is not None and InUseKind.ROOT_FS in {r.kind for r in root.in_use}
    free = [d for d in inventory.disks if not d.in_use]
    assert len(free) == DISKS - len(members) - 1


def test_the_arrays_resync_and_degrade_as_generated(tree, bigtree: ModuleType) -> None:
    inventory = scan(tree.base, privileged=True)
    arrays = {a.name: a for a in inventory.arrays}
    assert sorted(arrays) == sorted(a.name for a in tree.arrays) and len(arrays) == bigtree.arrays_for(DISKS)
    assert {a.name for a in inventory.arrays if a.sync is not None} == {a.name for a in tree.arrays if a.resyncing}
    assert {a.name: a.degraded for a in inventory.arrays if a.degraded} == {"md2": 1}
    for array in tree.arrays:
        found = arrays[array.name]
        assert found.level == array.level and [m.name for m in found.members] == array.members
        assert found.raid_disks == len(array.members) + array.degraded


def test_the_sampler_sees_every_disk_move(tree, bigtree: ModuleType) -> None:
    with Sampler(SystemRoot(tree.base)) as sampler:
        sampler.sample(now=0.0)
        tree.advance(1)
        snapshot = sampler.sample(now=1.0)
    names = {device.name for device in snapshot.devices}
    assert {d.name for d in tree.disks} <= names
    busy = [d for d in snapshot.devices if d.name in {disk.name for disk in tree.disks} and d.read_bytes_per_s]
    assert len(busy) == DISKS, f"{len(busy)} of {DISKS} disks moved"
    assert len(snapshot.cpu.cores) == bigtree.CPUS and snapshot.cpu.cpufreq_available
    resync_threads = {t.array for t in snapshot.md_threads if t.role == "resync"}
    assert resync_threads == {a.name for a in tree.arrays if a.resyncing}


def test_the_array_reader_reads_what_read_arrays_reads_tick_by_tick(tree) -> None:
    """The sampler's incremental mdstat reading agrees with a full read while resyncs progress."""
    root = SystemRoot(tree.base)
    reader = ArrayReader(root)
    mdstat = tree.base / "proc" / "mdstat"
    progress = []
    for tick in range(2, 6):
        tree.advance(tick)
        text = mdstat.read_text()
        incremental = reader.read(text)
        assert incremental == read_arrays(root, text), f"tick {tick}"
        progress.append(next(a.sync.done_sectors for a in incremental if a.sync is not None))
    assert progress == sorted(progress) and len(set(progress)) == len(progress), progress


def test_the_array_reader_rereads_an_array_whose_entry_changed(tmp_path) -> None:
    """A member marked faulty in mdstat (a changed entry, not only progress) is read in full again."""
    root_dir = tmp_path / "root"
    shutil.copytree(REPO / "tests" / "fixtures" / "trees" / "real-links", root_dir, symlinks=True)
    root = SystemRoot(root_dir)
    reader = ArrayReader(root)
    mdstat = root_dir / "proc" / "mdstat"
    before = reader.read(mdstat.read_text())
    state = root_dir / "sys" / "devices" / "virtual" / "block" / "md2" / "md" / "dev-sdd" / "state"
    state.write_text("faulty\n")
    mdstat.write_text(mdstat.read_text().replace("sdd[1]", "sdd[1](F)").replace("[2/2] [UU]", "[2/1] [U_]"))
    after = reader.read(mdstat.read_text())
    assert after == read_arrays(root)
    md2 = next(a for a in after if a.name == "md2")
    assert "faulty" in next(m for m in md2.members if m.name == "sdd").states
    assert [a for a in after if a.name != "md2"] == [a for a in before if a.name != "md2"]


def test_a_sync_starting_progressing_and_ending_reads_as_read_arrays_does(tmp_path) -> None:
    """Only md2's progress line comes and goes: each tick equals a full read, sync files kept open."""
    root_dir = tmp_path / "root"
    shutil.copytree(REPO / "tests" / "fixtures" / "trees" / "real-links", root_dir, symlinks=True)
    root = SystemRoot(root_dir)
    reader = ArrayReader(root)
    mdstat = root_dir / "proc" / "mdstat"
    md = root_dir / "sys" / "devices" / "virtual" / "block" / "md2" / "md"
    quiet = mdstat.read_text()
    geometry = "      1046528 blocks super 1.2 512K chunks 2 far-copies [2/2] [UU]\n"
    assert reader.read(quiet) == read_arrays(root, quiet)

    def tick(text: str, action: str, completed: str, speed: str) -> list:
        for name, value in (("sync_action", action), ("sync_completed", completed), ("sync_speed", speed)):
            (md / name).write_text(value + "\n")
        mdstat.write_text(text)
        incremental = reader.read(text)
        assert incremental == read_arrays(root, text)
        return incremental

    seen = []
    for done in (1024, 4096, 9000):
        line = f"      [=>...]  check = {done * 100 / 1046528:4.1f}% ({done}/1046528) finish=1.0min speed=5000K/sec\n"
        arrays = tick(quiet.replace(geometry, geometry + line), "check", f"{done * 2} / 2093056", "5000")
        md2 = next(a for a in arrays if a.name == "md2")
        assert md2.sync is not None and md2.sync.action == "check"
        seen.append(md2.sync.done_sectors)
    assert seen == [2048, 8192, 18000]  # sysfs's sectors, read through the kept files each tick
    kept = {path.rsplit("/", 1)[-1] for path in reader._files}
    assert {"sync_action", "sync_completed", "sync_speed"} <= kept
    ended = tick(quiet, "idle", "none", "none")
    assert next(a for a in ended if a.name == "md2").sync is None
    reader.close()


def test_changed_diskstats_lines_convert_together_as_they_do_one_by_one(tree) -> None:
    lines = tree.diskstats(7).splitlines()
    assert parse_diskstats_lines(lines) == [parse_diskstats_line(line) for line in lines]
    damaged = [
        *lines[:3],
        "   8       0 sdq 1 2 3 4 5 6 7 8 9 10 11",  # an older kernel's 11 counters among 17
        "   8      16 sdr 1 2 3 ٣ 5 6 7 8 9 10 11 12 13 14 15 16 17",  # an Arabic-Indic digit
        "   8      32 sds " + " ".join(["99999999999999999999999"] * 17),  # past u64
        "9999       0 sdt 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",  # major past 12 bits
        "   8      48 sdu 1 2",
        *lines[3:6],
    ]
    assert parse_diskstats_lines(damaged) == [parse_diskstats_line(line) for line in damaged]
    uniform = [*lines[:3], "9999       0 sdt 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"]
    assert parse_diskstats_lines(uniform) == [*(parse_diskstats_line(line) for line in lines[:3]), None]


def test_the_all_disks_series_sums_each_snapshot_once_with_the_same_figures(tree) -> None:
    root = SystemRoot(tree.base)
    disks = WholeDisks(root)
    totals = DiskTotals()
    with Sampler(root) as sampler:
        for tick in range(10, 16):
            tree.advance(tick)
            sampler.sample(now=float(tick))
            snapshots = sampler.history.snapshots()
            names = disks.names(d.name for d in snapshots[-1].devices)
            kept = build_view(snapshots, ALL_DISKS, names, window_s=3.0, totals=totals)
            assert kept == build_view(snapshots, ALL_DISKS, names, window_s=3.0), f"tick {tick}"
    assert len(totals._totals) == 4, "totals of snapshots that left the 3 s window are forgotten"
    assert len(kept.members) == DISKS and kept.total is not None and kept.total.read_bytes_per_s


def test_a_big_members_table_lays_out_what_the_pane_shows_and_keeps_standouts(tree) -> None:
    root = SystemRoot(tree.base)
    with Sampler(root) as sampler:
        tree.advance(20)
        sampler.sample(now=20.0)
        tree.advance(21)
        snapshots = (*sampler.history.snapshots(), sampler.sample(now=21.0))
    names = WholeDisks(root).names(d.name for d in snapshots[-1].devices)
    view = build_view(snapshots, ALL_DISKS, names)
    last = view.members[-1]
    view = dataclasses.replace(view, members=(*view.members[:-1], dataclasses.replace(last, standout="slow")))
    whole = members_table(view, Palette(), wide=True).plain.splitlines()
    assert len(whole) == 1 + DISKS + 1  # the header, every disk, the standout's reason
    page = member_page(view.members, MemberSort.BUSY, False, 0, 11)
    lines = members_table(view, Palette(), wide=True, page=page).plain.splitlines()
    assert len(lines) == 13, lines  # the header, 11 rows, the line saying what is below
    assert lines[-1] == f"… {DISKS - 11} more below · ↑↓ PgDn scroll · s sort"
    # The standout first, whatever the order, then the busiest; columns as wide as the shown rows need.
    cells = [line.split() for line in lines]
    assert cells[1][:2] == ["⚠", last.name], cells[1]
    assert [row[0] for row in cells[2:12]] == [row[0] for row in (line.split() for line in whole[2:12])]
    everything = member_page(view.members, MemberSort.BUSY, False, 0, None)
    assert members_table(view, Palette(), wide=True, page=everything).plain.splitlines() == whole


def test_the_inventory_and_the_sampler_list_the_disks_in_the_kernels_order(tree, bigtree: ModuleType) -> None:
    """nvme2n1 before nvme10n1, sdz before sdaa: by scan, by the scan's first step and by both sampler paths."""
    expected = [*(f"nvme{i}n1" for i in range(tree.counts["nvme"])), *map(bigtree.sd_name, range(tree.counts["sas"]))]
    inventory = scan(tree.base, privileged=True)
    assert [d.name for d in inventory.disks] == expected
    (head, pending), _whole = scan_in_steps(tree.base, privileged=True, first=12)
    assert [d.name for d in head.disks] == expected[:12] and list(pending) == expected[12:]
    assert [a.name for a in inventory.arrays] == [f"md{i}" for i in range(len(inventory.arrays))]

    with Sampler(SystemRoot(tree.base), devices=set(expected)) as sampler:
        sampler.sample(now=0.0)
        tree.advance(1)
        assert [d.name for d in sampler.sample(now=1.0).devices] == expected  # the column path
    with Sampler(SystemRoot(tree.base), devices=set(expected)) as sampler:
        assert [d.name for d in sampler.sample(now=2.0).devices] == expected  # line by line
