"""One keymap: on every screen a key means one thing, and j/k move in every table (issue 44).

The test opens every screen of the app on the captured tree, collects the bindings of the screen, of every
widget on it and of the app (where the screen does not bind the key itself), and checks that no key has two
meanings there: the inventory's s sorted on the Disks pane but planned a scrub on the Arrays pane, and its k
opened the knobs where the table's k moves up. Keys that mean "move" in whatever has the focus (the arrows,
Home, Enter) and the keys that leave (Escape) are allowed their widget's own way of doing it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Input, TextArea

import mdtui.ui
from mdtui.execute.mdadm import CreateOutcome
from mdtui.probe.inventory import scan
from mdtui.store.runs import ResultsStore
from mdtui.ui.app import MdtuiApp
from mdtui.ui.bench.screen import BenchScreen
from mdtui.ui.common.screen import JobQuestion
from mdtui.ui.common.table import SizedTable
from mdtui.ui.create import form as cf
from mdtui.ui.create.resync import ResyncScreen
from mdtui.ui.create.screen import CreateScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen
from mdtui.ui.dialogs.detail import DetailScreen
from mdtui.ui.findings.screen import FindingsScreen
from mdtui.ui.guide.screen import GuideScreen
from mdtui.ui.guide.steps import GuideCreateScreen
from mdtui.ui.help.screen import HelpScreen
from mdtui.ui.inventory.array_detail import ArrayDetailScreen
from mdtui.ui.inventory.grow import GrowForm
from mdtui.ui.inventory.lifecycle_forms import AlertsForm, RepairForm, ScrubForm
from mdtui.ui.results.compare import CompareScreen
from mdtui.ui.results.dialogs import DevicePickerScreen, ExportScreen, TextPromptScreen
from mdtui.ui.results.screen import ResultsScreen
from mdtui.ui.tune.screen import TuneScreen
from mdtui.ui.watch.screen import WatchScreen

from .conftest import THEME_DIRS, TREE_ROOT, settle
from .create_inventory import FREE_INVENTORY
from .results_data import fill

# Keys that move or act on whatever has the focus, each widget its own way: arrows, pages, Home/End, Enter,
# Space (a list's choice), Tab between panes.
MOVING = frozenset(
    {"up", "down", "left", "right", "pageup", "pagedown", "home", "end", "enter", "space", "tab", "shift+tab"}
    | {"ctrl+home", "ctrl+end", "ctrl+pageup", "ctrl+pagedown", "shift+up", "shift+down", "shift+left"}
    | {"shift+right", "shift+home", "shift+end", "shift+pageup", "shift+pagedown"}
)
# What Escape may do: leave, in the way of the screen (back, close, cancel, stay in a question), after a
# table's or a screen's filter is cleared.
LEAVING = frozenset(
    {"back", "cancel", "close", "dismiss", "stay", "clear_filter_key", "clear", "leave_job('escape')", "minimize"}
)
# Two spellings of one meaning.
SAME = {
    "leave_job('q')": "quit",
    "leave_job('escape')": "back",
    "app.quit": "quit",
    "app.focus_next": "focus_next",
    "app.focus_previous": "focus_previous",
    "key('j')": "cursor_down",
    "key('k')": "cursor_up",
    "key('G')": "last",
    "key('slash')": "filter",
    "search": "filter",  # the help screen's search is its filter
    "interrupt": "quit",  # Ctrl+C: quit, asked first while a job runs
}
# A table's keys that sort and filter, only on a table whose rows are keyed.
REORDERING = frozenset({"s", "S", "slash"})
# What a table's keys are for: the meanings j and k must keep wherever a table is.
TABLE_MOVES = {"j": "cursor_down", "k": "cursor_up"}


def bindings(node: DOMNode) -> Iterator[tuple[str, str]]:
    """(key, action) of every binding ``node``'s class and its bases declare, as Textual merges them."""
    for cls in type(node).__mro__:
        for binding in cls.__dict__.get("BINDINGS", ()):
            keys, action = (binding.key, binding.action) if isinstance(binding, Binding) else binding[:2]
            for key in keys.split(","):
                yield key.strip(), action


def meaning(action: str) -> str:
    return SAME.get(action, action.removeprefix("app.").removeprefix("screen."))


def meanings(app: App[None], screen: Screen[object]) -> dict[str, dict[str, list[str]]]:
    """key -> meaning -> who binds it, on ``screen`` (with the app's keys the screen itself does not bind)."""
    found: dict[str, dict[str, list[str]]] = {}
    nodes: list[DOMNode] = [screen]
    # A text field takes typed letters as text and its editing keys are its own: not the screen's keymap.
    nodes += [node for node in screen.query("*") if not isinstance(node, (Input, TextArea))]
    for node in nodes:
        for key, action in bindings(node):
            if isinstance(node, SizedTable) and not node.can_reorder and key in REORDERING:
                continue  # off on a table found by row number (ui.common.table)
            found.setdefault(key, {}).setdefault(meaning(action), []).append(type(node).__name__)
    # The screen's own binding of a key stands for the app's; a widget's does not (the table's g gave way to
    # the app's guide: two meanings for one key).
    own = {key for key, _ in bindings(screen)}
    for key, action in bindings(app):
        if key not in own:
            found.setdefault(key, {}).setdefault(meaning(action), []).append(type(app).__name__)
    return found


def problems_on(app: App[None], screen: Screen[object]) -> list[str]:
    name = type(screen).__name__
    problems = []
    for key, by_meaning in sorted(meanings(app, screen).items()):
        if key in MOVING:
            continue
        if key == "escape":
            odd = set(by_meaning) - LEAVING
            if odd:
                problems.append(f"{name}: escape does {sorted(odd)}")
            continue
        if len(by_meaning) > 1:
            problems.append(f"{name}: {key} means {by_meaning}")
    for table in screen.query(SizedTable):
        for key, move in TABLE_MOVES.items():
            found = meanings(app, screen).get(key, {})
            if set(found) != {move}:
                problems.append(f"{name}: {key} in #{table.id} means {found}, not {move}")
    return problems


def screen_classes() -> set[type[Screen[object]]]:
    """Every screen class mdtui defines."""
    for module in pkgutil.walk_packages(mdtui.ui.__path__, "mdtui.ui."):
        importlib.import_module(module.name)
    found: set[type[Screen[object]]] = set()
    todo: list[type[Screen[object]]] = [Screen]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("mdtui.ui."):
                found.add(sub)
    return found


async def test_every_screen_gives_each_key_one_meaning(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    ids = fill(db)
    with ResultsStore(db, create=False) as store:
        runs = store.list_runs()
    inventory = scan(TREE_ROOT, privileged=True)
    array = inventory.arrays[0]
    # A plan on free disks, for the resync view that follows a create.
    free = tuple(disk.name for disk in FREE_INVENTORY.disks if not disk.in_use)[:2]
    form = cf.CreateForm(device="/dev/md9", level="raid1", members=free)
    plan = cf.preview(form, FREE_INVENTORY).plan
    assert plan is not None
    root = str(TREE_ROOT)
    screens: list[Screen[object]] = [
        ResultsScreen(db),
        CompareScreen(db, ids["single SAS SSD"], [ids["raid0 x4"]], runs),
        BenchScreen(root, inventory, f"/dev/{array.name}"),
        CreateScreen(root, inventory),
        GuideCreateScreen(root, inventory, form),
        WatchScreen(root, array.name),
        TuneScreen(root, array.name),
        GuideScreen(root, db_path=db, privileged=True),
        HelpScreen("InventoryScreen"),
        DetailScreen("Disk sda", Text("detail")),
        ArrayDetailScreen(f"Array {array.name}", Text("detail")),
        ConfirmScreen("Delete run #1", Text("body"), "#1", "Delete"),
        TextPromptScreen("Label of run #1", "", "hint"),
        ExportScreen("Export", "mdtui-runs-1"),
        DevicePickerScreen(runs, "write_bw_bytes_per_s", None),
        AlertsForm(),
        ScrubForm(array.name, "idle"),
        RepairForm(array, [disk.name for disk in inventory.disks]),
        GrowForm(array, [disk.name for disk in inventory.disks if not disk.in_use]),
        FindingsScreen(root, db, array=array.name, inventory=inventory, privileged=True),
        JobQuestion("a benchmark", quitting=False),
    ]
    screens.append(ResyncScreen(root, plan, CreateOutcome(plan.request.device, None, (), None)))
    app = MdtuiApp(root, privileged=True, theme_dirs=THEME_DIRS, db_path=db)
    seen: set[type[Screen[object]]] = set()
    problems: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        problems += problems_on(app, app.screen)
        seen.add(type(app.screen))
        for screen in screens:
            app.push_screen(screen)
            await pilot.pause()
            await pilot.pause()
            problems += problems_on(app, screen)
            seen.add(type(screen))
            app.pop_screen()
            await pilot.pause()
    # Not opened above, each a base or a screen only a running job shows: their keys are their bases' or none.
    unopened = {cls.__name__ for cls in screen_classes() - seen}
    assert unopened <= {"MdtuiScreen", "ResultsBase", "LifecycleForm"}, unopened
    assert not problems, "\n".join(problems)
