"""What the inventory's actions on an array share: the core called off the UI thread (a refusal or a failure shown in
words, never a traceback), a plan shown or typed through, and on a captured tree the plan only, as the CLI's
--dry-run prints it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.message import Message
from textual.widget import Widget

from mdtui.errors import MdtuiError
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.live import read_only_tree
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.common.render import Palette

T = TypeVar("T")


def plan_body(lines: list[str], palette: Palette, intro: str | None = None) -> RenderableType:
    """A plan as the CLI prints it, diff lines coloured and marked (+/-) so they read without colour too."""
    parts: list[RenderableType] = []
    if intro:
        parts.append(Text(intro, style=palette.muted))
    for line in lines:
        body = line.lstrip()
        style = ""
        if body.startswith("+") and not body.startswith("+++"):
            style = palette.good
        elif body.startswith("-") and not body.startswith("---"):
            style = palette.error
        elif body.startswith("⚠"):
            style = palette.warning
        parts.append(Text(line, style=style))
    return Group(*parts)


class BackgroundEnded(Message, bubble=False):
    """A worker of Lifecycle.background ended: what to show or do next, run here on the UI thread."""

    def __init__(self, then: Callable[[], None], doing: str = "") -> None:
        super().__init__()
        self.then = then
        self.doing = doing


class ActionRunner(Widget):
    """Runs an action's core calls in thread workers and shows what comes back: a plan to type through, a refusal,
    a failure; ``done`` runs after anything changed, to scan again. Shown only through its dialogs."""

    def __init__(self, root: str, palette: Callable[[], Palette], done: Callable[[], None]) -> None:
        super().__init__()
        self.root = root
        self._palette = palette
        self._done = done

    @property
    def system(self) -> SystemRoot:
        return SystemRoot(self.root)

    # -- running the core off the UI thread --------------------------------------------------------------

    # Not exclusive: a new plan must not mark an initramfs refresh or a repair still running as cancelled.
    @work(thread=True, exit_on_error=False, group="lifecycle")
    def background(self, doing: str, call: Callable[[], T], then: Callable[[T], None]) -> None:
        """Thread worker: ``call`` (a plan, or a confirmed change), then ``then`` with its result on the UI thread;
        a refusal or failure is shown in words, never as a traceback."""
        from mdtui.plan.rejected import PlanRejected

        try:
            result = call()
        except PlanRejected as rejected:
            # Bound now: the name of an except clause is gone once the clause ends.
            subject, problems = rejected.subject, rejected.problems
            self.post_message(BackgroundEnded(lambda: self.refused(subject, problems), doing))
            return
        except Exception as exc:
            if not isinstance(exc, MdtuiError):
                self.log.error(f"{doing} failed", exc)
            failure = exc
            self.post_message(BackgroundEnded(lambda: self.failed(doing, failure), doing))
            return
        self.post_message(BackgroundEnded(lambda: then(result), doing))

    @on(BackgroundEnded)
    def _background_ended(self, message: BackgroundEnded) -> None:
        try:
            message.then()
        except Exception as exc:  # what follows the work failing is a notification too, never a traceback
            self.log.error(f"after {message.doing}", exc)
            self.failed(message.doing, exc)

    def refused(self, subject: str, problems: list[str]) -> None:
        from mdtui.ui.dialogs.detail import DetailScreen

        body = Text(f"mdtui will not {subject}:\n\n", style="bold")
        for problem in problems:
            body.append(f"• {problem}\n", style=self._palette().error)
        self.app.push_screen(DetailScreen("Refused", body))

    def failed(self, doing: str, exc: BaseException) -> None:
        sentence = doing[:1].upper() + doing[1:]  # capitalize() would lower-case the rest (MAILADDR, a path)
        self.notify(failure_reason(sentence, exc), title=f"{sentence} failed", severity="error", timeout=15)

    def confirm(self, title: str, body: RenderableType, phrase: str, label: str, then: Callable[[str], None]) -> None:
        """Ask for ``phrase`` (the plan's confirmation); ``then`` gets what was typed, for the core to check."""
        from mdtui.ui.dialogs.confirm import ConfirmScreen

        def answered(typed: str | None) -> None:
            if typed:
                then(typed)

        self.app.push_screen(ConfirmScreen(title, body, phrase, label), answered)

    def show(self, title: str, lines: list[str]) -> None:
        from mdtui.ui.dialogs.detail import DetailScreen

        self.app.push_screen(DetailScreen(title, plan_body(lines, self._palette())))

    @property
    def dry_run(self) -> bool:
        """A captured tree: show the plan, run nothing (the CLI's --dry-run on the same tree prints the same)."""
        return read_only_tree(self.screen, self.root)

    def show_plan(self, title: str, lines: list[str], command: str) -> None:
        """The plan on a captured tree, with what runs it on the live host."""
        intro = f"A captured tree is read-only: this is the plan, as `{command} --dry-run` prints it. Nothing runs."
        from mdtui.ui.dialogs.detail import DetailScreen

        self.app.push_screen(DetailScreen(f"{title} (the plan)", plan_body(lines, self._palette(), intro)))
