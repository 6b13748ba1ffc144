"""The `mdtui` command line: the same core as the app, for scripts and quick looks."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from mdtui import __version__
from mdtui.errors import MdtuiError
from mdtui.format import duration, iec_bytes, rate_mb_s, to_jsonable
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
    return parser


def render_scan(inventory: Inventory) -> str:
    lines = []
    header = f"{'DISK':<10} {'TRANSPORT':<9} {'SIZE':>10} {'TYPE':<4} {'LINK':<28} {'MODEL / SERIAL':<34} STATE"
    lines.append(header)
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
        lines.append(
            f"{disk.name:<10} {disk.transport.value:<9} {iec_bytes(disk.size_bytes):>10} {disk.kind_label:<4} "
            f"{link:<28} {ident[:34]:<34} {state}"
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


COMMANDS = {"scan": cmd_scan, "capture": cmd_capture}


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
