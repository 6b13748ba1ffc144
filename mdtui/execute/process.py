"""Supervising long-running processes: own process group, streamed output, graceful cancel, timeout, stall."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from mdtui.ascii_numbers import parse_int
from mdtui.errors import MdtuiError
from mdtui.probe.root import read_attribute

# The same logger as the one-shot runner: every external command is logged in one place.
log = logging.getLogger("mdtui.command")

INTERRUPT_GRACE_S = 10.0  # fio needs a moment after SIGINT to stop its workers and write the final JSON
TERMINATE_GRACE_S = 3.0
KILL_GRACE_S = 2.0
# If mdtui itself is killed (SIGKILL, OOM), the kernel kills the job too (PR_SET_PDEATHSIG through
# util-linux setpriv, which then execs the job in place): nothing keeps hammering a disk for nobody.
_PARENT_DEATH_SIGNAL = "KILL"
DRAIN_TIMEOUT_S = 2.0  # output still buffered in the pipe after the process exited
_POLL_S = 0.05
_READ_SIZE = 65536

Stream = Literal["stdout", "stderr"]


@dataclass(frozen=True)
class OutputChunk:
    stream: Stream
    data: bytes


def _proc_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgrp, starttime) of a process from /proc/PID/stat, or None when it is gone."""
    text = read_attribute(f"/proc/{pid}/stat")
    if text is None:
        return None
    # The command name may contain spaces and parentheses; the fields after its last ")" are fixed.
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 20:
        return None
    ppid, pgrp, started = parse_int(fields[1]), parse_int(fields[2]), parse_int(fields[19])
    if ppid is None or pgrp is None or started is None:
        return None
    return fields[0], ppid, pgrp, started


def _all_stats() -> dict[int, tuple[str, int, int, int]]:
    stats = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _proc_stat(int(entry.name))
            if stat is not None:
                stats[int(entry.name)] = stat
    return stats


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in a process group.

    A zombie has finished; it only waits for a parent to reap it, which in a container may never happen.
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, 0)
        return [pid for pid, (state, _, pgrp, _) in _all_stats().items() if pgrp == pgid and state != "Z"]
    return []


def _descendants(root: int) -> dict[int, int]:
    """Live descendants of root as {pid: starttime}, so a pid reused later is never signalled."""
    stats = _all_stats()
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        state, _, _, start = stats[pid]
        if state != "Z":
            found[pid] = start
        todo.extend(children.get(pid, []))
    return found


def _dies_with_parent(argv: tuple[str, ...]) -> tuple[str, ...]:
    """argv run through `setpriv --pdeathsig`, which execs it in place (same pid), when setpriv is there."""
    if shutil.which("setpriv") is None:
        return argv
    return ("setpriv", f"--pdeathsig={_PARENT_DEATH_SIGNAL}", "--", *argv)


class GroupProcess:
    """One external command in its own process group (session), its output read as it arrives.

    Descendants that leave the group (fio's job processes call setsid) are tracked too, so stopping
    reaches everything the command started.
    """

    def __init__(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        self.argv = tuple(str(a) for a in argv)
        if not self.argv:
            raise MdtuiError("internal error: empty command")
        self._env = env
        self._proc: asyncio.subprocess.Process | None = None
        self._queue: asyncio.Queue[OutputChunk | None] = asyncio.Queue()
        self._readers: list[asyncio.Task[None]] = []
        self._escapees: dict[int, int] = {}
        self.started_at = 0.0
        self.ended_at: float | None = None
        self.strongest_signal: signal.Signals | None = None

    async def start(self) -> None:
        if shutil.which(self.argv[0]) is None:
            raise MdtuiError(f"{self.argv[0]} is not installed (needed to run: {' '.join(self.argv)})")
        self.started_at = time.monotonic()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *_dies_with_parent(self.argv),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                env=self._env,
            )
        except OSError as exc:
            raise MdtuiError(f"could not start {self.argv[0]}: {exc.strerror or exc}") from exc
        log.info("started %s as pid %d", list(self.argv), self._proc.pid)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._readers = [
            asyncio.create_task(self._read(self._proc.stdout, "stdout")),
            asyncio.create_task(self._read(self._proc.stderr, "stderr")),
        ]

    async def _read(self, reader: asyncio.StreamReader, stream: Stream) -> None:
        try:
            while data := await reader.read(_READ_SIZE):
                await self._queue.put(OutputChunk(stream, data))
        finally:
            await self._queue.put(None)

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise MdtuiError("internal error: process not started")
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.returncode

    @property
    def duration_s(self) -> float:
        return (self.ended_at or time.monotonic()) - self.started_at

    async def chunks(self) -> AsyncIterator[OutputChunk]:
        """Output chunks of stdout and stderr in arrival order, until both are closed."""
        open_streams = len(self._readers)
        while open_streams:
            chunk = await self._queue.get()
            if chunk is None:
                open_streams -= 1
            else:
                yield chunk

    def __aiter__(self) -> AsyncIterator[OutputChunk]:
        return self.chunks()

    async def wait(self) -> int:
        if self._proc is None:
            raise MdtuiError("internal error: process not started")
        returncode = await self._proc.wait()
        if self.ended_at is None:
            self.ended_at = time.monotonic()
        return returncode

    def alive(self) -> bool:
        """True while anything started by the command still runs."""
        return bool(group_members(self.pid)) or any(self._escapee_alive(p) for p in self._escapees)

    def _escapee_alive(self, pid: int) -> bool:
        stat = _proc_stat(pid)
        return stat is not None and stat[0] != "Z" and stat[3] == self._escapees[pid]

    def _signal(self, sig: signal.Signals) -> None:
        if self.returncode is None:
            # Found while the leader lives: once it dies its children are reparented and lost to us.
            self._escapees.update(_descendants(self.pid))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)
        for pid in list(self._escapees):
            if self._escapee_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        if sig is not signal.SIGCONT:
            self.strongest_signal = sig

    async def _gone_within(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while True:
            if self.returncode is not None and not self.alive():
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_POLL_S)

    async def stop(
        self,
        *,
        interrupt_grace_s: float = INTERRUPT_GRACE_S,
        terminate_grace_s: float = TERMINATE_GRACE_S,
        kill_grace_s: float = KILL_GRACE_S,
    ) -> None:
        """SIGINT (fio and dd then print their figures so far), then SIGTERM, then SIGKILL, to all of it."""
        steps = (
            (signal.SIGINT, interrupt_grace_s),
            (signal.SIGTERM, terminate_grace_s),
            (signal.SIGKILL, kill_grace_s),
        )
        for sig, grace in steps:
            if self.returncode is not None and not self.alive():
                return
            log.info("sending %s to %s (pid %d)", sig.name, self.argv[0], self.pid)
            self._signal(sig)
            if sig is not signal.SIGKILL:
                # A job someone stopped (SIGSTOP, a debugger) acts on the signal only once it runs again.
                self._signal(signal.SIGCONT)
            if await self._gone_within(grace):
                return
        log.error("%s (pid %d) survived SIGKILL", self.argv[0], self.pid)

    async def kill_stalled(self, kill_grace_s: float = KILL_GRACE_S) -> None:
        """SIGCONT then SIGKILL to all of it: a stalled job answers no SIGINT, and a stopped one not even that."""
        log.warning("%s (pid %d) stopped reporting; killing it", self.argv[0], self.pid)
        self._signal(signal.SIGCONT)
        self._signal(signal.SIGKILL)
        if not await self._gone_within(kill_grace_s):
            log.error("%s (pid %d) survived SIGKILL", self.argv[0], self.pid)

    async def reap_leftovers(self) -> None:
        """After the leader exited on its own, kill whatever it left running."""
        if self.alive():
            log.warning("%s left processes behind; killing them", self.argv[0])
            self._signal(signal.SIGKILL)
            await self._gone_within(KILL_GRACE_S)

    async def close_readers(self, timeout_s: float = DRAIN_TIMEOUT_S) -> None:
        """Let the readers drain what is left in the pipes, then stop them."""
        _, pending = await asyncio.wait(self._readers, timeout=timeout_s) if self._readers else (set(), set())
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task


@dataclass(frozen=True)
class ProcessRun:
    """How one streamed command ended."""

    argv: tuple[str, ...]
    returncode: int | None
    duration_s: float
    stdout: bytes
    stderr: bytes
    cancelled: bool = False
    timed_out: bool = False
    strongest_signal: signal.Signals | None = None  # the last signal mdtui had to send, None when none
    stalled_s: float | None = None  # set when it printed nothing for this long and was killed

    @property
    def stalled(self) -> bool:
        return self.stalled_s is not None

    @property
    def stopped_by_us(self) -> bool:
        return self.cancelled or self.timed_out or self.stalled

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def _c_locale_env() -> dict[str, str]:
    # dd's progress and summary numbers use the locale's decimal separator; C makes them parseable.
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    return env


async def run_streaming(
    argv: Sequence[str],
    *,
    on_stdout: Callable[[bytes], None] | None = None,
    on_stderr: Callable[[bytes], None] | None = None,
    cancel: asyncio.Event | None = None,
    timeout_s: float | None = None,
    stall_timeout_s: float | None = None,
    interrupt_grace_s: float = INTERRUPT_GRACE_S,
    terminate_grace_s: float = TERMINATE_GRACE_S,
) -> ProcessRun:
    """Run argv to the end, a set ``cancel`` event, ``timeout_s``, or a stall, handing output to the callbacks.

    A stall is ``stall_timeout_s`` without any output (fio and dd report once a second): the process is
    sent SIGCONT and SIGKILL, since a stopped or stuck one answers no gentler signal. Cancelling the
    awaiting task stops the process like a cancel before the cancellation propagates. Raises MdtuiError
    only when the command cannot be started.
    """
    process = GroupProcess(argv, env=_c_locale_env())
    stdout = bytearray()
    stderr = bytearray()
    last_output = [0.0]

    async def consume() -> None:
        async for chunk in process:
            last_output[0] = time.monotonic()
            if chunk.stream == "stdout":
                stdout.extend(chunk.data)
                if on_stdout is not None:
                    on_stdout(chunk.data)
            else:
                stderr.extend(chunk.data)
                if on_stderr is not None:
                    on_stderr(chunk.data)

    await process.start()
    last_output[0] = process.started_at
    deadline = None if timeout_s is None else process.started_at + timeout_s
    consumer = asyncio.create_task(consume())
    exited = asyncio.create_task(process.wait())
    cancel_wait = asyncio.create_task(cancel.wait()) if cancel is not None else None
    cancelled = timed_out = False
    stalled_s: float | None = None
    try:
        waiting = {exited} | ({cancel_wait} if cancel_wait else set())
        while True:
            limits = [deadline] if deadline is not None else []
            if stall_timeout_s is not None:
                limits.append(last_output[0] + stall_timeout_s)
            wait_s = max(0.0, min(limits) - time.monotonic()) if limits else None
            done, _ = await asyncio.wait(waiting, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED)
            if done:
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                timed_out = True
                break
            if stall_timeout_s is not None and now - last_output[0] >= stall_timeout_s:
                stalled_s = now - last_output[0]
                break
        if exited not in done:
            cancelled = cancel_wait in done
            if timed_out:
                log.warning("%s ran past its %.1f s limit; stopping it", process.argv[0], timeout_s or 0)
            if stalled_s is not None:
                await process.kill_stalled()
            else:
                await process.stop(interrupt_grace_s=interrupt_grace_s, terminate_grace_s=terminate_grace_s)
        if process.returncode is not None:
            await exited
            await process.reap_leftovers()
        else:
            # Only a process stuck in uninterruptible sleep (a dead disk) outlives SIGKILL; report it
            # rather than hang with it.
            log.error("%s (pid %d) could not be stopped; leaving it", process.argv[0], process.pid)
        await process.close_readers()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(consumer, DRAIN_TIMEOUT_S)
    except asyncio.CancelledError:
        await process.stop(interrupt_grace_s=interrupt_grace_s, terminate_grace_s=terminate_grace_s)
        await process.close_readers()
        raise
    finally:
        for task in (consumer, exited, cancel_wait):
            if task is not None and not task.done():
                task.cancel()
    how = " (timed out)" if timed_out else " (cancelled)" if cancelled else ""
    if stalled_s is not None:
        how = f" (stalled: no output for {stalled_s:.1f} s)"
    log.info("ran %s -> %s in %.3fs%s", list(process.argv), process.returncode, process.duration_s, how)
    return ProcessRun(
        argv=process.argv,
        returncode=process.returncode,
        duration_s=process.duration_s,
        stdout=bytes(stdout),
        stderr=bytes(stderr),
        cancelled=cancelled,
        timed_out=timed_out,
        strongest_signal=process.strongest_signal,
        stalled_s=stalled_s,
    )
