"""fio output of every version from 2.x to today's, read right by the import and by the live parser alike.

The fixtures (tests/fixtures/fio/versions, see its README) are hand-written after real outputs of other
projects: fio 2.1.4 without a timestamp, 2.18's KiB and µs, 3.1's missing bw_bytes, gtod_reduce, stonewall
groups, --client output, lat_percentiles=1 and json+ bins. Each expected figure is worked out here from
the file's own numbers in fio's documented units, not from the parser.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mdtui.cli.main import main
from mdtui.execute.fio import document_stats
from mdtui.store.errors import FioImportError
from mdtui.store.export import export_runs
from mdtui.store.fio_import import read_fio_output, read_fio_runs, store_fio_run
from mdtui.store.runs import ResultsStore

VERSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "fio" / "versions"


def text(name: str) -> str:
    return (VERSIONS / name).read_text()


def document(name: str) -> dict:
    raw = text(name)
    return json.loads(raw[raw.index("\n{") + 1 :] if not raw.startswith("{") else raw)


def test_fio_3_1_bandwidth_is_read_from_kib_when_there_is_no_bw_bytes() -> None:
    # Ubuntu 18.04's fio: bandwidth was stored as 0.0 MB/s and the live parser read 0 too.
    job = document("fio-3.1-randread-no-bw-bytes.json")["jobs"][0]
    run = read_fio_output(text("fio-3.1-randread-no-bw-bytes.json"))
    assert run.metrics.read_bw_bytes_per_s == job["read"]["bw"] * 1024 == 434176
    assert run.metrics.read_lat_mean_ns == job["read"]["lat_ns"]["mean"]
    assert run.metrics.read_lat_p50_ns == 8978432
    assert run.metrics.write_bw_bytes_per_s is None
    total, _ = document_stats(document("fio-3.1-randread-no-bw-bytes.json"))
    assert total is not None and total.read.bytes_per_s == 434176


def test_fio_2_18_kib_and_microseconds() -> None:
    run = read_fio_output(text("fio-2.18-randread.json"))
    assert run.metrics.read_bw_bytes_per_s == 292 * 1024
    assert run.metrics.read_iops == pytest.approx(73.184143)
    assert run.metrics.read_lat_mean_ns == pytest.approx(13656.9 * 1000)
    assert (run.metrics.read_lat_p50_ns, run.metrics.read_lat_p99_ns) == (12992 * 1000, 33536 * 1000)
    total, _ = document_stats(document("fio-2.18-randread.json"))
    assert total is not None
    assert (total.read.io_bytes, total.read.bytes_per_s) == (17568 * 1024, 292 * 1024)
    assert total.read.latency.mean_ns == pytest.approx(13655.2 * 1000)  # the live figure is completion latency


def test_fio_2_1_4_without_a_timestamp_is_accepted_with_its_time_unknown() -> None:
    runs = read_fio_runs(text("fio-2.1.4-stonewall-no-timestamp.json"))
    assert len(runs) == 2  # two stonewall groups
    first, second = runs
    assert first.started_at is None and first.ended_at is None
    assert first.setup.context["time"] == "unknown: fio-2.1.4 wrote no timestamp"
    assert first.metrics.read_bw_bytes_per_s == 40960 * 1024
    assert first.metrics.read_iops == 160
    # No total_ios in fio 2.1: one job per group, so the mean is the job's own.
    assert first.metrics.read_lat_mean_ns == pytest.approx(6204.0 * 1000)
    assert first.metrics.read_lat_p99_9_ns == 8896 * 1000
    assert first.metrics.write_bw_bytes_per_s is None
    assert second.metrics.write_bw_bytes_per_s == 4000 * 1024
    assert second.metrics.read_bw_bytes_per_s is None
    assert [r.setup.params["step"] for r in runs] == ["fio group 0 of 2", "fio group 1 of 2"]


def test_gtod_reduce_latency_is_not_measured_and_stays_none_through_the_store_and_exports(tmp_path: Path) -> None:
    doc = document("fio-3.20-gtod-reduce.json")
    run = read_fio_output(text("fio-3.20-gtod-reduce.json"))
    assert run.metrics.read_bw_bytes_per_s == doc["jobs"][0]["read"]["bw_bytes"]
    assert run.metrics.write_bw_bytes_per_s == doc["jobs"][1]["write"]["bw_bytes"]
    for side in ("read", "write"):
        for figure in ("mean", "p50", "p99", "p99_9"):
            assert run.metrics.get(f"{side}_lat_{figure}_ns") is None
    total, _ = document_stats(doc)
    assert total is not None and total.read.latency.mean_ns is None and total.read.latency.p50_ns is None
    with ResultsStore(tmp_path / "results.db", create=True) as store:
        stored = store.get_run(store_fio_run(store, run))
    assert stored.metrics.read_lat_mean_ns is None and stored.metrics.write_lat_p99_ns is None
    row = next(csv.DictReader(io.StringIO(export_runs([stored], "csv"))))
    assert row["read_lat_mean_ns"] == "" and row["read_bw_bytes_per_s"] != ""
    assert "read_lat_mean_ns" not in json.loads(export_runs([stored], "json"))["runs"][0]["metrics"]
    assert "Read lat mean" not in export_runs([stored], "md")


def test_stonewall_groups_are_separate_runs_never_summed() -> None:
    doc = document("fio-3.16-stonewall-groups.json")
    runs = read_fio_runs(text("fio-3.16-stonewall-groups.json"))
    assert len(runs) == 3
    read0, write1, read2 = runs
    assert read0.metrics.read_bw_bytes_per_s == doc["jobs"][0]["read"]["bw_bytes"]
    assert read0.metrics.write_bw_bytes_per_s is None
    assert write1.metrics.write_bw_bytes_per_s == doc["jobs"][1]["write"]["bw_bytes"]
    assert write1.metrics.read_bw_bytes_per_s is None
    assert read2.metrics.read_bw_bytes_per_s == doc["jobs"][2]["read"]["bw_bytes"]
    # Phases ran one after another: each ends where the next one starts, the last at fio's timestamp.
    end = datetime.fromtimestamp(1580000063, UTC)
    assert [(r.started_at, r.ended_at) for r in runs] == [
        (end - timedelta(seconds=63), end - timedelta(seconds=42)),
        (end - timedelta(seconds=42), end - timedelta(seconds=21)),
        (end - timedelta(seconds=21), end),
    ]
    assert read_fio_runs(text("fio-3.16-stonewall-groups.json"))[1].setup.params["rw"] == "randwrite"
    with pytest.raises(FioImportError, match="3 runs"):
        read_fio_output(text("fio-3.16-stonewall-groups.json"))


def test_client_output_is_one_run_per_host_without_the_all_clients_sum() -> None:
    doc = document("fio-3.7-client-two-hosts.json")
    runs = read_fio_runs(text("fio-3.7-client-two-hosts.json"))
    assert [r.setup.context["fio_client_host"] for r in runs] == ["hosta", "hostb"]
    for run, host in zip(runs, ("hosta", "hostb"), strict=True):
        jobs = [e for e in doc["client_stats"] if e["hostname"] == host and e["jobname"] != "All clients"]
        assert run.metrics.read_bw_bytes_per_s == sum(j["read"]["bw_bytes"] for j in jobs)
        ios = [j["read"]["total_ios"] for j in jobs]
        mean = sum(j["read"]["lat_ns"]["mean"] * n for j, n in zip(jobs, ios, strict=True)) / sum(ios)
        assert run.metrics.read_lat_mean_ns == pytest.approx(mean)
        assert run.metrics.cpu_usr_pct == pytest.approx(sum(j["usr_cpu"] for j in jobs))
        assert run.ended_at == datetime.fromtimestamp(1536171052, UTC)  # seconds: no timestamp_ms


def test_results_import_stores_each_host_and_each_group(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "results.db")
    assert main(["results", "--db", db, "import", str(VERSIONS / "fio-3.7-client-two-hosts.json")]) == 0
    out = capsys.readouterr().out
    assert "imported run #1 (complete) hosta" in out and "imported run #2 (complete) hostb" in out
    assert main(["results", "--db", db, "import", str(VERSIONS / "fio-3.16-stonewall-groups.json")]) == 0
    assert capsys.readouterr().out.count("fio group") == 3


def test_percentiles_say_which_latency_they_are_of() -> None:
    completion = read_fio_output(text("fio-3.1-randread-no-bw-bytes.json"))
    assert completion.setup.context["latency_percentiles_of"].startswith("clat (completion latency")
    total = read_fio_output(text("fio-3.30-lat-percentiles.json"))
    assert total.setup.context["latency_percentiles_of"] == "lat (total latency, lat_percentiles=1)"
    assert total.metrics.read_lat_p50_ns == 392192
    assert total.metrics.read_lat_mean_ns == 91020000.0


def test_json_plus_bins_give_percentiles_when_there_is_no_table() -> None:
    run = read_fio_output(text("fio-3.33-jsonplus-bins.json"))
    # 1000 I/Os: 400 at 50176 ns, 400 at 100352, 180 at 199680, 15 at 995328, 5 at 2015232.
    assert run.metrics.read_lat_p50_ns == 100352  # the 500th I/O
    assert run.metrics.read_lat_p99_ns == 995328  # the 990th
    assert run.metrics.read_lat_p99_9_ns == 2015232  # the 999th
    total, _ = document_stats(document("fio-3.33-jsonplus-bins.json"))
    assert total is not None and total.read.latency.p50_ns == 100352


def test_output_that_cannot_be_read_right_is_refused_naming_the_version_and_what_is_missing() -> None:
    doc = document("fio-3.1-randread-no-bw-bytes.json")
    del doc["jobs"][0]["read"]["bw"]
    with pytest.raises(FioImportError, match=r"fio-3\.1 output has read: no bw_bytes or bw"):
        read_fio_output(json.dumps(doc, indent=2))


def test_a_time_series_without_io_counts_has_no_iops_rather_than_zero() -> None:
    # --status-interval output of an fio that writes no total_ios (2.1): IOPS per interval is unknown.
    first = document("fio-2.18-randread.json")
    for job in first["jobs"]:
        for side in ("read", "write", "trim"):
            job[side].pop("total_ios", None)
    second = json.loads(json.dumps(first))
    second["timestamp_ms"] += 1000
    second["jobs"][0]["read"]["io_bytes"] += 292
    run = read_fio_output(json.dumps(first, indent=2) + "\n" + json.dumps(second, indent=2) + "\n")
    assert [point.values for point in run.samples] == [{"read_bw_bytes_per_s": 292 * 1024}]


@pytest.mark.parametrize("name", sorted(p.name for p in VERSIONS.glob("*.json") if "client" not in p.name))
def test_the_live_parser_and_the_import_read_every_version_alike(name: str) -> None:
    doc = document(name)
    for run in read_fio_runs(text(name)):
        step = run.setup.params.get("step")
        groupid = int(step.split()[2]) if step else 0
        jobs = [job for job in doc["jobs"] if job["groupid"] == groupid]
        total, _ = document_stats({"jobs": jobs})
        assert total is not None
        for side in ("read", "write"):
            live = getattr(total, side)
            stored = run.metrics.get(f"{side}_bw_bytes_per_s")
            assert live.bytes_per_s == (stored or 0.0)
            assert live.iops == pytest.approx(run.metrics.get(f"{side}_iops") or 0.0)


def test_each_client_host_ran_as_long_as_its_jobs_not_zero_seconds() -> None:
    # `fio --client` entries carry no "elapsed": the duration is the jobs' runtime (15,000 ms here), not 0.0 s.
    runs = read_fio_runs(text("fio-3.7-client-two-hosts.json"))
    assert [run.ended_at for run in runs] == [datetime.fromtimestamp(1536171052, UTC)] * 2
    assert [(run.ended_at - run.started_at).total_seconds() for run in runs if run.ended_at and run.started_at] == [
        15.0,
        15.0,
    ]


def test_jobs_that_say_neither_runtime_nor_elapsed_have_no_duration_rather_than_zero(tmp_path: Path) -> None:
    doc = document("fio-3.7-client-two-hosts.json")
    for entry in doc["client_stats"]:
        entry["read"].pop("runtime")
    db = str(tmp_path / "results.db")
    source = tmp_path / "no-runtime.json"
    source.write_text(json.dumps(doc))
    runs = read_fio_runs(source.read_text())
    assert all(run.ended_at is None and run.started_at is not None for run in runs)
    assert "how long it ran is not measured" in runs[0].setup.context["time"]
    assert main(["results", "--db", db, "import", str(source)]) == 0
    with ResultsStore(db) as store:
        stored = store.get_run(1)
    assert stored.duration_s is None and stored.started_at == datetime.fromtimestamp(1536171052, UTC)
