"""Running a benchmark from a thread (a screen's worker, an experiment) and stopping it from any other thread.

One way for every caller: the app's bench screen and guide, the advisor's experiments and the knob sweeps run
run_bench through run_bench_in_thread, and stop it by setting a Stop (a key, a signal handler, Escape). The
running benchmark hears the stop at once, on its own event loop, and keeps its figures so far.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from typing import Any

from mdtui.bench.plan import BenchPlan
from mdtui.bench.result import BenchResult
from mdtui.bench.session import StopRequest, run_bench


class Stop(threading.Event):
    """A stop any thread may set, with why (``reason``: "SIGHUP: the terminal went away"), which the stopped
    runs store. A threading.Event, so an experiment's loop checks it between points as before."""

    def __init__(self) -> None:
        super().__init__()
        self.reason = ""
        self._lock = threading.RLock()  # re-entrant: a signal handler may set the stop while a listener registers
        self._listeners: tuple[Callable[[str], None], ...] = ()

    def set(self, reason: str = "") -> None:
        """Stop, saying why (the first reason given is kept); every running benchmark listening hears it."""
        if reason and not self.is_set():
            self.reason = reason
        super().set()
        for listener in self._listeners:
            listener(self.reason)

    def clear(self) -> None:
        super().clear()
        self.reason = ""

    @contextmanager
    def listening(self, listener: Callable[[str], None]) -> Iterator[None]:
        """Call ``listener`` (from the thread that sets the stop) while the block runs; at once if already set."""
        with self._lock:
            self._listeners = (*self._listeners, listener)
        try:
            if self.is_set():
                listener(self.reason)
            yield
        finally:
            with self._lock:
                self._listeners = tuple(other for other in self._listeners if other is not listener)


def run_bench_in_thread(plan: BenchPlan, *, stop: Stop | None = None, **options: Any) -> BenchResult:
    """run_bench (with ``options``: root, store, confirmed, privileged, on_event, ...) on an event loop of this
    thread's own, returning when it ends; ``stop``, set from any thread, cancels it: the running jobs are stopped
    with their figures so far, no further step starts, and the stored runs are marked cancelled with its reason.
    """

    async def drive() -> BenchResult:
        loop = asyncio.get_running_loop()
        request = StopRequest()

        def heard(reason: str) -> None:
            # The setter's thread hands the stop to this loop; after the run ended the loop may be closed.
            with suppress(RuntimeError):
                loop.call_soon_threadsafe(request.request, reason)

        with stop.listening(heard) if stop is not None else nullcontext():
            return await run_bench(plan, cancel=request, **options)

    return asyncio.run(drive())


__all__ = ["Stop", "run_bench_in_thread"]
