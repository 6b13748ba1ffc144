"""Exports checked against exact text: Markdown tables, CSV lines, JSON documents."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from mdtui.store.compare import compare, normalise, ratio_table
from mdtui.store.export import (
    comparison_csv,
    comparison_json,
    comparison_markdown,
    export_comparison,
    export_normalised,
    export_ratio_table,
    export_runs,
    markdown_table,
    runs_csv,
    runs_json,
    runs_markdown,
)
from mdtui.store.records import Metrics, RunRecord, RunStatus, SamplePoint

MIB = 1024 * 1024


def make_run(
    run_id: int,
    metrics: Metrics,
    *,
    array: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    label: str = "",
    **extra: Any,
) -> RunRecord:
    return RunRecord(
        id=run_id,
        status=RunStatus.COMPLETE,
        started_at=datetime(2024, 5, 1, 12, run_id, tzinfo=UTC),
        ended_at=datetime(2024, 5, 1, 12, run_id, 30, tzinfo=UTC),
        preset="SEQ1MQ8T8",
        params={"rw": "read", "bs": "1M"},
        target="/dev/md0",
        array={"level": "raid0", "raid_disks": 4, "chunk_bytes": 262144} if array is None else array,
        context={"kernel": "6.1.0-18-amd64", "governor": "performance"} if context is None else context,
        metrics=metrics,
        label=label,
        **extra,
    )


BASE = make_run(1, Metrics(read_bw_bytes_per_s=1.0e9, read_lat_p99_ns=2000.0, cpu_sys_pct=10.0), label="raid0")
FASTER = make_run(
    2,
    Metrics(read_bw_bytes_per_s=1.25e9, read_lat_p99_ns=1000.0, cpu_sys_pct=10.1),
    array={"level": "raid5", "raid_disks": 4, "chunk_bytes": 524288},
)
SLOWER = make_run(
    3,
    Metrics(read_bw_bytes_per_s=5.0e8, read_lat_p99_ns=4000.0, cpu_sys_pct=12.5),
    context={"kernel": "6.1.0-18-amd64", "governor": "powersave"},
    label="powersave",
)


def test_markdown_table_pads_aligns_and_escapes():
    assert markdown_table(["a", "Value"], [["x|y", "1"], ["long name", "22"]], [False, True]) == (
        "| a         | Value |\n"
        "|-----------|------:|\n"
        "| x\\|y      |     1 |\n"
        "| long name |    22 |"
    )


def test_runs_markdown():
    assert runs_markdown([BASE, FASTER]) == (
        "| Run             |             #1 raid0 |                   #2 |\n"
        "|-----------------|---------------------:|---------------------:|\n"
        "| Started         | 2024-05-01 12:01 UTC | 2024-05-01 12:02 UTC |\n"
        "| Status          |             complete |             complete |\n"
        "| Preset          |            SEQ1MQ8T8 |            SEQ1MQ8T8 |\n"
        "| Target          |             /dev/md0 |             /dev/md0 |\n"
        "| Level           |                raid0 |                raid5 |\n"
        "| Chunk           |            256.0 KiB |            512.0 KiB |\n"
        "| Read MB/s       |              1,000.0 |              1,250.0 |\n"
        "| Read lat p99 µs |                  2.0 |                  1.0 |\n"
        "| CPU sys %       |                 10.0 |                 10.1 |\n"
    )


def test_runs_csv():
    metrics = ",".join(["1000000000", "", "", "", "", "", "2000", "", "", "", "", "", "", "10", ""])
    assert runs_csv([BASE]) == (
        "id,label,status,started_at,ended_at,preset,target,array_level,array_raid_disks,array_chunk_bytes,"
        "array_layout,array_bitmap,read_bw_bytes_per_s,write_bw_bytes_per_s,read_iops,write_iops,"
        "read_lat_mean_ns,read_lat_p50_ns,read_lat_p99_ns,read_lat_p99_9_ns,write_lat_mean_ns,write_lat_p50_ns,"
        "write_lat_p99_ns,write_lat_p99_9_ns,cpu_usr_pct,cpu_sys_pct,md_thread_cpu_pct,steady,steady_after_s,"
        "steady_criterion,params,context,note\n"
        "1,raid0,complete,2024-05-01T12:01:00+00:00,2024-05-01T12:01:30+00:00,SEQ1MQ8T8,/dev/md0,raid0,4,262144,,,"
        f"{metrics},not judged,,,"
        '"{""bs"": ""1M"", ""rw"": ""read""}","{""governor"": ""performance"", ""kernel"": ""6.1.0-18-amd64""}",\n'
    )


def test_runs_json_round_trips_with_samples_and_optional_raw_fio():
    fio = '{\n  "fio version" : "fio-3.33",\n  "jobs" : []\n}\n'
    run = make_run(
        4, Metrics(read_iops=17300.0), samples=(SamplePoint(1.0, {"read_iops": 17000.0}),), fio_json=fio
    )
    plain = json.loads(runs_json([run]))
    assert plain["format"] == "mdtui-results"
    assert plain["schema_version"] == 1
    [exported] = plain["runs"]
    assert exported == {
        "id": 4,
        "label": "",
        "note": "",
        "status": "complete",
        "error": "",
        "started_at": "2024-05-01T12:04:00+00:00",
        "ended_at": "2024-05-01T12:04:30+00:00",
        "duration_s": 30.0,
        "preset": "SEQ1MQ8T8",
        "target": "/dev/md0",
        "params": {"rw": "read", "bs": "1M"},
        "array": {"level": "raid0", "raid_disks": 4, "chunk_bytes": 262144},
        "context": {"kernel": "6.1.0-18-amd64", "governor": "performance"},
        "metrics": {"read_iops": 17300.0},
        # A run without a criterion was not judged: a state, never false.
        "steady": {"state": "not judged", "criterion": None, "after_s": None, "last_window": None},
        "samples": [{"t_s": 1.0, "read_iops": 17000.0}],
    }
    with_raw = json.loads(export_runs([run], "json", include_raw=True))
    assert with_raw["runs"][0]["fio"] == {"fio version": "fio-3.33", "jobs": []}


def test_comparison_markdown():
    assert comparison_markdown(compare(BASE, [FASTER, SLOWER])) == (
        "Baseline #1 raid0; ratios are run ÷ baseline, called better or worse beyond ±2%.\n"
        "\n"
        "| Setting           | #1 raid0    | #2          | #3 powersave |\n"
        "|-------------------|-------------|-------------|--------------|\n"
        "| array.level       | raid0       | raid5       | raid0        |\n"
        "| array.chunk_bytes | 256.0 KiB   | 512.0 KiB   | 256.0 KiB    |\n"
        "| context.governor  | performance | performance | powersave    |\n"
        "\n"
        "| Metric          | #1 raid0 |      #2 |  vs #1 raid0 | #3 powersave | vs #1 raid0 |\n"
        "|-----------------|---------:|--------:|-------------:|-------------:|------------:|\n"
        "| Read MB/s       |  1,000.0 | 1,250.0 | 1.25× better |        500.0 | 0.50× worse |\n"
        "| Read lat p99 µs |      2.0 |     1.0 | 0.50× better |          4.0 | 2.00× worse |\n"
        "| CPU sys %       |     10.0 |    10.1 |        1.01× |         12.5 | 1.25× worse |\n"
    )


def test_comparison_markdown_without_differences():
    same = make_run(2, Metrics(read_bw_bytes_per_s=1.0e9))
    text = comparison_markdown(compare(make_run(1, Metrics(read_bw_bytes_per_s=0.0)), [same]))
    assert "No recorded setting differs between these runs.\n" in text
    # A zero baseline has no ratio; the direction is still told.
    assert text.endswith("| Read MB/s | 0.0 | 1,000.0 | better |\n")


def test_comparison_csv():
    assert comparison_csv(compare(BASE, [FASTER], metrics=["read_bw_bytes_per_s", "read_lat_p99_ns"])) == (
        "metric,unit,higher_is_better,run,role,value,ratio_vs_baseline,verdict,steady\n"
        "read_bw_bytes_per_s,bytes/s,true,1,baseline,1000000000,,,not judged\n"
        "read_bw_bytes_per_s,bytes/s,true,2,candidate,1250000000,1.25,better,not judged\n"
        "read_lat_p99_ns,ns,false,1,baseline,2000,,,not judged\n"
        "read_lat_p99_ns,ns,false,2,candidate,1000,0.5,better,not judged\n"
    )


def test_comparison_json():
    document = json.loads(comparison_json(compare(BASE, [SLOWER], metrics=["read_bw_bytes_per_s"])))
    assert {key: document[key] for key in ("format", "schema_version", "baseline", "candidates", "tolerance")} == {
        "format": "mdtui-comparison",
        "schema_version": 1,
        "baseline": 1,
        "candidates": [3],
        "tolerance": 0.02,
    }
    assert document["differences"] == [{"key": "context.governor", "values": {"1": "performance", "3": "powersave"}}]
    assert document["metrics"] == [
        {
            "name": "read_bw_bytes_per_s",
            "unit": "bytes/s",
            "higher_is_better": True,
            "baseline": 1.0e9,
            "candidates": [{"run": 3, "value": 5.0e8, "ratio": 0.5, "verdict": "worse", "unsteady": False}],
        }
    ]
    assert [run["id"] for run in document["runs"]] == [1, 3]
    assert "samples" not in document["runs"][0]
    assert export_comparison(compare(BASE, [SLOWER]), "json") == comparison_json(compare(BASE, [SLOWER]))


def test_ratio_table_exports():
    single = make_run(1, Metrics(write_iops=160_000.0), array={}, label="single")
    raid0 = make_run(2, Metrics(write_iops=640_000.0), label="raid0")
    raid5 = make_run(3, Metrics(write_iops=40_000.0), label="raid5")
    table = ratio_table([single, raid0, raid5], [single, raid0], "write_iops")
    assert export_ratio_table(table, "md") == (
        "| Run       | Write IOPS | vs #1 single | vs #2 raid0 |\n"
        "|-----------|-----------:|-------------:|------------:|\n"
        "| #1 single |    160,000 |        1.00× |       0.25× |\n"
        "| #2 raid0  |    640,000 |        4.00× |       1.00× |\n"
        "| #3 raid5  |     40,000 |        0.25× |      0.062× |\n"
    )
    assert export_ratio_table(table, "csv") == (
        "run,label,write_iops,ratio_vs_1,ratio_vs_2\n"
        "1,single,160000,1,0.25\n"
        "2,raid0,640000,4,1\n"
        "3,raid5,40000,0.25,0.0625\n"
    )
    assert json.loads(export_ratio_table(table, "json"))["rows"][2] == {
        "run": 3,
        "label": "raid5",
        "value": 40000.0,
        "ratios": {"1": 0.25, "2": 0.0625},
    }


def test_normalised_exports():
    raw_disk = make_run(1, Metrics(read_bw_bytes_per_s=200 * MIB), array={}, label="sdb")
    raid5 = {"level": "raid5", "raid_disks": 3}
    raid5_2m = make_run(2, Metrics(read_bw_bytes_per_s=380 * MIB), array={**raid5, "chunk_bytes": 2 * MIB})
    raid5_4k = make_run(3, Metrics(read_bw_bytes_per_s=80 * MIB), array={**raid5, "chunk_bytes": 4096})
    table = normalise([raid5_2m, raid5_4k], raw_disk)
    assert export_normalised(table, "md") == (
        "Read MB/s ÷ (device 209.7 MB/s (run #1 sdb) × data disks); 1.00 = every data disk at the device's speed.\n"
        "\n"
        "| Run | array.chunk_bytes | Data disks | Read MB/s | Normalised |\n"
        "|-----|-------------------|-----------:|----------:|-----------:|\n"
        "| #2  | 2.0 MiB           |          2 |     398.5 |       0.95 |\n"
        "| #3  | 4.0 KiB           |          2 |      83.9 |       0.20 |\n"
    )
    assert export_normalised(table, "csv") == (
        "run,label,array.chunk_bytes,data_disks,read_bw_bytes_per_s,device_speed,normalised\n"
        "2,,2097152,2,398458880,209715200,0.95\n"
        "3,,4096,2,83886080,209715200,0.2\n"
    )
    document = json.loads(export_normalised(table, "json"))
    assert (document["device_run"], document["device_speed"]) == (1, 200 * MIB)
    assert document["rows"][0] == {
        "run": 2,
        "label": "",
        "settings": {"array.chunk_bytes": 2 * MIB},
        "data_disks": 2.0,
        "value": 380 * MIB,
        "normalised": 0.95,
    }


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown export format"):
        export_runs([BASE], "xlsx")
    with pytest.raises(ValueError, match="unknown export format"):
        export_comparison(compare(BASE, [FASTER]), "html")
