"""A benchmark stored on an array keeps the figure predicted for it (from the member figures then known):
results show prints predicted, measured and ratio; the advisor names a run far below its prediction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.predicted import rule_below_prediction
from mdtui.bench.predicted import predicted_entry, prediction_lines, ratio_of, workload_of
from mdtui.cli.main import main
from mdtui.execute.presets import member_matrix
from mdtui.model.job import KIB, MIB, JobSpec, RwMode
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunRecord, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
MEMBER = (
    Metrics(read_bw_bytes_per_s=1113e6),
    Metrics(write_bw_bytes_per_s=1022e6),
    Metrics(read_iops=181e3),
    Metrics(write_iops=170e3),
    Metrics(read_lat_mean_ns=58e3),
    Metrics(write_lat_mean_ns=21e3),
)
RND4K_WRITE = JobSpec("w", "/dev/md0", 4 * KIB, rw=RwMode.RANDWRITE, iodepth=32, numjobs=8, runtime_s=5)


def member_runs(db: Path, devices: list[str], figures: tuple[Metrics, ...] = MEMBER) -> list[RunRecord]:
    started = datetime.now(UTC) - timedelta(days=1)
    with ResultsStore(db) as store:
        for device in devices:
            for step, metrics in zip(member_matrix(f"/dev/{device}"), figures, strict=True):
                setup = RunSetup(preset="member-matrix", params={"step": step.label}, target=f"/dev/{device}")
                store.add_run(setup, metrics=metrics, status=RunStatus.COMPLETE, started_at=started, ended_at=started)
        return store.list_runs()


def test_only_the_models_workloads_get_a_prediction() -> None:
    assert workload_of(RND4K_WRITE) == ("rand_write_iops", "write_iops", 1.0)
    assert workload_of(JobSpec("r", "/dev/md0", MIB, iodepth=8, numjobs=8, runtime_s=5))[0] == "seq_read_bytes_per_s"
    assert workload_of(JobSpec("r", "/dev/md0", MIB, iodepth=8, numjobs=1, runtime_s=5)) is None  # not saturating
    assert workload_of(JobSpec("q", "/dev/md0", 4 * KIB, rw=RwMode.RANDREAD, runtime_s=5))[0] == "q1_read_latency_s"
    assert workload_of(JobSpec("p", "/dev/md0", 64 * KIB, rw=RwMode.RANDWRITE, iodepth=64, runtime_s=5)) is None


def test_the_entry_is_the_model_over_the_members_then_measured(tmp_path: Path) -> None:
    inventory = scan(SystemRoot(str(TREE)))
    md0 = next(a for a in inventory.arrays if a.name == "md0")  # raid6 of nvme0n1..nvme3n1
    runs = member_runs(tmp_path / "r.db", ["nvme0n1", "nvme1n1", "nvme2n1"])
    entry = predicted_entry(md0, (RND4K_WRITE,), runs, inventory)
    assert entry is not None and entry["value"] is None and "nvme3n1 has no member figures" in entry["why"]
    runs = member_runs(tmp_path / "r.db", ["nvme3n1"])
    entry = predicted_entry(md0, (RND4K_WRITE,), runs, inventory)
    assert entry is not None and entry["metric"] == "write_iops" and entry["workload"] == "random write"
    # raid6 of four: 1 read + 3 writes per 4 KiB write over 4 members, ~170K each: 4 / (1/181K + 3/170K) = 172K,
    # then capped by the stripe thread's field figure (60K).
    assert entry["value"] == 60_000 and entry["bound"].startswith("md stripe thread")
    assert "nvme0n1 measured 1 d ago" in entry["members"]


def stored_run(db: Path, measured: float, entry: dict) -> int:
    now = datetime.now(UTC)
    setup = RunSetup(
        preset="disk-mark",
        params={"step": "RND4KQ32T8 write", "predicted": entry},
        target="/dev/md0",
        array={"level": "raid6"},
    )
    with ResultsStore(db) as store:
        return store.add_run(
            setup, metrics=Metrics(write_iops=measured), status=RunStatus.COMPLETE, started_at=now, ended_at=now
        )


ENTRY = {
    "workload": "random write",
    "metric": "write_iops",
    "value": 60_000.0,
    "bound": "md stripe thread (group_thread_cnt 0)",
    "basis": "field figure, measured",
    "members": "nvme0n1 measured 1 d ago",
}


def test_results_show_prints_predicted_measured_and_ratio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db, 21_234.0, ENTRY)
    assert main(["results", "show", str(run_id), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "Predicted  60,000 IOPS random write (bound: md stripe thread" in out
    assert "Measured   21,000 IOPS" in out and "Ratio      0.35× the prediction: far below it" in out
    assert "predicted={" not in out  # not dumped among the params


def test_the_advisor_names_a_run_far_below_its_prediction(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    stored_run(db, 55_000.0, ENTRY)  # 0.92×: as predicted
    with ResultsStore(db) as store:
        assert rule_below_prediction(AdviceInput(runs=tuple(store.list_runs()))) == []
    far = stored_run(db, 21_000.0, ENTRY)  # the newest run of md0's random writes: 0.35×
    with ResultsStore(db) as store:
        runs = tuple(store.list_runs())
    (finding,) = rule_below_prediction(AdviceInput(runs=runs))
    assert f"run #{far}" in finding.title and "0.35×" in finding.title and "likely bound: md's stripe" in finding.title
    assert ratio_of(next(r for r in runs if r.id == far)) == pytest.approx(0.35)


def test_a_run_without_member_figures_says_why_not() -> None:
    now = datetime.now(UTC)
    why = {"workload": "random write", "metric": "write_iops", "value": None, "why": "sdb has no member figures"}
    run = RunRecord(1, RunStatus.COMPLETE, now, now, "custom", {"predicted": why}, "/dev/md0", {}, {}, Metrics())
    assert prediction_lines(run) == ["  Predicted  none for random write: sdb has no member figures"]


def test_a_benchmark_step_on_an_array_is_stored_with_its_prediction(tmp_path: Path) -> None:
    import asyncio

    from mdtui.bench import session
    from mdtui.bench.plan import plan_bench
    from mdtui.bench.requests import BenchRequest

    root = SystemRoot(str(TREE))
    inventory = scan(root, privileged=True)
    planned = plan_bench(BenchRequest("disk-mark", "md2"), inventory, root)  # raid10 far=2 of sdd and vda
    member_runs(tmp_path / "r.db", ["sdd", "vda"])
    with ResultsStore(tmp_path / "r.db") as store:
        sess = session._Session(planned, inventory, root, store, {}, None, asyncio.Event(), None)
        setups = {step.label: sess.setups.setup(step, index) for index, step in enumerate(planned.steps)}
    seq_read = setups["SEQ1MQ8T8 read"].params["predicted"]
    assert seq_read["metric"] == "read_bw_bytes_per_s" and seq_read["value"] == 2.2e9  # both copies read
    assert setups["RND4KQ32T8 write"].params["predicted"]["value"] == 170e3  # two copies over two members
    assert setups["RND4KQ1T1 read"].params["predicted"]["metric"] == "read_lat_mean_ns"
    assert "predicted" not in setups["SEQ1MQ8T1 read"].params  # one job: not the saturating job predicted


def test_a_level_comparison_prints_predicted_beside_measured(tmp_path: Path) -> None:
    import json

    from mdtui.advise.experiments import ExperimentResult, ExperimentRun
    from mdtui.cli.experiment import render, result_json

    db = tmp_path / "r.db"
    raid5 = stored_run(db, 21_000.0, ENTRY)
    raid10 = stored_run(db, 300_000.0, ENTRY | {"value": 340_000.0, "bound": "members (slowest × 2)"})
    result = ExperimentResult("levels", (ExperimentRun("raid5", (raid5,)), ExperimentRun("raid10", (raid10,))))
    with ResultsStore(db) as store:
        text = render(result, store)
        document = json.loads(result_json(result, store))
    table = text[text.index("predicted beside measured") :].splitlines()
    assert table[1].split()[:5] == ["run", "workload", "predicted", "measured", "ratio"]
    assert "60,000 IOPS" in table[2] and "21,000 IOPS" in table[2] and "0.35×" in table[2]
    assert "340,000 IOPS" in table[3] and "0.88×" in table[3]
    assert [row["ratio"] for row in document["predicted"]] == [pytest.approx(0.35), pytest.approx(300 / 340)]


def test_a_parity_arrays_own_stripe_cache_decides_its_sequential_write_prediction(tmp_path: Path) -> None:
    # The model bounds a raid5's sequential writes by md's stripe cache; a stored run used md's default (256)
    # whatever the array had. raid5 over four at 512 KiB: 8 streams need 8 x 128 heads for full stripes.
    import dataclasses

    inventory = scan(SystemRoot(str(TREE)))
    md0 = next(a for a in inventory.arrays if a.name == "md0")
    raid5 = dataclasses.replace(md0, level="raid5", chunk_bytes=512 * KIB)
    # Members at 100 MB/s each: below one stripe thread's field figure, so the members (or the cache) bind.
    slow = (MEMBER[0], Metrics(write_bw_bytes_per_s=100e6), *MEMBER[2:])
    runs = member_runs(tmp_path / "r.db", ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"], slow)
    seq_write = JobSpec("w", "/dev/md0", MIB, rw=RwMode.WRITE, iodepth=8, numjobs=8, runtime_s=5)
    small = predicted_entry(raid5, (seq_write,), runs, inventory, stripe_cache_size=256)
    # The cache binds: the members' 300 MB/s times the lab's measured fraction (0.57), bound named.
    assert small is not None and small["value"] == 170e6 and "stripe_cache_size 256" in small["bound"]
    large = predicted_entry(raid5, (seq_write,), runs, inventory, stripe_cache_size=4096)
    assert large is not None and large["value"] == 300e6 and large["bound"] == "members (slowest × 3)"


def test_each_step_reads_the_stripe_cache_once_and_the_session_the_hosts_ceilings_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step's knobs are read right before it, and its prediction takes the stripe cache from them (not a second
    read); this host's ceilings (cpuinfo, kernel release, calibration) are read once for the whole benchmark."""
    import asyncio
    import shutil

    from mdtui.bench import member_figures, run_setup, session
    from mdtui.bench.plan import plan_bench
    from mdtui.bench.requests import BenchRequest
    from mdtui.store import calibration

    reads: list[str] = []
    ceilings: list[str] = []
    read_text = SystemRoot.read_text

    def counted_text(self: SystemRoot, path: str, *args: object, **kwargs: object) -> str | None:
        if str(path).endswith("/md/stripe_cache_size"):
            reads.append(str(path))
        return read_text(self, path, *args, **kwargs)  # type: ignore[arg-type]

    def counted_ceilings(*args: object) -> calibration.CeilingsChoice:
        ceilings.append("read")
        return calibration.host_ceilings(*args)  # type: ignore[arg-type]

    caches: list[object] = []
    entry = run_setup.predicted_entry

    def predicted(*args: Any, **kwargs: Any) -> Any:
        caches.append(kwargs["stripe_cache_size"])  # what the prediction was given of the array's stripe cache
        return entry(*args, **kwargs)

    monkeypatch.setattr(SystemRoot, "read_text", counted_text)
    monkeypatch.setattr(run_setup, "predicted_entry", predicted)
    monkeypatch.setattr(member_figures, "host_ceilings", counted_ceilings)
    monkeypatch.setattr(run_setup, "host_ceilings", counted_ceilings, raising=False)
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree, symlinks=True)
    (tree / "sys/devices/virtual/block/md0/md/stripe_cache_size").write_text("32\n")  # md0's own, not md's 256
    root = SystemRoot(str(tree))
    inventory = scan(root, privileged=True)
    planned = plan_bench(BenchRequest("disk-mark", "md0"), inventory, root)  # raid6 of nvme0n1..nvme3n1
    slow = (MEMBER[0], Metrics(write_bw_bytes_per_s=100e6), *MEMBER[2:])  # the members or the cache bind
    member_runs(tmp_path / "r.db", ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"], slow)
    with ResultsStore(tmp_path / "r.db") as store:
        sess = session._Session(planned, inventory, root, store, {}, None, asyncio.Event(), None)
        setups = {step.label: sess.setups.setup(step, index) for index, step in enumerate(planned.steps)}
    assert len(reads) == len(planned.steps) > 1 and ceilings == ["read"]
    assert setups["SEQ1MQ8T8 write"].context["knobs"]["md/stripe_cache_size"] == "32"
    assert caches == [32] * len(planned.steps)
    assert setups["SEQ1MQ8T8 write"].params["predicted"]["value"] is not None
