"""The guide's steps, one widget each: what a step shows (draw) and what Next does on it (advance).

Each step reads and changes the guide's state through its screen (GuideScreen), which owns the state,
the workers and the step line; STEP_WIDGETS names every step's widget, in the guide's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import RadioButton, RadioSet, SelectionList, Static

from mdtui.advise import guide as core
from mdtui.advise.findings import EXPERIMENT_TITLES, WORKLOADS, Finding, Pattern, Severity, why_text
from mdtui.bench.member_figures import load_member_runs, member_sources
from mdtui.errors import MdtuiError
from mdtui.format import iec_bytes
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.plan.forecast import level_table, level_table_lines
from mdtui.plan.levels import LEVELS
from mdtui.store.records import RunRecord
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.member_picker import busy_reason
from mdtui.ui.common.render import Palette, link_label
from mdtui.ui.common.toggles import MarkRadioButton, MarkSelectionList
from mdtui.ui.create import form as cf
from mdtui.ui.create.resync import ResyncScreen
from mdtui.ui.create.screen import Created, CreateScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen

if TYPE_CHECKING:
    from mdtui.ui.guide.screen import GuideScreen


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


class GuideCreateScreen(CreateScreen):
    """The create screen, opened with the guide's draft (members, level, chunk) already filled in."""

    def __init__(self, root: str, inventory: Inventory, form: cf.CreateForm) -> None:
        super().__init__(root, inventory)
        self.form = form
        self.result = cf.preview(form, inventory)


class GuideStep(VerticalScroll):
    """A step of the guide: shown while it is the current one."""

    FOCUS: str | None = None  # the step's own choice, which gets the keys; else the Next button does

    @property
    def guide(self) -> GuideScreen:
        return cast("GuideScreen", self.screen)

    def draw(self) -> None:
        """Show what the step has to say now (called whenever the guide's state changed)."""

    def advance(self) -> None:
        """What Next does on this step: by default, go on to the next."""
        self.guide.advance()


class PurposeStep(GuideStep):
    FOCUS = "#workload"

    def compose(self) -> ComposeResult:
        yield Static("What is the array for? The advice (level, chunk, bitmap) follows from it.", classes="guide-intro")
        with RadioSet(id="workload"):
            for index, workload in enumerate(WORKLOADS):
                yield MarkRadioButton(workload.title, value=index == 0)

    def advance(self) -> None:
        guide = self.guide
        index = self.query_one("#workload", RadioSet).pressed_index
        guide.state = replace(guide.state, workload=WORKLOADS[max(index, 0)])
        guide.advance()


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

    def draw(self) -> None:
        inventory = self.guide.inventory
        busy = self.query_one("#disks-busy", Static)
        if inventory is None:
            busy.update(Text("Scanning…"))
            return
        palette = self.guide.palette()
        others = [d for d in inventory.disks if not d.available]
        text = Text()
        if not any(d.available for d in inventory.disks):
            text.append("No free disks: every disk is in use or could not be checked.\n", style=palette.warning)
        if others:
            text.append("Not offered:\n", style=palette.muted)
            for disk in others:
                text.append(f"  {disk.name}: {busy_reason(disk)}\n", style=palette.muted)
        busy.update(text)

    def advance(self) -> None:
        guide = self.guide
        if guide.inventory is None:
            self.notify("Still scanning the disks.", severity="warning")
            return
        chosen = set(self.query_one("#disk-list", SelectionList).selected)
        disks = tuple(d for d in guide.inventory.disks if d.name in chosen)
        if not disks:
            self.notify("Pick at least one disk (space), or skip.", severity="warning")
            return
        guide.state = replace(guide.state, disks=disks)
        guide.busy = True
        guide.check_links(disks)
        guide.advance()


class LinksStep(GuideStep):
    def compose(self) -> ComposeResult:
        yield Static(id="links-body")

    def draw(self) -> None:
        guide = self.guide
        body = self.query_one("#links-body", Static)
        if not guide.state.disks:
            body.update(Text("No disks picked: nothing to check. Go back by closing the guide, or skip on."))
            return
        if guide.busy:
            body.update(Text("Checking links, CPU and the plan for the workload…"))
            return
        palette = guide.palette()
        heading = Text(f"Checked {', '.join(d.name for d in guide.state.disks)}", style="bold")
        parts: list[RenderableType] = [heading]
        draft = guide.draft
        if draft is not None and draft.request is not None:
            level = draft.request.level
            name = level if isinstance(level, str) else level.name
            heading.append(f" as a {name} for {guide.state.workload.key if guide.state.workload else 'any use'}")
            for problem in draft.problems:
                parts.append(Text(f"✖ {problem}", style=palette.error))
        parts += [Text(""), findings_renderable(guide.state.findings, palette)]
        body.update(Group(*parts))


class PlanStep(GuideStep):
    _member_runs: list[RunRecord] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="plan-body")

    def draw(self) -> None:
        guide = self.guide
        body = self.query_one("#plan-body", Static)
        palette = guide.palette()
        if guide.state.device is not None and guide.state.plan is not None:
            body.update(Text(f"Created {guide.state.device} ({guide.state.plan.level.name}).", style=palette.good))
            return
        request = guide.draft.request if guide.draft is not None else None
        if request is None:
            body.update(Text("No draft to start from (pick at least two free disks): the create form opens empty."))
            return
        level = request.level if isinstance(request.level, str) else request.level.name
        chunk = f", chunk {request.chunk_kib} KiB" if request.chunk_kib else ""
        lines = [
            Text(f"Suggested: {level} on {', '.join(d.name for d in request.members)}{chunk}", style="bold"),
            Text(""),
            *self._level_table(request.members, request.chunk_kib, level, palette),
            Text(
                "The create form opens with this filled in: change anything, review the plan, and confirm "
                "by typing the device. Nothing is written before that.",
                style=palette.muted,
            ),
        ]
        body.update(Group(*lines))

    def _level_table(
        self, members: Sequence[Disk], chunk_kib: int | None, suggested: str, palette: Palette
    ) -> list[Text]:
        """Every level these members can make, side by side on each workload (the md model over the members'
        stored figures), the workload's own columns first in mind: sequential or random."""
        if self._member_runs is None:
            try:
                self._member_runs = load_member_runs(str(self.guide.db_path))
            except MdtuiError:
                self._member_runs = []  # an unreadable database leaves the table unknown, not the step broken
        sources = member_sources(self._member_runs, members)
        rows = level_table(LEVELS, sources, chunk_bytes=chunk_kib * 1024 if chunk_kib else None)
        if not rows:
            return []
        workload = self.guide.state.workload
        focus = ""
        if workload is not None:
            random = Pattern.SMALL_RANDOM in workload.patterns
            focus = f" ({workload.key}: the {'random' if random else 'sequential'} columns matter most)"
        texts = [Text(f"What each level would do on these members{focus}:", style="bold")]
        for index, line in enumerate(level_table_lines(rows)):
            is_suggested = index > 0 and rows[index - 1].level == suggested
            texts.append(Text(("▸ " if is_suggested else "  ") + line, style="bold" if is_suggested else ""))
        texts += [Text(f"  {s.note}", style=palette.warning) for s in sources if s.figures is None]
        texts.append(Text(""))
        return texts

    def advance(self) -> None:
        guide = self.guide
        if guide.state.device is not None:
            guide.advance()
            return
        inventory = guide.inventory
        if inventory is None:
            self.notify("Still scanning the disks.", severity="warning")
            return
        form = cf.CreateForm(device=cf.next_free_device(inventory))
        request = guide.draft.request if guide.draft is not None else None
        if request is not None:
            form = replace(
                form,
                level=request.level if isinstance(request.level, str) else request.level.name,
                members=tuple(d.name for d in request.members),
                chunk_kib=request.chunk_kib or form.chunk_kib,
            )
        self.app.push_screen(GuideCreateScreen(guide.root, inventory, form), self._created)

    def _created(self, created: Created | None) -> None:
        guide = self.guide
        if created is None:
            guide.update_status("Nothing was created. Plan & create opens the form again; Skip goes on.")
            return
        guide.state = replace(guide.state, plan=created.plan, device=created.outcome.device)
        guide.rescan()
        # The resync view follows the new array's resync; a benchmark during it would mislead.
        self.app.push_screen(ResyncScreen(guide.root, created.plan, created.outcome), lambda _: guide.advance())


class WeakestLinkStep(GuideStep):
    def compose(self) -> ComposeResult:
        yield Static(id="weakest-body")

    def draw(self) -> None:
        guide = self.guide
        body = self.query_one("#weakest-body", Static)
        device = guide.state.device
        if device is None:
            body.update(Text("No array was created in this guide: there is nothing to measure. Skip on."))
            return
        if guide.state.weakest_link_runs:
            stored = [guide.runs[i] for i in guide.state.weakest_link_runs if i in guide.runs]
            shown = core.after_run_findings(guide.inventory, stored)
            parts: list[RenderableType] = [
                Text(f"Stored runs on {device}:", style="bold"),
                run_lines(guide.runs, guide.state.weakest_link_runs),
            ]
            if shown is not None:
                parts += [
                    Text(""),
                    findings_renderable(shown, guide.palette())
                    if shown
                    else Text(
                        "No member stands out and the array keeps pace with them: nothing to fix here.",
                        style=guide.palette().good,
                    ),
                ]
            body.update(Group(*parts))
            return
        intro = Text(
            f"Reads each member of {device} alone, all members at once, then the array (quick mode, read-only): "
            "a stripe runs at its slowest member × N (docs/findings.md, finding 1). Run starts it."
        )
        spoilers = core.before_run_findings(guide.inventory, device) if guide.inventory is not None else ()
        body.update(Group(findings_renderable(spoilers, guide.palette()), intro) if spoilers else intro)

    def advance(self) -> None:
        guide = self.guide
        if guide.state.weakest_link_runs or guide.state.device is None:
            guide.advance()
            return
        guide.busy = True
        guide.cancel.clear()
        guide.run_weakest_link(guide.state.device)


class ExperimentStep(GuideStep):
    FOCUS = "#experiment-choice"

    def compose(self) -> ComposeResult:
        yield Static("One experiment on the new array, stored as labelled runs:", classes="guide-intro")
        with RadioSet(id="experiment-choice"):
            for key in core.GUIDE_EXPERIMENTS:
                yield MarkRadioButton(EXPERIMENT_TITLES[key], value=False)
        yield Static(id="experiment-body")

    def _writes(self) -> bool:
        return core.experiment_writes(self.guide.experiment_key)

    @on(RadioSet.Changed, "#experiment-choice")
    def _experiment_chosen(self, event: RadioSet.Changed) -> None:
        self.guide.experiment_key = core.GUIDE_EXPERIMENTS[event.radio_set.pressed_index]
        if self.guide.step_key == "experiment":
            self.draw()

    def draw(self) -> None:
        guide = self.guide
        body = self.query_one("#experiment-body", Static)
        radio = self.query_one("#experiment-choice", RadioSet)
        if radio.pressed_index < 0:
            buttons = list(radio.query(RadioButton))
            buttons[core.GUIDE_EXPERIMENTS.index(guide.experiment_key)].value = True
        if guide.state.device is None:
            body.update(Text("No array was created in this guide: skip on."))
            return
        result = guide.state.experiment
        if result is not None:
            lines = [Text(f"{EXPERIMENT_TITLES[result.key]}: stored", style="bold")]
            for point in result.runs:
                lines.append(run_lines(guide.runs, point.run_ids))
            lines += [Text(note) for note in result.notes]
            body.update(Group(*lines))
            return
        writes = "Read-only."
        if self._writes():
            writes = "It overwrites the array's data: you confirm it by typing the device."
        body.update(Text(writes, style=guide.palette().muted))

    def advance(self) -> None:
        guide = self.guide
        device = guide.state.device
        if guide.state.experiment is not None or device is None:
            guide.advance()
            return
        key = guide.experiment_key
        if not self._writes():
            self._start(key, device, ())
            return
        body = Text.assemble(
            (f"{EXPERIMENT_TITLES[key]}\n\n", "bold"),
            f"Runs the sync-random preset on {device} twice (before and after switching every core's governor), "
            "writing over the array's data. The previous governors are restored afterwards, even if a run fails.",
        )
        dialog = ConfirmScreen(f"Overwrite {device}", body, device, "Run")

        def confirmed(answer: bool | None) -> None:
            if answer:
                self._start(key, device, (device,))
            else:
                guide.update_status("Not confirmed: nothing ran.")

        self.app.push_screen(dialog, confirmed)

    def _start(self, key: str, device: str, allow_writes_to: tuple[str, ...]) -> None:
        guide = self.guide
        if refused_on_tree(guide, guide.root, "running an experiment"):
            return
        guide.busy = True
        guide.cancel.clear()
        guide.run_experiment(key, device, allow_writes_to)


class SummaryStep(GuideStep):
    def compose(self) -> ComposeResult:
        yield Static(id="summary-body")

    def draw(self) -> None:
        guide = self.guide
        lines = core.summary_lines(guide.state, list(guide.runs.values()))
        self.query_one("#summary-body", Static).update(Text("\n".join(lines)))

    def advance(self) -> None:
        core.mark_guide_seen(self.guide.flag_path)
        self.guide.dismiss(self.guide.state)


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
