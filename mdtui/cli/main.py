"""The `mdtui` command line: the parser of every verb, and the dispatch the entry point uses."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, cast

from mdtui.cli.common import run_verb
from mdtui.cli.launch import after_root, base_parser

# Each verb: its module, the function adding its parser (some add two verbs) and the function running it. A verb's
# module is imported only when that verb runs, or when the whole parser is wanted (help, completion, the man
# page): importing every verb's module costs ~2 s on a host and ~14 s in the lab's emulated guest, paid by
# every `mdtui` command before. The order is the order of the help and the man page.
VERBS: dict[str, tuple[str, str, str]] = {
    "scan": ("mdtui.cli.scan", "add_scan_parsers", "cmd_scan"),
    "capture": ("mdtui.cli.scan", "add_scan_parsers", "cmd_capture"),
    "create": ("mdtui.cli.create", "add_create_parsers", "cmd_create"),
    "destroy": ("mdtui.cli.create", "add_create_parsers", "cmd_destroy"),
    "results": ("mdtui.cli.results", "add_results_parser", "run_results"),
    "watch": ("mdtui.cli.watch", "add_watch_parser", "run_watch"),
    "advise": ("mdtui.cli.advise", "add_advise_parser", "run_advise"),
    "bench": ("mdtui.cli.bench", "add_bench_parser", "run_bench_cli"),
    "experiment": ("mdtui.cli.experiment", "add_experiment_parser", "run_experiment"),
    "persist": ("mdtui.cli.keep", "add_keep_parsers", "cmd_persist"),
    "repair": ("mdtui.cli.keep", "add_repair_parsers", "cmd_repair"),
    "locate": ("mdtui.cli.keep", "add_repair_parsers", "cmd_locate"),
    "scrub": ("mdtui.cli.keep", "add_repair_parsers", "cmd_scrub"),
    "grow": ("mdtui.cli.grow", "add_grow_parser", "cmd_grow"),
    "tune": ("mdtui.cli.tune", "add_tune_parser", "cmd_tune"),
    "safety": ("mdtui.cli.safety", "add_safety_parser", "cmd_safety"),
    "predict": ("mdtui.cli.predict", "add_predict_parser", "cmd_predict"),
    "calibrate": ("mdtui.cli.calibrate", "add_calibrate_parser", "cmd_calibrate"),
    "doctor": ("mdtui.cli.doctor", "add_doctor_parser", "cmd_doctor"),
    "metrics": ("mdtui.cli.metrics", "add_metrics_parser", "cmd_metrics"),
    "alerts": ("mdtui.cli.alerts", "add_alerts_parser", "cmd_alerts"),
    "scrub-schedule": ("mdtui.cli.schedule", "add_schedule_parser", "cmd_schedule"),
}
# Every verb mdtui has (the man page test walks them).
COMMANDS = tuple(VERBS)


class OneLineErrorParser(argparse.ArgumentParser):
    """A parser whose argument errors are one line and a hint, not the whole usage before the one useful line."""

    def error(self, message: str) -> NoReturn:
        exit_with_hint(self, message)


def exit_with_hint(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Print `mdtui: error: ...` and where the usage is, then exit 2 as argparse does."""
    words = parser.prog.split()
    sys.stderr.write(f"mdtui: error: {message}\n  see {' '.join(words)} --help\n")
    sys.exit(2)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every verb; given the command line, only what it needs (see VERBS)."""
    parser = base_parser()
    # The top-level parser is made in cli.launch (the app's quick path shares it); its errors
    # (`mdtui --bogus`) get the same one line as the verbs'.
    parser.error = lambda message: exit_with_hint(parser, message)  # type: ignore[method-assign]
    verb = None if argv is None else verb_of(argv)
    if argv is not None and verb is None and list(argv)[:1] == ["--version"]:
        return parser  # prints the version and exits: no verb is needed
    # Every verb's parser is a OneLineErrorParser; the add_*_parser functions only need an ArgumentParser's API.
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineErrorParser),
    )
    adders = [VERBS[verb][:2]] if verb is not None else list(dict.fromkeys(spec[:2] for spec in VERBS.values()))
    for module, adder in adders:
        getattr(importlib.import_module(module), adder)(sub)
    return parser


def verb_of(argv: Sequence[str]) -> str | None:
    """The verb a command line runs (after the top-level --root), or None when it names none mdtui has."""
    words = after_root(argv)
    return words[0] if words and words[0] in VERBS else None


def run_cli(args: argparse.Namespace) -> int:
    module, _adder, runner = VERBS[args.command]
    verb: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), runner)
    return run_verb(verb, args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one CLI command (the app itself starts from mdtui.__main__)."""
    args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 0
    return run_cli(args)
