"""The `mdtui` command line: the parser of every verb, and the dispatch the entry point uses."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn, cast

from mdtui.cli.advise import add_advise_parser, run_advise
from mdtui.cli.alerts import add_alerts_parser, cmd_alerts
from mdtui.cli.bench import add_bench_parser, run_bench_cli
from mdtui.cli.calibrate import add_calibrate_parser, cmd_calibrate
from mdtui.cli.common import run_verb
from mdtui.cli.create import add_create_parsers, cmd_create, cmd_destroy
from mdtui.cli.doctor import add_doctor_parser, cmd_doctor
from mdtui.cli.experiment import add_experiment_parser, run_experiment
from mdtui.cli.keep import add_keep_parsers, add_repair_parsers, cmd_persist, cmd_repair, cmd_scrub
from mdtui.cli.launch import base_parser
from mdtui.cli.metrics import add_metrics_parser, cmd_metrics
from mdtui.cli.predict import add_predict_parser, cmd_predict
from mdtui.cli.results import add_results_parser, run_results
from mdtui.cli.scan import add_scan_parsers, cmd_capture, cmd_scan
from mdtui.cli.schedule import add_schedule_parser, cmd_schedule
from mdtui.cli.tune import add_tune_parser, cmd_tune
from mdtui.cli.watch import add_watch_parser, run_watch


class OneLineErrorParser(argparse.ArgumentParser):
    """A parser whose argument errors are one line and a hint, not the whole usage before the one useful line."""

    def error(self, message: str) -> NoReturn:
        exit_with_hint(self, message)


def exit_with_hint(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Print `mdtui: error: ...` and where the usage is, then exit 2 as argparse does."""
    words = parser.prog.split()
    sys.stderr.write(f"mdtui: error: {message}\n  see {' '.join(words)} --help\n")
    sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = base_parser()
    # The top-level parser is made in cli.launch (the app's quick path shares it); its errors
    # (`mdtui --bogus`) get the same one line as the verbs'.
    parser.error = lambda message: exit_with_hint(parser, message)  # type: ignore[method-assign]
    # Every verb's parser is a OneLineErrorParser; the add_*_parser functions only need an ArgumentParser's API.
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineErrorParser),
    )
    add_scan_parsers(sub)
    add_create_parsers(sub)
    add_results_parser(sub)
    add_watch_parser(sub)
    add_advise_parser(sub)
    add_bench_parser(sub)
    add_experiment_parser(sub)
    add_keep_parsers(sub)
    add_repair_parsers(sub)
    add_tune_parser(sub)
    add_predict_parser(sub)
    add_calibrate_parser(sub)
    add_doctor_parser(sub)
    add_metrics_parser(sub)
    add_alerts_parser(sub)
    add_schedule_parser(sub)
    return parser


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
    "persist": cmd_persist,
    "repair": cmd_repair,
    "scrub": cmd_scrub,
    "tune": cmd_tune,
    "predict": cmd_predict,
    "calibrate": cmd_calibrate,
    "doctor": cmd_doctor,
    "metrics": cmd_metrics,
    "alerts": cmd_alerts,
    "scrub-schedule": cmd_schedule,
}


def run_cli(args: argparse.Namespace) -> int:
    return run_verb(COMMANDS[args.command], args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one CLI command (the app itself starts from mdtui.__main__)."""
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 0
    return run_cli(args)
