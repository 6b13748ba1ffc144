"""`mdtui scan` and `mdtui capture`: the inventory as a table or JSON, and a copy of what mdtui reads."""

from __future__ import annotations

import argparse
import sys
import textwrap

from mdtui.cli.common import output_width, print_json
from mdtui.columns import Column, cut_end, fit_columns, fitted_note
from mdtui.execute.mdadm import array_in_use
from mdtui.format import duration, ident_text, iec_bytes, rate_mb_s, to_jsonable
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.probe.mounts import read_mounts, read_swaps
from mdtui.probe.root import SystemRoot
from mdtui.text import clean_line


def add_scan_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `scan` and `capture` on the top-level `mdtui` subparsers."""
    scan_parser = sub.add_parser("scan", help="list disks (with link speeds and in-use reasons) and md arrays")
    scan_parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    scan_parser.add_argument(
        "--wide", action="store_true", help="whole lines, however wide (piped output is never fitted)"
    )
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


def render_scan(inventory: Inventory, width: int | None = None) -> str:
    """The disks and arrays as tables fitted to ``width`` (None: whole lines), then the link findings and notes.

    Narrow, a disk's state is its first reason's kind ("md-member +1"), its link the short form ("Gen1 x4 ⚠"),
    and Model / serial, Type and Bus are left out (never cut: a cut serial names another disk); an array's
    members are cut with how many more. `--wide` or `--json` has everything."""
    disks = inventory.disks
    states = []
    for disk in disks:
        if disk.in_use:
            states.append("in use: " + "; ".join(str(r) for r in disk.in_use))
        elif disk.problems:
            states.append("unknown: " + "; ".join(disk.problems))
        else:
            states.append("free")

    def flagged(disk: Disk, text: str) -> str:
        return f"⚠ {text}" if disk.link and disk.link.downgraded else text

    disk_table = fit_columns(
        [
            Column("DISK", [disk.name for disk in disks]),
            Column("TRANSPORT", [disk.transport.value for disk in disks], drop=3),
            Column("SIZE", [iec_bytes(disk.size_bytes) for disk in disks], right=True),
            Column("TYPE", [disk.kind_label for disk in disks], drop=2),
            Column(
                "LINK",
                [flagged(disk, disk.link.describe()) if disk.link else "-" for disk in disks],
                short=[flagged(disk, disk.link.label()) if disk.link else "-" for disk in disks],
            ),
            Column(
                "MODEL / SERIAL",
                [ident_text(disk.model, disk.serial) for disk in disks],
                drop=1,
            ),
            # Cut, the reasons read down to about one (40 characters); narrower, the first reason's kind.
            Column("STATE", states, least=40, short=[disk.state_word for disk in disks]),
        ],
        width,
    )
    lines = list(disk_table.lines)
    left_out = list(disk_table.left_out)
    shortened = disk_table.cut
    for disk in disks:
        if disk.link is not None and disk.link.downgraded:
            lines += _wrapped(f"⚠ {disk.name}: {disk.link.finding()}", width)
    lines.append("")
    if inventory.arrays:
        arrays = inventory.arrays
        array_table = fit_columns(
            [
                Column("ARRAY", [array.name for array in arrays]),
                Column("LEVEL", [array.level or "-" for array in arrays]),
                Column("STATE", [array.state_text for array in arrays]),
                Column("SIZE", [iec_bytes(array.size_bytes) for array in arrays], right=True),
                Column(
                    "CHUNK", [iec_bytes(a.chunk_bytes) if a.chunk_bytes else "-" for a in arrays], right=True, drop=2
                ),
                Column("LAYOUT", [array.layout or "-" for array in arrays], drop=1),
                Column("MEMBERS", [_members(array) for array in arrays], least=len("sda sdb … +99"), cut=_cut_members),
            ],
            width,
        )
        lines += array_table.lines
        left_out += array_table.left_out
        shortened = shortened or array_table.cut
        for array in arrays:
            if array.sync is not None:
                sync = array.sync
                pct = f"{sync.fraction * 100:.1f}%" if sync.fraction is not None else sync.state
                lines += _wrapped(
                    f"{array.name}: {sync.action} {pct} at {rate_mb_s(sync.speed_bytes_per_s)}, "
                    f"ETA {duration(sync.eta_seconds)}",
                    width,
                )
    else:
        lines.append("No md arrays.")
    for note in inventory.notes:
        lines += _wrapped(f"note: {note}", width)
    if left_out or shortened:
        lines.append(fitted_note(width))
    return "\n".join(lines)


def _members(array: MdArray) -> str:
    return " ".join(m.name + ("(F)" if m.faulty else "(S)" if m.spare else "") for m in array.members)


def _cut_members(text: str, width: int) -> str:
    """Whole member names, then how many more: "sdb sdc sdd … +12"."""
    names = text.split()
    for keep in range(len(names), -1, -1):
        shown = " ".join(names[:keep]) + (f" … +{len(names) - keep}" if keep < len(names) else "")
        if len(shown) <= width:
            return shown
    return cut_end(text, width)


def _wrapped(line: str, width: int | None) -> list[str]:
    """A sentence under a table, wrapped to ``width`` with its continuation indented."""
    if width is None or len(line) <= width:
        return [line]
    return textwrap.wrap(line, width=width, subsequent_indent="  ", break_on_hyphens=False)


def cmd_scan(args: argparse.Namespace) -> int:
    from mdtui.keep.grow_resume import reshape_line, reshape_states

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
        print(render_scan(inventory, output_width(args)))
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
