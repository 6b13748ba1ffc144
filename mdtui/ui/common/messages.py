"""Messages that workers post to the UI; a worker never touches a widget itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from mdtui.errors import MdtuiError
from mdtui.text import clean_text

if TYPE_CHECKING:  # only named in annotations: the first screen's launch need not import the planner and runner
    from mdtui.bench.progress import BenchEvent
    from mdtui.bench.result import BenchResult
    from mdtui.bench.sync_forecast import SyncView
    from mdtui.execute.mdadm import CreateOutcome
    from mdtui.model.array import MdArray
    from mdtui.model.inventory import Inventory
    from mdtui.plan.create import CreatePlan
    from mdtui.plan.destroy import DestroyPlan
    from mdtui.probe.smart import SmartHealth
    from mdtui.tune.boost import BoostPlan


class InventoryScanned(Message, bubble=False):
    """A scan finished, for the screen that started it. A newer result replaces one still queued."""

    def __init__(self, inventory: Inventory) -> None:
        super().__init__()
        self.inventory = inventory

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, (InventoryScanned, ScanFailed))


class ScanFailed(Message, bubble=False):
    """A scan could not run; ``reason`` is a sentence for the user, never a traceback."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, (InventoryScanned, ScanFailed))


def failure_reason(doing: str, exc: BaseException) -> str:
    """A sentence for a failed action: mdtui's own errors speak for themselves, anything else is named."""
    if isinstance(exc, MdtuiError):
        return clean_text(str(exc))
    return clean_text(f"{doing} failed: {exc.__class__.__name__}: {exc}")


class CreateFinished(Message, bubble=False):
    """execute_create ran: the array exists (``outcome.array`` as the kernel saw it right after)."""

    def __init__(self, plan: CreatePlan, outcome: CreateOutcome) -> None:
        super().__init__()
        self.plan = plan
        self.outcome = outcome


class ActionFailed(Message, bubble=False):
    """A create, teardown or speed change refused or failed; ``reason`` is for the user, never a traceback."""

    def __init__(self, action: str, reason: str) -> None:
        super().__init__()
        self.action = action
        self.reason = reason


class SyncProgress(Message, bubble=False):
    """The array as last polled while a resync runs, and (``view``) its progress beside the prediction. A newer
    poll replaces one still queued."""

    def __init__(self, array: MdArray, view: SyncView | None = None) -> None:
        super().__init__()
        self.array = array
        self.view = view

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SyncProgress)


class SyncEnded(Message, bubble=False):
    """Following stopped: no resync runs any more (``array`` None: the array is gone)."""

    def __init__(self, array: MdArray | None) -> None:
        super().__init__()
        self.array = array


class ResyncSpeedSet(Message, bubble=False):
    """A boost was applied (``full``) or undone; ``value`` says what the knobs read or how they were restored."""

    def __init__(self, full: bool, value: str) -> None:
        super().__init__()
        self.full = full
        self.value = value


class BoostPlanned(Message, bubble=False):
    """A boost of the running sync is planned: its cost is shown before the user confirms it."""

    def __init__(self, plan: BoostPlan) -> None:
        super().__init__()
        self.plan = plan


class TeardownPlanned(Message, bubble=False):
    """plan_destroy accepted the array; the user still has to confirm."""

    def __init__(self, plan: DestroyPlan) -> None:
        super().__init__()
        self.plan = plan


class TeardownRefused(Message, bubble=False):
    """plan_destroy refused: every problem, one sentence each."""

    def __init__(self, device: str, problems: tuple[str, ...]) -> None:
        super().__init__()
        self.device = device
        self.problems = problems


class TeardownFinished(Message, bubble=False):
    def __init__(self, device: str) -> None:
        super().__init__()
        self.device = device


class SmartRead(Message, bubble=False):
    """smartctl answered (or failed) for one disk, for the inventory that asked."""

    def __init__(self, name: str, health: SmartHealth) -> None:
        super().__init__()
        self.name = name
        self.health = health


class BenchEventPosted(Message, bubble=False):
    """An event of the running benchmark. None is dropped: each report is a point on the chart, and they
    come once a second per job, which no UI falls behind."""

    def __init__(self, event: BenchEvent) -> None:
        super().__init__()
        self.event = event


class BenchEnded(Message, bubble=False):
    """The run ended (complete, cancelled or failed) with its result."""

    def __init__(self, result: BenchResult) -> None:
        super().__init__()
        self.result = result


class BenchRefused(Message, bubble=False):
    """The run could not start or broke: a refusal, a failed re-check, a missing tool. For the user."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
