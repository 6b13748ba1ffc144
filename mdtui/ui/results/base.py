"""What the history and compare screens share: the database, messages, the error banner and the export worker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.message import Message
from textual.widgets import Static

from mdtui.output_file import write_text
from mdtui.store.compare import Comparison
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.common.render import Palette, app_palette
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.results.dialogs import (
    FORMAT_NAMES,
    ExportRequest,
    ExportScreen,
    prepare_export_dir,
)

# The UI waits less than the CLI for a lock: a screen that hangs for seconds looks broken.
BUSY_TIMEOUT_S = 2.0


def open_store(path: Path, busy_timeout_s: float) -> ResultsStore:
    """The results database for reading and editing; never created by looking at it."""
    return ResultsStore(path, create=False, busy_timeout_s=busy_timeout_s)


def export_stem(kind: str, ids: Sequence[int]) -> str:
    """A default file name that says what is in it: mdtui-runs-3-5-7, or mdtui-runs-1-to-12 for many."""
    ordered = sorted(ids)
    if len(ordered) > 4:
        return f"mdtui-{kind}-{ordered[0]}-to-{ordered[-1]}"
    return f"mdtui-{kind}-" + "-".join(str(run_id) for run_id in ordered)


def write_export(path: Path, text: str, db_path: Path) -> None:
    """Write an export the dialog confirmed (a second Enter replaces a file); never onto the database.

    A link at ``path`` is replaced by the file, never followed: what it points to is left as it was.
    """
    prepare_export_dir(path)
    write_text(path, text, replace=True, protected=(db_path,))


class RunsLoaded(Message, bubble=False):
    """The stored runs, newest first (``missing``: there is no database yet). Replaces a stale load."""

    def __init__(self, runs: tuple[RunRecord, ...], *, missing: bool = False, done: str = "") -> None:
        super().__init__()
        self.runs = runs
        self.missing = missing
        self.done = done  # what a change just did, for a notification

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, (RunsLoaded, StoreFailed)) and not (isinstance(message, RunsLoaded) and message.done)


class StoreFailed(Message, bubble=False):
    """The database could not be read or changed; ``reason`` is a sentence for the user, never a traceback."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class RunShown(Message, bubble=False):
    def __init__(self, run: RunRecord) -> None:
        super().__init__()
        self.run = run


class ComparisonReady(Message, bubble=False):
    def __init__(self, comparison: Comparison) -> None:
        super().__init__()
        self.comparison = comparison


class ExportWritten(Message, bubble=False):
    def __init__(self, path: Path, what: str) -> None:
        super().__init__()
        self.path = path
        self.what = what


class ResultsBase(MdtuiScreen[None]):
    """The database path, the error banner and the export worker that history and compare share."""

    def __init__(self, db_path: Path) -> None:
        super().__init__()
        self.db_path = db_path
        self.busy_timeout_s = BUSY_TIMEOUT_S
        self.error: str | None = None
        self.last_export: Path | None = None

    def palette(self) -> Palette:
        return app_palette(self.app)

    def show_error(self, reason: str | None) -> None:
        self.error = reason
        banner = self.query_one(".results-banner", Static)
        sentence = reason if not reason or reason.endswith((".", "!", "?")) else f"{reason}."
        banner.update(Text(f"✖ {sentence} Press r to retry." if reason else ""))
        banner.set_class(bool(reason), "-shown")

    def ask_export(self, title: str, stem: str, render: Callable[[str], str], what: str) -> None:
        """Ask for a format and file, then write ``render(fmt)`` there in a worker."""

        def chosen(request: ExportRequest | None) -> None:
            if request is not None:
                self.run_export(request, render, what)

        self.app.push_screen(ExportScreen(title, stem), chosen)

    @work(thread=True, exit_on_error=False, group="results-export")
    def run_export(self, request: ExportRequest, render: Callable[[str], str], what: str) -> None:
        """Thread worker: build the text (which may read the database) and write the file."""
        try:
            write_export(request.path, render(request.fmt), self.db_path)
        except Exception as exc:  # a failed export is a message, never a traceback
            self.post_message(StoreFailed(failure_reason(f"Exporting to {request.path}", exc)))
            return
        self.post_message(ExportWritten(request.path, f"{what} as {FORMAT_NAMES[request.fmt]}"))

    @on(ExportWritten)
    def _exported(self, message: ExportWritten) -> None:
        self.last_export = message.path
        self.notify(f"Wrote {message.what} to {message.path}", title="Exported", timeout=10)
        self.exported(message)

    def exported(self, message: ExportWritten) -> None:
        """Where a screen shows the written file besides the notification."""

    @on(StoreFailed)
    def _store_failed(self, message: StoreFailed) -> None:
        self.show_error(message.reason)
        self.store_failed()

    def store_failed(self) -> None:
        """What a screen redraws after an error."""
