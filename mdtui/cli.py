"""The `mdtui` command line: the same core as the app, for scripts and quick looks."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from mdtui import __version__
from mdtui.cli_advise import add_advise_parser, run_advise
from mdtui.cli_bench import add_bench_parser, run_bench_cli
from mdtui.cli_experiment import add_experiment_parser, run_experiment
from mdtui.cli_results import add_results_parser, run_results
from mdtui.cli_watch import add_watch_parser, run_watch
from mdtui.errors import MdtuiError
from mdtui.format import duration, iec_bytes, rate_mb_s, to_jsonable
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mdtui", description="A terminal workbench for Linux md software RAID.")
    parser.add_argument("--version", action="version", version=f"mdtui {__version__}")
    parser.add_argument(
        "--root",
        default="/",
        help="read /sys, /proc and /run/udev below this directory instead of / (for captured trees)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    scan_parser = sub.add_parser("scan", help="list disks (with link speeds and in-use reasons) and md arrays")
    scan_parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    capture_parser = sub.add_parser(
        "capture", help="copy what mdtui reads from /sys, /proc and udev into DIR (for bug reports and tests)"
    )
    capture_parser.add_argument("out_dir", metavar="DIR")

    create = sub.add_parser("create", help="plan (--dry-run) or create an md array")
    create.add_argument("members", nargs="+", metavar="MEMBER", help="disks: sdb, /dev/sdb or a /dev/disk/by-id path")
    create.add_argument("--level", required=True, help="linear, 0, 1, 4, 5, 6 or 10")
    create.add_argument("--device", help="array device (default: the first free /dev/mdN)")
    create.add_argument("--chunk", type=int, metavar="KIB", help="chunk size in KiB (default 512)")
    create.add_argument("--layout", help="raid5/6: left-symmetric ...; raid10: n2, f2, o2 ...")
    create.add_argument("--metadata", choices=("1.2", "1.0", "0.90"))
    create.add_argument("--bitmap", choices=("none", "internal"), default="none")
    create.add_argument("--bitmap-chunk", type=int, metavar="KIB")
    create.add_argument("--spare", action="append", default=[], metavar="DISK")
    create.add_argument("--name", help="array name stored in the superblock")
    create.add_argument("--assume-clean", action="store_true", help="skip the initial resync (for benchmarks)")
    create.add_argument("--build", action="store_true", help="superblock-less raid0/linear test array")
    create.add_argument("--allow-mixed-sizes", action="store_true")
    create.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    create.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    create.add_argument("--full-speed", action="store_true", help="let the initial resync run at full speed")
    create.add_argument("--no-follow", action="store_true", help="do not wait for the resync")
    create.add_argument("--json", action="store_true", help="print the plan (and what was created) as JSON")

    destroy = sub.add_parser("destroy", help="stop an array mdtui created and wipe its members")
    destroy.add_argument("device", help="/dev/md0 or md0")
    destroy.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    destroy.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    destroy.add_argument("--json", action="store_true", help="print the plan (and what ran) as JSON")

    add_results_parser(sub)
    add_watch_parser(sub)
    add_advise_parser(sub)
    add_bench_parser(sub)
    add_experiment_parser(sub)
    return parser


def render_scan(inventory: Inventory) -> str:
    lines = []
    rows = []
    for disk in inventory.disks:
        link = disk.link.describe() if disk.link else "-"
        if disk.link and disk.link.downgraded:
            link = "⚠ " + link
        ident = " / ".join(part for part in (disk.model, disk.serial) if part) or "-"
        if disk.in_use:
            state = "in use: " + "; ".join(str(r) for r in disk.in_use)
        elif disk.problems:
            state = "unknown: " + "; ".join(disk.problems)
        else:
            state = "free"
        rows.append((disk, link, ident[:34], state))
    link_width = max([len("LINK"), *(len(row[1]) for row in rows)])
    ident_width = max([len("MODEL / SERIAL"), *(len(row[2]) for row in rows)])
    lines.append(
        f"{'DISK':<10} {'TRANSPORT':<9} {'SIZE':>10} {'TYPE':<4} {'LINK':<{link_width}} "
        f"{'MODEL / SERIAL':<{ident_width}} STATE"
    )
    for disk, link, ident, state in rows:
        lines.append(
            f"{disk.name:<10} {disk.transport.value:<9} {iec_bytes(disk.size_bytes):>10} {disk.kind_label:<4} "
            f"{link:<{link_width}} {ident:<{ident_width}} {state}"
        )
    downgraded = [d for d in inventory.disks if d.link and d.link.downgraded]
    for disk in downgraded:
        assert disk.link is not None
        lines.append(f"⚠ {disk.name}: {disk.link.finding()}")
    lines.append("")
    if inventory.arrays:
        lines.append(f"{'ARRAY':<8} {'LEVEL':<7} {'STATE':<16} {'SIZE':>10} {'CHUNK':>8} {'LAYOUT':<16} MEMBERS")
        for array in inventory.arrays:
            members = " ".join(
                m.name + ("(F)" if m.faulty else "(S)" if m.spare else "") for m in array.members
            )
            state = array.state + (f", degraded {array.degraded}" if array.degraded else "")
            chunk = iec_bytes(array.chunk_bytes) if array.chunk_bytes else "-"
            lines.append(
                f"{array.name:<8} {array.level or '-':<7} {state:<16} {iec_bytes(array.size_bytes):>10} "
                f"{chunk:>8} {array.layout or '-':<16} {members}"
            )
            if array.sync is not None:
                sync = array.sync
                pct = f"{sync.fraction * 100:.1f}%" if sync.fraction is not None else sync.state
                lines.append(
                    f"         {sync.action} {pct} at {rate_mb_s(sync.speed_bytes_per_s)}, "
                    f"ETA {duration(sync.eta_seconds)}"
                )
    else:
        lines.append("No md arrays.")
    for note in inventory.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def cmd_scan(args: argparse.Namespace) -> int:
    inventory = scan(args.root)
    if args.json:
        print(json.dumps(to_jsonable(inventory), indent=2))
    else:
        print(render_scan(inventory))
    return 0


def cmd_capture(args: argparse.Namespace) -> int:
    from mdtui.probe.capture import capture
    from mdtui.probe.root import SystemRoot

    copied = capture(args.out_dir, SystemRoot(args.root))
    print(f"captured {copied} files into {args.out_dir}; read it back with: mdtui --root {args.out_dir} scan")
    return 0


def _find_disk(inventory: Inventory, text: str, root: str) -> Disk:
    from mdtui.probe.root import SystemRoot

    name = text.rsplit("/", 1)[-1] if text.startswith("/dev/") and "/by-" not in text else text
    disk = inventory.disk(name)
    if disk is None and text.startswith("/"):
        target = SystemRoot(root).resolve(text)
        disk = inventory.disk(target.name) if target is not None else None
    if disk is None:
        known = ", ".join(d.name for d in inventory.disks) or "none"
        raise MdtuiError(f"no disk {text!r} found (disks: {known})")
    return disk


def _confirm(args: argparse.Namespace, what: str, token: str) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        raise MdtuiError(f"refusing to {what} without confirmation: pass --yes, or run it at a terminal")
    answer = input(f"This will {what}. Type {token} to go ahead: ")
    return answer.strip() == token


def cmd_create(args: argparse.Namespace) -> int:
    from mdtui.plan import CreateRequest, plan_create
    from mdtui.plan.describe import create_plan_dict, describe_create
    from mdtui.probe.root import SystemRoot
    from mdtui.run.mdadm import execute_create, follow_sync, set_full_resync_speed

    inventory = scan(args.root)
    members = tuple(_find_disk(inventory, m, args.root) for m in args.members)
    spares = tuple(_find_disk(inventory, m, args.root) for m in args.spare)
    if args.device is None:
        taken = {a.name for a in inventory.arrays}
        device = f"/dev/md{next(n for n in range(10_000) if f'md{n}' not in taken)}"
    else:
        device = args.device if args.device.startswith("/dev/") else f"/dev/{args.device}"
    request = CreateRequest(
        device=device,
        level=args.level,
        members=members,
        spares=spares,
        name=args.name,
        chunk_kib=args.chunk,
        layout=args.layout,
        metadata=args.metadata,
        bitmap=args.bitmap,
        bitmap_chunk_kib=args.bitmap_chunk,
        assume_clean=args.assume_clean,
        build=args.build,
        allow_mixed_sizes=args.allow_mixed_sizes,
        active_arrays=frozenset(a.name for a in inventory.arrays),
    )
    plan = plan_create(request)
    report: dict = {"plan": create_plan_dict(plan)}
    if not args.json:
        print("\n".join(describe_create(plan)))
    if args.dry_run:
        if args.json:
            print(json.dumps(report, indent=2))
        return 0
    what = f"create {request.device} and overwrite {len(members) + len(spares)} disk(s)"
    if not _confirm(args, what, request.device):
        print("Cancelled; nothing was run.")
        return 1
    outcome = execute_create(plan, confirmed=True, root=SystemRoot(args.root))
    report["created"] = {"device": outcome.device, "uuid": outcome.uuid}
    if not args.json:
        print(f"created {outcome.device}" + (f" (uuid {outcome.uuid})" if outcome.uuid else ""))
    if args.full_speed and plan.resync_expected:
        report["resync_speed_min_kib_s"] = set_full_resync_speed(outcome.device, True)
    if plan.resync_expected and not args.no_follow:
        def show(array: MdArray) -> None:
            if not args.json and array.sync is not None and array.sync.fraction is not None:
                print(
                    f"\r{array.sync.action} {array.sync.fraction * 100:5.1f}% "
                    f"at {rate_mb_s(array.sync.speed_bytes_per_s)}, ETA {duration(array.sync.eta_seconds)}   ",
                    end="",
                    flush=True,
                )

        follow_sync(outcome.device, root=SystemRoot(args.root), on_update=show)
        report["resync"] = "finished"
        if not args.json:
            print("\nresync finished")
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


def cmd_destroy(args: argparse.Namespace) -> int:
    from mdtui.plan import plan_destroy
    from mdtui.plan.describe import describe_destroy
    from mdtui.probe.root import SystemRoot
    from mdtui.run.mdadm import created_by_mdtui, execute_destroy, find_array, is_mounted

    system = SystemRoot(args.root)
    device = args.device if args.device.startswith("/dev/") else f"/dev/{args.device}"
    array = find_array(system, device)
    if array is None:
        raise MdtuiError(f"{device} is not an active md array")
    inventory = scan(args.root)
    members = [d for d in inventory.disks if d.name in {m.name for m in array.members}]
    plan = plan_destroy(
        array,
        members if len(members) == len(array.members) else None,
        mounted=is_mounted(system, array),
        created_by_tool=created_by_mdtui(array),
    )
    report: dict = {"plan": [list(step.argv) for step in plan.steps]}
    if not args.json:
        print("\n".join(describe_destroy(plan)))
    if args.dry_run:
        if args.json:
            print(json.dumps(report, indent=2))
        return 0
    if not _confirm(args, f"stop {device} and wipe {len(plan.member_paths)} member(s)", device):
        print("Cancelled; nothing was run.")
        return 1
    results = execute_destroy(plan, confirmed=True, root=system)
    report["ran"] = [{"argv": list(r.argv), "returncode": r.returncode} for r in results]
    print(json.dumps(report, indent=2) if args.json else f"{device} stopped and its members wiped")
    return 0


COMMANDS = {
    "scan": cmd_scan,
    "capture": cmd_capture,
    "create": cmd_create,
    "destroy": cmd_destroy,
    "results": run_results,
    "watch": run_watch,
    "advise": run_advise,
    "bench": run_bench_cli,
    "experiment": run_experiment,
}


def run_cli(args: argparse.Namespace) -> int:
    try:
        return COMMANDS[args.command](args)
    except MdtuiError as exc:
        print(f"mdtui: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one CLI command (the app itself starts from mdtui.__main__)."""
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 0
    return run_cli(args)
