"""What every `mdtui experiment` needs (root, store, runner, output), shared by the experiment and tune CLIs."""

from __future__ import annotations

import argparse
from typing import TextIO

from mdtui.advise import experiments as ex
from mdtui.advise.runner import BenchRunner
from mdtui.bench.background import Stop
from mdtui.cli.bench import ProgressPrinter
from mdtui.cli.common import confirm
from mdtui.errors import MdtuiError
from mdtui.execute import mdadm
from mdtui.probe.root import SystemRoot
from mdtui.store.runs import ResultsStore


class Declined(MdtuiError):
    """The user typed something other than the device at the confirmation prompt."""


class ExperimentContext:
    """What every experiment needs: root, store, runner (writes allowed only after confirmation), output."""

    def __init__(
        self, root: SystemRoot, store: ResultsStore, out: TextIO, cancel: Stop, *, fixed_time: bool = False
    ) -> None:
        self.root = root
        self.fixed_time = fixed_time
        self.store = store
        self.out = out
        self.cancel = cancel
        self.printer = ProgressPrinter(out, live=out.isatty())
        self.runner = self.allow()
        # Looked up now, not at import, so a test's stand-in for mdadm is the one that runs.
        self.tools = ex.ArrayTools(root=root, create=mdadm.execute_create, destroy=mdadm.execute_destroy)

    def say(self, text: str) -> None:
        self.printer.say(text)

    def allow(self, *devices: str) -> BenchRunner:
        """The runner, allowed to write only to ``devices``: call it after the user confirmed exactly those."""
        self.runner = BenchRunner(
            self.store,
            self.root,
            allow_writes_to=devices,
            cancel=self.cancel,
            on_event=self.printer,
            fixed_time=self.fixed_time,
        )
        return self.runner

    def confirm(self, args: argparse.Namespace, what: str, token: str) -> str:
        """What the user confirmed ``what`` with (``token``); Declined when they typed something else."""
        confirmed = confirm(args, what, token)
        if confirmed is None:
            raise Declined("Cancelled; nothing was run.")
        return confirmed


__all__ = ["Declined", "ExperimentContext"]
