"""One fio job on one remote host through `fio --client`: the job file, the argv, and its figures.

fio's client/server mode takes jobs only from a job file (options on the client's command line are not
sent), so a JobSpec becomes the same options as mdtui.execute.argv.fio_argv gives a local fio, one per
line. ``--readonly`` must follow ``--client=``: placed before it, it binds the client only and the
server writes anyway (fio 3.33, checked with a write job). The server's final JSON comes back in
``client_stats`` (one entry per job, with ``hostname`` and ``port``); a server reports no status
documents through the client (``--status-interval`` is not forwarded: fio issue #712) and JSON output
suppresses fio's ETA line, so a host's progress is its elapsed time until its figures arrive.

The client obeys its server: SENDFILE makes it send back any file the server names, IOLOG makes it write
"<name>.<host>" wherever the server says. A server is not trusted (anyone who reaches its port, or a
compromised host), so the client runs in a sandbox: a fresh directory holding only the job file as its
working directory and, when mdtui is root, as nobody:nogroup with no capabilities and no way to gain
any (setpriv, util-linux, on every Debian), so it can read only what any local user can and write
nowhere an unprivileged user cannot.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import json
import os
import pwd
import shutil
from collections.abc import Callable, Iterator
from typing import Any

from mdtui.errors import PlanError
from mdtui.execute import fio as fio_parse
from mdtui.execute.argv import fio_argv
from mdtui.execute.process import ProcessRun, run_streaming
from mdtui.fleet.hosts import Host
from mdtui.model.job import JobResult, JobSpec, JobStatus, Tool
from mdtui.rootsafe import open_directory
from mdtui.rootwrite import scratch_directory, write_file
from mdtui.text import clean_line

# Seconds a host may take beyond a job's runtime (connecting, laying out a file, sending the figures)
# before it counts as not answering.
DEFAULT_HOST_SLACK_S = 30.0
# A size-based job has no natural end; this bounds it on a host that never answers.
SIZE_BASED_LIMIT_S = 3600.0
# After a Ctrl-C or a deadline the client asks its server to stop and waits for the figures; a host that
# does not answer that either is not waited for long.
CLIENT_INTERRUPT_GRACE_S = 3.0
_CLIENT_ONLY = ("--output-format=", "--status-interval=", "--readonly")
SANDBOX_USER = "nobody"
SANDBOX_GROUP = "nogroup"


def job_file(spec: JobSpec) -> str:
    """The fio job file of ``spec``: fio_argv's job options as `key=value` lines under `[name]`."""
    if spec.tool is not Tool.FIO:
        raise PlanError(f"{spec.name} is a {spec.tool.value} job; only fio jobs run on remote hosts")
    lines: list[str] = []
    for arg in fio_argv(spec)[1:]:
        if arg.startswith("--name="):
            # Each job of the argv its own section: a confirmed write step has two (execute.argv._confirmation).
            lines.append(f"[{arg.removeprefix('--name=')}]")
            continue
        if arg.startswith(_CLIENT_ONLY):
            continue
        key, sep, value = arg.removeprefix("--").partition("=")
        if any(c in value for c in "\n\r[]") or any(c in key for c in "\n\r[]="):
            raise PlanError(f"{spec.name}: option {arg!r} cannot be written to a fio job file")
        lines.append(f"{key}={value}" if sep else key)
    return "\n".join(lines) + "\n"


def client_argv(host: Host, job_path: str, *, writes: bool) -> list[str]:
    """`fio --output-format=json --client=HOST,PORT [--readonly] JOBFILE`."""
    argv = ["fio", "--output-format=json", f"--client={host.client_arg}"]
    if not writes:
        argv.append("--readonly")  # after --client=: only then does the server get it
    argv.append(job_path)
    return argv


def sandbox_ids() -> tuple[int, int] | None:
    """The uid and gid the client drops to: nobody:nogroup when mdtui is root, else None (runs as the user)."""
    if os.geteuid() != 0:
        return None
    try:
        user = pwd.getpwnam(SANDBOX_USER)
    except KeyError:
        raise PlanError(
            f"there is no user {SANDBOX_USER!r} to run fio's client as: mdtui will not run it as root"
        ) from None
    try:
        gid = grp.getgrnam(SANDBOX_GROUP).gr_gid
    except KeyError:
        gid = user.pw_gid
    if user.pw_uid == 0 or gid == 0:
        raise PlanError(f"user {SANDBOX_USER!r} is root here: mdtui will not run fio's client as root")
    if shutil.which("setpriv") is None:
        raise PlanError("setpriv (util-linux) is not installed: mdtui will not run fio's client as root")
    return user.pw_uid, gid


def sandbox_prefix(directory: str, ids: tuple[int, int] | None) -> list[str]:
    """What runs the client unprivileged (when ``ids``) with ``directory`` as its working directory."""
    prefix: list[str] = []
    if ids is not None:
        uid, gid = ids
        prefix = [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    return [*prefix, "env", f"--chdir={directory}"]


@contextlib.contextmanager
def client_sandbox(spec: JobSpec) -> Iterator[tuple[list[str], str]]:
    """(argv prefix, job file path): a fresh directory with only the job file, removed afterwards.

    As root the directory and the job file stay root's (0755, 0444): the unprivileged client reads the
    job but can neither change it nor create anything there, so an IOLOG it is told to write fails.
    """
    ids = sandbox_ids()
    # In a place no other user can change (rootwrite.scratch_base), never a $TMPDIR another user's environment kept.
    with scratch_directory("mdtui-fio-client-") as directory:
        path = write_file(directory / "job.fio", job_file(spec).encode("utf-8"), replace=False, mode=0o444)
        if ids is not None:
            with open_directory(directory) as opened:
                os.fchmod(opened, 0o755)  # the unprivileged client may enter it, not change it
        yield sandbox_prefix(str(directory), ids), str(path)


def host_timeout_s(spec: JobSpec, slack_s: float) -> float:
    return (spec.runtime_s + slack_s) if spec.runtime_s is not None else SIZE_BASED_LIMIT_S


def host_document(document: dict[str, Any], host: Host) -> dict[str, Any] | None:
    """fio's client-mode JSON cut down to one host, in the shape of a local run's (``jobs``).

    Entries of ``client_stats`` that name another host or port, and fio's "All clients" sum, are left out;
    None when the host sent no job figures (it dropped, or refused the job).
    """
    stats = document.get("client_stats")
    if not isinstance(stats, list):
        return None
    jobs = [
        entry
        for entry in stats
        if isinstance(entry, dict)
        and "jobname" in entry
        and entry.get("jobname") != "All clients"
        and (entry.get("port") in (None, host.port))
    ]
    if not jobs:
        return None
    kept = {key: value for key, value in document.items() if key not in ("client_stats", "jobs")}
    return {**kept, "jobs": jobs}


def _messages(stdout: str, stderr: str) -> list[str]:
    """fio's complaints in its text: its own "fio: ..." lines, the server's "<host> fio: ..." and disconnects."""
    found = []
    for line in (stdout + "\n" + stderr).splitlines():
        text = clean_line(line)[:500]
        if text.startswith("<") and "> " in text:
            text = text.split("> ", 1)[1].strip()
        if text.startswith("fio:") or "disconnected" in text or "has write or trim bit set" in text:
            found.append(text)
    return list(dict.fromkeys(found))


def _failure(run: ProcessRun, host: Host, timeout_s: float, messages: list[str]) -> str:
    if run.timed_out:
        return (
            f"host {host.label} did not answer within {timeout_s:.0f} s (the job's runtime plus the host "
            "timeout); its fio client was stopped"
        )
    if any("Connection refused" in m for m in messages):
        return f"host {host.label} refused the connection: is `fio --server` running there on port {host.port}?"
    if any("disconnected" in m for m in messages):
        return f"host {host.label} dropped the connection mid-run (its fio server stopped or the network failed)"
    text = run.stderr_text + "\n" + run.stdout.decode("utf-8", "replace")
    lines = [clean_line(line)[:500] for line in text.splitlines()]
    last = next((line for line in reversed(lines) if line and line not in "{}"), "")
    detail = "; ".join(messages[:2]) or f"fio exited with code {run.returncode}" + (f": {last}" if last else "")
    return f"host {host.label}: {detail}"


async def run_on_host(
    spec: JobSpec,
    host: Host,
    *,
    cancel: asyncio.Event | None = None,
    slack_s: float = DEFAULT_HOST_SLACK_S,
    on_started: Callable[[], None] | None = None,
) -> JobResult:
    """Run ``spec`` on ``host`` through its fio server; the JobResult carries that host's figures only.

    ``raw`` is the host's figures as one local fio document (``jobs`` = the host's ``client_stats``), so
    the store's fio adapter reads it exactly as a local run's. A refused connection, a dropped one and a
    host that does not answer in time end FAILED or TIMED_OUT with the host named.
    """
    timeout_s = host_timeout_s(spec, slack_s)
    with client_sandbox(spec) as (prefix, path):
        argv = [*prefix, *client_argv(host, path, writes=spec.writes)]
        if on_started is not None:
            on_started()
        run = await run_streaming(
            argv,
            cancel=cancel,
            timeout_s=timeout_s,
            stall_timeout_s=None,
            interrupt_grace_s=CLIENT_INTERRUPT_GRACE_S,
        )
    stdout = run.stdout.decode("utf-8", "replace")
    stderr = run.stderr_text
    output = fio_parse.parse_fio_output(stdout)
    document = next((d for d in reversed(output.documents) if "client_stats" in d), None)
    own = host_document(document, host) if document is not None else None
    total, jobs = fio_parse.document_stats(own) if own is not None else (None, ())
    messages = _messages(stdout, stderr)
    errors: list[str] = []
    if own is None or run.returncode != 0:
        if run.cancelled and not run.timed_out:
            errors.append(f"host {host.label}: stopped")
        else:
            errors.append(_failure(run, host, timeout_s, messages))
    elif (job_error := fio_parse.document_error(own)) is not None:
        errors.append(f"host {host.label}: {clean_line(job_error)[:500]}")
    if run.timed_out:
        status = JobStatus.TIMED_OUT
    elif run.cancelled and own is None:
        status = JobStatus.CANCELLED
    elif errors:
        status = JobStatus.FAILED
    else:
        status = JobStatus.COMPLETE
    return JobResult(
        spec=spec,
        status=status,
        argv=tuple(argv),
        returncode=run.returncode,
        duration_s=run.duration_s,
        total=total,
        jobs=jobs,
        partial=status is not JobStatus.COMPLETE and total is not None,
        error="; ".join(errors) or None,
        stderr=stderr,
        raw=json.dumps(own, indent=2) if own is not None else "",
    )
