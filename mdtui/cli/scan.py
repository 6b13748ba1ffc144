"""`mdtui scan` and `mdtui capture`: the inventory as a table or JSON, and a copy of what mdtui reads."""

from __future__ import annotations

import argparse
import sys

from mdtui.cli.common import print_json
from mdtui.format import duration, ident_text, iec_bytes, rate_mb_s, to_jsonable
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.probe.mounts import read_mounts, read_swaps
from mdtui.probe.root import SystemRoot
from mdtui.run.mdadm import array_in_use
from mdtui.text import clean_line


def add_scan_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `scan` and `capture` on the top-level `mdtui` subparsers."""
    scan_parser = sub.add_parser("scan", help="list disks (with link speeds and in-use reasons) and md arrays")
    scan_parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    scan_parser.add_argument(
        "--no-smart", action="store_true", help="with --json: skip SMART (smartctl -j -a per disk, as root)"
    )
    capture_parser = sub.add_parser(
        "capture",
        help="copy what mdtui reads from /sys, /proc and udev into DIR (for bug reports and tests)",
        description="Copy what mdtui reads into DIR, a new or empty directory (never a symbolic link), for "
        "`mdtui --root DIR`. With --root TREE a captured tree is copied again, read beneath itself only: a "
        "link of the tree that leads out of it is not copied, and said.",
    )
    capture_parser.add_argument("out_dir", metavar="DIR", help="a new or empty directory (not a link)")


# Cells of the model / serial column: the model is cut to fit, the serial never.
IDENT_WIDTH = 34


def render_scan(inventory: Inventory) -> str:
    lines = []
    rows = []
    for disk in inventory.disks:
        link = disk.link.describe() if disk.link else "-"
        if disk.link and disk.link.downgraded:
            link = "⚠ " + link
        # The model gives way; the serial is never cut (disks of one batch differ only at its end).
        ident = ident_text(disk.model, disk.serial, IDENT_WIDTH)
        if disk.in_use:
            state = "in use: " + "; ".join(str(r) for r in disk.in_use)
        elif disk.problems:
            state = "unknown: " + "; ".join(disk.problems)
        else:
            state = "free"
        rows.append((disk, link, ident, state))
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
            members = " ".join(m.name + ("(F)" if m.faulty else "(S)" if m.spare else "") for m in array.members)
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
    from mdtui.keep.grow import reshape_line, reshape_states

    inventory = scan(args.root)
    system = SystemRoot(args.root)
    # Reshapes running, pending or interrupted (mdtui's journal of the grows it started: the live system's only).
    reshapes = reshape_states(system, inventory.arrays) if system.is_live else []
    if args.json:
        data = to_jsonable(inventory)
        data["reshapes"] = [
            {"device": r.device, "state": r.state, "needs": r.needs, "backup_file": r.backup_file, "done": r.fraction}
            for r in reshapes
        ]
        # What uses each array itself (a filesystem, swap, a dm device or partition on it): a remote host's
        # fleet check refuses a write to the array on these (fleet.remote).
        root = SystemRoot(args.root)
        mounts, swaps = read_mounts(root), read_swaps(root)
        for entry, array in zip(data["arrays"], inventory.arrays, strict=True):
            entry["in_use"] = [to_jsonable(reason) for reason in array_in_use(root, array, mounts, swaps)]
        if not args.no_smart and inventory.privileged and args.root in ("/", ""):
            from mdtui.probe.smart import read_smart_all

            readings = read_smart_all(d.dev_path for d in inventory.disks)
            data["smart"] = {path.removeprefix("/dev/"): to_jsonable(health) for path, health in readings.items()}
        print_json(data)
    else:
        print(render_scan(inventory))
        for state in reshapes:
            print(f"⚠ {reshape_line(state)}" if state.state in ("pending", "not assembled") else reshape_line(state))
    return 0


def cmd_capture(args: argparse.Namespace) -> int:
    from mdtui.probe.capture import capture
    from mdtui.probe.root import SystemRoot

    def refused(why: str) -> None:
        print(f"mdtui: {clean_line(why)}", file=sys.stderr)

    copied = capture(args.out_dir, SystemRoot(args.root), refused)
    print(f"captured {copied} files into {args.out_dir}; read it back with: mdtui --root {args.out_dir} scan")
    return 0
