"""The guided flow: purpose → disks → links → plan & create → weakest-link run → one experiment → summary."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, ContentSwitcher, Footer, Header, Static

from mdtui.advise import guide as core
from mdtui.advise.experiments import ExperimentResult, RunPreset
from mdtui.advise.findings import EXPERIMENT_TITLES
from mdtui.advise.runner import BenchRunner
from mdtui.bench.background import Stop
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import RunRecord
from mdtui.store.runs import ResultsStore
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.common.render import Palette, app_palette
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.create import form as cf
from mdtui.ui.create.resync import ResyncScreen
from mdtui.ui.guide.steps import (
    STEP_WIDGETS,
    ArrayCreated,
    DisksChosen,
    DisksStep,
    ExperimentChosen,
    GuideFinished,
    GuideStep,
    GuideView,
    RunExperiment,
    RunWeakestLink,
    StateChosen,
    StatusSaid,
    StepPassed,
)

# Makes the experiments' runner: (store, targets the user confirmed writes to, stop event) → RunPreset.
RunnerFactory = Callable[[ResultsStore, Collection[str], Stop], RunPreset]

STEP_KEYS = tuple(key for key, _ in core.STEPS)


class GuideScanned(Message, bubble=False):
    def __init__(self, inventory: Inventory) -> None:
        super().__init__()
        self.inventory = inventory


class LinksChecked(Message, bubble=False):
    def __init__(self, check: core.DiskCheck) -> None:
        super().__init__()
        self.check = check


class GuideRunsStored(Message, bubble=False):
    """A run of the guide ended: the weakest-link run (experiment None) or an experiment, with its stored runs."""

    def __init__(
        self, run_ids: tuple[int, ...], runs: tuple[RunRecord, ...], experiment: ExperimentResult | None
    ) -> None:
        super().__init__()
        self.run_ids = run_ids
        self.runs = runs
        self.experiment = experiment


class GuideFailed(Message, bubble=False):
    def __init__(self, step: str, reason: str) -> None:
        super().__init__()
        self.step = step
        self.reason = reason


def default_runner_factory(root: str, privileged: bool | None) -> RunnerFactory:
    def make(store: ResultsStore, allow_writes_to: Collection[str], cancel: Stop) -> RunPreset:
        return BenchRunner(
            store, SystemRoot(root), privileged=privileged, allow_writes_to=allow_writes_to, cancel=cancel
        )

    return make


class GuideScreen(
    MdtuiScreen[core.GuideState | None], job_groups=("guide-run",), job_name="a benchmark", job_stop="close"
):
    """Dismisses with what was done (None when closed early). Every step can be skipped; the create and any
    run that writes go through a typed confirmation, and nothing destructive runs without one."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("n", "next", "Next"),
        Binding("s", "skip", "Skip"),
    ]

    step: reactive[int] = reactive(0, init=False)
    busy: reactive[bool] = reactive(False, init=False)

    def __init__(
        self,
        root: str,
        *,
        db_path: Path,
        privileged: bool | None = None,
        runner_factory: RunnerFactory | None = None,
        flag_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.root = root
        self.db_path = db_path
        self.privileged = privileged
        self.runner_factory = runner_factory or default_runner_factory(root, privileged)
        self.flag_path = flag_path
        self.inventory: Inventory | None = None
        self.state = core.GuideState()
        self.draft: core.DiskCheck | None = None
        self.runs: dict[int, RunRecord] = {}
        self.cancel = Stop()
        self.error: str | None = None
        self.experiment_key = "parallelism-sweep"

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield Static(id="guide-steps")
        with Vertical(id="guide-main"):
            with ContentSwitcher(initial="purpose", id="guide-switcher"):
                for key, step in STEP_WIDGETS.items():
                    yield step(id=key)
            yield Static(id="guide-status")
            with Horizontal(id="guide-buttons"):
                yield Button("Skip", id="guide-skip", compact=True)
                yield Button("Next ▸", id="guide-next", variant="primary", compact=True)
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.title = "mdtui"
        self.sub_title = f"guided setup · root {self.root}"
        self.query_one("#guide-main", Vertical).border_title = "Guide"
        self.scan_disks()
        self._show_step()

    def palette(self) -> Palette:
        return app_palette(self.app)

    @property
    def step_key(self) -> str:
        return STEP_KEYS[self.step]

    def current_step(self) -> GuideStep:
        return self.query_one(f"#{self.step_key}", GuideStep)

    def view(self) -> GuideView:
        """The guide as its steps see it (they change it only through messages)."""
        return GuideView(
            state=self.state,
            inventory=self.inventory,
            draft=self.draft,
            runs=dict(self.runs),
            busy=self.busy,
            palette=self.palette(),
            root=self.root,
            db_path=self.db_path,
            experiment_key=self.experiment_key,
        )

    # -- drawing ---------------------------------------------------------------------------------

    def _show_step(self) -> None:
        self.query_one("#guide-switcher", ContentSwitcher).current = self.step_key
        # One line at 80 columns: the current step by name, the others by number (✓ done, – passed over without
        # anything done: skipped, or nothing to do there, as steps 5 and 6 when no array was created).
        steps = Text()
        for index, (key, title) in enumerate(core.STEPS):
            if index == self.step:
                steps.append(f" {index + 1} {title} ", style="bold reverse")
            elif index < self.step and core.step_done(self.state, key):
                steps.append(f" ✓{index + 1} ")
            elif index < self.step:
                steps.append(f" –{index + 1} ", style="dim")
            else:
                steps.append(f" {index + 1} ", style="dim")
        if self.step + 1 < len(core.STEPS):
            steps.append(f"  next: {core.STEPS[self.step + 1][1]}", style="dim")
        self.query_one("#guide-steps", Static).update(steps)
        next_button = self.query_one("#guide-next", Button)
        next_button.label = self._next_label()
        next_button.disabled = self.busy
        skip = self.query_one("#guide-skip", Button)
        skip.disabled = self.busy or self.step_key == "summary"
        self.update_status()
        step = self.current_step()
        step.draw(self.view())
        # Keys go to the step's own choice where it has one, else to the button that moves on.
        target = self.query_one(step.FOCUS or "#guide-next")
        if not self.busy and not target.has_focus:
            target.focus()

    def _next_label(self) -> str:
        key = self.step_key
        if key == "plan":
            return "Plan & create…" if self.state.device is None else "Next ▸"
        if key == "weakest-link":
            return "Run" if not self.state.weakest_link_runs else "Next ▸"
        if key == "experiment":
            return "Run…" if self.state.experiment is None else "Next ▸"
        if key == "summary":
            return "Done"
        return "Next ▸"

    def update_status(self, text: str | None = None) -> None:
        status = self.query_one("#guide-status", Static)
        message = text or (f"✖ {self.error}" if self.error else "")
        if self.busy and not text:
            message = "Running… Escape stops it (the runs already stored are kept)."
        status.update(Text(message))
        status.set_class(bool(self.error) and not self.busy, "-error")

    def watch_busy(self) -> None:
        self._show_step()

    # -- navigation ------------------------------------------------------------------------------

    def advance(self) -> None:
        self.error = None
        if self.step < len(STEP_KEYS) - 1:
            self.step += 1

    def watch_step(self) -> None:
        self._show_step()

    @on(Button.Pressed, "#guide-next")
    def _next_pressed(self) -> None:
        self.action_next()

    @on(Button.Pressed, "#guide-skip")
    def _skip_pressed(self) -> None:
        self.action_skip()

    def action_skip(self) -> None:
        if self.busy or self.step_key == "summary":
            return
        self.state = replace(self.state, skipped=(*self.state.skipped, self.step_key))
        self.advance()

    def action_close(self) -> None:
        if self.busy:
            self.cancel.set()
            self.update_status("Stopping the run…")
            return
        core.mark_guide_seen(self.flag_path)
        self.dismiss(None)

    def action_next(self) -> None:
        if self.busy:
            return
        self.current_step().advance(self.view())

    # -- what the steps ask (steps.py's messages) --------------------------------------------------

    @on(StateChosen)
    def _state_chosen(self, message: StateChosen) -> None:
        self.state = message.state
        self.advance()

    @on(DisksChosen)
    def _disks_chosen(self, message: DisksChosen) -> None:
        self.state = replace(self.state, disks=message.disks)
        self.busy = True
        self.check_links(message.disks)
        self.advance()

    @on(StepPassed)
    def _step_passed(self) -> None:
        self.advance()

    @on(StatusSaid)
    def _status_said(self, message: StatusSaid) -> None:
        self.update_status(message.text)

    @on(ArrayCreated)
    def _array_created(self, message: ArrayCreated) -> None:
        created = message.created
        self.state = replace(self.state, plan=created.plan, device=created.outcome.device)
        self.rescan()
        # The resync view follows the new array's resync; a benchmark during it would mislead.
        self.app.push_screen(ResyncScreen(self.root, created.plan, created.outcome), lambda _: self.advance())

    @on(RunWeakestLink)
    def _run_weakest_link(self, message: RunWeakestLink) -> None:
        self.busy = True
        self.cancel.clear()
        self.run_weakest_link(message.device)

    @on(ExperimentChosen)
    def _experiment_chosen(self, message: ExperimentChosen) -> None:
        self.experiment_key = message.key
        if self.step_key == "experiment":
            self.current_step().draw(self.view())

    @on(RunExperiment)
    def _run_experiment(self, message: RunExperiment) -> None:
        self.busy = True
        self.cancel.clear()
        self.run_experiment(message.key, message.device, message.allow_writes_to)

    @on(GuideFinished)
    def _finished(self) -> None:
        core.mark_guide_seen(self.flag_path)
        self.dismiss(self.state)

    # -- workers ---------------------------------------------------------------------------------

    def rescan(self) -> None:
        self.scan_disks()

    @work(thread=True, exclusive=True, exit_on_error=False, group="guide-scan")
    def scan_disks(self) -> None:
        try:
            self.post_message(GuideScanned(scan(self.root, privileged=self.privileged)))
        except Exception as exc:
            self.post_message(GuideFailed("disks", failure_reason(f"Scanning {self.root}", exc)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="guide-links")
    def check_links(self, disks: tuple[Disk, ...]) -> None:
        try:
            inventory = self.inventory
            device = cf.next_free_device(inventory)
            check = core.check_disks(SystemRoot(self.root), self.state.workload, disks, device)
        except Exception as exc:
            self.post_message(GuideFailed("links", failure_reason("Checking the disks", exc)))
            return
        self.post_message(LinksChecked(check))

    def _stored(self, store: ResultsStore, run_ids: Sequence[int]) -> tuple[RunRecord, ...]:
        return tuple(store.get_runs(list(run_ids)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="guide-run")
    def run_weakest_link(self, device: str) -> None:
        try:
            with ResultsStore(self.db_path) as store:
                runner = self.runner_factory(store, (), self.cancel)
                run_ids = tuple(runner("weakest-link", device, quick=True, label="guide: weakest link"))
                runs = self._stored(store, run_ids)
        except Exception as exc:
            self.post_message(GuideFailed("weakest-link", failure_reason("The weakest-link run", exc)))
            return
        self.post_message(GuideRunsStored(run_ids, runs, None))

    @work(thread=True, exclusive=True, exit_on_error=False, group="guide-run")
    def run_experiment(self, key: str, device: str, allow_writes_to: tuple[str, ...]) -> None:
        try:
            with ResultsStore(self.db_path) as store:
                runner = self.runner_factory(store, allow_writes_to, self.cancel)
                result = core.run_experiment(
                    key, runner, device, root=SystemRoot(self.root), cancel=self.cancel, store=store
                )
                runs = self._stored(store, result.run_ids)
        except Exception as exc:
            self.post_message(GuideFailed("experiment", failure_reason(EXPERIMENT_TITLES[key], exc)))
            return
        self.post_message(GuideRunsStored(result.run_ids, runs, result))

    # -- results ---------------------------------------------------------------------------------

    @on(GuideScanned)
    def _scanned(self, message: GuideScanned) -> None:
        self.inventory = message.inventory
        self.query_one(DisksStep).offer(message.inventory, {d.name for d in self.state.disks})
        if self.step_key in ("disks", "weakest-link"):
            self._show_step()

    @on(LinksChecked)
    def _links_checked(self, message: LinksChecked) -> None:
        self.draft = message.check
        self.state = replace(self.state, findings=message.check.findings)
        self.experiment_key = core.suggested_experiment(message.check.findings)
        self.busy = False

    @on(GuideRunsStored)
    def _runs_stored(self, message: GuideRunsStored) -> None:
        self.runs.update((run.id, run) for run in message.runs)
        if message.experiment is None:
            self.state = replace(self.state, weakest_link_runs=message.run_ids)
        else:
            self.state = replace(self.state, experiment=message.experiment)
        self.busy = False

    @on(GuideFailed)
    def _failed(self, message: GuideFailed) -> None:
        self.error = message.reason
        self.busy = False
        self.notify(message.reason.splitlines()[0], title="Guide", severity="error", timeout=10)
        self._show_step()
