"""`mdtui create` and `mdtui destroy`: plan, confirm, run and follow; tear down what mdtui made."""

from __future__ import annotations

import argparse
import sys

from mdtui.cli.common import confirm, find_disk, first_free_md, md_device, print_json, show_plan
from mdtui.cli.keep import BOOST_HELP
from mdtui.errors import MdtuiError
from mdtui.format import plural
from mdtui.probe.inventory import scan


def add_create_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `create` and `destroy` on the top-level `mdtui` subparsers."""
    create = sub.add_parser("create", help="plan (--dry-run) or create an md array")
    create.add_argument("members", nargs="+", metavar="MEMBER", help="disks: sdb, /dev/sdb or a /dev/disk/by-id path")
    create.add_argument("--level", required=True, help="linear, 0, 1, 4, 5, 6 or 10")
    create.add_argument("--device", help="array device (default: the first free /dev/mdN)")
    create.add_argument("--chunk", type=int, metavar="KIB", help="chunk size in KiB (default 512)")
    create.add_argument("--layout", help="raid5/6: left-symmetric ...; raid10: n2, f2, o2 ...")
    create.add_argument("--metadata", choices=("1.2", "1.0", "0.90"))
    create.add_argument(
        "--bitmap",
        default="none",
        metavar="KIND",
        help="write-intent bitmap: none (default), internal, lockless (kernel 6.18) or an absolute file path "
        "(a new file, outside the array, in a directory only root may write)",
    )
    create.add_argument("--bitmap-chunk", type=int, metavar="KIB", help="the region one bitmap bit covers (KiB)")
    create.add_argument(
        "--policy",
        choices=("resync", "ppl", "journal"),
        default="resync",
        help="consistency policy: resync (md's default), ppl (raid5: partial parity log, no bitmap), journal "
        "(raid4/5/6, with --write-journal)",
    )
    create.add_argument("--write-journal", metavar="DISK", help="the write journal device (raid4/5/6)")
    create.add_argument("--spare", action="append", default=[], metavar="DISK")
    create.add_argument("--name", help="array name stored in the superblock")
    create.add_argument("--assume-clean", action="store_true", help="skip the initial resync (for benchmarks)")
    create.add_argument("--build", action="store_true", help="superblock-less raid0/linear test array")
    create.add_argument("--allow-mixed-sizes", action="store_true")
    create.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    create.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    create.add_argument("--boost", "--full-speed", action="store_true", help=BOOST_HELP.format(what="initial sync"))
    create.add_argument("--no-follow", action="store_true", help="do not wait for the resync")
    create.add_argument("--json", action="store_true", help="print the plan (and what was created) as JSON")
    create.add_argument(
        "--db", metavar="PATH", help="results database with the members' member-matrix figures (default: $MDTUI_DB)"
    )

    destroy = sub.add_parser("destroy", help="stop an array mdtui created and wipe its members")
    destroy.add_argument("device", help="/dev/md0 or md0")
    destroy.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    destroy.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    destroy.add_argument("--json", action="store_true", help="print the plan (and what ran) as JSON")


def cmd_create(args: argparse.Namespace) -> int:
    from mdtui.bench.member_figures import load_member_runs, member_sources
    from mdtui.bench.sync_forecast import create_time
    from mdtui.cli.keep import follow_pass
    from mdtui.execute.mdadm import execute_create, find_array
    from mdtui.execute.record import kernel_release
    from mdtui.plan import CreateRequest, plan_create
    from mdtui.plan.describe import create_plan_dict, describe_create
    from mdtui.plan.sync_words import initial_sync_line
    from mdtui.probe.root import SystemRoot
    from mdtui.store.errors import StoreError
    from mdtui.tune.boost import plan_boost

    inventory = scan(args.root)
    members = tuple(find_disk(inventory, m, args.root) for m in args.members)
    spares = tuple(find_disk(inventory, m, args.root) for m in args.spare)
    journal = find_disk(inventory, args.write_journal, args.root) if args.write_journal else None
    policy = "journal" if journal is not None and args.policy == "resync" else args.policy
    device = first_free_md(inventory) if args.device is None else md_device(args.device)
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
        policy=policy,
        journal=journal,
        kernel=kernel_release(SystemRoot(args.root)),
        assume_clean=args.assume_clean,
        build=args.build,
        allow_mixed_sizes=args.allow_mixed_sizes,
        active_arrays=frozenset(a.name for a in inventory.arrays),
    )
    try:
        runs = load_member_runs(args.db)
    except StoreError as exc:
        # The plan does not need the results database: without it, every member is what bounds it (its link).
        print(f"mdtui: no measured member figures: {exc}", file=sys.stderr)
        runs = []
    plan = plan_create(request, member_sources(runs, members))
    system = SystemRoot(args.root)
    initial = create_time(system, plan, runs)
    report: dict = {"plan": create_plan_dict(plan)}
    report["plan"]["initial_sync"] = initial.as_json() if initial is not None else None
    lines = describe_create(plan)
    if (line := initial_sync_line(initial)) is not None:
        lines.append(line)
    if args.boost and initial is None:
        raise MdtuiError("--boost speeds the initial sync, and this array starts none")
    if args.boost and args.no_follow:
        raise MdtuiError("--boost lasts while mdtui follows the initial sync: drop --no-follow")
    if args.boost:
        lines.append(
            "with --boost: once created, its sync_speed_min/max are raised for the initial sync, so md no longer "
            "yields it to other I/O (foreground I/O on the members waits behind it); the values are then shown, "
            "and put back when the sync ends, when you stop following it, or at the next start if mdtui is killed"
        )
    if show_plan(args, lines, report):
        return 0
    what = f"create {request.device} and overwrite {plural(len(members) + len(spares) + bool(journal), 'disk')}"
    confirmed = confirm(args, what, plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was run.")
        return 1
    outcome = execute_create(plan, confirmed=confirmed, root=system)
    report["created"] = {"device": outcome.device, "uuid": outcome.uuid}
    if not args.json:
        print(f"created {outcome.device}" + (f" (uuid {outcome.uuid})" if outcome.uuid else ""))
    code = 0
    if plan.resync_expected and not args.no_follow:
        boost = None
        array = find_array(system, outcome.device)
        if args.boost and array is not None:
            boost = plan_boost(system, array, initial)
            out = sys.stderr if args.json else sys.stdout
            print("\n".join(["with --boost:", *("  " + line for line in boost.cost_lines())]), file=out)
        args.expect_sync = True
        report["resync"], code = follow_pass(outcome.device, args, system, predicted=initial, boost=boost)
        if not args.json and not code:
            print("initial sync finished")
    if code:
        if args.json:
            print_json(report)
        return code
    if not (args.assume_clean or args.build):
        report["persist"] = offer_persist(args, outcome.device)
    if args.json:
        print_json(report)
    return 0


def offer_persist(args: argparse.Namespace, device: str) -> str:
    """A real array (not a test array made with --assume-clean or --build) should survive a reboot: offer
    `mdtui persist` at a terminal, and name it otherwise."""
    import sys

    command = f"mdtui persist {device}"
    if args.json or args.yes or not sys.stdin.isatty():
        if not args.json:
            print(f"To bring {device} back under its name after a reboot: {command}")
        return f"offered: {command}"
    answer = input(f"Add {device} to mdadm.conf and the initramfs now ({command})? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        print(f"Not persisted; run {command} later.")
        return "declined"
    from mdtui.cli.keep import cmd_persist

    persist_args = argparse.Namespace(
        root=args.root, device=device, conf=None, no_initramfs=False, dry_run=False, yes=False, json=False
    )
    return "persisted" if cmd_persist(persist_args) == 0 else "not persisted"


def cmd_destroy(args: argparse.Namespace) -> int:
    from mdtui.execute.mdadm import created_by_mdtui, execute_destroy, find_array, is_mounted
    from mdtui.plan import plan_destroy
    from mdtui.plan.describe import describe_destroy
    from mdtui.probe.root import SystemRoot

    system = SystemRoot(args.root)
    device = md_device(args.device)
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
            print_json(report)
        return 0
    confirmed = confirm(args, f"stop {device} and wipe {plural(len(plan.member_paths), 'member')}", plan.confirmation)
    if confirmed is None:
        print("Cancelled; nothing was run.")
        return 1
    results = execute_destroy(plan, confirmed=confirmed, root=system)
    report["ran"] = [{"argv": list(r.argv), "returncode": r.returncode} for r in results]
    if args.json:
        print_json(report)
    else:
        print(f"{device} stopped and its members wiped")
    return 0
