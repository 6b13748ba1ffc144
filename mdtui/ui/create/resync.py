"""After a create: the new array and its resync followed live (progress, speed, ETA), with the full-speed switch."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Footer, Header, ProgressBar, Static
from textual.worker import get_current_worker

from mdtui.format import duration, iec_bytes, plural, rate_mb_s
from mdtui.model.array import MdArray
from mdtui.plan.create import CreatePlan
from mdtui.probe.root import SystemRoot
from mdtui.run import mdadm as md_run
from mdtui.run.mdadm import CreateOutcome
from mdtui.ui.common.messages import ActionFailed, ResyncSpeedSet, SyncEnded, SyncProgress, failure_reason
from mdtui.ui.common.screen import MdtuiScreen

POLL_S = 1.0
RESYNC_WARNING = (
    "⚠ Resync running: benchmarks now measure the resync as much as the array and mislead. "
    "Wait for it to finish, or press f to let it run at full speed."
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
        Binding("f", "toggle_speed", "Full speed"),
    ]

    following: reactive[bool] = reactive(False, init=False)
    full_speed: reactive[bool] = reactive(False, init=False)

    def __init__(self, root: str, plan: CreatePlan, outcome: CreateOutcome) -> None:
        super().__init__()
        self.root = root
        self.plan = plan
        self.outcome = outcome
        self.device = outcome.device

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
        """Thread worker: poll the array until no resync runs; each poll becomes a message."""
        worker = get_current_worker()

        def report(array: MdArray) -> None:
            if worker.is_cancelled:
                raise _StopFollowing
            self.post_message(SyncProgress(array))

        try:
            final = md_run.follow_sync(self.device, root=SystemRoot(self.root), on_update=report, poll_s=POLL_S)
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
        self.query_one("#resync-stats", Static).update(sync_line(array))

    @on(SyncEnded)
    def _ended(self, message: SyncEnded) -> None:
        if message.array is None:
            self.following = False
            self._warn(f"⚠ {self.device} is no longer listed in /proc/mdstat; rescan the inventory.", "-running")
            return
        self.query_one("#resync-stats", Static).update(sync_line(message.array))
        self._finished("Resync finished: benchmarks now measure the array itself.")
        if self.full_speed:
            # The raised minimum would also speed later checks and rebuilds past other I/O.
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
        elif self.full_speed:
            text = "Resync speed: full (sync_speed_min raised to the maximum); f goes back to the default."
        else:
            text = "Resync speed: system default (md yields to other I/O); f runs it at full speed."
        self.query_one("#resync-speed", Static).update(text)

    def action_toggle_speed(self) -> None:
        self.set_speed(not self.full_speed)

    @work(thread=True, exclusive=True, exit_on_error=False, group="speed")
    def set_speed(self, full: bool) -> None:
        try:
            value = md_run.set_full_resync_speed(self.device, full, root=SystemRoot(self.root))
        except Exception as exc:
            self.post_message(ActionFailed("speed", failure_reason("Changing the resync speed", exc)))
            return
        self.post_message(ResyncSpeedSet(full, value))

    @on(ResyncSpeedSet)
    def _speed_set(self, message: ResyncSpeedSet) -> None:
        self.full_speed = message.full
        if message.full:
            self.notify(f"Resync minimum speed raised to {message.value} KiB/s: other I/O on these disks slows.")
        else:
            self.notify("Resync speed back to the system default.")

    @on(ActionFailed)
    def _failed(self, message: ActionFailed) -> None:
        if message.action == "follow":
            self.following = False
            self._warn(f"✖ {message.reason}", "-running")
        else:
            self.notify(message.reason, title="Resync speed", severity="error", timeout=10)

    def action_back(self) -> None:
        self.dismiss(None)
