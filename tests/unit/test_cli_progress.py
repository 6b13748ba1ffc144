"""The CLI's progress printers: what they write, and that a hung-up terminal gets no more writes."""

from __future__ import annotations

import io

import pytest

from mdtui.cli.bench import ProgressPrinter
from mdtui.cli.fleet import FleetPrinter
from mdtui.cli.progress import LinePrinter
from mdtui.fleet.session import HostStepFinished, HostStepStarted
from mdtui.model.job import JobStatus
from mdtui.store.records import Metrics


class HungUp(io.StringIO):
    """A terminal after a hang-up: every write fails with EIO. Counts the attempts."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    def write(self, text: str) -> int:
        self.attempts += 1
        raise OSError(5, "Input/output error")


def started(host: str) -> HostStepStarted:
    return HostStepStarted(host, 0, 2, "seq read", 10.0, None)


def finished(host: str) -> HostStepFinished:
    metrics = Metrics(read_bw_bytes_per_s=2e8, read_iops=50.0)
    return HostStepFinished(host, 0, 2, "seq read", JobStatus.COMPLETE, metrics, 1.0, 1)


@pytest.mark.parametrize("make", [lambda out: FleetPrinter(out, live=True), lambda out: ProgressPrinter(out, True)])
def test_a_hung_up_terminal_is_written_once(make: object) -> None:
    out = HungUp()
    printer = make(out)  # type: ignore[operator]
    printer.say("first")
    printer.say("second")
    printer.live_line("status")
    assert out.attempts == 1


def test_the_fleet_printer_stops_writing_after_a_hang_up() -> None:
    out = HungUp()
    printer = FleetPrinter(out, live=True)
    printer(started("a"))
    printer.tick()
    printer(finished("a"))
    assert out.attempts == 1


def test_the_fleet_printer_clears_its_status_line_before_a_line_that_stays() -> None:
    out = io.StringIO()
    printer = FleetPrinter(out, live=True)
    printer(started("a"))
    printer.tick()
    printer(finished("a"))
    text = out.getvalue()
    assert text.startswith("[a] [1/2] seq read started\n\r\x1b[Ka seq read ")
    assert text.endswith("\r\x1b[K[a] [1/2] seq read: 200 MB/s, 50 IOPS\n")


def test_no_status_line_off_a_terminal() -> None:
    out = io.StringIO()
    printer = LinePrinter(out, live=False)
    printer.live_line("status")
    printer.say("stays")
    assert out.getvalue() == "stays\n"
