"""Boot a lab machine and run commands in it, for developers.

    .venv/bin/python -m tests.lab.shell -- lsblk -o NAME,TRAN,SERIAL,ROTA
    .venv/bin/python -m tests.lab.shell --machine tiny -- cat /proc/mdstat
    .venv/bin/python -m tests.lab.shell            # a line-by-line prompt (each line runs in sh -c)

Run it from the checkout's top directory. ``--keep`` leaves the work directory (console.log,
qemu.argv, disk images, out/) behind for a look.
"""

from __future__ import annotations

import argparse
import sys
import time

from .harness import CommandTimeout, Guest, LabError, boot, lab_problem
from .machines import STANDARD, TINY

MACHINES = {"standard": STANDARD, "tiny": TINY}


def _show(guest: Guest, argv: list[str], timeout: float) -> int:
    try:
        result = guest.run(argv, timeout=timeout, check=False)
    except CommandTimeout as exc:
        print(exc, file=sys.stderr)
        return 124
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    print(f"[rc={result.rc} in {result.duration:.2f}s]", file=sys.stderr)
    return result.rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.lab.shell", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--machine", choices=sorted(MACHINES), default="standard")
    parser.add_argument("--timeout", type=float, default=300.0, help="per-command timeout (s)")
    parser.add_argument("--boot-timeout", type=float, default=180.0)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="command to run (after --)")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    problem = lab_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        guest = boot(MACHINES[args.machine], boot_timeout=args.boot_timeout, keep=args.keep)
    except LabError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"[booted {args.machine} in {guest.boot_seconds:.1f}s; work dir {guest.paths.workdir}]", file=sys.stderr)
    try:
        if command:
            rc = _show(guest, command, args.timeout)
            print(f"[boot-to-result {time.monotonic() - started:.1f}s]", file=sys.stderr)
            return rc
        while True:
            try:
                line = input("lab# ")
            except EOFError:
                return 0
            if line.strip():
                _show(guest, ["/bin/sh", "-c", line], args.timeout)
    except LabError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        guest.close()


if __name__ == "__main__":
    sys.exit(main())
