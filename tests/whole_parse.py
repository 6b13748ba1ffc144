"""Whole-text readings built from the streaming parsers, the reference their streamed use is held to."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mdtui.execute.dd import DdStreamParser, DdSummary
from mdtui.execute.fio import FioProgressTracker
from mdtui.model.job import Progress


@dataclass(frozen=True)
class DdOutput:
    """Everything read from one dd run's stderr."""

    progress: tuple[Progress, ...]
    summary: DdSummary | None
    errors: tuple[str, ...]  # "dd: ..." lines


def parse_dd_stderr(text: str) -> DdOutput:
    """A whole captured dd stderr, fed to the stream parser in one piece."""
    parser = DdStreamParser()
    parser.feed(text)
    parser.close()
    return DdOutput(tuple(parser.progress), parser.summary, tuple(parser.errors))


def progress_series(documents: Iterable[Mapping[str, Any]]) -> Iterator[Progress]:
    """The Progress of each fio status document in turn, as the runner reports them live."""
    tracker = FioProgressTracker()
    for document in documents:
        yield tracker.update(document)
