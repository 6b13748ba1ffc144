"""A member's figures are decided once for every model: what predict gets (member_sources) is what the sync-time
model gets (sequential_figures), measured figures kept and each gap filled from the member's link."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mdtui.bench.member_figures import member_sources, sequential_figures
from mdtui.execute.presets import member_matrix
from mdtui.plan.figures import LINK, MEASURED
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunRecord, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"


def only_the_sequential_read(db: Path, device: str) -> list[RunRecord]:
    """A member-matrix run stopped after its first step (the sequential read, 500 MB/s)."""
    first = member_matrix(f"/dev/{device}")[0]
    moment = datetime.now(UTC)
    with ResultsStore(db) as store:
        setup = RunSetup(preset="member-matrix", params={"step": first.label}, target=f"/dev/{device}")
        store.add_run(setup, metrics=Metrics(read_bw_bytes_per_s=500e6), status=RunStatus.COMPLETE,
                      started_at=moment, ended_at=moment)  # fmt: skip
        return store.list_runs()


def test_a_member_measured_in_part_keeps_its_measured_read_in_every_model(tmp_path: Path) -> None:
    """sequential_figures once dropped the measured 500 MB/s read for the link's figure when the write was missing,
    while predict kept it: a rebuild and the array's reads were timed from two different members."""
    disk = scan(SystemRoot(str(TREE))).disk("nvme0n1")
    assert disk is not None and disk.link is not None
    runs = only_the_sequential_read(tmp_path / "r.db", "nvme0n1")
    for_predict = member_sources(runs, [disk])[0].figures
    for_sync = sequential_figures(runs, "nvme0n1", disk)
    assert for_sync is not None
    assert for_sync.seq_read_bytes_per_s == for_predict.seq_read_bytes_per_s == 500e6
    assert for_sync.basis_of("seq_read_bytes_per_s") == MEASURED
    assert for_sync.seq_write_bytes_per_s == for_predict.seq_write_bytes_per_s is not None
    assert for_sync.basis_of("seq_write_bytes_per_s") == LINK
