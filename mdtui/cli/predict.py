"""`mdtui predict`: what an array of a level will do for each workload, before it exists."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from mdtui.bench.member_figures import StoredMember, load_member_runs, stored_member
from mdtui.cli.common import print_json
from mdtui.errors import MdtuiError
from mdtui.format import rate_mb_s
from mdtui.plan.figures import CONDITIONS, OPTIMAL, Figure, MemberFigures, Prediction, parse_member_figures
from mdtui.plan.forecast import missing_lines, unmeasured_source
from mdtui.plan.levels import RaidLevel, level_from_name
from mdtui.plan.md_model import predict
from mdtui.plan.write_safety import SafetyChoice, array_bytes_of, problems, protects
from mdtui.probe.inventory import scan
from mdtui.store.calibration import host_ceilings
from mdtui.store.database import default_db_path

_WORKLOADS = (
    ("sequential read", "seq_read_bytes_per_s", "1 MiB, 8 jobs × QD8"),
    ("sequential write", "seq_write_bytes_per_s", "1 MiB, 8 jobs × QD8"),
    ("random read", "rand_read_iops", "4 KiB, 8 jobs × QD32"),
    ("random write", "rand_write_iops", "4 KiB, 8 jobs × QD32"),
    ("Q1 read latency", "q1_read_latency_s", "4 KiB, 1 job × QD1"),
    ("Q1 write latency", "q1_write_latency_s", "4 KiB, 1 job × QD1"),
)


def add_predict_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "predict",
        help="what an array of a level will do for each workload, before it exists",
        description=(
            "Predict an md array's sequential and random throughput and Q1 latency from its members' figures, "
            "as md does the work (reads over every copy, md's small-write choice, its stripe thread, shared "
            "links). Each figure names its bound and its basis. A disk nobody measured stands in with its link "
            "and published figures for its kind of disk (with their range); a figure a link binds reads 'at most'."
        ),
    )
    parser.add_argument("--level", required=True, help="linear, 0, 1, 4, 5, 6 or 10")
    parser.add_argument("disks", nargs="*", metavar="DISK", help="the members (sdb, /dev/disk/by-id/...)")
    parser.add_argument("--members", type=_count, metavar="N", help="a member count, for disks not bought yet")
    parser.add_argument("--chunk", type=_count, metavar="KIB", help="chunk size in KiB (default 512)")
    parser.add_argument("--layout", help="raid5/6 layout, or raid10 n2, f2, o2")
    parser.add_argument(
        "--member-figures",
        type=_figures,
        metavar="FIGURES",
        help="one member's figures, e.g. seq-read=1112MB/s,seq-write=1123MB/s,rand-read=180k,rand-write=169k,"
        "q1-read=58us,rotational=no",
    )
    parser.add_argument(
        "--condition",
        choices=CONDITIONS,
        default=OPTIMAL,
        help="the array's state: optimal, degraded (one member missing) or resync (a sync under the workload)",
    )
    parser.add_argument("--bitmap", default="none", metavar="KIND", help="none, internal, lockless or a file path")
    parser.add_argument("--bitmap-chunk", type=_count, metavar="KIB", help="the region one bitmap bit covers (KiB)")
    parser.add_argument("--policy", choices=("resync", "ppl", "journal"), default="resync", help="consistency policy")
    parser.add_argument(
        "--journal-figures", type=_figures, metavar="FIGURES", help="the write journal device's figures (as above)"
    )
    parser.add_argument(
        "--kernel", metavar="RELEASE", help="predict for this kernel's md (field figures; default: the running one)"
    )
    parser.add_argument("--json", action="store_true", help="print the prediction as JSON")
    parser.add_argument(
        "--db",
        metavar="PATH",
        help=f"results database the member-matrix figures are read from (default: $MDTUI_DB, else {default_db_path()})",
    )


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _figures(text: str) -> MemberFigures:
    try:
        return parse_member_figures(text)
    except MdtuiError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--member-figures: ")) from None


def _members(args: argparse.Namespace) -> tuple[list[MemberFigures], list[str]]:
    """The members' figures and a line per member on where its figures come from."""
    if args.disks and args.members:
        raise MdtuiError("give either DISK... or --members N, not both")
    if args.members:
        if args.member_figures is None:
            raise MdtuiError("--members N needs --member-figures: without disks there is nothing to read figures from")
        return [args.member_figures] * args.members, []
    if not args.disks:
        raise MdtuiError("name the member disks, or give --members N with --member-figures")
    if args.member_figures is not None:
        return [args.member_figures] * len(args.disks), []
    runs = load_member_runs(args.db)
    inventory = scan(args.root)
    figures: list[MemberFigures] = []
    sources: list[str] = []
    for text in args.disks:
        name = text.rsplit("/", 1)[-1]
        disk = inventory.disk(name)
        stored = stored_member(runs, text, disk.rotational if disk is not None else None)
        if stored.run_ids and not stored.missing:
            figures.append(stored.figures)
            sources.append(member_source(stored))
            continue
        if disk is None:
            if stored.run_ids:
                raise MdtuiError(stored.missing_text())
            known = ", ".join(d.name for d in inventory.disks) or "none"
            raise MdtuiError(f"no disk {text!r} found and no member figures stored for it (disks: {known})")
        # Not (fully) measured: what bounds it, its link or a hard disk's platter, decided in plan/member_bounds.py.
        source = unmeasured_source(
            disk.name,
            disk.link,
            disk.rotational,
            missing=stored.missing_text(),
            never_measured=not stored.run_ids,
            stored=stored.figures if stored.run_ids else None,
            stored_note=stored.age(),
        )
        figures.append(source.figures)
        sources.extend(missing_lines([source]))
    return figures, sources


def member_source(stored: StoredMember) -> str:
    """Where a member's figures come from: "sdb: measured 3 d ago (runs #4-#8, member-matrix)"."""
    ids = stored.run_ids
    runs = f"run #{ids[0]}" if len(ids) == 1 else f"runs #{ids[0]}-#{ids[-1]}"
    return f"{stored.device}: {stored.age()} ({runs}, member-matrix)"


def _value(figure: Figure, key: str) -> str:
    value = figure.rounded
    if value is None:
        return "unknown"
    text = ("at most " if figure.value_at_most else "") + _unit(value, key)
    span = figure.range_rounded
    if span is not None:
        # A link binds the range's top, not the value within it.
        top = ("at most " if figure.at_most else "") + _unit(span[1], key)
        text += f" (range {_unit(span[0], key)}-{top})"
    return text


def _unit(value: float, key: str) -> str:
    if key.endswith("bytes_per_s"):
        return rate_mb_s(value)
    if key.endswith("iops"):
        return f"{value:,.0f} IOPS"
    return f"{value * 1e6:,.0f} µs"


def render(
    prediction: Prediction, sources: list[str] | None = None, md_note: str = "", safety: list[str] | None = None
) -> str:
    shape = f"{prediction.level}, {prediction.members} members"
    if prediction.layout:
        shape += f", layout {prediction.layout}"
    if prediction.chunk_bytes:
        shape += f", chunk {prediction.chunk_bytes // 1024} KiB"
    if prediction.condition != OPTIMAL:
        shape += f", {'one member missing' if prediction.condition == 'degraded' else 'during a resync'}"
    lines = [f"What {shape} will do:", ""]
    rows = [
        (name, job, _value(getattr(prediction, key), key), getattr(prediction, key)) for name, key, job in _WORKLOADS
    ]
    width = max(len(name) for name, *_ in rows)
    job_width = max(len(job) for _, job, *_ in rows)
    value_width = max(len(value) for _, _, value, _ in rows)
    for name, job, value, figure in rows:
        lines.append(
            f"  {name:<{width}}  {job:<{job_width}}  {value:>{value_width}}  bound: {figure.bound} ({figure.basis})"
        )
    notes = [*prediction.notes, md_note] if md_note else list(prediction.notes)
    if safety:
        lines.append("")
        lines += safety
    if notes:
        lines.append("")
        lines += [f"note: {note}" for note in notes]
    if sources:
        lines.append("")
        lines += [f"member {source}" for source in dict.fromkeys(sources)]
    return "\n".join(lines)


def cmd_predict(args: argparse.Namespace) -> int:
    try:
        level = level_from_name(args.level)
    except ValueError as exc:
        raise MdtuiError(str(exc)) from None
    members, sources = _members(args)
    md = host_ceilings()
    ceilings = md.for_level(level.name)
    if args.kernel:
        ceilings = dataclasses.replace(ceilings, kernel=args.kernel)
    choice = SafetyChoice(args.bitmap, args.bitmap_chunk, args.policy, "journal" if args.policy == "journal" else None)
    refused = problems(level, choice, kernel=ceilings.kernel)
    if refused:
        raise MdtuiError("; ".join(refused))
    try:
        prediction = predict(
            level,
            members,
            layout=args.layout,
            chunk_bytes=args.chunk * 1024 if args.chunk else None,
            ceilings=ceilings,
            condition=args.condition,
            safety=choice.model(_array_bytes(args, level), args.journal_figures),
        )
    except ValueError as exc:  # a raid10 layout mdtui does not offer
        raise MdtuiError(str(exc)) from None
    if args.json:
        print_json(prediction.as_json())
    else:
        safety = [f"write safety: {choice.describe()}"] + [f"  protects {line}" for line in protects(choice, level)]
        sys.stdout.write(render(prediction, sources, md.note, safety if level.redundant else None) + "\n")
    return 0


def _array_bytes(args: argparse.Namespace, level: RaidLevel) -> int | None:
    """The array's size from the named disks (a bitmap's chunk count); None for --members (large)."""
    if not args.disks:
        return None
    inventory = scan(args.root)
    sizes = [(d.size_bytes if (d := inventory.disk(text.rsplit("/", 1)[-1])) else None) for text in args.disks]
    return array_bytes_of(sizes, level, args.layout)
