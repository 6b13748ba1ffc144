"""Decoder speed on long runs: fio's --status-interval stream, a fio import, and dd's progress lines.

The fio input is an hour of ``--status-interval=1`` output with 64 jobs reported one by one (no
group_reporting): a real fio 3.33 document from tests/fixtures/fio repeated with growing timestamps,
runtimes and byte counts, about 1.3 GB of text. The stream decoder is fed it in 4 KiB pieces, as a
pipe delivers it, and drops its documents as they come (as a live run does); the whole-stdout parse
(execute.fio.parse_fio_output, after a run) and the import parse (store.fio_import.parse_fio_output,
`mdtui results import`) get the whole text at once and keep every document. The dd input is a
million ``status=progress`` lines, each after a carriage return, then dd's summary, fed in 4 KiB
pieces and parsed whole.

Every decoder must be linear in its input: the figures per MB should not grow with the input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from mdtui.execute.dd import DdStreamParser
from mdtui.execute.fio import FioStreamDecoder
from mdtui.execute.fio import parse_fio_output as parse_fio_stream
from mdtui.store.fio_import import parse_fio_output as parse_fio_import

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "fio" / "perjob_randread.json"
CHUNK = 4096  # a pipe's page: fio and dd output reaches mdtui in pieces of about this size
# Values no real document holds, so each can be replaced per document with a plain str.replace.
_STAMP, _RUNTIME, _BYTES, _IOS = 987654321012345, 876543219, 765432198765, 654321987


def fio_status_stream(seconds: int, jobs: int) -> str:
    """``seconds`` status documents, one a second, each listing ``jobs`` jobs with cumulative figures."""
    first = parse_fio_stream(FIXTURE.read_text()).documents[0]
    template = json.loads(json.dumps(first))
    job = template["jobs"][0]
    job["read"].update(runtime=_RUNTIME, io_bytes=_BYTES, total_ios=_IOS)
    template["jobs"] = [{**job, "jobname": f"job{n}"} for n in range(jobs)]
    template["timestamp_ms"] = _STAMP
    text = json.dumps(template, indent=2) + "\n"
    started_ms = first["timestamp_ms"]
    parts = []
    for second in range(1, seconds + 1):
        parts.append(
            text.replace(str(_STAMP), str(started_ms + second * 1000))
            .replace(str(_RUNTIME), str(second * 1000))
            .replace(str(_BYTES), str(second * 536_870_912))
            .replace(str(_IOS), str(second * 131_072))
        )
    return "".join(parts)


def dd_progress_stream(lines: int) -> str:
    """dd status=progress output: ``lines`` updates, each after a carriage return, then the summary."""
    parts = [
        f"\r{n * 117_829_632} bytes ({n * 118} MB, {n * 112} MiB) copied, {n} s, 118 MB/s" for n in range(1, lines + 1)
    ]
    total = lines * 117_829_632
    parts.append(
        f"\n{total // 4096}+0 records in\n{total // 4096}+0 records out\n"
        f"{total} bytes ({total // 10**9} GB) copied, {lines}.00123 s, 118 MB/s\n"
    )
    return "".join(parts)


def timed(label: str, size: int, run: Callable[[], int]) -> float:
    """Run once and print CPU seconds and milliseconds per MB of input; returns the seconds.

    CPU time (time.process_time), not wall time: other work on a shared machine only adds to the
    wall clock. The garbage collector is left on, as in real use.
    """
    started = time.process_time()
    count = run()
    seconds = time.process_time() - started
    per_mb = seconds / (size / 1e6) * 1e3
    print(f"  {label:<40} {size / 1e6:8.1f} MB {count:>9} items {seconds:8.2f} s {per_mb:7.2f} ms/MB")
    return seconds


def decode_fio_stream(text: str) -> int:
    decoder = FioStreamDecoder()
    count = 0
    for start in range(0, len(text), CHUNK):
        count += len(decoder.feed(text[start : start + CHUNK]))
    decoder.close()
    return count


def decode_dd_stream(text: str) -> int:
    parser = DdStreamParser()
    count = 0
    for start in range(0, len(text), CHUNK):
        count += len(parser.feed(text[start : start + CHUNK]))
    count += len(parser.close())
    assert parser.summary is not None
    return count


def measure_fio(text: str, label: str, *, stream: bool) -> None:
    if stream:
        timed(f"fio stream, {label}", len(text), lambda: decode_fio_stream(text))
    else:
        timed(f"fio whole stdout, {label}", len(text), lambda: len(parse_fio_stream(text).documents))
        timed(f"fio import parse, {label}", len(text), lambda: len(parse_fio_import(text)))


def parse_dd_whole(text: str) -> int:
    """Progress lines of a whole captured stderr, fed to the stream parser in one piece."""
    parser = DdStreamParser()
    parser.feed(text)
    parser.close()
    return len(parser.progress)


def measure_dd(text: str, label: str) -> None:
    timed(f"dd progress stream, {label}", len(text), lambda: decode_dd_stream(text))
    timed(f"dd whole stderr, {label}", len(text), lambda: parse_dd_whole(text))


def measure_long_line(size: int) -> None:
    """One line without a terminator (a stuck or hostile dd), fed in pieces: each piece must cost the same."""
    text = "9" * size

    def stream() -> int:
        parser = DdStreamParser()
        for start in range(0, len(text), CHUNK):
            parser.feed(text[start : start + CHUNK])
        return len(parser.close())

    timed(f"dd line without end, {size >> 20} MiB", size, stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=3600, help="status documents in the fio input (default 3600)")
    parser.add_argument("--jobs", type=int, default=64, help="jobs per fio document (default 64)")
    parser.add_argument("--dd-lines", type=int, default=1_000_000, help="dd progress lines (default 1000000)")
    parser.add_argument(
        "--import-seconds",
        type=int,
        default=None,
        help="status documents for the two whole-text parses, which keep every document in memory "
        "(about 2.5 times the text; default: --seconds)",
    )
    parser.add_argument("--long-line-mib", type=int, default=4, help="MiB of one dd line without an end (default 4)")
    args = parser.parse_args(argv)

    print(f"decoder CPU time (time.process_time); streams are fed in {CHUNK} byte pieces, as a pipe delivers them")
    whole_seconds = args.import_seconds or args.seconds
    measure_fio(fio_status_stream(args.seconds, args.jobs), f"{args.seconds} s x {args.jobs} jobs", stream=True)
    measure_fio(fio_status_stream(whole_seconds, args.jobs), f"{whole_seconds} s x {args.jobs} jobs", stream=False)
    measure_dd(dd_progress_stream(args.dd_lines), f"{args.dd_lines} lines")
    measure_long_line(args.long_line_mib << 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
