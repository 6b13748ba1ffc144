"""The findings view (F on the inventory, *findings*/*advise* in the palette): every finding `mdtui advise` makes,
in its order, with one finding's evidence, why, what to do and its experiment below; opened on an array, that
array's own findings first, and a for the whole host."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from mdtui.advise.about import NO_FINDINGS, about_array, array_of, experiment_command, subjects
from mdtui.advise.findings import Finding
from mdtui.errors import MdtuiError
from mdtui.format import plural
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.messages import ActionFailed, failure_reason
from mdtui.ui.common.render import Palette, app_palette
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.findings.render import finding_detail, finding_line, severity_counts

# The experiments the bench screen runs as a preset on the finding's array (b here opens it with the preset).
BENCH_EXPERIMENTS = ("weakest-link", "parity-cost")


class FindingsFound(Message, bubble=False):
    """The core's findings of this root (read_findings)."""

    def __init__(self, findings: tuple[Finding, ...]) -> None:
        super().__init__()
        self.findings = findings


class FindingsScreen(MdtuiScreen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("a", "toggle_scope", "All / this array"),
        Binding("b", "experiment", "Run its experiment"),
        Binding("r", "reread", "Look again"),
    ]
    DEFAULT_CSS = """
    FindingsScreen #findings-status { height: auto; padding: 0 1; background: $panel; }
    /* One line per finding, cut with an ellipsis: a wrapped title's second line would read as another finding. */
    FindingsScreen #findings-list {
        height: 40%; min-height: 4; border: none; border-top: solid $panel; text-wrap: nowrap; text-overflow: ellipsis;
    }
    FindingsScreen #findings-detail { height: 1fr; border-top: solid $panel; padding: 0 1; }
    """

    def __init__(
        self,
        root: str,
        db_path: Path | None,
        *,
        array: str | None = None,
        inventory: Inventory | None = None,
        privileged: bool | None = None,
    ) -> None:
        super().__init__()
        self.root = root
        self.db_path = db_path
        self.array_name = array.removeprefix("/dev/") if array else None
        self.inventory = inventory
        self.privileged = privileged
        self.findings: tuple[Finding, ...] | None = None
        self.shown: tuple[Finding, ...] = ()
        self.whole_host = array is None
        self._palette = Palette()

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        yield Static(Text("Looking at the disks, arrays, CPU, kernel log and stored runs…"), id="findings-status")
        yield OptionList(id="findings-list")
        with VerticalScroll(id="findings-detail"):
            yield Static(id="findings-body")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = f"findings · root {self.root}"
        self._palette = app_palette(self.app)
        self.query_one("#findings-list").border_title = "Findings"
        self.query_one("#findings-list", OptionList).focus()
        self.action_reread()

    # -- reading -----------------------------------------------------------------------------------

    def action_reread(self) -> None:
        self.query_one("#findings-status", Static).update(
            Text("Looking at the disks, arrays, CPU, kernel log and stored runs…")
        )
        # The first look takes the inventory's scan (what the user sees there); r scans again.
        self.read_findings(self.inventory if self.findings is None else None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="findings")
    def read_findings(self, inventory: Inventory | None) -> None:
        """Thread worker: the core's findings of this root (a live host is sampled for a second)."""
        from mdtui.advise.host import host_findings

        try:
            found = host_findings(
                SystemRoot(self.root), db=self.db_path, privileged=self.privileged, inventory=inventory
            )
        except (MdtuiError, OSError) as exc:
            self.post_message(ActionFailed("findings", failure_reason("Looking for findings", exc)))
            return
        self.post_message(FindingsFound(found))

    @on(ActionFailed)
    def _failed(self, message: ActionFailed) -> None:
        self.query_one("#findings-status", Static).update(Text(f"✖ {message.reason}", style=self._palette.error))

    @on(FindingsFound)
    def _show(self, message: FindingsFound) -> None:
        self.findings = message.findings
        self._fill()

    def _fill(self) -> None:
        findings = self.findings
        if findings is None:
            return
        shown = findings
        scope = "this host"
        if not self.whole_host and self.array_name is not None:
            array = self.inventory.array(self.array_name) if self.inventory is not None else None
            if array is not None:
                shown = about_array(findings, array)
            else:  # no inventory to know its members: the findings that name the array itself
                shown = tuple(f for f in findings if self.array_name in subjects(f))
            scope = self.array_name
        self.shown = shown
        options = self.query_one("#findings-list", OptionList)
        options.clear_options()
        options.add_options([Option(finding_line(f, self._palette), id=f.id) for f in shown])
        self.query_one("#findings-list").border_title = f"Findings about {scope}"
        self.query_one("#findings-status", Static).update(self._status(findings, shown, scope))
        if shown:
            options.highlighted = 0
            self._detail(shown[0])
        else:
            self.query_one("#findings-body", Static).update(Text(""))
        self.refresh_bindings()

    def _status(self, findings: tuple[Finding, ...], shown: tuple[Finding, ...], scope: str) -> Text:
        if not findings:
            return Text(NO_FINDINGS, style=self._palette.good)
        counts = severity_counts(shown)
        text = Text(f"{plural(len(shown), 'finding')} about {scope}")
        if counts:
            text.append(": " + counts)
        if not self.whole_host:
            text.append(f" · {len(findings) - len(shown)} more on this host (a shows all)")
        elif self.array_name is not None:
            text.append(f" · a: only {self.array_name}'s")
        if not shown:
            text.append(f"\nNothing mdtui checks for is wrong with {scope}.", style=self._palette.good)
        return text

    # -- the selected finding --------------------------------------------------------------------------

    def selected(self) -> Finding | None:
        options = self.query_one("#findings-list", OptionList)
        index = options.highlighted
        return self.shown[index] if index is not None and 0 <= index < len(self.shown) else None

    @on(OptionList.OptionHighlighted, "#findings-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        finding = self.selected()
        if finding is not None:
            self._detail(finding)
        self.refresh_bindings()

    def _detail(self, finding: Finding) -> None:
        body = finding_detail(finding, self._palette)
        if finding.experiment in BENCH_EXPERIMENTS and experiment_command(finding) is not None:
            body = Group(body, Text(""), Text("b opens the bench screen with this preset on its array.", style="dim"))
        self.query_one("#findings-body", Static).update(body)
        self.query_one("#findings-detail", VerticalScroll).scroll_home(animate=False)

    # -- keys --------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_scope":
            return self.array_name is not None
        if action == "experiment":
            finding = self.selected()
            return (
                self.inventory is not None
                and finding is not None
                and finding.experiment in BENCH_EXPERIMENTS
                and _array_target(finding) is not None
            )
        return True

    def action_back(self) -> None:
        self.dismiss()

    def action_toggle_scope(self) -> None:
        self.whole_host = not self.whole_host
        self._fill()

    def action_experiment(self) -> None:
        """The bench screen on the finding's array with its experiment's preset chosen (weakest-link, parity-cost)."""
        finding = self.selected()
        if finding is None or self.inventory is None or finding.experiment not in BENCH_EXPERIMENTS:
            return
        target = _array_target(finding)
        if target is None:
            return
        from mdtui.ui.bench.screen import BenchScreen

        bench = BenchScreen(self.root, self.inventory, target)
        self.app.push_screen(bench)
        choose = getattr(self.app, "choose_preset", None)
        if choose is not None:
            choose(bench, finding.experiment)


def _array_target(finding: Finding) -> str | None:
    array = array_of(finding)
    return f"/dev/{array}" if array else None
