"""The dd stderr parser, checked against real coreutils 9.1 captures in tests/fixtures/dd."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whole_parse import parse_dd_stderr

from mdtui.execute.dd import DdStreamParser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dd"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_progress_line_and_summary() -> None:
    output = parse_dd_stderr(fixture("progress_4k.txt"))
    assert [(p.read_bytes, p.elapsed_s) for p in output.progress] == [(117829632, 1.0)]
    assert output.progress[0].read_bytes_per_s == pytest.approx(117829632.0)
    summary = output.summary
    assert summary is not None
    assert summary.bytes_copied == 268435456 == 65536 * 4096
    assert summary.seconds == pytest.approx(1.61583)
    assert (summary.records_in_full, summary.records_in_partial) == (65536, 0)
    assert (summary.records_out_full, summary.records_out_partial) == (65536, 0)
    # Computed from bytes and seconds, not the rounded "166 MB/s".
    assert summary.bytes_per_s == pytest.approx(268435456 / 1.61583)
    assert summary.rate_text == "166 MB/s"
    assert output.errors == ()


def test_interrupted_dd_progress_rates_are_per_interval() -> None:
    output = parse_dd_stderr(fixture("sigint_zero.txt"))
    assert [(p.read_bytes, p.elapsed_s) for p in output.progress] == [(856822272, 1.0), (1845092352, 2.0)]
    assert output.progress[1].read_bytes_per_s == pytest.approx(1845092352 - 856822272)
    summary = output.summary
    assert summary is not None
    # Interrupted mid-block: one more record read than written.
    assert (summary.records_in_full, summary.records_out_full) == (4554950, 4554949)
    assert summary.bytes_copied == 2332133888
    assert summary.seconds == pytest.approx(2.49939)


def test_streamed_in_single_characters_gives_the_same_result() -> None:
    text = fixture("sigint_zero.txt")
    parser = DdStreamParser()
    streamed = []
    for character in text:
        streamed += parser.feed(character)
    streamed += parser.close()
    whole = parse_dd_stderr(text)
    assert tuple(streamed) == whole.progress
    assert parser.summary == whole.summary


def test_summary_only_and_short_read_past_the_end() -> None:
    offset = parse_dd_stderr(fixture("offset_16m.txt"))
    assert offset.progress == ()
    assert offset.summary is not None and offset.summary.bytes_copied == 4 * 16 * 1024 * 1024
    past_end = parse_dd_stderr(fixture("past_end.txt"))
    assert past_end.summary is not None
    assert past_end.summary.records_in_full == 2  # asked for 4 blocks, the device ended after 2
    assert fixture("past_end.rc").strip() == "0"


def test_error_line() -> None:
    output = parse_dd_stderr(fixture("error_missing.txt"))
    assert output.summary is None and output.progress == ()
    assert len(output.errors) == 1
    assert output.errors[0].startswith("dd: failed to open")
    assert output.errors[0].endswith("No such file or directory")


def test_small_counts_without_the_human_sizes() -> None:
    text = "1+0 records in\n1+0 records out\n512 bytes copied, 0.000123 s, 4.2 MB/s\n"
    summary = parse_dd_stderr(text).summary
    assert summary is not None and summary.bytes_copied == 512
    # dd formats the final time with %g: a tiny one comes out in exponent form.
    one = parse_dd_stderr("0+1 records in\n0+1 records out\n1 byte copied, 5e-05 s, 20 kB/s\n").summary
    assert one is not None and one.bytes_copied == 1 and one.records_in_partial == 1
    assert one.seconds == pytest.approx(5e-05) and one.bytes_per_s == pytest.approx(20000)


def test_a_progress_line_is_reported_when_it_arrives_not_when_the_next_one_starts() -> None:
    # dd writes "\r" before each progress line: without care every update would come a second late.
    parser = DdStreamParser()
    first = parser.feed("\r856822272 bytes (857 MB, 817 MiB) copied, 1 s, 857 MB/s")
    assert [p.read_bytes for p in first] == [856822272]
    second = parser.feed("\r1845092352 bytes (1.8 GB, 1.7 GiB) copied, 2 s, 923 MB/s")
    assert [p.read_bytes for p in second] == [1845092352]
    rest = parser.feed("\n4554950+0 records in\n4554949+0 records out\n")
    rest += parser.feed("2332133888 bytes (2.3 GB, 2.2 GiB) copied, 2.49939 s, 933 MB/s\n")
    rest += parser.close()
    assert rest == []
    assert len(parser.progress) == 2
    assert parser.summary is not None and parser.summary.bytes_copied == 2332133888


def _streamed(text: str, sizes: list[int]) -> DdStreamParser:
    parser = DdStreamParser()
    position, index = 0, 0
    while position < len(text):
        size = sizes[index % len(sizes)]
        parser.feed(text[position : position + size])
        position, index = position + size, index + 1
    parser.close()
    return parser


def test_a_damaged_overlong_summary_line_reads_the_same_streamed_and_whole() -> None:
    # sigint_zero.txt's summary with its human size swollen past MAX_LINE (a damaged capture): the
    # streamed parse, which keeps only a line's start, and the whole-text parse disagreed on it.
    text = fixture("sigint_zero.txt").replace("(2.3 GB, 2.2 GiB)", "(2.3 GB, " + "9" * 5000 + "GiB)")
    whole = parse_dd_stderr(text)
    streamed = _streamed(text, [1])
    assert streamed.summary == whole.summary
    assert whole.summary is None  # 5000 characters are no dd summary line
    assert (tuple(streamed.progress), tuple(streamed.errors)) == (whole.progress, whole.errors)


_DD_PIECES = (
    "\r",
    "\n",
    "856822272 bytes (857 MB, 817 MiB) copied, 1 s, 857 MB/s",
    "1 byte copied, 5e-05 s, 20 kB/s",
    "4554950+0 records in",
    "4554949+1 records out",
    "dd: error reading '/dev/sdz': Input/output error",
    "9" * 4100,
    " ",
    "/s",
)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.lists(st.sampled_from(_DD_PIECES), max_size=14).map("".join), st.lists(st.integers(1, 200), min_size=1))
def test_streamed_and_whole_parses_are_equal(text: str, sizes: list[int]) -> None:
    whole = parse_dd_stderr(text)
    streamed = _streamed(text, sizes)
    assert (tuple(streamed.progress), streamed.summary, tuple(streamed.errors)) == (
        whole.progress,
        whole.summary,
        whole.errors,
    )
