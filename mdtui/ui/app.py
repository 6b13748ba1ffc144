"""The Textual app: registers themes, opens the inventory screen, and holds the app-wide keys."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from mdtui.probe.inventory import ScanAhead
from mdtui.probe.root import SystemRoot
from mdtui.ui.themes import default_theme_dirs, load_themes, pick_default, save_theme, saved_theme, user_config_path

# Screens are imported when first opened, the results store when first used, and the start-up checks
# of the live system (knobs and arrays a killed run left behind) only on it: launching loads only what
# the first screen needs.


# A notice may carry its own title before this separator; one without is something a killed run left behind.
NOTICE_TITLE_END = "\x1f"


class MdtuiApp(App[None]):
    """mdtui's terminal UI over one system root ("/" live, or a captured tree for tests)."""

    TITLE = "mdtui"
    CSS_PATH = "app.tcss"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("t", "change_theme", "Theme"),
        # Not in the footer: every screen would show it; the help screen names it.
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
        self.privileged = privileged
        # The results database as the CLI finds it ($MDTUI_DB, then XDG), unless a test passes its own.
        self._db_path = Path(db_path).expanduser() if db_path is not None else None
        self._theme_dirs = tuple(theme_dirs) if theme_dirs is not None else default_theme_dirs()
        # The theme is set before the app starts, so its CSS is parsed once with the theme's colours:
        # set at mount, it parsed every rule a second time and restyled every widget.
        loaded = load_themes(self._theme_dirs)
        for theme in loaded.themes:
            self.register_theme(theme)
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
        # Said once at the start: arrays a killed experiment left behind (mdtui.run.leftovers).
        self._notices = tuple(notices)
        # The inventory's first scan, begun before the app was loaded (mdtui.__main__); its screen takes it.
        self._scan_ahead = scan_ahead
        self._first_screen_drawn = first_screen_drawn  # called once the inventory's first rows are drawn

    @property
    def db_path(self) -> Path:
        """The results database; found when first asked (the store's module is not loaded at launch)."""
        if self._db_path is None:
            from mdtui.store.db import default_db_path

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

    def _remember_theme(self, theme: object) -> None:
        if self._config_path is None or self.theme == self._saved_theme:
            return
        self._saved_theme = self.theme
        problem = save_theme(self._config_path, self.theme)
        if problem:
            self.notify(problem, severity="warning", timeout=10)

    def action_help(self) -> None:
        from mdtui.ui.help.screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_guide(self) -> None:
        """The guided flow (g): purpose, disks, links, plan and create, a weakest-link run, one experiment."""
        from mdtui.ui.guide.screen import GuideScreen

        if not isinstance(self.screen, GuideScreen):
            self.push_screen(GuideScreen(self.root, db_path=self.db_path, privileged=self.privileged))

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
        from mdtui.run.leftovers import leftover_notices
        from mdtui.store.db import default_db_path
        from mdtui.tune.journal import knobs_at_start

        first_run = start_screen is None and root == "/" and should_show_guide(default_db_path())
        # Knobs a killed knob sweep left changed are put back first (mdtui.tune.journal), and said once.
        notices = [*knobs_at_start(root), *leftover_notices(root)]
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
