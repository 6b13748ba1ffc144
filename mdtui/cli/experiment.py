"""`mdtui experiment`: governor A/B, parallelism, chunk and level sweeps, each point stored, labelled and compared."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from mdtui import jsondoc
from mdtui.advise import experiments as ex
from mdtui.advise.governor import governor_label, read_governors
from mdtui.advise.sweep_stop import SWEEP_STOP_RULE
from mdtui.bench.background import Stop
from mdtui.bench.predicted import predicted_rows, predicted_table
from mdtui.cli.bench import EXIT_CANCELLED
from mdtui.cli.common import (
    Terminal,
    find_disk,
    first_free_md,
    ignore_late_signals,
    md_device,
    signal_exit_code,
    signals_restored,
    stop_reason,
    stop_signals,
)
from mdtui.cli.experiment_context import Declined, ExperimentContext
from mdtui.cli.safety import add_safety_ab_parser, safety_ab_cli
from mdtui.cli.tune import add_knob_parser, knob_sweep_cli
from mdtui.errors import MdtuiError, PlanError
from mdtui.execute.presets import PRESETS
from mdtui.format import plural, to_jsonable
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.plan.create import CreatePlan, plan_create
from mdtui.plan.describe import describe_create
from mdtui.plan.levels import RaidLevel, level_from_name
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.compare import compare
from mdtui.store.database import default_db_path
from mdtui.store.export import export_comparison, export_normalised, export_ratio_table
from mdtui.store.runs import ResultsStore

EXIT_ERROR = 2
EXIT_DECLINED = 1


def _say(out: TextIO, text: str) -> None:
    """A line for the user; a terminal that went away (EIO) loses it rather than the experiment."""
    with contextlib.suppress(OSError):
        print(text, file=out, flush=True)


def _int_list(text: str) -> tuple[int, ...]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isdigit() and int(part) > 0 for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers like 64,512,2048")
    return tuple(int(part) for part in parts)


def _levels(text: str) -> tuple[RaidLevel, ...]:
    try:
        return tuple(level_from_name(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    value = _int_list(text)
    if len(value) != 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not one whole number")
    return value[0]


def add_experiment_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `experiment` and its four experiments on the top-level `mdtui` subparsers."""
    parser = sub.add_parser(
        "experiment",
        help="guided experiments: governor A/B, parallelism, chunk sweep, level comparison (stored and compared)",
        description="Run a before/after or sweep experiment through the benchmark engine; every point is stored "
        "and labelled, and the end prints the comparison. Sweeps create and destroy arrays on the members.",
    )
    kinds = parser.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    presets = ", ".join(p.key for p in PRESETS)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--quick", action="store_true", help="short steps: a first look")
        p.add_argument("--json", action="store_true", help="print the result as JSON (plan and progress on stderr)")
        p.add_argument("--db", metavar="PATH", help=f"results database (default: $MDTUI_DB, else {default_db_path()})")
        p.add_argument(
            "--fixed-time",
            action="store_true",
            help="run every step its whole runtime (not ending it once steady) and every sweep point, as before",
        )

    def full_sweep(p: argparse.ArgumentParser) -> None:
        rule = SWEEP_STOP_RULE.replace("%", "%%")  # argparse formats help with %
        p.add_argument("--full-sweep", action="store_true", help=f"run every point; without it, {rule}")

    ab = kinds.add_parser("governor-ab", help="the preset under the current CPU governor, then under performance")
    ab.add_argument("--target", required=True, metavar="DEV", help="array or disk to measure (md0, /dev/md0)")
    ab.add_argument("--preset", default="sync-random", metavar="NAME", help=f"preset ({presets}); default sync-random")
    ab.add_argument("--governor", default="performance", help="the governor for the second run")
    ab.add_argument("--yes", action="store_true", help="confirm a writing preset without asking")
    common(ab)

    par = kinds.add_parser("parallelism", help="4 MiB reads, iodepth 12, with 1/4/16/64 jobs (read-only)")
    par.add_argument("--target", required=True, metavar="DEV", help="array or disk to read")
    par.add_argument("--numjobs", type=_int_list, default=ex.PARALLELISM_NUMJOBS, metavar="N,...")
    par.add_argument("--runtime", type=_positive, metavar="S", help="seconds per point")
    common(par)
    full_sweep(par)

    def sweep(p: argparse.ArgumentParser, preset: str) -> None:
        p.add_argument("members", nargs="+", metavar="MEMBER", help="disks: sdb, /dev/sdb or a /dev/disk/by-id path")
        p.add_argument("--preset", default=preset, metavar="NAME", help=f"preset ({presets}); default {preset}")
        p.add_argument("--device", help="array device to create (default: the first free /dev/mdN)")
        p.add_argument("--runtime", type=_positive, metavar="S", help="seconds per step (overrides the preset)")
        p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        common(p)

    chunk = kinds.add_parser("chunk-sweep", help="raw member, then one array per chunk size (destroys the members)")
    chunk.add_argument("--level", required=True, help="0, 4, 5, 6 or 10")
    chunk.add_argument("--chunks", type=_int_list, default=ex.DEFAULT_CHUNKS_KIB, metavar="KIB,...")
    sweep(chunk, "offset-sweep")
    full_sweep(chunk)

    def knob_options(p: argparse.ArgumentParser) -> None:
        common(p)
        full_sweep(p)

    add_knob_parser(kinds, knob_options)
    add_safety_ab_parser(kinds, common)

    levels = kinds.add_parser("levels", help="one array per RAID level on the same members (destroys the members)")
    levels.add_argument("--levels", type=_levels, default=ex.COMPARED_LEVELS, metavar="L,...", help="default 0,10,5,6")
    levels.add_argument("--chunk", type=_positive, default=256, metavar="KIB", help="chunk size in KiB (default 256)")
    sweep(levels, "disk-mark")


# --- what runs, shown before it runs -----------------------------------------------------------------


def _device(args: argparse.Namespace, inventory: Inventory) -> str:
    if args.device:
        return md_device(args.device)
    return first_free_md(inventory)


def _members(args: argparse.Namespace, inventory: Inventory) -> tuple[Disk, ...]:

    members = tuple(find_disk(inventory, text, args.root) for text in args.members)
    if len({disk.name for disk in members}) != len(members):
        raise PlanError("a member is named twice")
    return members


def _plan_lines(points: Sequence[tuple[str, CreatePlan]], members: Sequence[Disk]) -> list[str]:
    lines = [f"Arrays to create, measure and destroy, one after the other ({len(points)}):"]
    for label, plan in points:
        lines.append(f"  {label}:  {shlex.join(plan.argv)}")
    # The plan's own warnings and notes (mixed sizes, loop devices ...) are the same for every point.
    lines += ["  " + line for line in describe_create(points[0][1]) if line.startswith(("⚠", "note:"))]
    lines.append("Members that will be overwritten: " + ", ".join(f"{d.name} ({d.dev_path})" for d in members))
    return lines


# --- Ctrl-C, SIGTERM, SIGHUP -------------------------------------------------------------------------


class _Stop(Stop):
    """The experiment's stop, set from a signal handler; its reason goes into the stored runs' error."""

    signal: signal.Signals | None = None


@contextmanager
def _stop_on_interrupt(say: Callable[[str], None]) -> Iterator[_Stop]:
    """The first Ctrl-C, SIGTERM or SIGHUP asks the experiment to stop (the run in progress ends with its
    figures kept, a temporary array is torn down); only a second Ctrl-C abandons.

    A repeated SIGHUP or SIGTERM (a dropped SSH session can deliver two) is ignored, so the teardown runs.
    """
    cancel = _Stop()
    terminal = Terminal()

    def stop(signum: int, frame: Any) -> None:
        sig = signal.Signals(signum)
        if sig is signal.SIGHUP:
            terminal.hang_up()
        if cancel.is_set():
            if sig is signal.SIGINT:
                raise KeyboardInterrupt
            return
        cancel.signal = sig
        cancel.set(stop_reason(sig))
        again = " (press Ctrl-C again to abandon it)" if sig is signal.SIGINT else ""
        say(f"{stop_reason(sig)}: stopping after the current run{again}")

    previous = {sig: signal.signal(sig, stop) for sig in stop_signals()}
    try:
        yield cancel
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if cancel.is_set():
            ignore_late_signals()  # until run_experiment returns: it prints what was stored


# --- the four experiments ----------------------------------------------------------------------------


def _governor_ab(args: argparse.Namespace, ctx: ExperimentContext) -> ex.ExperimentResult:
    root = ctx.root
    before = read_governors(root)
    plan = ctx.runner.plan(args.preset, args.target, quick=args.quick)
    ctx.say("\n".join(plan.describe()))
    if before:
        ctx.say(f"CPU governors: {governor_label(before)} now; {args.governor} for the second run, then restored")
    if plan.writes:
        ctx.confirm(args, f"overwrite {plan.target.path} twice", plan.confirmation)
        ctx.allow(plan.confirmation)
    return ex.governor_ab(
        ctx.runner,
        args.target,
        root=root,
        preset_key=args.preset,
        quick=args.quick,
        governor=args.governor,
        cancel=ctx.cancel,
    )


def _parallelism(args: argparse.Namespace, ctx: ExperimentContext) -> ex.ExperimentResult:
    ctx.say(f"Reads on {args.target} (4 MiB, iodepth 12) with numjobs {', '.join(map(str, args.numjobs))}; read-only")
    return ex.parallelism_sweep(
        ctx.runner,
        args.target,
        quick=args.quick,
        numjobs=args.numjobs,
        runtime_s=args.runtime,
        cancel=ctx.cancel,
        store=ctx.store,
        full_sweep=args.full_sweep or args.fixed_time,
    )


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return {"runtime_s": args.runtime} if args.runtime else {}


def _chunk_sweep(args: argparse.Namespace, ctx: ExperimentContext) -> ex.ExperimentResult:
    inventory = scan(ctx.root)
    members = _members(args, inventory)
    device = _device(args, inventory)
    try:
        level = level_from_name(args.level)
    except ValueError as exc:
        raise PlanError(str(exc)) from None
    if not level.uses_chunk:
        raise PlanError(f"{level.name} has no chunk: sweep raid0, raid4/5/6 or raid10")
    points = [
        (f"{level.name} chunk {chunk} KiB", plan_create(ex.sweep_request(device, level, members, chunk)))
        for chunk in args.chunks
    ]
    ctx.say(f"First: {args.preset} on the raw member {members[0].dev_path} (the baseline)")
    ctx.say("\n".join(_plan_lines(points, members)))
    confirmed = ctx.confirm(
        args,
        f"create and destroy {plural(len(points), 'array')} as {device}, overwriting {plural(len(members), 'disk')}",
        device,
    )
    ctx.allow(device, members[0].dev_path)
    return ex.chunk_sweep(
        ctx.runner,
        members,
        store=ctx.store,
        device=device,
        level=level,
        chunks_kib=args.chunks,
        preset_key=args.preset,
        quick=args.quick,
        confirmed=confirmed,
        tools=ctx.tools,
        cancel=ctx.cancel,
        full_sweep=args.full_sweep or args.fixed_time,
        **_options(args),
    )


def _level_comparison(args: argparse.Namespace, ctx: ExperimentContext) -> ex.ExperimentResult:
    inventory = scan(ctx.root)
    members = _members(args, inventory)
    device = _device(args, inventory)
    usable = [level for level in args.levels if len(members) >= level.min_members]
    for level in args.levels:
        if level not in usable:
            ctx.say(f"{level.name} skipped: it needs {level.min_members} members, {len(members)} given")
    if not usable:
        raise PlanError(f"none of the levels can be made from {plural(len(members), 'member')}")
    points = [(level.name, plan_create(ex.sweep_request(device, level, members, args.chunk))) for level in usable]
    ctx.say(f"Each array measured with {args.preset}")
    ctx.say("\n".join(_plan_lines(points, members)))
    confirmed = ctx.confirm(
        args,
        f"create and destroy {plural(len(points), 'array')} as {device}, overwriting {plural(len(members), 'disk')}",
        device,
    )
    ctx.allow(device)
    return ex.level_comparison(
        ctx.runner,
        members,
        store=ctx.store,
        device=device,
        levels=usable,
        chunk_kib=args.chunk,
        preset_key=args.preset,
        quick=args.quick,
        confirmed=confirmed,
        tools=ctx.tools,
        cancel=ctx.cancel,
        **_options(args),
    )


EXPERIMENTS: dict[str, Callable[[argparse.Namespace, ExperimentContext], ex.ExperimentResult]] = {
    "knob": knob_sweep_cli,
    "write-safety": safety_ab_cli,
    "governor-ab": _governor_ab,
    "parallelism": _parallelism,
    "chunk-sweep": _chunk_sweep,
    "levels": _level_comparison,
}


# --- results -----------------------------------------------------------------------------------------


def _tables(result: ex.ExperimentResult, store: ResultsStore, fmt: str) -> list[str]:
    if result.normalised is not None:
        return [export_normalised(result.normalised, fmt)]
    if result.ratios:
        return [export_ratio_table(table, fmt) for table in result.ratios]
    tables = []
    for before_id, after_id in result.pairs():
        before, after = store.get_runs([before_id, after_id])
        tables.append(export_comparison(compare(before, [after]), fmt))
    if not result.pairs() and len(result.runs) > 1:
        runs = store.get_runs(list(result.run_ids))
        tables.append(export_comparison(compare(runs[0], runs[1:]), fmt))
    return tables


def render(result: ex.ExperimentResult, store: ResultsStore) -> str:
    lines = [f"{result.key}: stored runs (mdtui results show ID)"]
    lines += [f"  {run.label}: {', '.join(f'#{i}' for i in run.run_ids)}" for run in result.runs]
    lines += [f"note: {note}" for note in result.notes]
    text = "\n".join(lines) + "\n\n" + "\n\n".join(_tables(result, store, "md"))
    predicted = predicted_table(store.get_runs(list(result.run_ids)))
    return text + ("\n\n" + "\n".join(predicted) if predicted else "")


def result_json(result: ex.ExperimentResult, store: ResultsStore) -> str:
    return jsondoc.dumps(
        {
            "experiment": result.key,
            "points": to_jsonable(result.runs),
            "notes": list(result.notes),
            "tables": [json.loads(table) for table in _tables(result, store, "json")],
            "predicted": predicted_rows(store.get_runs(list(result.run_ids))),
        }
    )


def run_experiment(args: argparse.Namespace) -> int:
    """Exit 0 done, 1 declined, 2 refused or failed (one line, no traceback), 128 + the signal when stopped:
    130 Ctrl-C, 129 SIGHUP, 143 SIGTERM."""
    with signals_restored():
        return _experiment(args)


def _experiment(args: argparse.Namespace) -> int:
    out = sys.stderr if args.json else sys.stdout
    stopped: _Stop | None = None
    try:
        with ResultsStore(args.db) as store, _stop_on_interrupt(lambda text: _say(out, text)) as cancel:
            stopped = cancel
            ctx = ExperimentContext(SystemRoot(args.root), store, out, cancel, fixed_time=args.fixed_time)
            try:
                result = EXPERIMENTS[args.experiment](args, ctx)
            except Declined as exc:
                print(f"{exc}", file=out)
                return EXIT_DECLINED
            print(render(result, store), file=out)
            if args.json:
                print(result_json(result, store))
    except (ex.ExperimentCancelled, KeyboardInterrupt) as exc:
        detail = f": {exc}" if isinstance(exc, ex.ExperimentCancelled) else "; runs stored so far are kept"
        _say(sys.stderr, f"mdtui: experiment stopped{detail}")
        if stopped is not None and stopped.signal is not None:
            return signal_exit_code(stopped.signal)
        return EXIT_CANCELLED
    except MdtuiError as exc:
        print(f"mdtui: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"mdtui: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return 0
