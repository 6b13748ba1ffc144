"""Import of real fio 3.33 JSON output: summary figures, parameters, time series, bad files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mdtui.store.errors import FioImportError
from mdtui.store.fio_import import (
    metrics_from_fio,
    parse_fio_output,
    read_fio_file_runs,
    read_fio_output,
    store_fio_run,
)
from mdtui.store.records import Metrics, RunStatus
from mdtui.store.runs import ResultsStore

FIXTURES = Path(__file__).parents[1] / "fixtures" / "store"
READ = FIXTURES / "fio-3.33-read.json"
RANDRW = FIXTURES / "fio-3.33-randrw-numjobs2.json"
INTERVAL = FIXTURES / "fio-3.33-status-interval.json"


def import_fio_file(store: ResultsStore, path: Path, *, label: str = "") -> int:
    """What `mdtui results import` does with a file of one run: read it, check it, store it."""
    (run,) = read_fio_file_runs(path, label=label)
    return store_fio_run(store, run)


def test_import_of_a_sequential_read(tmp_path):
    document = json.loads(READ.read_text())
    job = document["jobs"][0]
    with ResultsStore(tmp_path / "results.db") as store:
        run = store.get_run(import_fio_file(store, READ, label="seq read"))
    assert run.status is RunStatus.COMPLETE
    assert (run.preset, run.label, run.error) == ("imported", "seq read", "")
    filename = job["job options"]["filename"]
    assert run.params == {"name": "t", "filename": filename, "size": "16M", "rw": "read", "bs": "1M"}
    assert run.target == job["job options"]["filename"]
    assert run.context == {
        "fio_version": "fio-3.33",
        "latency_percentiles_of": "clat (completion latency; the lat mean is total latency)",
        "source_file": str(READ.resolve()),
    }
    assert run.ended_at == datetime.fromtimestamp(document["timestamp_ms"] / 1000, UTC)
    assert run.started_at == run.ended_at - timedelta(seconds=job["elapsed"])
    assert run.metrics == Metrics(
        read_bw_bytes_per_s=job["read"]["bw_bytes"],
        read_iops=job["read"]["iops"],
        read_lat_mean_ns=job["read"]["lat_ns"]["mean"],
        read_lat_p50_ns=job["read"]["clat_ns"]["percentile"]["50.000000"],
        read_lat_p99_ns=job["read"]["clat_ns"]["percentile"]["99.000000"],
        read_lat_p99_9_ns=job["read"]["clat_ns"]["percentile"]["99.900000"],
        cpu_usr_pct=job["usr_cpu"],
        cpu_sys_pct=job["sys_cpu"],
    )
    # Spot values from the file, so a parsing slip cannot hide behind the same slip in the test.
    assert run.metrics.read_bw_bytes_per_s == 1118481066
    assert run.metrics.read_lat_p50_ns == 73216
    assert run.metrics.write_bw_bytes_per_s is None  # a read job measured no writes
    assert run.fio_json == READ.read_text()
    assert run.samples == ()


def test_jobs_are_summed_and_latency_weighted_by_io_count():
    document = json.loads(RANDRW.read_text())
    jobs = document["jobs"]
    assert len(jobs) == 2
    metrics = metrics_from_fio(document)
    for side in ("read", "write"):
        ios = [job[side]["total_ios"] for job in jobs]
        assert metrics.get(f"{side}_bw_bytes_per_s") == sum(job[side]["bw_bytes"] for job in jobs)
        assert metrics.get(f"{side}_iops") == sum(job[side]["iops"] for job in jobs)
        mean = sum(job[side]["lat_ns"]["mean"] * n for job, n in zip(jobs, ios, strict=True)) / sum(ios)
        assert metrics.get(f"{side}_lat_mean_ns") == pytest.approx(mean, rel=1e-12)
        # Per-job percentiles cannot be merged: the worst job's is an upper bound.
        assert metrics.get(f"{side}_lat_p99_ns") == max(job[side]["clat_ns"]["percentile"]["99.000000"] for job in jobs)
    assert metrics.cpu_usr_pct == pytest.approx(sum(job["usr_cpu"] for job in jobs))
    assert metrics.cpu_sys_pct == pytest.approx(sum(job["sys_cpu"] for job in jobs))
    run = read_fio_output(RANDRW.read_text())
    # numjobs=2 repeats one job: one set of parameters, not two.
    assert run.setup.params["numjobs"] == "2"
    assert "jobs" not in run.setup.params


def test_status_interval_output_gives_the_final_figures_and_a_time_series():
    text = INTERVAL.read_text()
    documents = parse_fio_output(text)
    assert len(documents) == 6
    run = read_fio_output(text)
    assert run.metrics == metrics_from_fio(documents[-1])
    assert len(run.samples) == len(documents) - 1
    before, after = documents[3], documents[4]
    seconds = (after["timestamp_ms"] - before["timestamp_ms"]) / 1000
    point = run.samples[3]
    assert point.t_s == pytest.approx((after["timestamp_ms"] - run.started_at.timestamp() * 1000) / 1000)
    assert point.values == {
        "read_bw_bytes_per_s": pytest.approx(
            (after["jobs"][0]["read"]["io_bytes"] - before["jobs"][0]["read"]["io_bytes"]) / seconds
        ),
        "read_iops": pytest.approx(
            (after["jobs"][0]["read"]["total_ios"] - before["jobs"][0]["read"]["total_ios"]) / seconds
        ),
    }
    assert [p.t_s for p in run.samples] == sorted(p.t_s for p in run.samples)


def test_warnings_around_the_json_are_skipped():
    text = "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + READ.read_text() + "fio: done\n"
    assert read_fio_output(text).metrics == read_fio_output(READ.read_text()).metrics


def test_a_failed_job_imports_as_a_failed_run():
    document = json.loads(READ.read_text())
    document["jobs"][0]["error"] = 5
    run = read_fio_output(json.dumps(document))
    assert run.status is RunStatus.FAILED
    assert run.error == "job 't': error 5 (Input/output error)"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json at all\n", "holds no fio JSON output"),
        (b'{"hello": "world"}\n', "holds no fio JSON output"),
        (b"\xff\xfe\x00binary", "is not text"),
    ],
)
def test_files_that_are_not_fio_json_are_refused(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with ResultsStore(tmp_path / "results.db") as store:
        with pytest.raises(FioImportError, match=message):
            import_fio_file(store, path)
        assert store.list_runs() == []


def test_truncated_fio_json_is_refused(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(READ.read_text()[:2000])
    with ResultsStore(tmp_path / "results.db") as store, pytest.raises(FioImportError):
        import_fio_file(store, path)


def test_a_missing_file_is_a_typed_error(tmp_path):
    with ResultsStore(tmp_path / "results.db") as store, pytest.raises(FioImportError, match="cannot read"):
        import_fio_file(store, tmp_path / "absent.json")
