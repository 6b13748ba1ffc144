"""The Tune screen (k on an array in the inventory, or in watch): every knob of one array with its value,
range, suggestion and udev rule; the selected knob explained below, with the sweep that measures it."""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from mdtui.advise.knob_sweep import knob_sweep
from mdtui.advise.runner import BenchRunner
from mdtui.bench.background import Stop
from mdtui.errors import MdtuiError
from mdtui.format import iec_bytes
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.model.job import RwMode
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.database import default_db_path
from mdtui.store.runs import ResultsStore
from mdtui.tune.apply import KnobApplyPlan, apply_knob, plan_knob_apply
from mdtui.tune.catalogue import Scope
from mdtui.tune.journal import KnobChanger
from mdtui.tune.read import KnobReading, read_knobs
from mdtui.tune.udev import NO_RULE, NOT_KEPT, Rule, kept_by_rule, rule_cell, rule_of, rules_for, rules_path
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.render import app_db_path
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.common.table import SizedTable
from mdtui.ui.dialogs.confirm import ConfirmScreen

# The sweep the screen runs: the custom preset, 1 MiB sequential writes, this many seconds per value.
SWEEP_RUNTIME_S = 10


def sweep_values(item: KnobReading) -> list[str]:
    """What the screen sweeps: md's default (or the current value), then the suggestion when it differs."""
    current = item.value.value if item.value else None
    first = item.knob.default if item.knob.default and item.knob.default != "system" else current
    return [v for v in dict.fromkeys([first, item.suggestion.value]) if v]


def sweep_command(array: MdArray, item: KnobReading) -> list[str]:
    """The `mdtui experiment knob` line that measures this knob (what s runs from the screen)."""
    values = sweep_values(item)
    return [
        "mdtui",
        "experiment",
        "knob",
        "--knob",
        item.knob.name,
        "--values",
        ",".join(values or ["VALUE"]),
        "--target",
        array.name,
        "--preset",
        "custom",
        "--rw",
        "write",
        "--bs",
        "1m",
        "--runtime",
        str(SWEEP_RUNTIME_S),
    ]


def knob_detail(array: MdArray, item: KnobReading, rule: Rule | None) -> RenderableType:
    knob = item.knob
    lines: list[RenderableType] = [
        Text(f"{knob.name} on {item.device or 'every array'}", style="bold"),
        Text(knob.what + "."),
        Text(f"now {item.shown}; range {knob.range_text}; file {item.path}"),
        Text(f"field: {knob.field}"),
        Text(f"suggested: {item.suggestion.value or 'leave it'} — {item.suggestion.why}"),
    ]
    if item.memory_bytes is not None:
        more = f"; the suggestion {iec_bytes(item.suggested_memory_bytes)}" if item.suggested_memory_bytes else ""
        lines.append(Text(f"memory now {iec_bytes(item.memory_bytes)}{more}"))
    if rule is not None:
        live = item.value.value if item.value else None
        differs = "" if live == rule.value else f" (live value {live} differs)"
        lines.append(Text(f"udev rule in {rules_path()}: {rule.value}{differs}"))
    elif kept_by_rule(knob):
        lines.append(Text(f"rule {NO_RULE}: no udev rule keeps it, so a reboot brings back the kernel's value"))
    else:
        lines.append(Text(f"rule {NOT_KEPT}: a member's knob or a global limit, which no array rule keeps"))
    if item.value is not None and knob.scope is not Scope.GLOBAL:
        values = sweep_values(item)
        if len(values) > 1:
            # What s runs here, in the same values as the command below (not a longer list from elsewhere).
            lines.append(Text(f"s sweeps {', '.join(values)}: {SWEEP_RUNTIME_S} s of 1 MiB sequential writes each"))
        lines.append(Text("measure it: " + shlex.join(sweep_command(array, item)), style="dim"))
        if knob.scope is not Scope.MEMBER:
            value = item.suggestion.value or "VALUE"
            lines.append(Text(f"keep it: a applies {knob.name}={value} now and in the udev rule", style="dim"))
    return Group(*lines)


class TuneRead(Message, bubble=False):
    """The array's knobs as read now (read_worker)."""

    def __init__(
        self, inventory: Inventory, array: MdArray, readings: list[KnobReading], rules: dict[str, Rule]
    ) -> None:
        super().__init__()
        self.inventory = inventory
        self.array = array
        self.readings = readings
        self.rules = rules


class TuneReadFailed(Message, bubble=False):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class TuneChanged(Message, bubble=False):
    """A knob apply or sweep ended: what happened, in lines for the status panel."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class TuneScreen(MdtuiScreen[None], job_groups=("tune-sweep",), job_name="a knob sweep", job_stop="back"):
    BINDINGS = [
        Binding("escape", "back", "Back / stop"),
        Binding("r", "reread", "Read again"),
        Binding("s", "sweep", "Sweep"),
        Binding("a", "apply", "Apply"),
    ]
    DEFAULT_CSS = """
    TuneScreen #tune-table { height: 1fr; }
    TuneScreen #tune-status { height: auto; max-height: 8; padding: 0 1; display: none; }
    TuneScreen #tune-status.-shown { display: block; }
    TuneScreen #tune-detail { height: auto; max-height: 50%; border-top: solid $primary; padding: 0 1; }
    """

    def __init__(self, root: str, array: str | None, db_path: Path | None = None) -> None:
        super().__init__()
        self.root = root
        self.db_path = db_path
        self.cancel = Stop()
        self.sweeping = False
        self.wanted = array.removeprefix("/dev/") if array else None
        self.array: MdArray | None = None
        self.readings: list[KnobReading] = []
        self.rules: dict[str, Rule] = {}
        self.inventory: Inventory | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield SizedTable(id="tune-table", cursor_type="row", zebra_stripes=False)
        yield Static(id="tune-status")
        with VerticalScroll(id="tune-detail"):
            yield Static(Text("Reading knobs…"), id="tune-body")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.title = "mdtui"
        table = self.query_one("#tune-table", DataTable)
        table.add_columns("Knob", "Device", "Now", "Suggested", "Rule")
        table.focus()
        self.action_reread()

    def action_back(self) -> None:
        if self.sweeping:
            # The run in progress stops with its figures kept; the sweep puts the original value back.
            self.cancel.set()
            self.notify("Stopping the sweep after the current run; the original value is put back.")
            return
        self.dismiss()

    def selected(self) -> KnobReading | None:
        row = self.query_one("#tune-table", DataTable).cursor_row
        return self.readings[row] if 0 <= row < len(self.readings) else None

    def action_sweep(self) -> None:
        """Measure the selected knob: one stored write run per value (typed confirmation), originals restored."""
        item, array = self.selected(), self.array
        if item is None or array is None or self.sweeping:
            return
        if refused_on_tree(self, self.root, "a knob sweep (fio writes, knob writes)"):
            return
        values = sweep_values(item)
        if item.value is None or item.knob.scope is Scope.GLOBAL or len(values) < 2:
            self.notify(f"Nothing to sweep for {item.knob.name} here: no second value to compare.", severity="warning")
            return
        body = Text.assemble(
            (f"Sweep {item.knob.name} on {array.name}: {', '.join(values)}\n\n", "bold"),
            f"One {SWEEP_RUNTIME_S} s run of 1 MiB sequential writes per value, writing over {array.dev_path}'s "
            "data. Every original value is journalled first and put back afterwards, whatever happens; "
            "Escape stops after the current run.",
        )

        def confirmed(typed: str | None) -> None:
            if typed:
                self.sweeping = True
                self.cancel.clear()
                self._status(f"Sweeping {item.knob.name} on {array.name}: {', '.join(values)}… (Escape stops)")
                self.sweep_worker(array, item, values, typed)

        self.app.push_screen(ConfirmScreen(f"Overwrite {array.dev_path}", body, array.dev_path, "Sweep"), confirmed)

    def action_apply(self) -> None:
        """Set the selected knob to its suggestion now and in the udev rule: the plan and typed confirmation
        of `mdtui tune --apply`, refused on a captured tree."""
        item, array = self.selected(), self.array
        if item is None or array is None or self.sweeping:
            return
        knob, value = item.knob, item.suggestion.value
        if knob.scope not in (Scope.MD, Scope.QUEUE):
            self.notify(
                f"{knob.name} is not kept by a udev rule of the array: nothing to apply here.", severity="warning"
            )
            return
        if not value:
            self.notify(f"No suggested value for {knob.name}: nothing to apply.", severity="warning")
            return
        if refused_on_tree(self, self.root, "changing a knob"):
            return
        try:
            plan = plan_knob_apply(SystemRoot(self.root), array, knob, value, self.inventory)
        except MdtuiError as exc:
            self.notify(str(exc), title=f"Cannot apply {knob.name}", severity="error", timeout=10)
            return
        headline, diff = plan.describe()
        body = Text.assemble((headline + "\n\n", "bold"), diff)

        def confirmed(typed: str | None) -> None:
            if typed:
                self.apply_worker(plan, typed)

        dialog = ConfirmScreen(f"Set {knob.name}={plan.value} on {array.name}", body, plan.confirmation, "Apply")
        self.app.push_screen(dialog, confirmed)

    @work(thread=True, exclusive=True, exit_on_error=False, group="tune-apply")
    def apply_worker(self, plan: KnobApplyPlan, confirmed: str) -> None:
        try:
            text = apply_knob(plan, confirmed=confirmed, root=SystemRoot(self.root)).lines()[0]
        except Exception as exc:  # a refusal or failure is a line on screen, never a traceback
            text = f"{plan.knob.name} not applied: {exc}"
        self.post_message(TuneChanged(text))

    @work(thread=True, exclusive=True, exit_on_error=False, group="tune-sweep")
    def sweep_worker(self, array: MdArray, item: KnobReading, values: list[str], confirmed: str) -> None:
        root = SystemRoot(self.root)
        db_path = self.db_path or app_db_path(self.app) or default_db_path()
        changer = KnobChanger(root, purpose=f"a knob sweep of {item.knob.name} on {array.name}")
        try:
            with ResultsStore(db_path) as store:
                runner = BenchRunner(store, root, allow_writes_to=(confirmed,), cancel=self.cancel)
                result = knob_sweep(
                    runner,
                    array,
                    item.knob,
                    values,
                    root=root,
                    store=store,
                    preset_key="custom",
                    changer=changer,
                    rw=RwMode.WRITE,
                    block_size_bytes=1 << 20,
                    runtime_s=SWEEP_RUNTIME_S,
                    cancel=self.cancel,
                )
            lines = [f"{point.label}: runs {', '.join(f'#{i}' for i in point.run_ids)}" for point in result.runs]
            text = "\n".join([*result.notes, *lines, "Compare them in the results history (h)."])
        except Exception as exc:  # the sweep restored the knob before raising; say why it stopped and what came back
            text = "\n".join([f"The sweep stopped: {exc}", *(item.text for item in changer.restored)])
        self.post_message(TuneChanged(text))

    @on(TuneChanged)
    def _changed(self, message: TuneChanged) -> None:
        self.sweeping = False
        self._status(message.text)
        self.action_reread()

    def action_reread(self) -> None:
        self.read_worker()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def read_worker(self) -> None:
        try:
            root = SystemRoot(self.root)
            inventory = scan(root)
            arrays = inventory.arrays
            array = inventory.array(self.wanted) if self.wanted else (arrays[0] if arrays else None)
            if array is None:
                raise MdtuiError(f"no array {self.wanted}" if self.wanted else "no md arrays here: nothing to tune")
            readings = read_knobs(root, array, inventory)
            rules = rules_for(array, root=root)
        except MdtuiError as exc:
            self.post_message(TuneReadFailed(str(exc)))
            return
        self.post_message(TuneRead(inventory, array, readings, rules))

    def _status(self, text: str) -> None:
        status = self.query_one("#tune-status", Static)
        status.update(Text(text))
        status.set_class(bool(text), "-shown")

    @on(TuneReadFailed)
    def _failed(self, message: TuneReadFailed) -> None:
        self.query_one("#tune-body", Static).update(Text(message.reason, style="bold"))

    @on(TuneRead)
    def _show(self, message: TuneRead) -> None:
        array, readings, rules = message.array, message.readings, message.rules
        self.inventory, self.array, self.readings, self.rules = message.inventory, array, readings, rules
        self.sub_title = f"tune {array.name} · {array.level or '?'} · root {self.root}"
        table = self.query_one("#tune-table", DataTable)
        table.clear()
        for index, item in enumerate(readings):
            table.add_row(
                item.knob.name,
                item.device or "all",
                item.shown,
                item.suggestion.value or "leave",
                rule_cell(item.knob, item.value.value if item.value else None, rules),
                key=str(index),
            )
        self._detail(0)

    def _detail(self, index: int) -> None:
        if self.array is None or not 0 <= index < len(self.readings):
            return
        item = self.readings[index]
        self.query_one("#tune-body", Static).update(knob_detail(self.array, item, rule_of(item.knob, self.rules)))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)
