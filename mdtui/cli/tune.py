"""`mdtui tune`: an array's md and queue knobs explained; `--apply NAME=VALUE` sets one now and at every start
(a udev rule of mdtui's own), `--remove NAME` takes the rule out; and `mdtui experiment knob`, the sweep."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from typing import Any

from mdtui import jsondoc
from mdtui.advise.experiments import ExperimentResult
from mdtui.advise.knob_sweep import check_values, knob_sweep, sweep_devices
from mdtui.bench.requests import parse_size
from mdtui.cli.common import confirm
from mdtui.cli.experiment_context import ExperimentContext
from mdtui.errors import MdtuiError, PlanError
from mdtui.execute.presets import PRESETS
from mdtui.format import iec_bytes
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.model.job import RwMode
from mdtui.probe.cpu import CpufreqReader
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot, require_live
from mdtui.tune.apply import apply_knob, plan_knob_apply, plan_knob_remove, remove_knob_rule
from mdtui.tune.catalogue import KNOBS, Knob, Workload, knob_named
from mdtui.tune.journal import KnobChanger, journal_dir
from mdtui.tune.read import KnobReading, array_shape, read_knobs, read_value
from mdtui.tune.udev import RULE_LEGEND, Rule, rule_cell, rule_of, rules_file, rules_for, rules_path

EXIT_DECLINED = 1


def _workload(text: str) -> Workload:
    try:
        return Workload(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a workload: {', '.join(w.value for w in Workload)}"
        ) from None


def add_tune_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "tune",
        help="an array's md and queue knobs: value, range, what each changes, a suggestion; --apply persists one",
        description="Show every knob that matters for an md array (md's own, its queue's, its members', the global "
        "resync limits), with range, suggestion and the field figure behind it. --apply NAME=VALUE sets one now and "
        "at every start through a udev rule of mdtui's own; --remove NAME takes that rule out.",
    )
    parser.add_argument("array", nargs="?", metavar="ARRAY", help="md0 or /dev/md0 (default: the first array)")
    parser.add_argument("--json", action="store_true", help="the knobs as JSON")
    parser.add_argument(
        "--workload",
        type=_workload,
        default=Workload.GENERAL,
        metavar="W",
        help="suggest for: " + ", ".join(w.value for w in Workload),
    )
    parser.add_argument("--apply", metavar="NAME=VALUE", help="set a knob now and in the udev rule file")
    parser.add_argument("--remove", metavar="NAME", help="take a knob's rule out of the udev rule file")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def find_array(inventory: Inventory, text: str | None) -> MdArray:
    if not inventory.arrays:
        raise MdtuiError("no md arrays here: mdtui tune shows the knobs of an array")
    if text is None:
        return inventory.arrays[0]
    name = text.removeprefix("/dev/")
    array = inventory.array(name)
    if array is None:
        known = ", ".join(a.name for a in inventory.arrays)
        raise MdtuiError(f"no array {text!r} (arrays: {known})")
    return array


# --- showing -----------------------------------------------------------------------------------------


def _suggested(item: KnobReading) -> str:
    return item.suggestion.value if item.suggestion.value is not None else "leave"


def governor_line(root: SystemRoot) -> str:
    state = CpufreqReader(root).read()
    if not state.available:
        return "CPU governor: not available (no cpufreq in this kernel/VM)"
    governors = sorted({c.settings.governor or "?" for c in state.cores})
    epp = sorted({c.settings.epp for c in state.cores if c.settings.epp})
    text = f"CPU governor: {', '.join(governors)}"
    if epp:
        text += f", EPP {', '.join(epp)}"
    return text + " (mdtui experiment governor-ab measures a change)"


def render_knobs(array: MdArray, readings: list[KnobReading], rules: dict[str, Rule], root: SystemRoot) -> str:
    members = array.raid_disks or len(array.members)
    lines = [f"{array.name}: {array.level or 'unknown level'}, {members} members, UUID {array.uuid or 'unknown'}"]
    header = ("KNOB", "DEVICE", "NOW", "RANGE", "SUGGESTED", "RULE")
    rows = [header] + [
        (
            i.knob.name,
            i.device or "(all)",
            i.shown,
            i.knob.range_text,
            _suggested(i),
            rule_cell(i.knob, i.value.value if i.value is not None else None, rules),
        )
        for i in readings
    ]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.append(RULE_LEGEND)
    for item in readings:
        if item.memory_bytes is not None:
            lines.append(
                f"memory: {item.knob.name} {item.value.value if item.value else '?'} pages × 4 KiB × {members} members"
                f" = {iec_bytes(item.memory_bytes)}"
                + (
                    f"; {item.suggestion.value} would be {iec_bytes(item.suggested_memory_bytes)}"
                    if item.suggested_memory_bytes is not None
                    else ""
                )
            )
    lines.append(governor_line(root))
    lines.append("")
    seen = set()
    for item in readings:
        if item.knob.name in seen:
            continue
        seen.add(item.knob.name)
        lines.append(f"{item.knob.name}: {item.knob.what}.")
        lines.append(f"    field: {item.knob.field}. suggested: {_suggested(item)} ({item.suggestion.why})")
    path = rules_file(root)
    if rules:
        lines.append(f"\nudev rule file {path}: " + ", ".join(f"{r.knob}={r.value}" for r in rules.values()))
    else:
        lines.append(f"\nno rule for {array.name} in {path} (mdtui tune --apply NAME=VALUE {array.name} adds one)")
    return "\n".join(lines)


def knobs_json(array: MdArray, readings: list[KnobReading], rules: dict[str, Rule]) -> str:
    return jsondoc.dumps(
        {
            "array": array.name,
            "level": array.level,
            "uuid": array.uuid,
            "rule_file": str(rules_path()),
            "knobs": [
                {
                    "name": i.knob.name,
                    "scope": i.knob.scope.value,
                    "device": i.device,
                    "path": i.path,
                    "value": i.value.value if i.value else None,
                    "raw": i.value.raw if i.value else None,
                    "choices": list(i.value.choices) if i.value else [],
                    "range": i.knob.range_text,
                    "unit": i.knob.unit,
                    "writable": i.writable,
                    "what": i.knob.what,
                    "field": i.knob.field,
                    "suggested": i.suggestion.value,
                    "why": i.suggestion.why,
                    "memory_bytes": i.memory_bytes,
                    "suggested_memory_bytes": i.suggested_memory_bytes,
                    "persisted": rule.value if (rule := rule_of(i.knob, rules)) is not None else None,
                }
                for i in readings
            ],
        }
    )


# --- changing ----------------------------------------------------------------------------------------


def _split_apply(text: str) -> tuple[Knob, str]:
    name, sep, value = text.partition("=")
    if not sep or not value.strip():
        raise PlanError(f"--apply takes NAME=VALUE, e.g. stripe_cache_size=4096 (got {text!r})")
    return knob_named(name), value.strip()


def _apply(args: argparse.Namespace, root: SystemRoot, array: MdArray, inventory: Inventory) -> int:
    knob, value = _split_apply(args.apply)
    plan = plan_knob_apply(root, array, knob, value, inventory)
    print("\n".join(plan.describe()))
    require_live(root, "changing a knob")
    what = f"set {knob.name}={plan.value} on {array.name} and write {plan.rule.path}"
    confirmed = confirm(args, what, plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was changed.")
        return EXIT_DECLINED
    print("\n".join(apply_knob(plan, confirmed=confirmed, root=root).lines()))
    return 0


def _remove(args: argparse.Namespace, root: SystemRoot, array: MdArray) -> int:
    plan = plan_knob_remove(root, array, knob_named(args.remove))
    print("\n".join(plan.describe()))
    require_live(root, "changing a knob")
    what = f"remove the {plan.knob.name} rule of {array.name} from {plan.rule.path}"
    confirmed = confirm(args, what, plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was changed.")
        return EXIT_DECLINED
    print(remove_knob_rule(plan, confirmed=confirmed, root=root))
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    if args.apply and args.remove:
        raise PlanError("give --apply or --remove, not both")
    root = SystemRoot(args.root)
    inventory = scan(root)
    array = find_array(inventory, args.array)
    if args.apply:
        return _apply(args, root, array, inventory)
    if args.remove:
        return _remove(args, root, array)
    readings = read_knobs(root, array, inventory, workload=args.workload)
    rules = rules_for(array, root=root)
    print(knobs_json(array, readings, rules) if args.json else render_knobs(array, readings, rules, root))
    return 0


# --- the sweep: `mdtui experiment knob` --------------------------------------------------------------


def _values(text: str) -> tuple[str, ...]:
    values = tuple(part.strip() for part in text.split(",") if part.strip())
    if not values:
        raise argparse.ArgumentTypeError("--values takes values separated by commas: 256,4096")
    return values


def _whole(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except PlanError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_knob_parser(
    kinds: argparse._SubParsersAction[argparse.ArgumentParser], common: Callable[[argparse.ArgumentParser], None]
) -> None:
    """`mdtui experiment knob`: one stored run per value of a knob, originals restored afterwards."""
    presets = ", ".join(p.key for p in PRESETS)
    knob = kinds.add_parser(
        "knob",
        help="one run per value of an md/queue knob (stripe_cache_size, group_thread_cnt ...), originals restored",
    )
    knob.add_argument("--knob", required=True, metavar="NAME", help=", ".join(k.name for k in KNOBS))
    knob.add_argument("--values", required=True, type=_values, metavar="A,B,...", help="values to try, in order")
    knob.add_argument("--target", required=True, metavar="ARRAY", help="the md array (md0, /dev/md0)")
    knob.add_argument("--preset", default="custom", metavar="NAME", help=f"preset ({presets}); default custom")
    knob.add_argument("--rw", choices=[m.value for m in RwMode], help="custom: I/O pattern (default read)")
    knob.add_argument("--bs", type=_size, metavar="SIZE", help="custom: block size")
    knob.add_argument("--iodepth", type=_whole, metavar="N")
    knob.add_argument("--numjobs", type=_whole, metavar="N")
    knob.add_argument("--runtime", type=_whole, metavar="S", help="seconds per run")
    knob.add_argument("--size", type=_size, metavar="SIZE", help="bytes per job instead of a runtime")
    knob.add_argument("--yes", action="store_true", help="confirm a writing preset without asking")
    common(knob)


def _job_options(args: argparse.Namespace) -> dict[str, Any]:
    options = {
        "rw": RwMode(args.rw) if args.rw else None,
        "block_size_bytes": args.bs,
        "iodepth": args.iodepth,
        "numjobs": args.numjobs,
        "runtime_s": args.runtime,
        "size_bytes": args.size,
    }
    return {key: value for key, value in options.items() if value is not None}


def knob_sweep_cli(args: argparse.Namespace, ctx: ExperimentContext) -> ExperimentResult:
    inventory = scan(ctx.root)
    array = find_array(inventory, args.target)
    knob = knob_named(args.knob)
    values = check_values(ctx.root, knob, array, args.values)
    options = _job_options(args)
    plan = ctx.runner.plan(args.preset, array.dev_path, quick=args.quick, **options)
    devices = sweep_devices(knob, array)
    now = read_value(ctx.root, knob, devices[0])
    ctx.say("\n".join(plan.describe()))
    where = ", ".join(knob.system_path(d) for d in devices)
    ctx.say(
        f"{knob.name} is {now.raw if now else '?'} now ({where}); one run for each of {', '.join(values)}, "
        f"then put back (restore journal in {journal_dir()})"
    )
    shape = array_shape(array, inventory)
    costs = [(v, knob.memory_bytes(v, shape)) for v in values]
    if any(memory is not None for _, memory in costs):
        ctx.say("memory: " + ", ".join(f"{v} = {iec_bytes(m)}" for v, m in costs if m is not None))
    if plan.writes:
        ctx.confirm(args, f"overwrite {plan.target.path} {len(values)} times", plan.confirmation)
        ctx.allow(plan.confirmation)
    changer = KnobChanger(ctx.root, purpose=f"a knob sweep of {knob.name} on {array.name}")
    try:
        return knob_sweep(
            ctx.runner,
            array,
            knob,
            values,
            root=ctx.root,
            store=ctx.store,
            inventory=inventory,
            preset_key=args.preset,
            quick=args.quick,
            cancel=ctx.cancel,
            changer=changer,
            full_sweep=args.full_sweep or args.fixed_time,
            **options,
        )
    except BaseException:
        for item in changer.restored:
            with contextlib.suppress(OSError):
                print(f"mdtui: {'restored: ' if item.ok else ''}{item.text}", file=sys.stderr, flush=True)
        raise
