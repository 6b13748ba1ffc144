"""The base of mdtui's full screens: the footer starts with `? Help`, `q Quit` and the command palette's
key (`^p Palette`); a running job (a benchmark, a sweep) is never ended by Escape or q without a question.

A screen adopts it in its class line, naming the worker groups that are its job, the job in words, and
the action that stops it (else its job's workers are cancelled)::

    class BenchScreen(MdtuiScreen[None], job_groups=("bench",), job_name="a benchmark", job_stop="cancel_run"):
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Static
from textual.worker import Worker, WorkerState

ResultT = TypeVar("ResultT")

# The footer's first keys on every screen, in this order: at 80 columns the screen's own keys are cut, not these.
# (q is the guard's own while a job runs.)
FIRST_ACTIONS = ("help", "quit", "leave_job('q')", "command_palette")

STOP, BACKGROUND, STAY = "stop", "background", "stay"


class JobQuestion(ModalScreen[str]):
    """ "a benchmark is running: stop it / keep it running in the background / stay"."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "stay", "Stay")]

    def __init__(self, job_name: str, *, quitting: bool) -> None:
        super().__init__()
        self.job_name = job_name
        self.quitting = quitting

    def compose(self) -> ComposeResult:
        with Vertical(id="job-question", classes="results-dialog"):
            if self.quitting:
                yield Static(f"{self.job_name.capitalize()} is running: stop it and quit, or stay?")
            else:
                yield Static(
                    f"{self.job_name.capitalize()} is running: stop it, keep it running in the background "
                    "(the command palette, Ctrl+P, brings its screen back), or stay?"
                )
            with Horizontal(id="job-buttons"):
                yield Button("Stop and quit" if self.quitting else "Stop it", id=STOP, variant="error", compact=True)
                if not self.quitting:
                    yield Button("Keep running in the background", id=BACKGROUND, compact=True)
                yield Button("Stay", id=STAY, variant="primary", compact=True)

    def on_mount(self) -> None:
        box = self.query_one("#job-question")
        box.border_title = "A job is running"
        box.border_subtitle = "Esc stays"
        self.query_one(f"#{STAY}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or STAY)

    def action_stay(self) -> None:
        self.dismiss(STAY)


# Priority: asked before the screen's own Escape (which may stop the job) or the app's q. Enabled only while
# a job runs (check_action): otherwise the footer and the keys are the screen's and the app's own.
GUARD_BINDINGS: list[BindingType] = [
    Binding("escape", "leave_job('escape')", "Back…", priority=True),
    Binding("q", "leave_job('q')", "Quit", priority=True),
]


class MdtuiScreen(Screen[ResultT]):
    """See the module. ``job_groups`` empty: the screen runs no job, only the footer's order applies."""

    BINDINGS: ClassVar[list[BindingType]] = GUARD_BINDINGS

    job_groups: ClassVar[tuple[str, ...]] = ()
    job_name: ClassVar[str] = "a job"
    job_stop: ClassVar[str | None] = None

    def __init_subclass__(
        cls,
        job_groups: tuple[str, ...] | None = None,
        job_name: str | None = None,
        job_stop: str | None = None,
        **kwargs: Any,
    ) -> None:
        # A class's own binding of a key replaces its bases' bindings of it: the guard goes first in each
        # (before Textual merges the bindings, in its own __init_subclass__).
        bindings = cls.__dict__.get("BINDINGS")
        if bindings is not None and bindings is not GUARD_BINDINGS:
            cls.BINDINGS = [*GUARD_BINDINGS, *bindings]
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("check_action")
        if own is not None:
            # A screen's own check_action answers for its actions; the guard's answer stays the guard's.
            def check_action(self: MdtuiScreen[Any], action: str, parameters: tuple[object, ...]) -> bool | None:
                if action == "leave_job":
                    return self.guard_enabled()
                result: bool | None = own(self, action, parameters)
                return result

            cls.check_action = check_action  # type: ignore[method-assign]
        if job_groups is not None:
            cls.job_groups = job_groups
        if job_name is not None:
            cls.job_name = job_name
        if job_stop is not None:
            cls.job_stop = job_stop

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        bindings = super().active_bindings
        first = sorted(
            (item for item in bindings.items() if item[1].binding.action in FIRST_ACTIONS),
            key=lambda item: 1 if item[0] == "q" else FIRST_ACTIONS.index(item[1].binding.action),
        )
        return {**dict(first), **bindings}

    def job_running(self) -> bool:
        """Whether a worker of this screen's job is pending or running."""
        if not self.job_groups:
            return False
        return any(
            worker.node is self
            and worker.group in self.job_groups
            and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for worker in self.app.workers
        )

    def guard_enabled(self) -> bool:
        # Without a job the keys are the screen's as ever, and q typed into a field is text.
        return self.job_running() and not isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_job":
            return self.guard_enabled()
        return True

    def action_leave_job(self, key: str) -> None:
        if not self.guard_enabled():
            raise SkipAction()  # passes the key on to the next binding
        self.ask_before_leaving(quitting=key == "q")

    def ask_before_leaving(self, *, quitting: bool) -> None:
        """The job question; its answer stops the job (and quits), leaves it in the background, or stays."""

        async def answered(answer: str | None) -> None:
            if answer == STOP:
                await self.stop_job()
                if quitting:
                    self.app.exit()
            elif answer == BACKGROUND:
                self.keep_in_background()

        self.app.push_screen(JobQuestion(self.job_name, quitting=quitting), answered)

    async def stop_job(self) -> None:
        if self.job_stop is not None:
            await self.run_action(self.job_stop)
            return
        for worker in self.app.workers:
            if worker.node is self and worker.group in self.job_groups:
                worker.cancel()

    def job_subject(self) -> str:
        """What the running job works on, in words, for the palette's way back ("weakest-link on /dev/md0");
        a screen with something more telling than its sub-title says it here."""
        return str(self.sub_title or self.job_name)

    def keep_in_background(self) -> None:
        """Leave the screen with its job running: installed, it is kept (not unmounted) when popped."""
        app = self.app
        name = background_name(self)
        if not app.is_screen_installed(name):
            app.install_screen(self, name)
        jobs = getattr(app, "background_jobs", None)
        if isinstance(jobs, dict):
            jobs[name] = (self.job_name, self.job_subject())
        app.pop_screen()
        app.notify(f"{self.job_name.capitalize()} runs on; Ctrl+P, then its name, brings it back.", timeout=8)

    @on(Worker.StateChanged)
    def _background_job_changed(self, event: Worker.StateChanged) -> None:
        """A job left in the background that has ended leaves the palette (nothing runs to go back to)."""
        app = self.app
        jobs = getattr(app, "background_jobs", None)
        name = background_name(self)
        if not isinstance(jobs, dict) or name not in jobs or self.job_running():
            return
        del jobs[name]
        ended = "finished" if event.state is WorkerState.SUCCESS else f"ended ({event.state.name.lower()})"
        app.notify(f"{self.job_name.capitalize()} {ended} in the background; its runs are in results.", timeout=8)
        if app.is_screen_installed(name) and self not in app.screen_stack:
            app.uninstall_screen(name)
            self.remove()


def background_name(screen: Screen[Any]) -> str:
    return f"background-{type(screen).__name__}-{id(screen)}"
