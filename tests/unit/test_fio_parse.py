"""The streaming fio JSON parser, checked against real fio 3.33 captures in tests/fixtures/fio."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from whole_parse import progress_series

from mdtui.execute.fio import (
    FioProgressTracker,
    FioStreamDecoder,
    document_elapsed_s,
    document_error,
    document_stats,
    fio_messages,
    parse_fio_output,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fio"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def whole_documents(text: str) -> list[dict]:
    """Reference split: every top-level document, decoded independently of the parser under test."""
    decoder = json.JSONDecoder()
    documents, index = [], 0
    while (start := text.find("{", index)) >= 0:
        document, index = decoder.raw_decode(text, start)
        documents.append(document)
    return documents


def test_status_interval_stream_gives_every_document_in_order() -> None:
    output = parse_fio_output(fixture("randread_stream.json"))
    assert len(output.documents) == 4
    assert output.truncated == ""
    assert output.documents == tuple(whole_documents(fixture("randread_stream.json")))
    stamps = [d["timestamp_ms"] for d in output.documents]
    assert stamps == sorted(stamps)


def test_progress_rates_are_differences_between_consecutive_documents() -> None:
    documents = parse_fio_output(fixture("randread_stream.json")).documents
    progress = list(progress_series(documents))
    assert [p.elapsed_s for p in progress] == [d["jobs"][0]["read"]["runtime"] / 1000 for d in documents]
    for before, after, doc_before, doc_after in zip(progress, progress[1:], documents, documents[1:], strict=False):
        read_before, read_after = doc_before["jobs"][0]["read"], doc_after["jobs"][0]["read"]
        interval_s = (read_after["runtime"] - read_before["runtime"]) / 1000
        assert after.read_bytes == read_after["io_bytes"]
        assert after.read_bytes_per_s == pytest.approx((read_after["io_bytes"] - read_before["io_bytes"]) / interval_s)
        assert after.read_iops == pytest.approx((read_after["total_ios"] - read_before["total_ios"]) / interval_s)
        assert after.write_bytes == 0 and after.write_bytes_per_s == 0
        assert after.elapsed_s > before.elapsed_s
    # The first interval runs from the start.
    assert progress[0].read_bytes_per_s == pytest.approx(progress[0].read_bytes / progress[0].elapsed_s)


def test_final_document_figures_latency_percentiles_and_cpu() -> None:
    final = parse_fio_output(fixture("randread_stream.json")).final
    assert final is not None
    total, jobs = document_stats(final)
    job = final["jobs"][0]
    assert total is not None and jobs == (total,)
    assert total.name == "randread"
    assert total.read.io_bytes == job["read"]["io_bytes"]
    assert total.read.bytes_per_s == job["read"]["bw_bytes"]
    # fio's bw_bytes is io_bytes over the direction runtime (ms).
    assert total.read.bytes_per_s == pytest.approx(total.read.io_bytes / total.read.runtime_s, rel=1e-6)
    assert total.read.iops == pytest.approx(job["read"]["iops"])
    percentiles = job["read"]["clat_ns"]["percentile"]
    assert total.read.latency.p50_ns == percentiles["50.000000"]
    assert total.read.latency.p99_ns == percentiles["99.000000"]
    assert total.read.latency.p99_9_ns == percentiles["99.900000"]
    assert total.read.latency.mean_ns == pytest.approx(job["read"]["clat_ns"]["mean"])
    assert total.read.latency.p50_ns <= total.read.latency.p99_ns <= total.read.latency.p99_9_ns
    assert total.usr_cpu_percent == pytest.approx(job["usr_cpu"])
    assert total.sys_cpu_percent == pytest.approx(job["sys_cpu"])
    assert total.write.io_bytes == 0 and total.write.latency.p50_ns is None
    assert total.error == 0


def test_write_job_figures_land_in_write() -> None:
    output = parse_fio_output(fixture("write_seq.json"))
    total, _ = document_stats(output.final or {})
    assert total is not None
    assert total.read.io_bytes == 0
    assert total.write.io_bytes == output.final["jobs"][0]["write"]["io_bytes"] > 0
    assert total.write.latency.p99_ns is not None
    progress = list(progress_series(output.documents))
    assert all(p.write_bytes_per_s > 0 and p.read_bytes_per_s == 0 for p in progress)


@pytest.mark.parametrize("name", ["randread_stream.json", "seqread_stream.json", "perjob_randread.json"])
def test_decoding_in_arbitrary_chunks_matches_whole(name: str) -> None:
    text = fixture(name)
    rng = random.Random(7)
    decoder = FioStreamDecoder()
    documents = []
    position = 0
    while position < len(text):
        size = rng.choice([1, 3, 17, 512, 4096, 6500])
        documents += [d for d, _ in decoder.feed(text[position : position + size])]
        position += size
    assert decoder.close() == ""
    assert documents == whole_documents(text)


def test_text_lines_on_stdout_are_skipped() -> None:
    # Real: fio prints "fio: terminating on signal 2" on stdout between documents after SIGINT.
    output = parse_fio_output(fixture("sigint_read.json"))
    assert len(output.documents) == 3
    assert output.skipped == ("fio: terminating on signal 2",)
    assert output.truncated == ""
    # Synthetic: a warning line before the first document.
    warned = parse_fio_output("fio: warning: something odd\n" + fixture("randread_stream.json"))
    assert len(warned.documents) == 4
    assert warned.skipped == ("fio: warning: something odd",)


def test_truncated_stream_keeps_last_complete_document() -> None:
    output = parse_fio_output(fixture("randread_truncated.json"))
    full = parse_fio_output(fixture("randread_stream.json"))
    assert len(output.documents) == 3
    assert output.final == full.documents[2]
    assert output.truncated.startswith("{")
    assert output.final_raw.endswith("}")
    assert json.loads(output.final_raw) == output.final


def test_a_broken_document_followed_by_a_good_one_does_not_stop_decoding() -> None:
    text = fixture("randread_stream.json")
    first_end = text.find("\n}") + 2
    broken = text[: first_end // 2] + "\n" + text[first_end:]
    output = parse_fio_output(broken)
    assert len(output.documents) == 3
    assert output.documents == tuple(whole_documents(text)[1:])


def test_per_job_entries_and_their_total() -> None:
    final = parse_fio_output(fixture("perjob_randread.json")).final
    assert final is not None
    total, jobs = document_stats(final)
    assert len(jobs) == 2 and total is not None
    assert total.read.io_bytes == sum(j["read"]["io_bytes"] for j in final["jobs"])
    assert total.read.bytes_per_s == sum(j["read"]["bw_bytes"] for j in final["jobs"])
    assert total.read.iops == pytest.approx(sum(j["read"]["iops"] for j in final["jobs"]))
    assert total.read.latency.p99_ns is None  # percentiles of separate jobs do not combine
    assert (
        min(j.read.latency.mean_ns for j in jobs)
        <= total.read.latency.mean_ns
        <= max(j.read.latency.mean_ns for j in jobs)
    )
    assert all(j.read.latency.p99_ns is not None for j in jobs)
    # Progress sums over the jobs.
    last = list(progress_series(parse_fio_output(fixture("perjob_randread.json")).documents))[-1]
    assert last.read_bytes == total.read.io_bytes


def test_error_in_job_json_and_on_stderr() -> None:
    output = parse_fio_output(fixture("error_readonly_write.json"))
    assert output.final is not None
    assert document_error(output.final) == "fio reported an error in job rowrite (error 1)"
    total, _ = document_stats(output.final)
    assert total is not None and total.error == 1
    messages = fio_messages(fixture("error_readonly_write.stderr.txt"))
    assert messages and messages[0].startswith("fio: io_u error on file")
    assert fixture("error_readonly_write.rc").strip() == "1"


def test_bad_option_prints_no_json() -> None:
    output = parse_fio_output(fixture("error_bad_option.json"))
    assert output.documents == ()
    assert output.final is None
    assert any("valid values" in line for line in output.skipped)
    assert fio_messages(fixture("error_bad_option.stderr.txt")) == ["fio: failed parsing rw=bogus"]


def test_no_file_error_has_a_clean_document_but_fails() -> None:
    output = parse_fio_output(fixture("error_no_file.json"))
    assert output.final is not None and document_error(output.final) is None
    assert fixture("error_no_file.rc").strip() == "1"
    assert fio_messages(fixture("error_no_file.stderr.txt"))[0].startswith("fio: file creation disallowed")


def test_same_instant_documents_report_no_rate() -> None:
    document = parse_fio_output(fixture("randread_stream.json")).documents[1]
    tracker = FioProgressTracker()
    tracker.update(document)
    again = tracker.update(document)
    assert again.read_bytes_per_s == 0 and again.elapsed_s == document_elapsed_s(document)


def test_size_based_run_with_a_single_final_document() -> None:
    output = parse_fio_output(fixture("sync_randwrite_size.json"))
    total, _ = document_stats(output.final or {})
    assert len(output.documents) == 1
    assert total is not None and total.write.io_bytes == 64 * 1024 * 1024
