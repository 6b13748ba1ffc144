"""What an array's detail in the inventory shows beyond the core's detail: its keeping rows (persisted, monitored,
scrubs, forecasts, reshape, keys) and findings, from sources read in the background once per complete scan (the
kernel log's scrubs and the kept passes, the sync-time forecasts, the advisor's findings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from textual import on, work
from textual.message import Message
from textual.widget import Widget

from mdtui.errors import MdtuiError
from mdtui.model.array import MdArray
from mdtui.model.inventory import Inventory
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.render import app_db_path
from mdtui.ui.findings.render import FINDINGS_KEY, array_rows

if TYPE_CHECKING:
    from mdtui.advise.findings import Finding
    from mdtui.bench.sync_forecast import ArrayForecast
    from mdtui.keep.schedule import LastScrub
    from mdtui.keep.scrub_history import ScrubPass


def keep_rows(
    root: str,
    array: MdArray,
    scrubs: Mapping[str, LastScrub] | None = None,
    forecast: ArrayForecast | None = None,
    history: Sequence[ScrubPass] = (),
) -> list[tuple[str, str, bool]]:
    """The array's lifecycle line (persisted · monitored · last scrub · metrics), the running pass beside its
    prediction, how long a rebuild and a check take, the kept checks and what their count means, the keys that
    keep it, and a live system's failed members; nothing for what cannot be read."""
    from mdtui.bench.sync_forecast import sync_view
    from mdtui.keep.health import array_health
    from mdtui.keep.scrub_history import mismatch_meaning, trend
    from mdtui.keep.summary import lifecycle
    from mdtui.plan.sync_words import prediction_words
    from mdtui.ui.inventory.lifecycle import keys_line

    system = SystemRoot(root)
    rows: list[tuple[str, str, bool]] = []
    try:
        rows.append(("Kept", lifecycle(system, array, scrubs=scrubs).line, False))
        health = array_health(system, array)
        if health.failed:
            rows.append(("Failed", ", ".join(health.failed) + " (f repair: remove, then add a disk)", True))
        if array.sync is not None and forecast is not None:
            view = sync_view(system, array, predicted=forecast.running)
            if view is not None:
                rows.append(("Forecast", view.prediction_line(), False))
        if forecast is not None and forecast.rebuild is not None:
            rows.append(("Rebuild", prediction_words(forecast.rebuild, "if a member fails now"), False))
        if forecast is not None and forecast.check is not None:
            rows.append(("Check", prediction_words(forecast.check, None), False))
        if history:
            counted = health.mismatch_sectors if health.last_check in ("check", "repair") else None
            rows.append((
                "Scrubs",
                f"{len(history)} kept, {trend(history)}; mismatch_cnt: {mismatch_meaning(array.level, counted)}",
                bool(counted),
            ))  # fmt: skip
        if system.is_live:
            from mdtui.keep.grow_resume import reshape_line, reshape_states

            for state in reshape_states(system, [array]):
                if state.name == array.name and state.state != "finished":
                    rows.append(("Reshape", reshape_line(state), state.state != "running"))
    except (MdtuiError, OSError):
        pass
    rows.append(("Keys", keys_line() + f" · {FINDINGS_KEY} findings", False))
    return rows


class ScrubsRead(Message):
    """The kernel log's last scrubs (read_scrubs), for the lifecycle line, and each array's kept passes. The reader
    keeps them, then they bubble to the detail pane (as do the two below), which draws the detail again."""

    def __init__(self, scrubs: Mapping[str, LastScrub] | None, history: Mapping[str, Sequence[ScrubPass]]) -> None:
        super().__init__()
        self.scrubs = scrubs
        self.history = history


class FindingsRead(Message):
    """The advisor's findings of a scan (read_findings), for the arrays' details."""

    def __init__(self, findings: tuple[Finding, ...]) -> None:
        super().__init__()
        self.findings = findings


class ForecastsRead(Message):
    """Each array's sync-time forecast (read_forecasts), for the array's detail."""

    def __init__(self, forecasts: Mapping[str, ArrayForecast]) -> None:
        super().__init__()
        self.forecasts = forecasts


class ArrayReadings(Widget):
    """Reads, in thread workers, what an array's detail adds (scrubs, forecasts, findings) once per complete scan,
    when an array is first shown after it; keeps the last of each. Shown only through the detail it feeds."""

    DEFAULT_CSS = "ArrayReadings { display: none; }"

    def __init__(self, root: str, privileged: bool | None) -> None:
        super().__init__()
        self.root = root
        self.privileged = privileged
        # The last check or repair of each array from the kernel log, read once per complete scan of a live
        # system (journalctl takes too long for every highlight); None until read.
        self._scrubs: Mapping[str, LastScrub] | None = None
        self._scrubs_read_for: Inventory | None = None  # the scan they were last read after
        # Each array's kept check/repair passes (keep.scrub_history), read with the kernel log's.
        self._history: Mapping[str, Sequence[ScrubPass]] = {}
        # The sync-time model's forecast of each array (a rebuild if a member failed now, a check, the pass
        # running), from the stored member figures: read once per complete scan, in a worker.
        self._forecasts: Mapping[str, ArrayForecast] = {}
        self._forecasts_for: Inventory | None = None
        # What `mdtui advise` finds about this root, read once per complete scan when an array is first shown
        # (its detail names its own findings and what limits it); None until read, or when it could not be.
        self._findings: tuple[Finding, ...] | None = None
        self._findings_for: Inventory | None = None  # the scan they were read after

    def forecast(self, name: str) -> ArrayForecast | None:
        return self._forecasts.get(name)

    def rows(self, array: MdArray, inventory: Inventory, *, complete: bool) -> list[tuple[str, str, bool]]:
        """The array's rows for its detail (keep_rows, its findings before the keys) from what was read; after a
        ``complete`` scan, the readings of that scan are started where they were not."""
        if complete:
            self._read_for(inventory)
        rows = keep_rows(
            self.root, array, self._scrubs, self._forecasts.get(array.name), self._history.get(array.name, ())
        )
        # Its findings and what limits it, before the keys (the last row).
        rows[-1:-1] = array_rows(self._findings, array)
        return rows

    def _read_for(self, inventory: Inventory) -> None:
        if self._scrubs_read_for is not inventory and SystemRoot(self.root).is_live:
            # Read when an array is first shown after a scan, not at launch: the first screen waits for nothing.
            self._scrubs_read_for = inventory
            self.read_scrubs(inventory)
        if self._forecasts_for is not inventory:
            self._forecasts_for = inventory
            self.read_forecasts(inventory)
        if self._findings_for is not inventory:
            # Read when an array is first shown after a complete scan: a live host's SMART of every member and a
            # second of samples are paid only by someone who looks at arrays.
            self._findings_for, self._findings = inventory, None  # the last scan's are not this one's
            self.read_findings(inventory)

    @work(thread=True, exclusive=True, exit_on_error=False, group="scrubs")
    def read_scrubs(self, inventory: Inventory) -> None:
        """Thread worker: the kernel log's scrubs, for the lifecycle line's "last check N d ago", and the kept
        history of each array's passes, brought up to date with what the log and md say now."""
        from mdtui.keep.schedule import read_kernel_passes
        from mdtui.keep.scrub_history import ScrubHistory, observe

        system = SystemRoot(self.root)
        try:
            passes = read_kernel_passes(system)
            history = ScrubHistory()
            observe(system, inventory.arrays, history, passes)
            kept = {array.name: history.passes(array) for array in inventory.arrays}
        except (MdtuiError, OSError):
            return
        scrubs = None if passes is None else {scrub.array: scrub for scrub in passes}
        self.post_message(ScrubsRead(scrubs, kept))

    @on(ScrubsRead)
    def _scrubs_read(self, message: ScrubsRead) -> None:
        self._scrubs = message.scrubs
        self._history = message.history

    @work(thread=True, exclusive=True, exit_on_error=False, group="findings")
    def read_findings(self, inventory: Inventory) -> None:
        """Thread worker: the advisor's findings of this scan (a live host is sampled for a second), for the
        arrays' details; a failure leaves them unread (the F view says why)."""
        from mdtui.advise.host import host_findings

        try:
            db = app_db_path(self.app)  # None: the default database, as `mdtui advise` finds it
            found = host_findings(SystemRoot(self.root), db=db, privileged=self.privileged, inventory=inventory)
        except (MdtuiError, OSError):
            return
        self.post_message(FindingsRead(found))

    @on(FindingsRead)
    def _findings_read(self, message: FindingsRead) -> None:
        self._findings = message.findings

    @work(thread=True, exclusive=True, exit_on_error=False, group="forecasts")
    def read_forecasts(self, inventory: Inventory) -> None:
        """Thread worker: each array's forecast from the stored member figures (a database read)."""
        from mdtui.bench.member_figures import stored_member_runs
        from mdtui.bench.sync_forecast import forecast_arrays

        try:
            forecasts = forecast_arrays(SystemRoot(self.root), inventory, stored_member_runs(app_db_path(self.app)))
        except (MdtuiError, OSError) as exc:
            self.log.warning(f"no sync-time forecasts: {exc}")
            return
        self.post_message(ForecastsRead(forecasts))

    @on(ForecastsRead)
    def _forecasts_read(self, message: ForecastsRead) -> None:
        self._forecasts = message.forecasts
