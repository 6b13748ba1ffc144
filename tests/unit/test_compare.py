"""Comparison maths: exact ratios, better/worse per metric direction, what changed, finding 4 and 5 tables.

The findings are in docs/findings.md.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mdtui.store.compare import (
    ConfigDifference,
    Verdict,
    compare,
    config_differences,
    data_disks,
    normalise,
    ratio,
    ratio_table,
    run_settings,
    verdict,
)
from mdtui.store.errors import CompareError
from mdtui.store.records import METRICS_BY_NAME, Metrics, RunRecord, RunStatus

MIB = 1024 * 1024
READ_BW = METRICS_BY_NAME["read_bw_bytes_per_s"]
READ_P99 = METRICS_BY_NAME["read_lat_p99_ns"]


def make_run(
    run_id: int,
    metrics: Metrics,
    *,
    array: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    label: str = "",
) -> RunRecord:
    return RunRecord(
        id=run_id,
        status=RunStatus.COMPLETE,
        started_at=datetime(2024, 5, 1, 12, run_id, tzinfo=UTC),
        ended_at=datetime(2024, 5, 1, 12, run_id, 30, tzinfo=UTC),
        preset="SEQ1MQ8T8",
        params={"rw": "read", "bs": "1M", "numjobs": 8} if params is None else params,
        target="/dev/md0",
        array={} if array is None else array,
        context={"kernel": "6.1.0-18-amd64", "governor": "performance"} if context is None else context,
        metrics=metrics,
        label=label,
    )


def test_ratios_and_verdicts_follow_each_metrics_direction():
    base = make_run(1, Metrics(read_bw_bytes_per_s=1000.0, read_lat_p99_ns=2000.0, cpu_sys_pct=10.0))
    faster = make_run(2, Metrics(read_bw_bytes_per_s=1250.0, read_lat_p99_ns=1000.0, cpu_sys_pct=10.1))
    slower = make_run(3, Metrics(read_bw_bytes_per_s=500.0, read_lat_p99_ns=4000.0, cpu_sys_pct=12.5))
    result = compare(base, [faster, slower])
    rows = {row.metric.name: row for row in result.rows}
    assert list(rows) == ["read_bw_bytes_per_s", "read_lat_p99_ns", "cpu_sys_pct"]
    bw, p99, cpu = rows.values()
    assert (bw.baseline, bw.values) == (1000.0, (1250.0, 500.0))
    assert bw.ratios == (1.25, 0.5)
    assert bw.verdicts == (Verdict.BETTER, Verdict.WORSE)
    # Latency: a smaller ratio is the improvement.
    assert p99.ratios == (0.5, 2.0)
    assert p99.verdicts == (Verdict.BETTER, Verdict.WORSE)
    # CPU is a cost: +1% is within the tolerance, +25% is worse.
    assert cpu.ratios == (pytest.approx(1.01), 1.25)
    assert cpu.verdicts == (Verdict.SAME, Verdict.WORSE)
    assert result.runs == (base, faster, slower)


def test_tolerance_boundaries():
    assert verdict(READ_BW, 102.0, 100.0, 0.02) is Verdict.SAME
    assert verdict(READ_BW, 102.5, 100.0, 0.02) is Verdict.BETTER
    assert verdict(READ_BW, 97.5, 100.0, 0.02) is Verdict.WORSE
    assert verdict(READ_P99, 97.5, 100.0, 0.02) is Verdict.BETTER
    assert verdict(READ_BW, 100.5, 100.0, 0.0) is Verdict.BETTER


def test_missing_and_zero_figures():
    assert ratio(None, 1.0) is None
    assert ratio(1.0, None) is None
    assert ratio(1.0, 0.0) is None
    assert verdict(READ_BW, None, 1.0, 0.02) is Verdict.UNKNOWN
    assert verdict(READ_BW, 5.0, 0.0, 0.02) is Verdict.BETTER
    assert verdict(READ_P99, 5.0, 0.0, 0.02) is Verdict.WORSE
    assert verdict(READ_BW, 0.0, 0.0, 0.02) is Verdict.SAME


def test_empty_metrics_are_skipped_unless_asked():
    base = make_run(1, Metrics(read_bw_bytes_per_s=1.0, write_bw_bytes_per_s=0.0))
    other = make_run(2, Metrics(read_bw_bytes_per_s=2.0, write_bw_bytes_per_s=0.0))
    assert [row.metric.name for row in compare(base, [other]).rows] == ["read_bw_bytes_per_s"]
    every = compare(base, [other], skip_empty=False)
    assert len(every.rows) == len(METRICS_BY_NAME)
    only = compare(base, [other], metrics=["write_bw_bytes_per_s"], skip_empty=False)
    assert [(row.metric.name, row.verdicts) for row in only.rows] == [("write_bw_bytes_per_s", (Verdict.SAME,))]


def test_bad_comparisons_are_typed_errors():
    base = make_run(1, Metrics())
    with pytest.raises(CompareError, match="at least one run"):
        compare(base, [])
    with pytest.raises(CompareError, match="unknown metric"):
        compare(base, [base], metrics=["speed"])


def test_configuration_differences_list_what_changed():
    members = [
        {"name": f"sd{c}", "model": "MZ7KH960", "serial": f"S{c}", "link": "SAS 12.0 Gbit/s"} for c in "bcde"
    ]
    raid0 = {"level": "raid0", "raid_disks": 4, "chunk_bytes": 262144, "bitmap": "none", "members": members}
    raid5 = {**raid0, "level": "raid5", "chunk_bytes": 524288, "layout": "left-symmetric"}
    base = make_run(1, Metrics(), array=raid0)
    candidate = make_run(
        2,
        Metrics(),
        array=raid5,
        params={"rw": "read", "bs": "1M", "numjobs": 1},
        context={"kernel": "6.6.13", "governor": "powersave", "source_file": "/tmp/a.json"},
    )
    assert config_differences([base, candidate]) == (
        ConfigDifference("params.numjobs", (8, 1)),
        ConfigDifference("array.level", ("raid0", "raid5")),
        ConfigDifference("array.chunk_bytes", (262144, 524288)),
        ConfigDifference("array.layout", (None, "left-symmetric")),
        ConfigDifference("context.kernel", ("6.1.0-18-amd64", "6.6.13")),
        ConfigDifference("context.governor", ("performance", "powersave")),
    )
    assert compare(base, [candidate]).differences == config_differences([base, candidate])
    assert config_differences([base, base]) == ()


def test_members_are_summarised_not_compared_whole():
    def disk(name: str, link: str) -> dict[str, Any]:
        return {"name": name, "model": "SSDPE2KX020T8", "serial": name.upper(), "link": link}

    fast = "PCIe 3.0 x4 (8.0 GT/s)"
    before = make_run(1, Metrics(), array={"level": "raid0", "members": [disk("nvme0n1", fast), disk("nvme1n1", fast)]})
    slot = "PCIe 1.0 x4 (2.5 GT/s)"
    after = make_run(2, Metrics(), array={"level": "raid0", "members": [disk("nvme1n1", fast), disk("nvme0n1", slot)]})
    settings = run_settings(before)
    assert settings["array.members"] == 2
    assert settings["array.member_models"] == "2 × SSDPE2KX020T8"
    assert settings["array.member_serials"] == "NVME0N1, NVME1N1"
    # Same disks in another order: only the link (finding 1 in docs/findings.md, the weakest link) differs.
    assert config_differences([before, after]) == (
        ConfigDifference("array.member_links", (f"2 × {fast}", f"1 × {slot}, 1 × {fast}")),
    )


def test_ratio_table_against_several_references():
    # Finding 4's shape (docs/findings.md; random 4K write IOPS), with figures whose ratios are exact in binary.
    single = make_run(1, Metrics(write_iops=160_000.0), label="single disk")
    raid0 = make_run(2, Metrics(write_iops=640_000.0), label="raid0")
    raid10 = make_run(3, Metrics(write_iops=320_000.0), label="raid10")
    raid5 = make_run(4, Metrics(write_iops=40_000.0), label="raid5")
    untested = make_run(5, Metrics(), label="raid6")
    table = ratio_table([single, raid0, raid10, raid5, untested], [single, raid0, raid10], "write_iops")
    assert table.metric.name == "write_iops"
    assert table.references == (single, raid0, raid10)
    assert [(row.run.id, row.value, row.ratios) for row in table.rows] == [
        (1, 160_000.0, (1.0, 0.25, 0.5)),
        (2, 640_000.0, (4.0, 1.0, 2.0)),
        (3, 320_000.0, (2.0, 0.5, 1.0)),
        (4, 40_000.0, (0.25, 0.0625, 0.125)),
        (5, None, (None, None, None)),
    ]
    with pytest.raises(CompareError):
        ratio_table([single], [], "write_iops")


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        ({}, 1.0),
        ({"level": "raid0", "raid_disks": 3}, 3.0),
        ({"level": "raid5", "raid_disks": 3}, 2.0),
        ({"level": "6", "raid_disks": 6}, 4.0),
        ({"level": "raid1", "raid_disks": 2}, 1.0),
        ({"level": "raid10", "raid_disks": 4, "layout": "near=2"}, 2.0),
        ({"level": "raid10", "raid_disks": 3, "layout": "f2"}, 1.5),
        ({"level": "raid5", "members": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d", "spare": True}]}, 2),
    ],
)
def test_data_disks(array, expected):
    assert data_disks(make_run(1, Metrics(), array=array)) == expected


@pytest.mark.parametrize(
    ("array", "message"),
    [
        ({"raid_disks": 3}, "without its RAID level"),
        ({"level": "raid5"}, "no member count"),
        ({"level": "raid7", "raid_disks": 3}, "unknown RAID level"),
    ],
)
def test_data_disks_needs_level_and_members(array, message):
    with pytest.raises(CompareError, match=message):
        data_disks(make_run(1, Metrics(), array=array))


def test_normalised_sweep_as_in_finding_5():
    # Three HDDs, raw disk ~200 MiB/s at offset 0; RAID0 reads 0.97 of 3 disks, RAID5 0.95 of 2.
    raw_disk = make_run(1, Metrics(read_bw_bytes_per_s=200 * MIB))
    raid0 = make_run(2, Metrics(read_bw_bytes_per_s=582 * MIB), array={"level": "raid0", "raid_disks": 3})
    raid5_2m = make_run(
        3, Metrics(read_bw_bytes_per_s=380 * MIB), array={"level": "raid5", "raid_disks": 3, "chunk_bytes": 2 * MIB}
    )
    raid5_4k = make_run(
        4, Metrics(read_bw_bytes_per_s=80 * MIB), array={"level": "raid5", "raid_disks": 3, "chunk_bytes": 4096}
    )
    table = normalise([raid0, raid5_2m, raid5_4k], raw_disk)
    assert (table.metric, table.device_speed, table.device_run) == (READ_BW, 200 * MIB, raw_disk)
    assert [(row.run.id, row.data_disks, row.normalised) for row in table.rows] == [
        (2, 3.0, 0.97),
        (3, 2.0, 0.95),
        (4, 2.0, 0.2),
    ]
    assert [d.key for d in table.differences] == ["array.level", "array.chunk_bytes"]


def test_normalise_by_a_given_speed_and_overridden_disk_count():
    run = make_run(7, Metrics(read_bw_bytes_per_s=300.0), array={"level": "raid5", "raid_disks": 3})
    table = normalise([run], 100.0, data_disks_by_run={7: 3})
    assert (table.device_run, table.rows[0].data_disks, table.rows[0].normalised) == (None, 3.0, 1.0)
    assert table.differences == ()
    missing = make_run(8, Metrics())
    assert normalise([missing], 100.0).rows[0].normalised is None
    with pytest.raises(CompareError, match="no Read MB/s figure"):
        normalise([run], missing)
    with pytest.raises(CompareError, match="must be positive"):
        normalise([run], 0.0)
