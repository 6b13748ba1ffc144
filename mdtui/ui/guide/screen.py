"""The guided flow: purpose → disks → links → plan & create → weakest-link run → one experiment → summary."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Button, ContentSwitcher, Footer, Header, RadioButton, RadioSet, SelectionList, Static

from mdtui.advise import guide as core
from mdtui.advise.experiments import ExperimentResult, RunPreset
from mdtui.advise.findings import EXPERIMENT_TITLES, WORKLOADS, Finding, Severity, why_text
from mdtui.advise.runner import BenchRunner
from mdtui.format import iec_bytes
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.db import ResultsStore
from mdtui.store.records import RunRecord
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.member_picker import busy_reason
from mdtui.ui.common.messages import failure_reason
from mdtui.ui.common.render import Palette, link_label, palette_from_variables
from mdtui.ui.create import form as cf
from mdtui.ui.create.resync import ResyncScreen
from mdtui.ui.create.screen import Created, CreateScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen

# Makes the experiments' runner: (store, targets the user confirmed writes to, stop event) → RunPreset.
RunnerFactory = Callable[[ResultsStore, Collection[str], threading.Event], RunPreset]

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


def findings_renderable(findings: Sequence[Finding], palette: Palette) -> RenderableType:
    """Each finding: its title in the severity's colour, the evidence, why it matters and what to do."""
    if not findings:
        return Text("No findings: links, CPU governor and geometry look right for this.", style=palette.good)
    colour = {Severity.CRITICAL: palette.error, Severity.WARNING: palette.warning, Severity.INFO: palette.muted}
    parts: list[RenderableType] = []
    told: dict[str, str] = {}  # each explanation in full once, then "as for <finding> above"
    for finding in findings:
        parts.append(Text(f"{finding.severity.mark} {finding.title}", style=f"bold {colour[finding.severity]}"))
        # Indented as a block, so wrapped lines stay under their finding.
        details = []
        if finding.evidence:
            details.append(Text("; ".join(str(e) for e in finding.evidence), style=palette.muted))
        details += [Text(f"Why: {why_text(finding, told)}"), Text(f"Do: {finding.what_to_do}")]
        if finding.experiment:
            details.append(Text(f"Try: {EXPERIMENT_TITLES[finding.experiment]}", style=palette.muted))
        parts += [Padding(Group(*details), (0, 0, 1, 2))]
    return Group(*parts)


def disk_prompt(disk: Disk) -> str:
    size = iec_bytes(disk.size_bytes) if disk.size_bytes is not None else "?"
    link = link_label(disk.link)
    details = "  ".join(p for p in (disk.kind_label, link if link != "-" else "", disk.model or "") if p)
    return f"{disk.name:<9} {size:>10}  {details}"


class GuideCreateScreen(CreateScreen):
    """The create screen, opened with the guide's draft (members, level, chunk) already filled in."""

    def __init__(self, root: str, inventory: Inventory, form: cf.CreateForm) -> None:
        super().__init__(root, inventory)
        self.form = form
        self.result = cf.preview(form, inventory)


def default_runner_factory(root: str, privileged: bool | None) -> RunnerFactory:
    def make(store: ResultsStore, allow_writes_to: Collection[str], cancel: threading.Event) -> RunPreset:
        return BenchRunner(
            store, SystemRoot(root), privileged=privileged, allow_writes_to=allow_writes_to, cancel=cancel
        )

    return make


class GuideScreen(Screen[core.GuideState | None]):
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
        self.cancel = threading.Event()
        self.error: str | None = None
        self.experiment_key = "parallelism-sweep"

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield Static(id="guide-steps")
        with Vertical(id="guide-main"):
            with ContentSwitcher(initial="purpose", id="guide-switcher"):
                with VerticalScroll(id="purpose"):
                    yield Static(
                        "What is the array for? The advice (level, chunk, bitmap) follows from it.",
                        classes="guide-intro",
                    )
                    with RadioSet(id="workload"):
                        for index, workload in enumerate(WORKLOADS):
                            yield RadioButton(workload.title, value=index == 0)
                with VerticalScroll(id="disks"):
                    yield Static("Pick the disks (space toggles). Only free disks are offered.", classes="guide-intro")
                    yield SelectionList[str](id="disk-list")
                    yield Static(id="disks-busy")
                with VerticalScroll(id="links"):
                    yield Static(id="links-body")
                with VerticalScroll(id="plan"):
                    yield Static(id="plan-body")
                with VerticalScroll(id="weakest-link"):
                    yield Static(id="weakest-body")
                with VerticalScroll(id="experiment"):
                    yield Static("One experiment on the new array, stored as labelled runs:", classes="guide-intro")
                    with RadioSet(id="experiment-choice"):
                        for key in core.GUIDE_EXPERIMENTS:
                            yield RadioButton(EXPERIMENT_TITLES[key], value=False)
                    yield Static(id="experiment-body")
                with VerticalScroll(id="summary"):
                    yield Static(id="summary-body")
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
        return palette_from_variables(self.app.get_css_variables())

    @property
    def step_key(self) -> str:
        return STEP_KEYS[self.step]

    # -- drawing ---------------------------------------------------------------------------------

    def _show_step(self) -> None:
        self.query_one("#guide-switcher", ContentSwitcher).current = self.step_key
        # One line at 80 columns: the current step by name, the others by number (✓ done, – skipped).
        steps = Text()
        for index, (key, title) in enumerate(core.STEPS):
            if index == self.step:
                steps.append(f" {index + 1} {title} ", style="bold reverse")
            elif key in self.state.skipped:
                steps.append(f" –{index + 1} ", style="dim")
            elif index < self.step:
                steps.append(f" ✓{index + 1} ")
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
        self._update_status()
        draw = getattr(self, f"_draw_{self.step_key.replace('-', '_')}", None)
        if draw is not None:
            draw()
        # Keys go to the step's own choice where it has one, else to the button that moves on.
        focus = {"purpose": "#workload", "disks": "#disk-list", "experiment": "#experiment-choice"}
        target = self.query_one(focus.get(self.step_key, "#guide-next"))
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

    def _update_status(self, text: str | None = None) -> None:
        status = self.query_one("#guide-status", Static)
        message = text or (f"✖ {self.error}" if self.error else "")
        if self.busy and not text:
            message = "Running… Escape stops it (the runs already stored are kept)."
        status.update(Text(message))
        status.set_class(bool(self.error) and not self.busy, "-error")

    def watch_busy(self) -> None:
        self._show_step()

    def _draw_disks(self) -> None:
        inventory = self.inventory
        busy = self.query_one("#disks-busy", Static)
        if inventory is None:
            busy.update(Text("Scanning…"))
            return
        palette = self.palette()
        others = [d for d in inventory.disks if not d.available]
        text = Text()
        if not any(d.available for d in inventory.disks):
            text.append("No free disks: every disk is in use or could not be checked.\n", style=palette.warning)
        if others:
            text.append("Not offered:\n", style=palette.muted)
            for disk in others:
                text.append(f"  {disk.name}: {busy_reason(disk)}\n", style=palette.muted)
        busy.update(text)

    def _draw_links(self) -> None:
        body = self.query_one("#links-body", Static)
        if not self.state.disks:
            body.update(Text("No disks picked: nothing to check. Go back by closing the guide, or skip on."))
            return
        if self.busy:
            body.update(Text("Checking links, CPU and the plan for the workload…"))
            return
        palette = self.palette()
        parts: list[RenderableType] = [Text(f"Checked {', '.join(d.name for d in self.state.disks)}", style="bold")]
        draft = self.draft
        if draft is not None and draft.request is not None:
            level = draft.request.level
            name = level if isinstance(level, str) else level.name
            parts[0].append(f" as a {name} for {self.state.workload.key if self.state.workload else 'any use'}")
            for problem in draft.problems:
                parts.append(Text(f"✖ {problem}", style=palette.error))
        parts += [Text(""), findings_renderable(self.state.findings, palette)]
        body.update(Group(*parts))

    def _draw_plan(self) -> None:
        body = self.query_one("#plan-body", Static)
        palette = self.palette()
        if self.state.device is not None and self.state.plan is not None:
            body.update(Text(f"Created {self.state.device} ({self.state.plan.level.name}).", style=palette.good))
            return
        request = self.draft.request if self.draft is not None else None
        if request is None:
            body.update(Text("No draft to start from (pick at least two free disks): the create form opens empty."))
            return
        level = request.level if isinstance(request.level, str) else request.level.name
        chunk = f", chunk {request.chunk_kib} KiB" if request.chunk_kib else ""
        lines = [
            Text(f"Suggested: {level} on {', '.join(d.name for d in request.members)}{chunk}", style="bold"),
            Text(""),
            Text(
                "The create form opens with this filled in: change anything, review the plan, and confirm "
                "by typing the device. Nothing is written before that.",
                style=palette.muted,
            ),
        ]
        body.update(Group(*lines))

    def _run_lines(self, run_ids: Sequence[int]) -> Text:
        return Text("\n".join(core.run_line(self.runs[i]) for i in run_ids if i in self.runs))

    def _draw_weakest_link(self) -> None:
        body = self.query_one("#weakest-body", Static)
        device = self.state.device
        if device is None:
            body.update(Text("No array was created in this guide: there is nothing to measure. Skip on."))
            return
        if self.state.weakest_link_runs:
            stored = [self.runs[i] for i in self.state.weakest_link_runs if i in self.runs]
            shown = core.after_run_findings(self.inventory, stored)
            parts: list[RenderableType] = [
                Text(f"Stored runs on {device}:", style="bold"),
                self._run_lines(self.state.weakest_link_runs),
            ]
            if shown is not None:
                parts += [
                    Text(""),
                    findings_renderable(shown, self.palette())
                    if shown
                    else Text(
                        "No member stands out and the array keeps pace with them: nothing to fix here.",
                        style=self.palette().good,
                    ),
                ]
            body.update(Group(*parts))
            return
        intro = Text(
            f"Reads each member of {device} alone, all members at once, then the array (quick mode, read-only): "
            "a stripe runs at its slowest member × N (docs/findings.md, finding 1). Run starts it."
        )
        spoilers = core.before_run_findings(self.inventory, device) if self.inventory is not None else ()
        body.update(Group(findings_renderable(spoilers, self.palette()), intro) if spoilers else intro)

    def _draw_experiment(self) -> None:
        body = self.query_one("#experiment-body", Static)
        radio = self.query_one("#experiment-choice", RadioSet)
        if radio.pressed_index < 0:
            buttons = list(radio.query(RadioButton))
            buttons[core.GUIDE_EXPERIMENTS.index(self.experiment_key)].value = True
        if self.state.device is None:
            body.update(Text("No array was created in this guide: skip on."))
            return
        result = self.state.experiment
        if result is not None:
            lines = [Text(f"{EXPERIMENT_TITLES[result.key]}: stored", style="bold")]
            for point in result.runs:
                lines.append(self._run_lines(point.run_ids))
            lines += [Text(note) for note in result.notes]
            body.update(Group(*lines))
            return
        writes = (
            "It overwrites the array's data: you confirm it by typing the device." if self._writes() else ("Read-only.")
        )
        body.update(Text(writes, style=self.palette().muted))

    def _draw_summary(self) -> None:
        lines = core.summary_lines(self.state, list(self.runs.values()))
        self.query_one("#summary-body", Static).update(Text("\n".join(lines)))

    # -- navigation ------------------------------------------------------------------------------

    def _advance(self) -> None:
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
        self._advance()

    def action_close(self) -> None:
        if self.busy:
            self.cancel.set()
            self._update_status("Stopping the run…")
            return
        core.mark_guide_seen(self.flag_path)
        self.dismiss(None)

    def action_next(self) -> None:
        if self.busy:
            return
        handler = getattr(self, f"_next_{self.step_key.replace('-', '_')}")
        handler()

    def _next_purpose(self) -> None:
        index = self.query_one("#workload", RadioSet).pressed_index
        self.state = replace(self.state, workload=WORKLOADS[max(index, 0)])
        self._advance()

    def _next_disks(self) -> None:
        if self.inventory is None:
            self.notify("Still scanning the disks.", severity="warning")
            return
        chosen = set(self.query_one("#disk-list", SelectionList).selected)
        disks = tuple(d for d in self.inventory.disks if d.name in chosen)
        if not disks:
            self.notify("Pick at least one disk (space), or skip.", severity="warning")
            return
        self.state = replace(self.state, disks=disks)
        self.busy = True
        self.check_links(disks)
        self._advance()

    def _next_links(self) -> None:
        self._advance()

    def _next_plan(self) -> None:
        if self.state.device is not None:
            self._advance()
            return
        inventory = self.inventory
        if inventory is None:
            self.notify("Still scanning the disks.", severity="warning")
            return
        form = cf.CreateForm(device=cf.next_free_device(inventory))
        request = self.draft.request if self.draft is not None else None
        if request is not None:
            form = replace(
                form,
                level=request.level if isinstance(request.level, str) else request.level.name,
                members=tuple(d.name for d in request.members),
                chunk_kib=request.chunk_kib or form.chunk_kib,
            )
        self.app.push_screen(GuideCreateScreen(self.root, inventory, form), self._created)

    def _created(self, created: Created | None) -> None:
        if created is None:
            self._update_status("Nothing was created. Plan & create opens the form again; Skip goes on.")
            return
        self.state = replace(self.state, plan=created.plan, device=created.outcome.device)
        self.rescan()
        # The resync view follows the new array's resync; a benchmark during it would mislead.
        self.app.push_screen(ResyncScreen(self.root, created.plan, created.outcome), lambda _: self._advance())

    def _next_weakest_link(self) -> None:
        if self.state.weakest_link_runs or self.state.device is None:
            self._advance()
            return
        self.busy = True
        self.cancel.clear()
        self.run_weakest_link(self.state.device)

    def _writes(self) -> bool:
        return core.experiment_writes(self.experiment_key)

    @on(RadioSet.Changed, "#experiment-choice")
    def _experiment_chosen(self, event: RadioSet.Changed) -> None:
        self.experiment_key = core.GUIDE_EXPERIMENTS[event.radio_set.pressed_index]
        if self.step_key == "experiment":
            self._draw_experiment()

    def _next_experiment(self) -> None:
        device = self.state.device
        if self.state.experiment is not None or device is None:
            self._advance()
            return
        key = self.experiment_key
        if not self._writes():
            self._start_experiment(key, device, ())
            return
        body = Text.assemble(
            (f"{EXPERIMENT_TITLES[key]}\n\n", "bold"),
            f"Runs the sync-random preset on {device} twice (before and after switching every core's governor), "
            "writing over the array's data. The previous governors are restored afterwards, even if a run fails.",
        )
        dialog = ConfirmScreen(f"Overwrite {device}", body, device, "Run")

        def confirmed(answer: bool | None) -> None:
            if answer:
                self._start_experiment(key, device, (device,))
            else:
                self._update_status("Not confirmed: nothing ran.")

        self.app.push_screen(dialog, confirmed)

    def _start_experiment(self, key: str, device: str, allow_writes_to: tuple[str, ...]) -> None:
        if refused_on_tree(self, self.root, "running an experiment"):
            return
        self.busy = True
        self.cancel.clear()
        self.run_experiment(key, device, allow_writes_to)

    def _next_summary(self) -> None:
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
                result = core.run_experiment(key, runner, device, root=SystemRoot(self.root), cancel=self.cancel)
                runs = self._stored(store, result.run_ids)
        except Exception as exc:
            self.post_message(GuideFailed("experiment", failure_reason(EXPERIMENT_TITLES[key], exc)))
            return
        self.post_message(GuideRunsStored(result.run_ids, runs, result))

    # -- results ---------------------------------------------------------------------------------

    @on(GuideScanned)
    def _scanned(self, message: GuideScanned) -> None:
        self.inventory = message.inventory
        disk_list = self.query_one("#disk-list", SelectionList)
        picked = {d.name for d in self.state.disks}
        disk_list.clear_options()
        disk_list.add_options(
            [(disk_prompt(d), d.name, d.name in picked) for d in message.inventory.disks if d.available]
        )
        if disk_list.option_count:
            disk_list.highlighted = 0
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
