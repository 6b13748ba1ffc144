"""The guide's steps, one widget each: what a step shows (draw) and what Next does on it (advance).

A step reads the guide as its screen shows it (GuideView, handed to draw and advance) and asks for every
change by posting a message (StateChosen, RunWeakestLink, ...): the screen (GuideScreen) owns the state,
the workers and the step line, and this module does not know it. STEP_WIDGETS names every step's widget,
in the guide's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import RadioButton, RadioSet, SelectionList, Static

from mdtui.advise import guide as core
from mdtui.advise.findings import EXPERIMENT_TITLES, WORKLOADS, Finding, Pattern, Severity, why_text
from mdtui.bench.member_figures import member_sources, stored_member_runs
from mdtui.format import iec_bytes
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.plan.forecast import level_table, level_table_lines, missing_lines
from mdtui.plan.levels import LEVELS
from mdtui.store.records import RunRecord
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.member_picker import busy_reason
from mdtui.ui.common.render import Palette, link_label
from mdtui.ui.common.toggles import MarkRadioButton, MarkSelectionList
from mdtui.ui.create import form as cf
from mdtui.ui.create.screen import Created, CreateScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen


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


def run_lines(runs: dict[int, RunRecord], run_ids: Sequence[int]) -> Text:
    """One line per stored run of ``run_ids`` (those the guide has read back)."""
    return Text("\n".join(core.run_line(runs[i]) for i in run_ids if i in runs))


@dataclass(frozen=True)
class GuideView:
    """The guide as a step sees it: what was chosen and what ran, and what the screen is doing now."""

    state: core.GuideState
    inventory: Inventory | None
    draft: core.DiskCheck | None
    runs: dict[int, RunRecord]
    busy: bool
    palette: Palette
    root: str
    db_path: Path
    experiment_key: str


# -- what a step asks of the guide (each handled by GuideScreen) -----------------------------------------


class StateChosen(Message):
    """The user chose something on a step (the workload): the guide's new state, then on to the next step."""

    def __init__(self, state: core.GuideState) -> None:
        super().__init__()
        self.state = state


class DisksChosen(Message):
    """The picked disks: check their links, CPU and the workload's plan (a worker), and go on to the results."""

    def __init__(self, disks: tuple[Disk, ...]) -> None:
        super().__init__()
        self.disks = disks


class StepPassed(Message):
    """Next on a step with nothing (more) to do there: on to the next step."""


class StatusSaid(Message):
    """A line for the guide's status (what did not happen, and what to do)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ArrayCreated(Message):
    """The create screen made the array: the guide follows its resync, then goes on."""

    def __init__(self, created: Created) -> None:
        super().__init__()
        self.created = created


class RunWeakestLink(Message):
    def __init__(self, device: str) -> None:
        super().__init__()
        self.device = device


class ExperimentChosen(Message):
    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key


class RunExperiment(Message):
    """Run the experiment; ``allow_writes_to`` holds what the user typed to let it write (empty: it only reads)."""

    def __init__(self, key: str, device: str, allow_writes_to: tuple[str, ...]) -> None:
        super().__init__()
        self.key = key
        self.device = device
        self.allow_writes_to = allow_writes_to


class GuideFinished(Message):
    """Done on the summary: the guide closes with what was done."""


class GuideCreateScreen(CreateScreen):
    """The create screen, opened with the guide's draft (members, level, chunk) already filled in."""

    def __init__(self, root: str, inventory: Inventory, form: cf.CreateForm) -> None:
        super().__init__(root, inventory)
        self.form = form
        self.result = cf.preview(form, inventory)


class GuideStep(VerticalScroll):
    """A step of the guide: shown while it is the current one."""

    FOCUS: str | None = None  # the step's own choice, which gets the keys; else the Next button does

    def draw(self, view: GuideView) -> None:
        """Show what the step has to say now (called whenever the guide's state changed)."""

    def advance(self, view: GuideView) -> None:
        """What Next does on this step: by default, go on to the next."""
        self.post_message(StepPassed())


class PurposeStep(GuideStep):
    FOCUS = "#workload"

    def compose(self) -> ComposeResult:
        yield Static("What is the array for? The advice (level, chunk, bitmap) follows from it.", classes="guide-intro")
        with RadioSet(id="workload"):
            for index, workload in enumerate(WORKLOADS):
                yield MarkRadioButton(workload.title, value=index == 0)

    def advance(self, view: GuideView) -> None:
        index = self.query_one("#workload", RadioSet).pressed_index
        self.post_message(StateChosen(replace(view.state, workload=WORKLOADS[max(index, 0)])))


class DisksStep(GuideStep):
    FOCUS = "#disk-list"

    def compose(self) -> ComposeResult:
        yield Static("Pick the disks (space toggles). Only free disks are offered.", classes="guide-intro")
        yield MarkSelectionList(id="disk-list")  # [x] / [ ]: read without colour
        yield Static(id="disks-busy")

    def offer(self, inventory: Inventory, picked: set[str]) -> None:
        """The free disks of ``inventory`` to pick from, those in ``picked`` ticked."""
        disk_list = self.query_one("#disk-list", SelectionList)
        disk_list.clear_options()
        disk_list.add_options([(disk_prompt(d), d.name, d.name in picked) for d in inventory.disks if d.available])
        if disk_list.option_count:
            disk_list.highlighted = 0

    def draw(self, view: GuideView) -> None:
        inventory = view.inventory
        busy = self.query_one("#disks-busy", Static)
        if inventory is None:
            busy.update(Text("Scanning…"))
            return
        palette = view.palette
        others = [d for d in inventory.disks if not d.available]
        text = Text()
        if not any(d.available for d in inventory.disks):
            text.append("No free disks: every disk is in use or could not be checked.\n", style=palette.warning)
        if others:
            text.append("Not offered:\n", style=palette.muted)
            for disk in others:
                text.append(f"  {disk.name}: {busy_reason(disk)}\n", style=palette.muted)
        busy.update(text)

    def advance(self, view: GuideView) -> None:
        if view.inventory is None:
            self.notify("Still scanning the disks.", severity="warning")
            return
        chosen = set(self.query_one("#disk-list", SelectionList).selected)
        disks = tuple(d for d in view.inventory.disks if d.name in chosen)
        if not disks:
            self.notify("Pick at least one disk (space), or skip.", severity="warning")
            return
        self.post_message(DisksChosen(disks))


class LinksStep(GuideStep):
    def compose(self) -> ComposeResult:
        yield Static(id="links-body")

    def draw(self, view: GuideView) -> None:
        body = self.query_one("#links-body", Static)
        if not view.state.disks:
            body.update(Text("No disks picked: nothing to check. Go back by closing the guide, or skip on."))
            return
        if view.busy:
            body.update(Text("Checking links, CPU and the plan for the workload…"))
            return
        palette = view.palette
        heading = Text(f"Checked {', '.join(d.name for d in view.state.disks)}", style="bold")
        parts: list[RenderableType] = [heading]
        draft = view.draft
        if draft is not None and draft.request is not None:
            level = draft.request.level
            name = level if isinstance(level, str) else level.name
            heading.append(f" as a {name} for {view.state.workload.key if view.state.workload else 'any use'}")
            for problem in draft.problems:
                parts.append(Text(f"✖ {problem}", style=palette.error))
        parts += [Text(""), findings_renderable(view.state.findings, palette)]
        body.update(Group(*parts))


class PlanStep(GuideStep):
    _member_runs: list[RunRecord] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="plan-body")

    def draw(self, view: GuideView) -> None:
        body = self.query_one("#plan-body", Static)
        palette = view.palette
        if view.state.device is not None and view.state.plan is not None:
            body.update(Text(f"Created {view.state.device} ({view.state.plan.level.name}).", style=palette.good))
            return
        request = view.draft.request if view.draft is not None else None
        if request is None:
            body.update(Text("No draft to start from (pick at least two free disks): the create form opens empty."))
            return
        level = request.level if isinstance(request.level, str) else request.level.name
        chunk = f", chunk {request.chunk_kib} KiB" if request.chunk_kib else ""
        lines = [
            Text(f"Suggested: {level} on {', '.join(d.name for d in request.members)}{chunk}", style="bold"),
            Text(""),
            *self._level_table(view, request.members, request.chunk_kib, level, palette),
            Text(
                "The create form opens with this filled in: change anything, review the plan, and confirm "
                "by typing the device. Nothing is written before that.",
                style=palette.muted,
            ),
        ]
        body.update(Group(*lines))

    def _level_table(
        self, view: GuideView, members: Sequence[Disk], chunk_kib: int | None, suggested: str, palette: Palette
    ) -> list[Text]:
        """Every level these members can make, side by side on each workload (the md model over the members'
        stored figures), the workload's own columns first in mind: sequential or random."""
        if self._member_runs is None:
            self._member_runs = stored_member_runs(view.db_path)
        sources = member_sources(self._member_runs, members)
        rows = level_table(LEVELS, sources, chunk_bytes=chunk_kib * 1024 if chunk_kib else None)
        if not rows:
            return []
        workload = view.state.workload
        focus = ""
        if workload is not None:
            random = Pattern.SMALL_RANDOM in workload.patterns
            focus = f" ({workload.key}: the {'random' if random else 'sequential'} columns matter most)"
        texts = [Text(f"What each level would do on these members{focus}:", style="bold")]
        for index, line in enumerate(level_table_lines(rows)):
            is_suggested = index > 0 and rows[index - 1].level == suggested
            texts.append(Text(("▸ " if is_suggested else "  ") + line, style="bold" if is_suggested else ""))
        texts += [Text(f"  {line}", style=palette.warning) for line in missing_lines(sources)]
        texts.append(Text(""))
        return texts

    def advance(self, view: GuideView) -> None:
        if view.state.device is not None:
            self.post_message(StepPassed())
            return
        inventory = view.inventory
        if inventory is None:
            self.notify("Still scanning the disks.", severity="warning")
            return
        form = cf.CreateForm(device=cf.next_free_device(inventory))
        request = view.draft.request if view.draft is not None else None
        if request is not None:
            form = replace(
                form,
                level=request.level if isinstance(request.level, str) else request.level.name,
                members=tuple(d.name for d in request.members),
                chunk_kib=request.chunk_kib or form.chunk_kib,
            )
        self.app.push_screen(GuideCreateScreen(view.root, inventory, form), self._created)

    def _created(self, created: Created | None) -> None:
        if created is None:
            self.post_message(StatusSaid("Nothing was created. Plan & create opens the form again; Skip goes on."))
            return
        self.post_message(ArrayCreated(created))


class WeakestLinkStep(GuideStep):
    def compose(self) -> ComposeResult:
        yield Static(id="weakest-body")

    def draw(self, view: GuideView) -> None:
        body = self.query_one("#weakest-body", Static)
        device = view.state.device
        if device is None:
            body.update(Text("No array was created in this guide: there is nothing to measure. Skip on."))
            return
        if view.state.weakest_link_runs:
            stored = [view.runs[i] for i in view.state.weakest_link_runs if i in view.runs]
            shown = core.after_run_findings(view.inventory, stored)
            parts: list[RenderableType] = [
                Text(f"Stored runs on {device}:", style="bold"),
                run_lines(view.runs, view.state.weakest_link_runs),
            ]
            if shown is not None:
                parts += [
                    Text(""),
                    findings_renderable(shown, view.palette)
                    if shown
                    else Text(
                        "No member stands out and the array keeps pace with them: nothing to fix here.",
                        style=view.palette.good,
                    ),
                ]
            body.update(Group(*parts))
            return
        intro = Text(
            f"Reads each member of {device} alone, all members at once, then the array (quick mode, read-only): "
            "a stripe runs at its slowest member × N (docs/findings.md, finding 1). Run starts it."
        )
        spoilers = core.before_run_findings(view.inventory, device) if view.inventory is not None else ()
        body.update(Group(findings_renderable(spoilers, view.palette), intro) if spoilers else intro)

    def advance(self, view: GuideView) -> None:
        if view.state.weakest_link_runs or view.state.device is None:
            self.post_message(StepPassed())
            return
        self.post_message(RunWeakestLink(view.state.device))


class ExperimentStep(GuideStep):
    FOCUS = "#experiment-choice"

    def compose(self) -> ComposeResult:
        yield Static("One experiment on the new array, stored as labelled runs:", classes="guide-intro")
        with RadioSet(id="experiment-choice"):
            for key in core.GUIDE_EXPERIMENTS:
                yield MarkRadioButton(EXPERIMENT_TITLES[key], value=False)
        yield Static(id="experiment-body")

    @on(RadioSet.Changed, "#experiment-choice")
    def _experiment_chosen(self, event: RadioSet.Changed) -> None:
        self.post_message(ExperimentChosen(core.GUIDE_EXPERIMENTS[event.radio_set.pressed_index]))

    def draw(self, view: GuideView) -> None:
        body = self.query_one("#experiment-body", Static)
        radio = self.query_one("#experiment-choice", RadioSet)
        if radio.pressed_index < 0:
            buttons = list(radio.query(RadioButton))
            buttons[core.GUIDE_EXPERIMENTS.index(view.experiment_key)].value = True
        if view.state.device is None:
            body.update(Text("No array was created in this guide: skip on."))
            return
        result = view.state.experiment
        if result is not None:
            lines = [Text(f"{EXPERIMENT_TITLES[result.key]}: stored", style="bold")]
            for point in result.runs:
                lines.append(run_lines(view.runs, point.run_ids))
            lines += [Text(note) for note in result.notes]
            body.update(Group(*lines))
            return
        writes = "Read-only."
        if core.experiment_writes(view.experiment_key):
            writes = "It overwrites the array's data: you confirm it by typing the device."
        body.update(Text(writes, style=view.palette.muted))

    def advance(self, view: GuideView) -> None:
        device = view.state.device
        if view.state.experiment is not None or device is None:
            self.post_message(StepPassed())
            return
        key = view.experiment_key
        if not core.experiment_writes(key):
            self._start(view, key, device, ())
            return
        body = Text.assemble(
            (f"{EXPERIMENT_TITLES[key]}\n\n", "bold"),
            f"Runs the sync-random preset on {device} twice (before and after switching every core's governor), "
            "writing over the array's data. The previous governors are restored afterwards, even if a run fails.",
        )
        dialog = ConfirmScreen(f"Overwrite {device}", body, device, "Run")

        def confirmed(typed: str | None) -> None:
            if typed:
                self._start(view, key, device, (typed,))
            else:
                self.post_message(StatusSaid("Not confirmed: nothing ran."))

        self.app.push_screen(dialog, confirmed)

    def _start(self, view: GuideView, key: str, device: str, allow_writes_to: tuple[str, ...]) -> None:
        if refused_on_tree(self.screen, view.root, "running an experiment"):
            return
        self.post_message(RunExperiment(key, device, allow_writes_to))


class SummaryStep(GuideStep):
    def compose(self) -> ComposeResult:
        yield Static(id="summary-body")

    def draw(self, view: GuideView) -> None:
        lines = core.summary_lines(view.state, list(view.runs.values()))
        self.query_one("#summary-body", Static).update(Text("\n".join(lines)))

    def advance(self, view: GuideView) -> None:
        self.post_message(GuideFinished())


# Every step of core.STEPS, by key, in the guide's order.
STEP_WIDGETS: dict[str, type[GuideStep]] = {
    "purpose": PurposeStep,
    "disks": DisksStep,
    "links": LinksStep,
    "plan": PlanStep,
    "weakest-link": WeakestLinkStep,
    "experiment": ExperimentStep,
    "summary": SummaryStep,
}
