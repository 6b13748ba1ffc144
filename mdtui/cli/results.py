"""`mdtui results ...`: list, show, compare, export, import, label, note and delete stored runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from mdtui.bench.predicted import prediction_lines
from mdtui.cli.common import output_width
from mdtui.cli.fleet import fleet_report
from mdtui.columns import Column, cut_start, fit_layouts, fitted_note
from mdtui.errors import MdtuiError
from mdtui.format import iec_bytes
from mdtui.output_file import output_problem, write_text
from mdtui.store.cells import format_metric, read_write_text, total_iops
from mdtui.store.compare import DEFAULT_TOLERANCE, compare, normalise, ratio_table
from mdtui.store.database import default_db_path
from mdtui.store.describe import describe_run
from mdtui.store.errors import StoreMissingError, UnknownRunError
from mdtui.store.export import FORMATS, export_comparison, export_normalised, export_ratio_table, export_runs, runs_json
from mdtui.store.fio_import import read_import, store_fio_run
from mdtui.store.records import METRICS, METRICS_BY_NAME, STEADINESS_LEGEND, RunRecord, Steadiness
from mdtui.store.runs import ResultsStore
from mdtui.store.spool import SpooledRun


def _run_id(text: str) -> int:
    value = text.strip().removeprefix("#")
    if not (value.isascii() and value.isdigit()) or len(value) > 18 or int(value) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a run ID (a number such as 12 or #12)")
    return int(value)


def _positive(text: str) -> int:
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or int(value) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(value)


def _percent(text: str) -> float:
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the tolerance cannot be negative")
    return value / 100


def _data_disks(text: str) -> tuple[int, float]:
    run, sep, count = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return _run_id(run), float(count)
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"{text!r} is not ID=COUNT, such as 7=2") from None


def add_results_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `results` and its subcommands on the top-level `mdtui` subparsers."""
    db_help = f"results database (default: $MDTUI_DB, else {default_db_path()})"
    # --db is accepted before and after the subcommand; the later one wins.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=db_help)
    parser = subparsers.add_parser(
        "results", help="list, show, compare, export and import benchmark results", parents=[common]
    )
    parser.set_defaults(results_parser=parser, results_command=None)
    sub = parser.add_subparsers(dest="results_command", metavar="ACTION")

    listing = sub.add_parser("list", help="stored runs, newest first", parents=[common])
    listing.add_argument("--limit", type=_positive, default=None, metavar="N", help="show only the newest N runs")
    listing.add_argument("--json", action="store_true", help="print the runs as JSON (format mdtui-results)")
    listing.add_argument(
        "--wide", action="store_true", help="whole lines, however wide (piped output is never fitted)"
    )

    show = sub.add_parser("show", help="everything stored about one run", parents=[common])
    show.add_argument("run", type=_run_id, metavar="ID")
    show.add_argument("--json", action="store_true", help="print the run, with its samples, as JSON")

    def output_options(command: argparse.ArgumentParser, default: str) -> None:
        command.add_argument("--format", choices=FORMATS, default=default, help=f"output format (default: {default})")
        command.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
        command.add_argument(
            "-o", "--output", metavar="FILE", help="write to FILE instead of standard output (a new file)"
        )
        command.add_argument(
            "--force", action="store_true", help="replace FILE if it exists (never a database, whatever is passed)"
        )

    comparing = sub.add_parser(
        "compare", help="runs against a baseline: ratios, better/worse, and what changed", parents=[common]
    )
    comparing.add_argument("baseline", type=_run_id, metavar="BASE")
    comparing.add_argument("candidates", type=_run_id, nargs="+", metavar="ID")
    comparing.add_argument(
        "--metric", action="append", choices=list(METRICS_BY_NAME), metavar="NAME", help="only this metric (repeatable)"
    )
    comparing.add_argument(
        "--tolerance",
        type=_percent,
        default=DEFAULT_TOLERANCE,
        metavar="PCT",
        help=f"changes within ±PCT%% are neither better nor worse (default: {DEFAULT_TOLERANCE * 100:g})",
    )
    output_options(comparing, "md")

    exporting = sub.add_parser("export", help="runs as a Markdown table, CSV or JSON", parents=[common])
    exporting.add_argument("runs", type=_run_id, nargs="+", metavar="ID")
    exporting.add_argument("--raw", action="store_true", help="include the raw fio JSON (json format only)")
    output_options(exporting, "md")

    ratios = sub.add_parser(
        "ratios",
        help="one metric of many runs as ratios of reference runs (vs single disk, vs RAID0)",
        parents=[common],
    )
    ratios.add_argument("runs", type=_run_id, nargs="+", metavar="ID")
    ratios.add_argument("--vs", type=_run_id, action="append", required=True, metavar="REF", help="reference run")
    ratios.add_argument("--metric", choices=list(METRICS_BY_NAME), required=True, metavar="NAME")
    output_options(ratios, "md")

    normalising = sub.add_parser(
        "normalise",
        help="a sweep ÷ (one raw disk's speed × data disks), as in the chunk-size study",
        parents=[common],
    )
    normalising.add_argument("runs", type=_run_id, nargs="+", metavar="ID")
    device = normalising.add_mutually_exclusive_group(required=True)
    device.add_argument("--device-run", type=_run_id, metavar="ID", help="a run on one raw disk to divide by")
    device.add_argument("--device-speed", type=float, metavar="VALUE", help="the disk's figure in the metric's unit")
    normalising.add_argument("--metric", choices=list(METRICS_BY_NAME), default="read_bw_bytes_per_s", metavar="NAME")
    normalising.add_argument(
        "--data-disks", type=_data_disks, action="append", default=[], metavar="ID=N", help="override a run's count"
    )
    output_options(normalising, "md")

    importing = sub.add_parser(
        "import",
        help="store fio --output-format=json output made elsewhere, or a run spooled when the database was full",
        parents=[common],
    )
    importing.add_argument(
        "file", metavar="FILE.json", help="a regular file of at most 512 MiB (a FIFO or device is refused)"
    )
    importing.add_argument("--label", default="", metavar="TEXT")

    for name, what in (("label", "a short name shown in tables"), ("note", "free text kept with the run")):
        command = sub.add_parser(name, help=f"set a run's {name}: {what}", parents=[common])
        command.add_argument("run", type=_run_id, metavar="ID")
        command.add_argument("text", nargs="+", metavar="TEXT")

    deleting = sub.add_parser("delete", help="remove runs with their figures and samples", parents=[common])
    deleting.add_argument("runs", type=_run_id, nargs="+", metavar="ID")

    fleet = sub.add_parser(
        "fleet",
        help="a fleet's hosts side by side: one metric per step, ratio to the median, the slowest host named",
        parents=[common],
    )
    fleet.add_argument("fleet", nargs="?", metavar="FLEET", help="fleet id (default: the newest fleet)")
    fleet.add_argument("--metric", choices=list(METRICS_BY_NAME), metavar="NAME", help="default: read or write MB/s")
    output_options(fleet, "md")


# -- rendering ---------------------------------------------------------------------------------------


def _local(moment: datetime | None, *, short: bool = False) -> str:
    """Local time; ``short`` without the year, for a narrow terminal."""
    return "-" if moment is None else moment.astimezone().strftime("%m-%d %H:%M" if short else "%Y-%m-%d %H:%M")


def render_list(runs: Sequence[RunRecord], width: int | None = None) -> str:
    """The runs, newest first, fitted to ``width`` (None: whole lines) as the app's list is: IOPS goes first, then
    the chunk, the level and the steadiness mark, the year; read and write share one column and the status
    becomes a sign (✓ ✗ ! ▶ –); the target and the label are cut (a label keeping its end, where runs differ:
    "numjobs 1", "numjobs 2")."""
    bandwidth = METRICS_BY_NAME["read_bw_bytes_per_s"]
    iops = METRICS_BY_NAME["read_iops"]

    def chunk(run: RunRecord) -> str:
        value = run.array.get("chunk_bytes")
        return iec_bytes(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value else "-"

    started = Column("STARTED", [_local(run.started_at) for run in runs])
    short_start = Column("STARTED", [_local(run.started_at, short=True) for run in runs])
    status = Column("STATUS", [run.status.value for run in runs])
    sign = Column("ST", [run.status.sign for run in runs])
    level = Column("LEVEL", [str(run.array.get("level") or "-") for run in runs])
    chunks = Column("CHUNK", [chunk(run) for run in runs], right=True)
    read = Column("READ MB/s", [format_metric(bandwidth, run.metrics.read_bw_bytes_per_s) for run in runs], right=True)
    write = Column(
        "WRITE MB/s", [format_metric(bandwidth, run.metrics.write_bw_bytes_per_s) for run in runs], right=True
    )
    both = Column("MB/s", [read_write_text(run) for run in runs], right=True)
    total = Column("IOPS", [format_metric(iops, total_iops(run)) for run in runs], right=True)
    steady = Column("STEADY", [run.steadiness.mark for run in runs])
    ids = Column("ID", [str(run.id) for run in runs], right=True)
    preset = Column("PRESET", [run.preset for run in runs], least=12)
    target = Column("TARGET", [run.target or "-" for run in runs], least=10, cut=short_target)
    label = Column("LABEL", [run.label for run in runs], least=8, cut=cut_start)
    fitted = fit_layouts(
        [
            [ids, started, status, preset, target, level, chunks, read, write, total, steady, label],
            [ids, started, status, preset, target, level, chunks, read, write, steady, label],
            [ids, short_start, status, preset, target, level, read, write, steady, label],
            [ids, short_start, status, preset, target, read, write, label],
            [ids, short_start, sign, preset, target, both, label],
        ],
        width,
    )
    lines = list(fitted.lines)
    if any(run.steadiness is not Steadiness.NOT_JUDGED for run in runs) and "STEADY" not in fitted.left_out:
        lines += ["", STEADINESS_LEGEND]
    if fitted.cut:
        lines.append(fitted_note(width))
    return "\n".join(lines)


def short_target(target: str, width: int) -> str:
    """A target that fits ``width``: "/dev/md0", or "nvme0n1 +3" for several devices (never cut mid-list)."""
    parts = [part.strip() for part in (target or "").split(",") if part.strip()]
    if not parts:
        return "-"
    first = parts[0]
    if len(parts) > 1:
        first = first.removeprefix("/dev/")
        more = f" +{len(parts) - 1}"
        return (first[: width - len(more) - 1] + "…" if len(first) + len(more) > width else first) + more
    return first if len(first) <= width else "…" + first[-(width - 1) :]


def render_run(run: RunRecord) -> str:
    """`results show`: the same words the app's run detail shows (store.describe), then the figure predicted for
    the run when it was stored, beside the measured one."""
    return describe_run(run, prediction_lines(run))


# -- commands ----------------------------------------------------------------------------------------


@contextmanager
def _store(args: argparse.Namespace, *, create: bool = False) -> Iterator[ResultsStore]:
    """The results database for one command; rows it had to skip are named on stderr at the end."""
    with ResultsStore(getattr(args, "db", None), create=create) as store:
        try:
            yield store
        finally:
            for warning in dict.fromkeys(store.warnings):
                print(f"mdtui: warning: {warning}", file=sys.stderr)


def _emit(text: str, args: argparse.Namespace, store: ResultsStore) -> None:
    """Print ``text``, or write it to ``-o FILE``: a new file, or an existing one the user agreed to replace."""
    output: str | None = args.output
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    path = Path(output).expanduser()
    protected = (store.path,)
    replace = bool(args.force)
    if not replace and path.exists() and output_problem(path, protected=protected) is None:
        replace = _confirm_replace(path)
    write_text(path, text, replace=replace, protected=protected)
    print(f"wrote {output}", file=sys.stderr)


def _confirm_replace(path: Path) -> bool:
    """Ask at a terminal before replacing a file; scripts pass --force instead."""
    if not sys.stdin.isatty():
        return False  # write_text then refuses with "exists; pass --force"
    answer = input(f"{path} exists. Type yes to replace it: ")
    if answer.strip().lower() != "yes":
        raise MdtuiError(f"{path} left as it was; nothing written")
    return True


def _cmd_list(args: argparse.Namespace) -> int:
    try:
        with _store(args) as store:
            runs = store.list_runs(limit=args.limit)
    except StoreMissingError:
        if args.json:
            print(runs_json([]), end="")
            return 0
        path = Path(args.db).expanduser() if getattr(args, "db", None) else default_db_path()
        print(f"No runs yet ({path} does not exist).")
        return 0
    if args.json:
        print(runs_json(runs, include_samples=False), end="")
    else:
        print(render_list(runs, output_width(args)) if runs else f"No runs in {store.path}.")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    with _store(args) as store:
        run = store.get_run(args.run)
    print(runs_json([run]) if args.json else render_run(run), end="" if args.json else "\n")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    with _store(args) as store:
        baseline = store.get_run(args.baseline)
        candidates = store.get_runs(args.candidates)
    result = compare(baseline, candidates, metrics=args.metric, tolerance=args.tolerance)
    _emit(export_comparison(result, args.format), args, store)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    with _store(args) as store:
        runs = store.get_runs(args.runs)
    _emit(export_runs(runs, args.format, include_raw=args.raw), args, store)
    return 0


def _cmd_ratios(args: argparse.Namespace) -> int:
    with _store(args) as store:
        runs = store.get_runs(args.runs)
        references = store.get_runs(args.vs)
    _emit(export_ratio_table(ratio_table(runs, references, args.metric), args.format), args, store)
    return 0


def _cmd_normalise(args: argparse.Namespace) -> int:
    with _store(args) as store:
        runs = store.get_runs(args.runs)
        device: RunRecord | float = store.get_run(args.device_run) if args.device_run is not None else args.device_speed
    table = normalise(runs, device, metric=args.metric, data_disks_by_run=dict(args.data_disks))
    _emit(export_normalised(table, args.format), args, store)
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    # Read and check the file before the database is opened, so a failed import creates nothing.
    found = read_import(args.file, label=args.label)
    if isinstance(found, SpooledRun):
        # A run the database could not take when it was measured (mdtui.store.spool).
        with _store(args, create=True) as store:
            run = store.get_run(store.store_spooled(found))
        print(f"stored the spooled run as #{run.id} ({run.status.value}); {args.file} can be deleted")
        return 0
    # One run per stonewall group and per --client host, every one read and checked before any is stored.
    with _store(args, create=True) as store:
        runs = [store.get_run(store_fio_run(store, fio_run)) for fio_run in found]
    for run in runs:
        figures = ", ".join(
            f"{m.label} {format_metric(m, v)}" for m in METRICS[:4] if (v := run.metrics.get(m.name)) is not None
        )
        where = " ".join(str(part) for part in (run.context.get("fio_client_host"), run.params.get("step")) if part)
        print(
            f"imported run #{run.id} ({run.status.value}){' ' + where if where else ''}"
            f"{': ' + figures if figures else ''}"
        )
        if run.error:
            print(f"note: fio reported errors in run #{run.id}: {run.error}", file=sys.stderr)
    return 0


def _cmd_label(args: argparse.Namespace) -> int:
    with _store(args) as store:
        store.set_label(args.run, " ".join(args.text))
    return 0


def _cmd_note(args: argparse.Namespace) -> int:
    with _store(args) as store:
        store.set_note(args.run, " ".join(args.text))
    return 0


def _cmd_delete(args: argparse.Namespace) -> int:
    with _store(args) as store:
        # All or nothing: a typo in the third ID must not leave the first two deleted. Existence only:
        # a damaged row must stay deletable.
        missing = store.missing_ids(args.runs)
        if missing:
            raise UnknownRunError(missing[0])
        for run_id in dict.fromkeys(args.runs):
            store.delete_run(run_id)
            print(f"deleted run #{run_id}")
    return 0


def _cmd_fleet(args: argparse.Namespace) -> int:
    with _store(args) as store:
        text = fleet_report(store, args.fleet, args.metric, args.format)
    _emit(text, args, store)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": _cmd_list,
    "show": _cmd_show,
    "compare": _cmd_compare,
    "export": _cmd_export,
    "ratios": _cmd_ratios,
    "normalise": _cmd_normalise,
    "import": _cmd_import,
    "label": _cmd_label,
    "note": _cmd_note,
    "delete": _cmd_delete,
    "fleet": _cmd_fleet,
}


def run_results(args: argparse.Namespace) -> int:
    """Run one `mdtui results` action; mdtui.cli.run_cli turns an MdtuiError into one line and exit 2."""
    if args.results_command is None:
        args.results_parser.print_help()
        return 0
    return COMMANDS[args.results_command](args)
