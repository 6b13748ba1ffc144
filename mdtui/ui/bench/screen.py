"""The benchmark screen: pick a preset and a target, start, watch throughput and IOPS, cancel, read the result."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    OptionList,
    ProgressBar,
    Select,
    Static,
)
from textual.widgets.option_list import Option

from mdtui.bench.background import Stop, run_bench_in_thread
from mdtui.bench.check import CheckUpdate
from mdtui.bench.output import RESULT_COLUMNS, result_rows
from mdtui.bench.plan import BenchPlan, plan_bench
from mdtui.bench.progress import BenchEvent, StepFinished, StepStarted, StepUpdate
from mdtui.bench.requests import BenchRequest, JobOptions
from mdtui.bench.result import BenchResult
from mdtui.errors import MdtuiError
from mdtui.execute.presets import CUSTOM_WRITE_NOTE, PRESETS, preset
from mdtui.format import duration, rate_mb_s
from mdtui.model.inventory import Inventory
from mdtui.model.job import JobStatus, RwMode
from mdtui.probe.root import SystemRoot
from mdtui.store.records import RunStatus
from mdtui.store.runs import ResultsStore
from mdtui.ui.bench.form import (
    CUSTOM_FIELDS,
    OTHER_TARGET,
    CustomFields,
    active_members,
    custom_options,
    is_array,
    target_options,
)
from mdtui.ui.bench.render import ended_line, findings_renderable, plan_text, status_line
from mdtui.ui.bench.widgets import BenchChart
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.messages import BenchEnded, BenchEventPosted, BenchRefused, failure_reason
from mdtui.ui.common.render import Palette, app_palette
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.common.table import SizedTable
from mdtui.ui.common.toggles import MarkCheckbox
from mdtui.ui.dialogs.confirm import ConfirmScreen

# Presets that measure an md array (its members, its kernel thread and check pass): offered on arrays only.
ARRAY_ONLY = " (arrays only)"


class BenchScreen(MdtuiScreen[None], job_groups=("bench",), job_name="a benchmark", job_stop="cancel_run"):
    """Runs one preset at a time; the core does the work in a worker thread and posts its events here."""

    DEFAULT_CSS = """
    BenchScreen #bench-setup { height: 1fr; }
    BenchScreen #bench-choose { height: 1fr; min-height: 5; }
    BenchScreen #bench-presets { width: 26; height: 1fr; border: none; border-top: solid $panel; }
    BenchScreen #bench-presets:focus { border-top: solid $primary; }
    BenchScreen #bench-doc { width: 1fr; height: 1fr; border: none; border-top: solid $panel; padding: 0 1; }
    BenchScreen .field { height: 1; margin-top: 1; }
    BenchScreen .field Label { width: 8; color: $text-muted; }
    BenchScreen #bench-target { width: 1fr; }
    BenchScreen #bench-quick { margin-left: 2; }
    BenchScreen #bench-start { margin-left: 2; }
    BenchScreen #bench-custom { display: none; height: 1; margin-top: 1; }
    BenchScreen.-custom #bench-custom { display: block; }
    BenchScreen #bench-custom Input { width: 8; margin-right: 1; }
    BenchScreen #bench-custom Select { width: 14; margin-right: 1; }
    BenchScreen #bench-custom Label { width: auto; margin-right: 1; color: $text-muted; }
    BenchScreen #bench-members-row { display: none; height: 1; margin-top: 1; }
    BenchScreen.-members #bench-members-row { display: block; }
    BenchScreen #bench-members-row Label { width: 8; color: $text-muted; }
    BenchScreen #bench-members { width: 1fr; }
    BenchScreen #bench-path-row { display: none; height: 1; margin-top: 1; }
    BenchScreen.-path #bench-path-row { display: block; }
    BenchScreen #bench-path-row Label { width: 8; color: $text-muted; }
    BenchScreen #bench-path { width: 1fr; }
    BenchScreen #bench-plan { height: auto; max-height: 6; margin-top: 1; padding: 0 1; }
    BenchScreen #bench-run { display: none; height: 1fr; }
    BenchScreen.-running #bench-setup, BenchScreen.-ended #bench-setup { display: none; }
    BenchScreen.-running #bench-run, BenchScreen.-ended #bench-run { display: block; }
    BenchScreen #bench-status { height: auto; padding: 0 1; }
    BenchScreen #bench-bar { margin: 0 1; }
    BenchScreen #bench-chart { height: 1fr; min-height: 6; }
    /* After a run the result takes what it needs (up to half), the chart the rest: no blank rows under it. */
    BenchScreen.-ended #bench-chart { height: 1fr; min-height: 8; width: 100%; }
    BenchScreen #bench-result { display: none; height: auto; max-height: 50%; }
    BenchScreen.-ended #bench-result { display: block; }
    BenchScreen #bench-table { height: auto; max-height: 14; }
    BenchScreen #bench-findings { height: auto; padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("ctrl+s", "start", "Start"),
        Binding("x", "cancel_run", "Cancel run"),
        Binding("n", "new_run", "New run"),
    ]

    state: reactive[str] = reactive("setup", init=False)  # setup, running, ended

    def __init__(self, root: str, inventory: Inventory, target: str | None = None) -> None:
        super().__init__()
        self.root = root
        self.inventory = inventory
        self.targets = target_options(inventory)
        listed = {value for _, value in self.targets} - {OTHER_TARGET}
        self.target = target if target in listed else None
        if self.target is None and listed:
            self.target = self.targets[0][1]
        self.preset_key = PRESETS[0].key
        self.quick = True
        self.custom = CustomFields()
        self.members = " ".join(active_members(inventory, self.target))
        self.plan: BenchPlan | None = None
        self.plan_error: str | None = None
        self.result: BenchResult | None = None
        self.running: BenchPlan | None = None  # the plan of the run in progress (or the last one)
        self.stop = Stop()  # set by x, Escape or the screen going away; the running benchmark hears it at once
        self._offset_s = 0.0  # seconds of earlier steps, so the chart runs on across steps
        self._step_elapsed_s = 0.0

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        with Vertical(id="bench-setup"):
            with Horizontal(id="bench-choose"):
                yield OptionList(*(Option(p.title, id=p.key) for p in PRESETS), id="bench-presets")
                with VerticalScroll(id="bench-doc"):
                    yield Static(id="bench-doc-body")
            with Horizontal(classes="field"):
                yield Label("Target")
                yield Select[str](
                    self.targets,
                    value=self.target if self.target is not None else Select.NULL,
                    id="bench-target",
                    compact=True,
                )
                yield MarkCheckbox("Quick", self.quick, id="bench-quick", compact=True)
                yield Button("Start", id="bench-start", variant="primary", compact=True)
            with Horizontal(id="bench-path-row"):
                yield Label("Path")
                yield Input(id="bench-path", compact=True, placeholder="a file or a device, e.g. /srv/fio.dat")
            with Horizontal(id="bench-members-row"):
                yield Label("Members")
                yield Input(self.members, id="bench-members", compact=True, placeholder="devices to measure alone")
            with Horizontal(id="bench-custom"):
                yield Select[str](
                    [(m.value, m.value) for m in RwMode], value=self.custom.rw, id="rw", allow_blank=False, compact=True
                )
                for name, label in (("bs", "bs"), ("iodepth", "QD"), ("numjobs", "jobs"), ("runtime", "s")):
                    yield Label(label)
                    yield Input(getattr(self.custom, name), id=name, compact=True)
            yield Static(id="bench-plan")
        with Vertical(id="bench-run"):
            yield Static(id="bench-status")
            yield ProgressBar(total=100, show_eta=False, id="bench-bar")
            yield BenchChart(id="bench-chart")
            with VerticalScroll(id="bench-result"):
                yield SizedTable(id="bench-table", cursor_type="row", zebra_stripes=True)
                yield Static(id="bench-findings")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = f"benchmark · root {self.root}"
        self.query_one("#bench-presets").border_title = "Preset"
        self.query_one("#bench-doc").border_title = "What it measures"
        table = self.query_one("#bench-table", DataTable)
        table.add_columns(*RESULT_COLUMNS)
        presets = self.query_one("#bench-presets", OptionList)
        self._offer_presets()
        presets.focus()
        self._replan()

    def _offer_presets(self) -> None:
        """Offer the presets that work on the target, and move off one that does not (to one that plans)."""
        presets = self.query_one("#bench-presets", OptionList)
        on_array = is_array(self.inventory, self.target)
        for chosen in PRESETS:
            wrong = chosen.array_target and not on_array
            # Said in words, not only dimmed: without colour a disabled option looks like the others.
            presets.replace_option_prompt(chosen.key, chosen.title + (ARRAY_ONLY if wrong else ""))
            (presets.disable_option if wrong else presets.enable_option)(chosen.key)
        keys = [p.key for p in PRESETS if on_array or not p.array_target]
        if self.preset_key not in keys or presets.highlighted is None:
            self.preset_key = self._first_that_runs(keys)
        presets.highlighted = next(i for i, p in enumerate(PRESETS) if p.key == self.preset_key)

    def _first_that_runs(self, keys: list[str]) -> str:
        """The first preset that plans on the target without a refusal (a busy disk gets a read-only one)."""
        for key in keys:
            if self.target is None:
                break
            try:
                plan = plan_bench(self.request(key), self.inventory, SystemRoot(self.root))
            except MdtuiError:
                continue
            if not plan.refusals:
                return key
        return keys[0]

    def palette(self) -> Palette:
        return app_palette(self.app)

    # -- choosing ----------------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#bench-presets")
    def _preset_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # A disabled preset (an array preset on a disk) is never chosen, even by a late highlight event.
        if event.option.id is not None and not event.option.disabled:
            self.preset_key = event.option.id
            self._replan()

    @on(Select.Changed, "#bench-target")
    def _target_changed(self, event: Select.Changed) -> None:
        target: str | None = event.value if isinstance(event.value, str) else None
        typing = target == OTHER_TARGET
        self.set_class(typing, "-path")
        if typing:
            path = self.query_one("#bench-path", Input)
            target = path.value.strip() or None
            path.focus()
        if target == self.target:
            return
        self._set_target(target)

    @on(Input.Changed, "#bench-path")
    def _path_changed(self, event: Input.Changed) -> None:
        if self.has_class("-path"):
            self._set_target(event.value.strip() or None)

    def _set_target(self, target: str | None) -> None:
        self.target = target
        self.query_one("#bench-members", Input).value = " ".join(active_members(self.inventory, target))
        self._offer_presets()
        self._replan()

    @on(Checkbox.Changed, "#bench-quick")
    def _quick_changed(self, event: Checkbox.Changed) -> None:
        self.quick = event.value
        self._replan()

    @on(Select.Changed, "#rw")
    def _rw_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.custom = CustomFields(event.value, *(getattr(self.custom, n) for n in CUSTOM_FIELDS))
            self._replan()

    @on(Input.Changed, "#bench-members")
    def _members_changed(self, event: Input.Changed) -> None:
        self.members = event.value
        self._replan()

    @on(Input.Changed)
    def _field_changed(self, event: Input.Changed) -> None:
        if event.input.id in CUSTOM_FIELDS:
            values = {name: getattr(self.custom, name) for name in ("rw", *CUSTOM_FIELDS)}
            values[event.input.id] = event.value
            self.custom = CustomFields(**values)
            self._replan()

    def request(self, key: str | None = None) -> BenchRequest:
        key = key or self.preset_key
        options = custom_options(self.custom) if key == "custom" else JobOptions()
        members: tuple[str, ...] = ()
        if key == "weakest-link":
            typed = tuple(self.members.replace(",", " ").split())
            # The array's own members are the preset's default: the request is then the CLI's without --members.
            members = typed if typed != active_members(self.inventory, self.target) else ()
        return BenchRequest(key, self.target or "", quick=self.quick, members=members, options=options)

    def _replan(self) -> None:
        """Plan again from the choices (pure, quick); the panel shows the plan or what to change."""
        chosen = preset(self.preset_key)
        self.set_class(self.preset_key == "custom", "-custom")
        self.set_class(self.preset_key == "weakest-link", "-members")
        try:
            if not self.target:
                raise MdtuiError("no target: pick an array or a disk, or type a path")
            self.plan, self.plan_error = plan_bench(self.request(), self.inventory, SystemRoot(self.root)), None
        except MdtuiError as exc:
            self.plan, self.plan_error = None, str(exc)
        doc = Text(chosen.title + "\n", style="bold")
        doc.append(self._this_run(), style=self.palette().warning)
        # The custom doc's "overwrites when the pattern writes" is what the line above says for this pattern.
        doc.append(chosen.doc.replace(" " + CUSTOM_WRITE_NOTE, "") if chosen.key == "custom" else chosen.doc)
        self.query_one("#bench-doc-body", Static).update(doc)
        self.query_one("#bench-plan", Static).update(plan_text(self.plan, self.plan_error, self.palette()))
        self.refresh_bindings()

    def _this_run(self) -> str:
        """What this run does to the target, from the plan (the custom job's chosen rw) rather than the preset."""
        pattern = f" (rw={self.custom.rw})" if self.preset_key == "custom" else ""
        if self.plan is None:
            may = "may overwrite the target" if preset(self.preset_key).writes else "reads only"
            return f"This run {may}. "
        where = self.plan.target.path
        if self.plan.writes:
            return f"This run overwrites {where}{pattern}. "
        return f"This run only reads {where}{pattern}. "

    # -- starting ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":
            return self.state != "running"
        if action == "cancel_run":
            return self.state == "running"
        if action == "new_run":
            return self.state == "ended"
        return True

    @on(Button.Pressed, "#bench-start")
    def _start_pressed(self) -> None:
        self.action_start()

    def action_start(self) -> None:
        if self.state == "running":
            return
        if self.state == "ended":
            self.action_new_run()
        plan = self.plan
        if plan is None:
            self.notify(self.plan_error or "nothing to run", title="Cannot start", severity="error", timeout=10)
            return
        if refused_on_tree(self, self.root, "running a benchmark"):
            return
        if plan.refusals:
            self.notify("\n".join(plan.refusals), title=f"Will not write to {plan.target.path}", severity="error")
            return
        if not plan.writes:
            self._begin(plan, None)
            return
        body = Text("\n".join(plan.describe()))
        dialog = ConfirmScreen(f"Overwrite {plan.target.path}", body, plan.confirmation, "Run")

        def confirmed(typed: str | None) -> None:
            if typed:
                self._begin(plan, typed)

        self.app.push_screen(dialog, confirmed)

    def _begin(self, plan: BenchPlan, confirmed: str | None) -> None:
        self.result = None
        self._offset_s = self._step_elapsed_s = 0.0
        self.query_one("#bench-chart", BenchChart).clear_points()
        self.query_one("#bench-table", DataTable).clear()
        self.query_one("#bench-findings", Static).update("")
        self.query_one("#bench-bar", ProgressBar).update(total=len(plan.steps) * 100, progress=0)
        self.query_one("#bench-status", Static).update(f"Starting {plan.preset.key} on {plan.target.describe()}…")
        self.state = "running"
        self.running = plan
        self.stop.clear()
        self.run_worker_bench(plan, confirmed)

    @work(thread=True, exclusive=True, exit_on_error=False, group="bench")
    def run_worker_bench(self, plan: BenchPlan, confirmed: str | None) -> None:
        """Thread worker: the core runs the benchmark (bench.background); its events and end become messages."""

        def posted(event: BenchEvent) -> None:
            self.post_message(BenchEventPosted(event))

        try:
            with ResultsStore() as store:
                result = run_bench_in_thread(
                    plan,
                    stop=self.stop,
                    root=SystemRoot(self.root),
                    store=store,
                    confirmed=confirmed,
                    privileged=self.inventory.privileged,
                    on_event=posted,
                )
        except Exception as exc:  # a refusal or failure is a message, never a traceback
            self.log.error("benchmark failed", exc)
            self.post_message(BenchRefused(failure_reason(f"The {plan.preset.key} run", exc)))
            return
        self.post_message(BenchEnded(result))

    # -- watching ----------------------------------------------------------------------------------

    @on(BenchEventPosted)
    def _event(self, message: BenchEventPosted) -> None:
        event = message.event
        status = self.query_one("#bench-status", Static)
        bar = self.query_one("#bench-bar", ProgressBar)
        if isinstance(event, StepStarted):
            self._offset_s += self._step_elapsed_s
            self._step_elapsed_s = 0.0
            status.update(f"[{event.index + 1}/{event.count}] {event.label} · starting")
            bar.update(progress=event.index * 100)
        elif isinstance(event, StepUpdate):
            self._step_elapsed_s = event.elapsed_s
            status.update(status_line(event))
            self.query_one("#bench-chart", BenchChart).add(
                self._offset_s + event.elapsed_s, event.bytes_per_s, event.iops
            )
            if event.step_remaining_s is not None:
                done = event.elapsed_s / max(event.elapsed_s + event.step_remaining_s, 1e-9)
                bar.update(progress=event.index * 100 + 100 * min(done, 1.0))
        elif isinstance(event, StepFinished) and event.outcome.status is JobStatus.COMPLETE:
            # A step cut short (cancelled, failed) keeps the bar where it stopped: it did not run whole.
            bar.update(progress=(event.outcome.index + 1) * 100)
        elif isinstance(event, CheckUpdate):
            checked = f"{event.fraction * 100:.1f}%" if event.fraction is not None else "starting"
            remaining = f" · remaining {duration(event.remaining_s)}" if event.remaining_s is not None else ""
            status.update(f"check pass {checked} · {rate_mb_s(event.speed_bytes_per_s)}{remaining}")

    @on(BenchEnded)
    def _ended(self, message: BenchEnded) -> None:
        result = self.result = message.result
        self.state = "ended"
        self.query_one("#bench-status", Static).update(ended_line(result))
        bar = self.query_one("#bench-bar", ProgressBar)
        bar.update(progress=len(result.steps) * 100 if result.status is RunStatus.COMPLETE else bar.progress)
        table = self.query_one("#bench-table", DataTable)
        table.clear()
        for row in result_rows(result):
            table.add_row(*row)
        self.query_one("#bench-findings", Static).update(findings_renderable(result, self.palette()))

    @on(BenchRefused)
    def _refused(self, message: BenchRefused) -> None:
        self.state = "setup"
        self.notify(message.reason, title="Benchmark not run", severity="error", timeout=15)
        self._replan()

    def watch_state(self) -> None:
        for state in ("running", "ended"):
            self.set_class(self.state == state, f"-{state}")
        self.refresh_bindings()
        if self.state == "ended":
            self.query_one("#bench-table", DataTable).focus()
        elif self.state == "setup":
            self.query_one("#bench-presets", OptionList).focus()

    # -- cancelling and leaving --------------------------------------------------------------------

    def job_subject(self) -> str:
        plan = self.running
        return f"{plan.preset.key} on {plan.target.path}" if plan is not None else "a benchmark"

    def action_cancel_run(self) -> None:
        if self.state == "running":
            self.stop.set()
            self.query_one("#bench-status", Static).update("Cancelling: stopping fio and keeping the figures so far…")

    def action_new_run(self) -> None:
        self.state = "setup"

    def action_back(self) -> None:
        if self.state == "running":
            # Leaving would orphan the run's figures; stop it and stay for the partial result.
            self.action_cancel_run()
            return
        if self.state == "ended":
            self.state = "setup"
            return
        self.dismiss(None)

    def on_unmount(self) -> None:
        # The app is closing (or the screen went away): no fio may outlive it.
        self.stop.set()
