"""`mdtui safety`: an array's write-intent bitmap and consistency policy, what each choice protects and costs, and
a change made through mdadm --grow (plan shown as argv, typed confirmation, every command in the action log)."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mdtui.cli.common import confirm, print_json
from mdtui.errors import MdtuiError
from mdtui.model.array import MdArray
from mdtui.model.job import RwMode
from mdtui.model.safety import LiveSafety
from mdtui.plan.figures import MemberFigures
from mdtui.plan.levels import RaidLevel, level_from_name
from mdtui.plan.md_limits import LOCKLESS_BITMAP, kernel_version
from mdtui.plan.write_safety import SafetyChoice, costs, protects
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot, require_live

if TYPE_CHECKING:
    from mdtui.advise.experiments import ExperimentResult
    from mdtui.cli.experiment_context import ExperimentContext

EXIT_DECLINED = 1
# mdadm's usual chunk for an internal bitmap on a large array, and a small one: the two ends a choice spans.
SHOWN_CHUNKS_KIB = (64 * 1024, 64)


def _chunk(text: str) -> int:
    from mdtui.tune.safety_journal import chunk_kib

    try:
        return chunk_kib(text)
    except MdtuiError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_safety_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "safety",
        help="an array's bitmap and consistency policy: what each protects and costs; change them",
        description=(
            "Show an array's write-intent bitmap and consistency policy, what each choice protects (a fast "
            "resync after a crash, the raid5/6 write hole) and what it costs (the md model over the members' "
            "figures). --bitmap, --bitmap-chunk and --policy change them on the live array through mdadm --grow: "
            "the plan is shown as argv and the array's name typed to go ahead."
        ),
    )
    parser.add_argument("array", metavar="ARRAY", help="md0 or /dev/md0")
    parser.add_argument("--bitmap", metavar="KIND", help="none, internal, lockless (kernel 6.18) or a file path")
    parser.add_argument("--bitmap-chunk", type=_chunk, metavar="SIZE", help="the region a bit covers: 64M, 4K ...")
    parser.add_argument("--policy", choices=("resync", "ppl"), help="consistency policy (ppl: raid5, no bitmap)")
    parser.add_argument("--dry-run", action="store_true", help="show the plan and stop")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the state (and what ran) as JSON")
    parser.add_argument("--db", metavar="PATH", help="results database with the members' member-matrix figures")


def _array(root: SystemRoot, text: str) -> tuple[MdArray, Any]:
    inventory = scan(root)
    name = text.removeprefix("/dev/")
    array = inventory.array(name)
    if array is None:
        known = ", ".join(a.name for a in inventory.arrays) or "none"
        raise MdtuiError(f"no array {text!r} (arrays: {known})")
    return array, inventory


def _level(array: MdArray) -> RaidLevel:
    try:
        return level_from_name(array.level or "")
    except ValueError as exc:
        raise MdtuiError(f"{array.name}: {exc}") from None


def _now_choice(now: LiveSafety) -> SafetyChoice:
    chunk = None if now.bitmap_chunk_bytes is None else now.bitmap_chunk_bytes // 1024
    return SafetyChoice(now.bitmap, chunk, now.choice_policy)


def alternatives(level: RaidLevel, now: LiveSafety, kernel: str | None) -> list[SafetyChoice]:
    """The choices worth comparing for this array: none, internal at a large and a small chunk, ppl (raid5),
    lockless (kernel 6.18), and what it has now."""
    found = [SafetyChoice("none")]
    found += [SafetyChoice("internal", kib) for kib in SHOWN_CHUNKS_KIB]
    version = kernel_version(kernel)
    if version is not None and version >= LOCKLESS_BITMAP:
        found.append(SafetyChoice("lockless", SHOWN_CHUNKS_KIB[0]))
    if level.name == "raid5":
        found.append(SafetyChoice("none", None, "ppl"))
    if now.choice_policy == "journal":
        found = [SafetyChoice(c.bitmap, c.bitmap_chunk_kib, "journal") for c in found if c.policy == "resync"]
    current = _now_choice(now)
    if now.bitmap != "file" and current not in found:
        found.insert(0, current)
    return found


def _member_figures(args: argparse.Namespace, array: MdArray, inventory: Any) -> tuple[list[MemberFigures] | None, str]:
    from mdtui.bench.member_figures import load_member_runs, member_sources

    disks = [inventory.disk(m.name) for m in array.members if not m.spare and not m.faulty]
    if not disks or any(d is None for d in disks):
        return None, "a member is not in the inventory"
    sources = member_sources(load_member_runs(args.db), [d for d in disks if d is not None])
    missing = [s.note for s in sources if s.figures is None]
    if missing:
        return None, "; ".join(missing)
    return [s.figures for s in sources if s.figures is not None], sources[0].md.note


def cmd_safety(args: argparse.Namespace) -> int:
    from mdtui.execute.record import kernel_release
    from mdtui.execute.write_safety import execute_safety_change, live_safety, plan_safety_change
    from mdtui.store.calibration import host_ceilings

    root = SystemRoot(args.root)
    array, inventory = _array(root, args.array)
    level = _level(array)
    now = live_safety(root, array)
    kernel = kernel_release(root)
    current = _now_choice(now)
    report: dict[str, Any] = {
        "array": array.name,
        "level": level.name,
        "bitmap": now.bitmap,
        "bitmap_chunk_bytes": now.bitmap_chunk_bytes,
        "consistency_policy": now.policy,
    }
    changing = args.bitmap is not None or args.bitmap_chunk is not None or args.policy is not None
    lines = [f"{array.name}: {level.name}, {len(array.members)} members, UUID {array.uuid or 'unknown'}"]
    chunk = f" (chunk {now.bitmap_chunk_bytes // 1024} KiB)" if now.bitmap_chunk_bytes else ""
    lines.append(f"now: bitmap {now.bitmap}{chunk}, policy {now.policy}")
    lines += [f"  protects {line}" for line in protects(current, level)]
    figures, note = _member_figures(args, array, inventory)
    ceilings = host_ceilings().for_level(level.name)
    report["choices"] = []
    if figures is None:
        lines.append(f"what each choice costs is not predicted: {note}")
    else:
        lines.append("what each choice costs (the md model over the members' figures, against no bitmap and resync):")
        for choice in alternatives(level, now, kernel):
            found, _ = costs(
                level, figures, choice, layout=level.normalise_layout(array.layout),
                chunk_bytes=array.chunk_bytes, ceilings=ceilings, array_bytes=array.size_bytes,
            )  # fmt: skip
            mark = " (now)" if choice == current else ""
            lines.append(f"  {choice.describe()}{mark}")
            lines += [f"      {cost.text()}" for cost in found]
            report["choices"].append(
                {"choice": choice.describe(), "now": bool(mark)}
                | {cost.workload: {"with": cost.with_choice, "without": cost.without} for cost in found}
            )
        if note:
            lines.append(f"note: {note}")
    if not changing:
        lines.append(f"change it: mdtui safety {array.name} --bitmap KIND [--bitmap-chunk SIZE] [--policy resync|ppl]")
        if args.json:
            print_json(report)
        else:
            print("\n".join(lines))
        return 0
    want = SafetyChoice(
        args.bitmap if args.bitmap is not None else (current.bitmap if args.policy != "ppl" else "none"),
        args.bitmap_chunk if args.bitmap_chunk is not None else None,
        args.policy if args.policy is not None else current.policy,
    )
    plan = plan_safety_change(root, array, want)
    report["plan"] = [list(step) for step in plan.steps]
    report["problems"] = list(plan.problems)
    lines.append(f"to: {want.describe()}")
    lines += [f"  protects {line}" for line in protects(want, level)]
    if plan.problems:
        raise MdtuiError(f"{array.name}: {'; '.join(plan.problems)}")
    if not plan.steps:
        lines.append("nothing to change: the array already has it")
    lines += [f"  {shlex.join(step)}" for step in plan.steps]
    if not args.json:
        print("\n".join(lines))
    if args.dry_run or not plan.steps:
        if args.json:
            print_json(report)
        return 0
    require_live(root, "changing an array's bitmap or policy")
    what = f"change the write safety of {plan.device} ({len(plan.steps)} mdadm --grow)"
    confirmed = confirm(args, what, plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was changed.")
        return EXIT_DECLINED
    results = execute_safety_change(plan, confirmed=confirmed, root=root)
    after = live_safety(root, array)
    report["ran"] = [{"argv": list(r.argv), "returncode": r.returncode} for r in results]
    report["after"] = {"bitmap": after.bitmap, "bitmap_chunk_bytes": after.bitmap_chunk_bytes, "policy": after.policy}
    if args.json:
        print_json(report)
    else:
        print(f"{array.name} now: bitmap {after.bitmap}, policy {after.policy} (commands in the action log)")
    return 0


# --- the A/B: `mdtui experiment write-safety` --------------------------------------------------------


def add_safety_ab_parser(
    kinds: argparse._SubParsersAction[argparse.ArgumentParser], common: Callable[[argparse.ArgumentParser], None]
) -> None:
    """`mdtui experiment write-safety`: one stored run per bitmap/policy, beside its prediction, originals back."""
    from mdtui.cli.tune import _size, _whole  # the knob sweep's own parsers of the same options

    ab = kinds.add_parser(
        "write-safety",
        help="one run per bitmap and consistency policy on a live array, beside the model's prediction; original back",
    )
    ab.add_argument("--target", required=True, metavar="ARRAY", help="the md array (md0, /dev/md0)")
    ab.add_argument(
        "--choices",
        required=True,
        metavar="C,C,...",
        help="in order: none, internal:SIZE, lockless:SIZE, ppl (e.g. none,internal:4K,internal:64M)",
    )
    ab.add_argument(
        "--preset", default="custom", metavar="NAME", help="preset; default custom: 4 KiB random writes Q32T8"
    )
    ab.add_argument("--rw", choices=[m.value for m in RwMode], help="custom: I/O pattern (default randwrite)")
    ab.add_argument("--bs", type=_size, metavar="SIZE", help="custom: block size (default 4k)")
    ab.add_argument("--iodepth", type=_whole, metavar="N", help="custom: queue depth (default 32)")
    ab.add_argument("--numjobs", type=_whole, metavar="N", help="custom: jobs (default 8)")
    ab.add_argument("--runtime", type=_whole, metavar="S", help="seconds per run")
    ab.add_argument("--yes", action="store_true", help="confirm without asking (the runs overwrite the array)")
    common(ab)


def safety_ab_cli(args: argparse.Namespace, ctx: ExperimentContext) -> ExperimentResult:
    from mdtui.advise.safety_ab import DEFAULT_OPTIONS, parse_choices, safety_ab
    from mdtui.execute.record import kernel_release
    from mdtui.store.calibration import host_ceilings
    from mdtui.tune.safety_journal import SafetyChanger, journal_dir

    array, inventory = _array(ctx.root, args.target)
    level = _level(array)
    choices = parse_choices(args.choices)
    options = {
        key: value
        for key, value in {
            "rw": RwMode(args.rw) if args.rw else None,
            "block_size_bytes": args.bs,
            "iodepth": args.iodepth,
            "numjobs": args.numjobs,
            "runtime_s": args.runtime,
        }.items()
        if value is not None
    }
    job = DEFAULT_OPTIONS | options if args.preset == "custom" else options
    plan = ctx.runner.plan(args.preset, array.dev_path, quick=args.quick, **job)
    ctx.say("\n".join(plan.describe()))
    ctx.say(
        f"{array.name}: one run for each of {', '.join(c.describe() for c in choices)}, through mdadm --grow, "
        f"then its own bitmap and policy back (restore journal in {journal_dir()})"
    )
    if plan.writes:
        ctx.confirm(args, f"change {array.name}'s write safety and overwrite it {len(choices)} times", array.name)
        ctx.allow(plan.confirmation)
    figures, note = _member_figures(args, array, inventory)
    if figures is None:
        ctx.say(f"no predictions beside the runs: {note}")
    changer = SafetyChanger(ctx.root, purpose=f"a write safety A/B on {array.name}")
    return safety_ab(
        ctx.runner,
        array,
        level,
        choices,
        store=ctx.store,
        changer=changer,
        kernel=kernel_release(ctx.root),
        figures=figures,
        ceilings=host_ceilings().for_level(level.name),
        array_bytes=array.size_bytes,
        preset_key=args.preset,
        quick=args.quick,
        cancel=ctx.cancel,
        **options,
    )
