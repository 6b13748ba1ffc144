"""What the verbs share: finding a disk from what the user typed, typed confirmation, errors as one line,
and the signals that stop a running job."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mdtui import jsondoc
from mdtui.confirmation import confirms, mismatch_line
from mdtui.errors import MdtuiError
from mdtui.execute.leftovers import leftovers_at_start
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot, require_live
from mdtui.text import clean_text
from mdtui.tune.journal import knobs_at_start
from mdtui.tune.safety_journal import safety_at_start


def find_disk(inventory: Inventory, text: str, root: str) -> Disk:
    name = text.rsplit("/", 1)[-1] if text.startswith("/dev/") and "/by-" not in text else text
    disk = inventory.disk(name)
    if disk is None and text.startswith("/"):
        target = SystemRoot(root).resolve(text)
        disk = inventory.disk(target.name) if target is not None else None
    if disk is None:
        known = ", ".join(d.name for d in inventory.disks) or "none"
        raise MdtuiError(f"no disk {text!r} found (disks: {known})")
    return disk


def confirm(args: argparse.Namespace, what: str, token: str) -> str | None:
    """Ask for ``token`` (a plan's ``confirmation``) before ``what``: the confirmation to hand the core function
    that acts (which checks it again, mdtui.confirmation), or None when the user typed something else.

    ``--yes`` stands for typing the token; without a terminal and without --yes it refuses in one line.
    """
    if args.yes:
        return token
    if not sys.stdin.isatty():
        raise MdtuiError(f"refusing to {what} without confirmation: pass --yes, or run it at a terminal")
    answer = input(f"This will {what}. Type {token} to go ahead: ")
    if confirms(answer, token):
        return answer.strip()
    print(f"mdtui: {mismatch_line(answer, token)}", file=sys.stderr)
    return None


def output_width(args: argparse.Namespace) -> int | None:
    """The width a table is fitted to, as `ls` and `ps` decide it: $COLUMNS when set, else the terminal's width
    when standard output is one; None (whole lines) with --wide or when the output goes to a pipe or a file."""
    if getattr(args, "wide", False):
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isascii() and columns.isdigit() and 20 <= int(columns) <= 10_000:
        return int(columns)
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def md_device(text: str) -> str:
    """An array as the user named it, as a device path: "md0" → "/dev/md0" (a path stays as it is)."""
    return text if text.startswith("/dev/") else f"/dev/{text}"


def print_leftovers(args: argparse.Namespace) -> None:
    """A line on stderr per array a killed experiment left behind (not the one `destroy` is removing)."""
    removing = getattr(args, "device", None) if getattr(args, "command", None) == "destroy" else None
    removing = md_device(removing) if removing is not None else None
    for leftover in leftovers_at_start(getattr(args, "root", "/")):
        if leftover.entry.device != removing:
            print(f"mdtui: {leftover.notice}", file=sys.stderr)


def live_action(args: argparse.Namespace) -> str | None:
    """What the verb in ``args`` would do to the live system, or None when it only reads, plans or stores.

    With ``--root DIR`` such a verb is refused before anything runs (probe.root.require_live): its plan
    would come from the captured tree while mdadm, fio, wipefs or a knob write act on this machine.
    """
    command = getattr(args, "command", None)
    dry_run = getattr(args, "dry_run", False)
    if command in ("create", "destroy", "repair") and not dry_run:
        what = {"create": "creating an array", "destroy": "stopping and wiping an array"}.get(
            command, "changing an array's members"
        )
        return f"{what} (--dry-run plans it from the tree)"
    if command == "grow" and not dry_run:
        return "growing an array (mdadm --grow; --dry-run plans it from the tree)"
    if command == "persist" and not dry_run:
        # Its dry run plans from the tree's own record of the array (keep.persist.tree_brief), not the live mdadm.
        return "persisting an array (mdadm.conf, update-initramfs; --dry-run plans it from the tree)"
    if command == "scrub" and getattr(args, "device", None) and not dry_run:
        return "starting a scrub (--dry-run plans it from the tree)"
    # tune --apply/--remove show their udev rule diff from the tree first, then refuse (cli.tune).
    if command == "experiment":
        return "running an experiment (fio on live devices; some create and destroy arrays)"
    if command == "bench" and not getattr(args, "list", False):
        return "running a benchmark (fio or dd opens the live device or file)"
    return None


def run_verb(verb: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run one verb: an MdtuiError is one line on stderr and exit 2, a closed pipe is a quiet 0.

    A verb that would act on the live system is refused first when ``--root`` names a captured tree.
    Every verb then puts back the knobs a killed knob sweep left changed (mdtui.tune.journal) and names
    the arrays a killed experiment left behind (mdtui.execute.leftovers).
    """
    try:
        action = live_action(args)
        if action is not None:
            require_live(getattr(args, "root", "/"), action)
        for line in knobs_at_start(getattr(args, "root", "/")):
            print(f"mdtui: {line}", file=sys.stderr)
        for line in safety_at_start(getattr(args, "root", "/")):
            print(f"mdtui: {line}", file=sys.stderr)
        print_leftovers(args)
        return verb(args)
    except MdtuiError as exc:
        # A message may quote a device's strings, a file's text or another program's output.
        print(f"mdtui: {clean_text(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


# Signals that stop a running benchmark or experiment as Ctrl-C does: the job is stopped, its figures so
# far kept and the stored run marked cancelled, a sweep's temporary array torn down. SIGHUP is what a
# dropped SSH session sends, SIGTERM what `kill` and shutdown send.
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stop_signals() -> tuple[signal.Signals, ...]:
    """STOP_SIGNALS but those the process was started ignoring (nohup ignores SIGHUP, `cmd &` SIGINT)."""
    return tuple(sig for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN)


def stop_reason(sig: signal.Signals) -> str:
    """How a stop signal is named to the user and in a stored run's error."""
    if sig is signal.SIGINT:
        return "Ctrl-C"
    if sig is signal.SIGHUP:
        return "SIGHUP: the terminal went away"
    return sig.name


@contextlib.contextmanager
def signals_restored() -> Iterator[None]:
    """The stop signals' dispositions as they were once the verb returns (for in-process callers, tests).

    Inside, a verb that was stopped may ignore a late SIGHUP or SIGTERM (ignore_late_signals): the second
    SIGHUP of a dropped session must not kill it while it prints what it stored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)


class StoppedBySignal(Exception):
    """A stop signal (SIGTERM, SIGHUP) turned into an exception, so ``with`` blocks undo what they did."""

    def __init__(self, sig: signal.Signals) -> None:
        super().__init__(stop_reason(sig))
        self.signal = sig


@contextlib.contextmanager
def stops_raise() -> Iterator[None]:
    """Inside, SIGTERM and SIGHUP raise StoppedBySignal (Ctrl-C raises KeyboardInterrupt as always): a boost's
    knobs are put back by its block instead of dying with the process."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise StoppedBySignal(signal.Signals(signum))

    previous = {sig: signal.signal(sig, stop) for sig in stop_signals() if sig is not signal.SIGINT}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def ignore_late_signals() -> None:
    """After a stop, ignore SIGHUP and SIGTERM for the rest of the verb (within signals_restored)."""
    if threading.current_thread() is threading.main_thread():
        for sig in stop_signals():
            if sig is not signal.SIGINT:
                signal.signal(sig, signal.SIG_IGN)


def signal_exit_code(sig: signal.Signals) -> int:
    """128 + the signal, as a shell reports a command a signal stopped: 130 Ctrl-C, 129 SIGHUP, 143 SIGTERM."""
    return 128 + int(sig)


class Terminal:
    """Which of stdout and stderr were terminals at the start; after a hang-up they point at /dev/null.

    A hung-up terminal fails every write with EIO (and no longer says it is a terminal), so a process
    that keeps running to stop its jobs and store their figures would die on its next progress line.
    """

    def __init__(self) -> None:
        self.fds = tuple(fd for fd in (1, 2) if _isatty(fd))

    def hang_up(self) -> None:
        if not self.fds:
            return
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            for fd in self.fds:
                os.dup2(null, fd)
        finally:
            os.close(null)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


# The first free /dev/mdN is searched up to here; md's own limit is far higher, a host this full is not.
MAX_MD_MINOR = 1 << 16


def first_free_md(inventory: Inventory) -> str:
    """/dev/mdN for the lowest N no running array uses; a one-line error when all up to the bound are taken."""
    taken = {array.name for array in inventory.arrays}
    free = next((n for n in range(MAX_MD_MINOR) if f"md{n}" not in taken), None)
    if free is None:
        raise MdtuiError(f"every /dev/mdN up to md{MAX_MD_MINOR - 1} is taken; name a device with --device")
    return f"/dev/md{free}"


def show_plan(args: argparse.Namespace, lines: Sequence[str], report: dict[str, Any]) -> bool:
    """Print a plan's lines (with --json they stay out of stdout); True when --dry-run ends the verb here, after
    printing the report as JSON if asked."""
    if not args.json:
        print("\n".join(lines))
    if args.dry_run:
        if args.json:
            print_json(report)
        return True
    return False


def print_json(document: dict[str, Any], *, compact: bool = False, default: Callable[[Any], Any] | None = None) -> None:
    """A verb's --json document on stdout, with the schema version every verb's JSON carries (mdtui.jsondoc)."""
    print(jsondoc.dumps(document, compact=compact, default=default), flush=compact)
