"""App-wide habits: the footer starts with ? Help and q Quit and shows the palette's key; the palette holds
mdtui's own actions; a running job is never ended by Escape or q without a question."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable

import pytest
from textual import work
from textual.app import App, ComposeResult
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Footer, Static

from mdtui.cli.common import confirm
from mdtui.ui.app import MdtuiApp
from mdtui.ui.common.palette import mdtui_commands
from mdtui.ui.common.screen import JobQuestion, MdtuiScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen

from .conftest import settle

MakeApp = Callable[..., MdtuiApp]


async def test_footer_starts_with_help_and_quit_and_shows_the_palette(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(Footer)
        keys = [(getattr(key, "key", None), getattr(key, "description", None)) for key in footer.query("FooterKey")]
        assert keys[:3] == [("question_mark", "Help"), ("q", "Quit"), ("ctrl+p", "Palette")], keys
        # On screen at 80 columns: the bottom line begins with them.
        shown = {getattr(key, "key", None): key.region for key in footer.query("FooterKey")}
        assert shown["question_mark"].x <= 1 and shown["ctrl+p"].right <= 40


class Held(MdtuiScreen[None], job_groups=("job",), job_name="a benchmark"):
    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.left = 0

    def compose(self) -> ComposeResult:
        yield Static("running")
        yield Footer()

    def start(self) -> None:
        self.hold()

    @work(thread=True, group="job")
    def hold(self) -> None:
        self.release.wait(10)

    def action_back(self) -> None:
        self.left += 1
        self.dismiss(None)

    BINDINGS = [("escape", "back", "Back")]


class Host(App[None]):
    def on_mount(self) -> None:
        self.push_screen(Held())


async def test_escape_and_q_ask_before_ending_a_running_job() -> None:
    app = Host()
    async with app.run_test() as pilot:
        held = app.screen
        assert isinstance(held, Held)
        held.start()
        await pilot.pause()
        assert held.job_running()
        await pilot.press("escape")
        assert isinstance(app.screen, JobQuestion)
        question = app.screen.query_one(Static).render()
        assert "A benchmark is running: stop it, keep it running in the background" in str(question)
        await pilot.press("escape")  # stay
        assert app.screen is held and held.left == 0 and held.job_running()
        await pilot.press("q")
        assert isinstance(app.screen, JobQuestion) and app.screen.quitting
        await pilot.click("#stay")
        assert app.screen is held and app.is_running
        # Keep it running in the background: the screen leaves, its worker runs on.
        await pilot.press("escape")
        await pilot.click("#background")
        await pilot.pause()
        assert app.screen is not held and held.job_running() and held.left == 0
        held.release.set()
        await app.workers.wait_for_complete()
        app.push_screen(held)
        await pilot.pause()
        await pilot.press("escape")  # no job now: the screen's own Escape
        assert held.left == 1


async def test_stop_it_cancels_the_job_and_stays() -> None:
    app = Host()
    async with app.run_test() as pilot:
        held = app.screen
        assert isinstance(held, Held)
        held.start()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.click("#stop")
        await pilot.pause()
        assert app.screen is held
        workers = [worker for worker in app.workers if worker.group == "job"]
        assert all(worker.is_cancelled for worker in workers)
        held.release.set()


class HeldWithStop(Held, job_groups=("job",), job_name="a benchmark", job_stop="stop_it"):
    """A screen whose job is stopped by its own action, as the bench screen's cancel_run."""

    def __init__(self) -> None:
        super().__init__()
        self.stopped = 0

    def action_stop_it(self) -> None:
        self.stopped += 1
        self.release.set()


class HostWithStop(App[None]):
    def on_mount(self) -> None:
        self.push_screen(HeldWithStop())


async def test_stop_it_runs_the_screens_own_stop_action() -> None:
    # The screen's stop action is a coroutine through run_action: it must be awaited, not dropped.
    app = HostWithStop()
    async with app.run_test() as pilot:
        held = app.screen
        assert isinstance(held, HeldWithStop)
        held.start()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.click("#stop")
        await pilot.pause()
        assert held.stopped == 1
        assert app.screen is held


async def test_palette_finds_mdtuis_own_actions(make_app: MakeApp) -> None:
    app = make_app()
    names = [command.name for command in mdtui_commands(app)]
    for wanted in ("inventory", "bench", "watch", "results", "compare", "create", "tune", "guide", "help",
                   "Persist", "Repair", "Scrub", "Export", "Theme", "Bench preset: Find the weakest link"):  # fmt: skip
        assert any(wanted in name for name in names), wanted
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"bench")
        await pilot.pause(0.5)
        options = app.screen.query_one(CommandList)
        texts = [str(options.get_option_at_index(index).prompt) for index in range(options.option_count)]
        assert any("Open bench" in text for text in texts), texts
        assert any("Bench preset" in text for text in texts), texts
        await pilot.press("escape")
        await pilot.press("escape")


async def test_palette_opens_the_results(make_app: MakeApp) -> None:
    from mdtui.ui.results.screen import ResultsScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.palette_go("results")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        app.palette_go("inventory")
        await pilot.pause()
        assert type(app.screen).__name__ == "InventoryScreen"


async def running_job(pilot: Pilot[None]) -> Held:
    """The app's inventory, then a screen whose job runs until the test releases it."""
    await settle(pilot)
    held = Held()
    pilot.app.push_screen(held)
    await pilot.pause()
    held.start()
    await pilot.pause()
    return held


async def test_palette_drops_a_background_job_once_it_ended(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        held = await running_job(pilot)
        await pilot.press("escape")
        await pilot.click("#background")
        await pilot.pause()
        assert app.screen is not held and held.job_running()
        assert any("Back to a benchmark" in command.name for command in mdtui_commands(app))
        held.release.set()
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not any("Back to" in command.name for command in mdtui_commands(app)), "the job has ended"
        assert app.background_jobs == {}
        assert any("A benchmark finished in the background" in str(n.message) for n in app._notifications)


async def test_ctrl_c_quits_and_asks_first_while_a_job_runs(make_app: MakeApp) -> None:
    # Issue 44: Ctrl+C did not quit (Textual's own only said how to).
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        held = await running_job(pilot)
        app.push_screen(ConfirmScreen("Delete run #1", Static("x").render(), "#1", "Delete"))  # a dialog above it
        await pilot.pause()
        await pilot.press("ctrl+c")
        assert isinstance(app.screen, JobQuestion) and app.screen.quitting and app.is_running
        await pilot.press("ctrl+c")  # the question is on screen: its answer decides
        assert isinstance(app.screen, JobQuestion) and app.is_running
        await pilot.press("escape")  # stay
        assert app.is_running and held.job_running()
        held.release.set()
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_a_wrong_typed_confirmation_says_it_does_not_match(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        answers: list[bool | None] = []
        app.push_screen(
            ConfirmScreen("Tear down /dev/md1", Static("x").render(), "/dev/md1", "Destroy"), answers.append
        )
        await pilot.pause()
        said = app.screen.query_one("#confirm-mismatch", Static)
        assert not said.display
        await pilot.press(*"/dev/md", "enter")
        await pilot.pause()
        assert said.display and str(said.content) == ('"/dev/md" does not match /dev/md1: type it exactly to go ahead.')
        assert said.region.height == 1 and isinstance(app.screen, ConfirmScreen) and answers == []
        await pilot.press("1")  # typing again clears the line
        assert not said.display
        await pilot.press("enter")
        assert answers == ["/dev/md1"]  # what was typed, for the core to check again


def test_the_cli_says_a_wrong_confirmation_does_not_match(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "md1")
    assert not confirm(argparse.Namespace(yes=False), "stop /dev/md1", "/dev/md1")
    assert capsys.readouterr().err == 'mdtui: "md1" does not match /dev/md1: type it exactly to go ahead.\n'
    monkeypatch.setattr("builtins.input", lambda prompt: " /dev/md1 ")
    assert confirm(argparse.Namespace(yes=False), "stop /dev/md1", "/dev/md1")
