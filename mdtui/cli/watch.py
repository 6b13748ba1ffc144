"""`mdtui watch`: live device, CPU and md rates; --json streams snapshots for scripts (the dashboard is the app's)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from typing import TextIO

from mdtui import jsondoc
from mdtui.errors import MdtuiError
from mdtui.model.snapshot import Snapshot
from mdtui.probe.arrays import read_arrays
from mdtui.probe.root import SystemRoot
from mdtui.sample.export import to_json
from mdtui.sample.sampler import DEFAULT_INTERVAL_S, Sampler, check_interval


class WatchTargetError(MdtuiError):
    """The array named on the command line is not one the kernel has."""


@dataclass(frozen=True)
class WatchRequest:
    """A checked `mdtui watch` command line, shared by the JSON stream and the dashboard."""

    root: str
    array: str | None  # kernel name ("md0"); None: the dashboard picks, the stream shows everything
    interval: float
    members: tuple[str, ...] = ()  # the array's member devices when one was named


def add_watch_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "watch",
        help="live dashboard of an array: throughput, IOPS, member load, CPU frequency, md threads",
        description=(
            "Show an md array live (its throughput and IOPS, each member's load, CPU frequency and "
            "governor, md kernel-thread CPU, resync state). With --json, print one JSON snapshot per "
            "interval instead, for scripts."
        ),
    )
    parser.add_argument("array", nargs="?", metavar="ARRAY", help="md array to watch (md0 or /dev/md0)")
    parser.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL_S,
        metavar="S",
        help=f"seconds between samples (default {DEFAULT_INTERVAL_S:g}; 0.25 for short runs)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per sample (JSON lines)")
    parser.add_argument("--count", type=int, metavar="N", help="with --json: stop after N samples")


def check_watch_args(args: argparse.Namespace) -> WatchRequest:
    """Validate what both front ends need before they start: the interval and that ARRAY exists."""
    interval = check_interval(args.interval)
    if args.count is not None and args.count <= 0:
        raise MdtuiError(f"--count must be a positive number of samples, not {args.count}")
    if args.count is not None and not args.json:
        raise MdtuiError("--count goes with --json; the dashboard runs until you quit it")
    if args.array is None:
        return WatchRequest(args.root, None, interval)
    name = args.array.removeprefix("/dev/")
    arrays = read_arrays(SystemRoot(args.root))
    array = next((a for a in arrays if a.name == name), None)
    if array is None:
        known = ", ".join(a.name for a in arrays) or "none"
        raise WatchTargetError(f"no md array {name!r} (arrays: {known})")
    return WatchRequest(args.root, name, interval, tuple(m.name for m in array.members))


def only_array(snapshot: Snapshot, request: WatchRequest) -> Snapshot:
    """The snapshot cut down to the named array: its device, its members, its md threads."""
    if request.array is None:
        return snapshot
    wanted = {request.array, *request.members}
    return dataclasses.replace(
        snapshot,
        devices=tuple(d for d in snapshot.devices if d.name in wanted),
        arrays=tuple(a for a in snapshot.arrays if a.name == request.array),
        md_threads=tuple(t for t in snapshot.md_threads if t.array == request.array),
    )


def stream_json(request: WatchRequest, count: int | None, out: TextIO) -> int:
    """Print count JSON lines (forever when None), each with rates over the interval before it.

    The sampler's first reading has nothing to difference against, so it is taken silently: every
    line printed carries rates, and the first comes one interval after the start.
    """
    devices = (request.array, *request.members) if request.array is not None else None
    with Sampler(SystemRoot(request.root), devices) as sampler:
        samples = sampler.iterate(request.interval, count + 1 if count is not None else None)
        next(samples)
        for snapshot in samples:
            out.write(jsondoc.dumps(to_json(only_array(snapshot, request)), compact=True) + "\n")
            out.flush()
    return 0


def run_watch(args: argparse.Namespace) -> int:
    request = check_watch_args(args)
    if not args.json:
        # The dashboard lives in the app (python -m mdtui watch dispatches there); the core CLI never loads it.
        raise MdtuiError("the watch dashboard runs from the app: use `mdtui watch` (or add --json here)")
    try:
        return stream_json(request, args.count, sys.stdout)
    except KeyboardInterrupt:
        return 130
