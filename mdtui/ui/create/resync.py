"""After a create: the new array and its resync followed live (progress, speed, ETA beside the prediction and
what bounds it now), with the boost (f): md's speed knobs raised through the restore journal, cost said first."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Footer, Header, ProgressBar, Static
from textual.worker import get_current_worker

from mdtui.bench.member_figures import stored_member_runs
from mdtui.bench.sync_forecast import create_time, sync_view
from mdtui.errors import MdtuiError
from mdtui.execute import mdadm as md_run
from mdtui.execute.mdadm import CreateOutcome
from mdtui.format import duration, iec_bytes, plural, rate_mb_s
from mdtui.model.array import MdArray
from mdtui.plan.create import CreatePlan
from mdtui.plan.sync_time import SyncTime
from mdtui.probe.root import SystemRoot
from mdtui.tune.boost import BoostPlan, SyncBoost
from mdtui.tune.boost import plan_boost as boost_plan
from mdtui.ui.common.live import refused_on_tree
from mdtui.ui.common.messages import (
    ActionFailed,
    BoostPlanned,
    ResyncSpeedSet,
    SyncEnded,
    SyncProgress,
    failure_reason,
)
from mdtui.ui.common.render import app_db_path
from mdtui.ui.common.screen import MdtuiScreen
from mdtui.ui.dialogs.confirm import ConfirmScreen

POLL_S = 1.0
RESYNC_WARNING = (
    "⚠ Resync running: benchmarks now measure the resync as much as the array and mislead. "
    "Wait for it to finish, or press f to boost it (its cost is shown first)."
)


class _StopFollowing(Exception):
    """Raised inside follow_sync's callback to end the poll loop when the screen went away."""


def no_resync_reason(plan: CreatePlan) -> str | None:
    """Why no resync follows this create, or None when one does."""
    if plan.request.build:
        return "built with --build: no superblock, no resync"
    if not plan.level.redundant:
        return f"{plan.level.name} has no redundancy to resync"
    if plan.request.assume_clean:
        return "created with --assume-clean: md skips the initial resync"
    return None


def sync_line(array: MdArray) -> str:
    sync = array.sync
    if sync is None:
        return f"{array.name} is {array.state}; no resync running"
    parts = [f"{sync.action} {sync.state}"]
    if sync.fraction is not None:
        parts.append(f"{sync.fraction * 100:.1f}%")
    parts.append(f"speed {rate_mb_s(sync.speed_bytes_per_s)}")
    parts.append(f"ETA {duration(sync.eta_seconds)}")
    return " · ".join(parts)


class ResyncScreen(MdtuiScreen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("f", "toggle_speed", "Boost"),
    ]

    following: reactive[bool] = reactive(False, init=False)
    full_speed: reactive[bool] = reactive(False, init=False)

    def __init__(self, root: str, plan: CreatePlan, outcome: CreateOutcome) -> None:
        super().__init__()
        self.root = root
        self.plan = plan
        self.outcome = outcome
        self.device = outcome.device
        self.boost: SyncBoost | None = None  # the boost applied now; put back at the end, on f, or on leaving
        self.predicted: SyncTime | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="▤")
        with Vertical(id="resync"):
            yield Static(id="resync-title")
            yield Static(id="resync-warning")
            yield ProgressBar(total=100, show_eta=False, id="resync-bar")
            yield Static(id="resync-stats")
            yield Static(id="resync-speed")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = f"{self.device} · root {self.root}"
        self.query_one("#resync", Vertical).border_title = f"Created {self.device}"
        uuid = f", uuid {self.outcome.uuid}" if self.outcome.uuid else ""
        size = iec_bytes(self.outcome.array.size_bytes) if self.outcome.array else iec_bytes(self.plan.usable_bytes)
        self.query_one("#resync-title", Static).update(
            Text.assemble(
                (self.device, "bold"),
                f"  {self.plan.level.name} on {plural(len(self.plan.member_paths), 'member')}, ",
                f"{size}{uuid}",
            )
        )
        reason = no_resync_reason(self.plan)
        if reason is None:
            self._warn(RESYNC_WARNING, "-running")
            self.query_one("#resync-stats", Static).update("waiting for the kernel to report the resync…")
            self.following = True
            self.follow()
        else:
            self._finished(f"No resync: {reason}. The array is ready to benchmark.")

    def on_unmount(self) -> None:
        # Leaving the screen (or the app) ends the boost: it was for a sync someone watched.
        self._restore_now()

    def _warn(self, text: str, css_class: str) -> None:
        warning = self.query_one("#resync-warning", Static)
        warning.update(Text(text))
        warning.set_class(css_class == "-running", "-running")
        warning.set_class(css_class == "-done", "-done")

    def _finished(self, text: str) -> None:
        self.following = False
        self._warn(f"✓ {text}", "-done")
        self.query_one("#resync-bar", ProgressBar).update(total=100, progress=100)

    # -- following -------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="follow")
    def follow(self) -> None:
        """Thread worker: predict the initial sync, then poll the array until no resync runs; each poll becomes
        a message carrying the progress beside the prediction."""
        worker = get_current_worker()
        root = SystemRoot(self.root)
        try:
            self.predicted = create_time(root, self.plan, stored_member_runs(app_db_path(self.app)))
        except Exception as exc:  # no prediction is no reason to stop following
            self.log.warning(f"no prediction for {self.device}: {exc}")

        def report(array: MdArray) -> None:
            if worker.is_cancelled:
                raise _StopFollowing
            self.post_message(SyncProgress(array, sync_view(root, array, predicted=self.predicted)))

        try:
            final = md_run.follow_sync(self.device, root=root, on_update=report, poll_s=POLL_S)
        except _StopFollowing:
            return
        except Exception as exc:  # a failed poll is a message, never a traceback
            self.log.error(f"following {self.device} failed", exc)
            self.post_message(ActionFailed("follow", failure_reason(f"Following {self.device}", exc)))
            return
        self.post_message(SyncEnded(final))

    @on(SyncProgress)
    def _progress(self, message: SyncProgress) -> None:
        array = message.array
        sync = array.sync
        if sync is not None and sync.fraction is not None:
            self.query_one("#resync-bar", ProgressBar).update(total=100, progress=sync.fraction * 100)
        text = sync_line(array)
        if message.view is not None:
            text += "\n" + message.view.prediction_line()
        self.query_one("#resync-stats", Static).update(text)

    @on(SyncEnded)
    def _ended(self, message: SyncEnded) -> None:
        if message.array is None:
            self.following = False
            self._warn(f"⚠ {self.device} is no longer listed in /proc/mdstat; rescan the inventory.", "-running")
        else:
            self.query_one("#resync-stats", Static).update(sync_line(message.array))
            self._finished("Resync finished: benchmarks now measure the array itself.")
        if self.boost is not None:
            # The boost was for this sync: later checks and rebuilds run at md's usual limits again.
            self.set_speed(False)

    # -- speed -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_speed":
            return self.following
        return True

    def watch_following(self) -> None:
        self.refresh_bindings()
        self._show_speed()

    def watch_full_speed(self) -> None:
        self._show_speed()

    def _show_speed(self) -> None:
        if not self.following:
            text = ""
        elif self.full_speed and self.boost is not None:
            text = (
                f"Resync boosted: sync_speed_min and sync_speed_max {self.boost.plan.kib_s:,} KiB/s; "
                "f, the end of the resync or leaving this screen puts them back."
            )
        else:
            text = "Resync speed: md's limits (md yields to other I/O); f plans a boost and says its cost first."
        self.query_one("#resync-speed", Static).update(text)

    def action_toggle_speed(self) -> None:
        if self.full_speed:
            self.set_speed(False)
        elif refused_on_tree(self, self.root, "boosting the resync (a knob write)"):
            return
        else:
            self.plan_boost()

    @work(thread=True, exclusive=True, exit_on_error=False, group="speed")
    def plan_boost(self) -> None:
        root = SystemRoot(self.root)
        try:
            array = md_run.find_array(root, self.device)
            if array is None:
                raise MdtuiError(f"{self.device} is gone")
            plan = boost_plan(root, array, self.predicted)
        except Exception as exc:
            self.post_message(ActionFailed("speed", failure_reason("Planning the boost", exc)))
            return
        self.post_message(BoostPlanned(plan))

    @on(BoostPlanned)
    def _boost_planned(self, message: BoostPlanned) -> None:
        plan = message.plan
        body = Text("\n".join(plan.cost_lines()))

        def confirmed(typed: str | None) -> None:
            if typed is not None and self.following:
                self.apply_boost(plan)

        title = f"Boost the resync of {plan.array}"
        self.app.push_screen(ConfirmScreen(title, body, plan.confirmation, "Boost"), confirmed)

    @work(thread=True, exclusive=True, exit_on_error=False, group="speed")
    def apply_boost(self, plan: BoostPlan) -> None:
        boost = SyncBoost(SystemRoot(self.root), plan)
        try:
            read = boost.apply()
        except Exception as exc:
            self.post_message(ActionFailed("speed", failure_reason("Boosting the resync", exc)))
            return
        self.boost = boost
        self.post_message(ResyncSpeedSet(True, ", ".join(read)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="speed")
    def set_speed(self, full: bool) -> None:
        """Undo the boost (``full`` False); a boost is only applied through plan_boost and its confirmation."""
        texts = self._restore_now()
        self.post_message(ResyncSpeedSet(False, "; ".join(texts) or "nothing to put back"))

    def _restore_now(self) -> list[str]:
        boost, self.boost = self.boost, None
        if boost is None:
            return []
        return [item.text for item in boost.restore()]

    @on(ResyncSpeedSet)
    def _speed_set(self, message: ResyncSpeedSet) -> None:
        self.full_speed = message.full
        if message.full:
            self.notify(f"Resync boosted ({message.value}): other I/O on these disks slows.")
        else:
            self.notify(f"Resync speed put back: {message.value}.")

    @on(ActionFailed)
    def _failed(self, message: ActionFailed) -> None:
        if message.action == "follow":
            self.following = False
            self._warn(f"✖ {message.reason}", "-running")
        else:
            self.notify(message.reason, title="Resync speed", severity="error", timeout=10)

    def action_back(self) -> None:
        self.dismiss(None)
