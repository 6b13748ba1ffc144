"""The Textual app: registers themes, opens the inventory screen, and holds the app-wide keys."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textual import on
from textual.app import App
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.screen import Screen

from mdtui.probe.inventory import ScanAhead
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.palette import MdtuiCommands
from mdtui.ui.themes import default_theme_dirs, load_themes, pick_default, save_theme, saved_theme, user_config_path

# Screens are imported when first opened, the results store when first used, and the start-up checks
# of the live system (knobs and arrays a killed run left behind) only on it: launching loads only what
# the first screen needs.


# The header's badge under --root DIR: a captured tree is only read.
READ_ONLY_BADGE = "READ-ONLY tree"

# A notice may carry its own title before this separator; one without is something a killed run left behind.
NOTICE_TITLE_END = "\x1f"


class HostReportRead(Message, bubble=False):
    """What `mdtui doctor` or `mdtui calibrate --dry-run` prints, read in a worker (show_host_report)."""

    def __init__(self, title: str, body: Any) -> None:
        super().__init__()
        self.title = title
        self.body = body


class MdtuiApp(App[None]):
    """mdtui's terminal UI over one system root ("/" live, or a captured tree for tests)."""

    TITLE = "mdtui"
    CSS_PATH = "app.tcss"
    ENABLE_COMMAND_PALETTE = True
    COMMANDS = App.COMMANDS | {MdtuiCommands}

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        # What Ctrl+C does in every other terminal program (Textual's own only says how to quit); asked first
        # while a benchmark or sweep runs, as q is. Priority: a text field's copy does not take it.
        Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("t", "change_theme", "Theme"),
        # Shown among the keys (third, ui.common.screen), not docked at the right where 80 columns cut it.
        Binding("ctrl+p", "command_palette", "Palette", key_display="^p", priority=True),
        # Not in the footer: every screen would show it; the help screen and the palette name it. A table
        # leaves g to it (its first row is Home).
        Binding("g", "guide", "Guide", show=False),
    ]

    def __init__(
        self,
        root: str = "/",
        *,
        privileged: bool | None = None,
        theme_dirs: Sequence[Path] | None = None,
        start_screen: Callable[[], Screen[None]] | None = None,
        db_path: str | Path | None = None,
        show_guide: bool = False,
        notices: Sequence[str] = (),
        scan_ahead: ScanAhead | None = None,
        first_screen_drawn: Callable[[], None] | None = None,
        tree_stands_for_live: bool = False,
        config_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.root = root
        # A captured tree (--root) is only read: create, teardown, benchmarks, sweeps and experiments are
        # refused at their key (ui.common.live). Only the tests, whose runners and mdadm are fakes that
        # never touch a device, let a tree stand for a live host to drive those flows.
        self.tree_stands_for_live = tree_stands_for_live
        # Said in every screen's header: nothing here acts on a device (ui.common.live refuses it at the key).
        self.read_only_tree = not tree_stands_for_live and not SystemRoot(root).is_live
        self.privileged = privileged
        # The results database as the CLI finds it ($MDTUI_DB, then XDG), unless a test passes its own.
        self._db_path = Path(db_path).expanduser() if db_path is not None else None
        self._theme_dirs = tuple(theme_dirs) if theme_dirs is not None else default_theme_dirs()
        # The theme is set before the app starts, so its CSS is parsed once with the theme's colours:
        # set at mount, it parsed every rule a second time and restyled every widget.
        loaded = load_themes(self._theme_dirs)
        for loaded_theme in loaded.themes:
            self.register_theme(loaded_theme)
        problems = list(loaded.problems)
        names = [theme.name for theme in loaded.themes]
        theme = pick_default(names)
        # The theme picked last time (run_app passes the user's config; tests and a bare app remember nothing).
        self._config_path = config_path
        self._saved_theme: str | None = None
        if config_path is not None:
            saved, problem = saved_theme(config_path)
            if problem:
                problems.append(problem)
            self._saved_theme = saved
            if saved is not None:
                if saved in self.available_themes:
                    theme = saved
                else:
                    problems.append(f"The saved theme {saved!r} is not installed; {theme} is used")
        self._theme_problems = tuple(problems)
        self.theme = theme
        # `mdtui watch` opens on the dashboard alone; made at mount, when there is an app to attach to.
        self._start_screen = start_screen
        # The guided flow opens by itself on a first run (run_app decides); g opens it any time.
        self._show_guide = show_guide
        # Said once at the start: arrays a killed experiment left behind (mdtui.execute.leftovers).
        self._notices = tuple(notices)
        # The inventory's first scan, begun before the app was loaded (mdtui.__main__); its screen takes it.
        self._scan_ahead = scan_ahead
        self._first_screen_drawn = first_screen_drawn  # called once the inventory's first rows are drawn
        # Screens whose job was left running (ui.common.screen): installed name -> the job in words.
        # Screens left running a job: installed name → (the job in words, what it works on), for the palette.
        self.background_jobs: dict[str, tuple[str, str]] = {}

    @property
    def db_path(self) -> Path:
        """The results database; found when first asked (the store's module is not loaded at launch)."""
        if self._db_path is None:
            from mdtui.store.database import default_db_path

            self._db_path = default_db_path()
        return self._db_path

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        for problem in self._theme_problems:
            self.notify(problem, severity="warning", timeout=10)
        for notice in self._notices:
            title, _, text = (
                notice.partition(NOTICE_TITLE_END) if NOTICE_TITLE_END in notice else ("Left behind", "", notice)
            )
            self.notify(text, title=title, severity="warning", timeout=30)
        if self._start_screen is not None:
            self.push_screen(self._start_screen())
        else:
            from mdtui.ui.inventory.screen import InventoryScreen

            self.push_screen(
                InventoryScreen(self.root, self.privileged, self._scan_ahead, drawn=self._first_screen_drawn)
            )
            if self._show_guide:
                self.action_guide()

    def format_title(self, title: str, sub_title: str) -> Content:
        """Every header; under --root DIR it opens with a READ-ONLY badge (words, reversed: read without colour)."""
        formatted = super().format_title(title, sub_title)
        if not self.read_only_tree:
            return formatted
        return Content.assemble((f" {READ_ONLY_BADGE} ", "bold reverse"), " ", formatted)

    def _remember_theme(self, theme: object) -> None:
        if self._config_path is None or self.theme == self._saved_theme:
            return
        self._saved_theme = self.theme
        problem = save_theme(self._config_path, self.theme)
        if problem:
            self.notify(problem, severity="warning", timeout=10)

    async def action_interrupt(self) -> None:
        """Ctrl+C: quit, after the running job's question (stop it and quit, or stay) when there is one."""
        from mdtui.ui.common.screen import JobQuestion, MdtuiScreen

        if isinstance(self.screen, JobQuestion):
            return  # the question is on screen already: its answer decides
        # A job under a dialog runs on: it is asked about as well.
        running = [screen for screen in self.screen_stack if isinstance(screen, MdtuiScreen) and screen.job_running()]
        if running:
            running[-1].ask_before_leaving(quitting=True)
            return
        self.exit()

    def action_help(self) -> None:
        from mdtui.ui.help.screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(type(self.screen).__name__))

    # -- the command palette's actions (ui.common.palette) ------------------------------------------

    def palette_go(self, name: str) -> None:
        """Open a screen or start an action by name, from wherever the user is."""
        if name == "help":
            self.action_help()
        elif name == "theme":
            self.action_change_theme()
        elif name == "guide":
            self.action_guide()
        elif name == "findings":
            self.action_findings()
        elif name in ("doctor", "calibrate"):
            self.show_host_report(name)
        elif name in ("results", "compare", "export"):
            from mdtui.ui.results.screen import ResultsScreen

            if name == "export" and isinstance(self.screen, ResultsScreen):
                self.screen.call_later(self.screen.run_action, "export")
                return
            self.action_history()
            if name == "compare":
                self.notify("Mark runs with space, then c compares them.", timeout=8)
            elif name == "export":
                self.notify("Mark runs with space (none: all shown), then e exports them.", timeout=8)
        else:
            inventory = self._inventory_on_top()
            if inventory is None or name == "inventory":
                return
            if hasattr(inventory, f"action_{name}"):
                inventory.call_later(inventory.run_action, name)
            else:
                self.notify(
                    f"On the command line: `mdtui {name} ARRAY` (see mdtui {name} --help).", title=name, timeout=10
                )

    def palette_preset(self, key: str) -> None:
        """The bench screen on the selected target with the preset ``key`` chosen."""
        inventory = self._inventory_on_top()
        if inventory is None:
            return
        inventory.call_later(self._open_preset, inventory, key)

    async def _open_preset(self, inventory: Screen[Any], key: str) -> None:
        from mdtui.ui.bench.screen import BenchScreen

        await inventory.run_action("bench")
        bench = self.screen
        if isinstance(bench, BenchScreen):
            self.choose_preset(bench, key)

    def choose_preset(self, bench: Screen[Any], key: str) -> None:
        """Highlight the preset ``key`` on a bench screen just opened (once it has laid out its list)."""
        from textual.widgets import OptionList

        from mdtui.execute.presets import PRESETS

        def choose() -> None:
            keys = [preset.key for preset in PRESETS]
            if key in keys:
                bench.query_one("#bench-presets", OptionList).highlighted = keys.index(key)

        bench.call_after_refresh(choose)

    def palette_resume(self, name: str) -> None:
        """Bring back a screen whose job was left running in the background."""
        if self.background_jobs.pop(name, None) is not None and self.is_screen_installed(name):
            self.push_screen(name)

    def _inventory_on_top(self) -> Screen[Any] | None:
        """The inventory, with the screens above it closed; None (after saying why) when a job runs above it."""
        from mdtui.ui.common.screen import MdtuiScreen
        from mdtui.ui.inventory.screen import InventoryScreen

        stack = self.screen_stack
        inventory = next((screen for screen in stack if isinstance(screen, InventoryScreen)), None)
        if inventory is None:
            self.notify("There is no inventory in this session (mdtui watch): quit and run mdtui.", timeout=8)
            return None
        above = stack[stack.index(inventory) + 1 :]
        for screen in above:
            if isinstance(screen, MdtuiScreen) and screen.job_running():
                self.notify(
                    f"{screen.job_name.capitalize()} is running: Esc on its screen first (stop it or keep it "
                    "running in the background).",
                    severity="warning",
                    timeout=8,
                )
                return None
        for _ in above:
            self.pop_screen()
        return inventory

    def action_guide(self) -> None:
        """The guided flow (g): purpose, disks, links, plan and create, a weakest-link run, one experiment."""
        from mdtui.ui.guide.screen import GuideScreen

        if not isinstance(self.screen, GuideScreen):
            self.push_screen(GuideScreen(self.root, db_path=self.db_path, privileged=self.privileged))

    def action_findings(self, array: str | None = None) -> None:
        """The findings view (F on the inventory; *findings*, *advise*, *experiment* in the palette), of the whole
        host or, given ``array``, that array's own findings first."""
        from mdtui.ui.findings.screen import FindingsScreen
        from mdtui.ui.inventory.screen import InventoryScreen

        if isinstance(self.screen, FindingsScreen):
            return
        inventory = next((s.inventory for s in self.screen_stack if isinstance(s, InventoryScreen)), None)
        self.push_screen(
            FindingsScreen(self.root, self.db_path, array=array, inventory=inventory, privileged=self.privileged)
        )

    def show_host_report(self, name: str) -> None:
        """*doctor* and *calibrate* in the palette: what `mdtui doctor` and `mdtui calibrate --dry-run` print, read
        in a thread and shown full screen."""

        def read() -> None:
            from mdtui.ui.common.reports import calibrate_report, doctor_report

            title, body = doctor_report(self.root) if name == "doctor" else calibrate_report(self.root)
            self.post_message(HostReportRead(title, body))

        self.run_worker(read, thread=True, group="host-report", exit_on_error=False)

    @on(HostReportRead)
    def _show_report(self, message: HostReportRead) -> None:
        from mdtui.ui.dialogs.detail import DetailScreen

        self.push_screen(DetailScreen(message.title, message.body))

    def action_history(self) -> None:
        """The results history (h); opened once, so h on it does not stack another."""
        from mdtui.ui.results.screen import ResultsScreen

        if not isinstance(self.screen, ResultsScreen):
            self.push_screen(ResultsScreen(self.db_path))


def run_app(
    root: str = "/",
    start_screen: Callable[[], Screen[None]] | None = None,
    scan_ahead: ScanAhead | None = None,
    first_screen_drawn: Callable[[], None] | None = None,
) -> int:
    """Run the app until the user quits; the exit code for the shell. ``scan_ahead``: the inventory's first
    scan, begun before the app was loaded; ``first_screen_drawn``: called once its first rows are drawn."""
    first_run = False
    notices: list[str] = []
    if SystemRoot(root).is_live:  # a captured tree (--root) has no results of its own, nor knobs to put back
        from mdtui.advise.guide import should_show_guide
        from mdtui.execute.leftovers import leftover_notices
        from mdtui.store.database import default_db_path
        from mdtui.tune.journal import knobs_at_start
        from mdtui.tune.safety_journal import safety_at_start

        first_run = start_screen is None and root == "/" and should_show_guide(default_db_path())
        # Knobs a killed knob sweep left changed are put back first (mdtui.tune.journal), and said once.
        notices = [*knobs_at_start(root), *safety_at_start(root), *leftover_notices(root)]
        if first_run:
            from mdtui.probe.host import missing_pieces

            missing = missing_pieces(SystemRoot(root))
            if missing:
                notices.append(
                    f"Missing on this host{NOTICE_TITLE_END}" + "; ".join(missing) + ". `mdtui doctor` says more."
                )
    app = MdtuiApp(
        root=root, start_screen=start_screen, show_guide=first_run, notices=notices, scan_ahead=scan_ahead,
        first_screen_drawn=first_screen_drawn, config_path=user_config_path(),
    )  # fmt: skip
    app.run()
    return app.return_code or 0
