"""The exact fio and dd command lines of a JobSpec: fio's spelling of the target, each sequential job its own region
of it, a confirmed steady step's second job, dd's direct read."""

from __future__ import annotations

from mdtui.errors import PlanError
from mdtui.model.job import CONFIRM_SUFFIX, GIB, KIB, MIB, JobSpec, RwMode, Tool


def size_arg(size_bytes: int) -> str:
    """Bytes in the suffix form fio and dd both read as powers of 1024 ("4m", "64k"), else plain bytes."""
    for suffix, unit in (("g", GIB), ("m", MIB), ("k", KIB)):
        if size_bytes % unit == 0:
            return f"{size_bytes // unit}{suffix}"
    return str(size_bytes)


# What fio makes of a filename= value, checked with fio 3.33 on the command line and in job files: ':'
# separates several files (so /srv/t12:00/x opens /srv/t12, then 00/x) unless written '\:'; '#' and ';'
# start a comment and cut the name there; a job file expands ${VAR} from fio's environment; leading and
# trailing blanks are stripped; a line break ends the option. A backslash before anything but ':' is kept
# as it is, so escaping every ':' is unambiguous.
_FIO_CUTS_NAME = {"#": "'#' starts a comment", ";": "';' starts a comment", "$": "'$' expands a variable"}


def fio_filename(path: str) -> str:
    """``path`` as fio's filename= option must spell it to open exactly that one file; PlanError if it cannot."""
    problems = [why for char, why in _FIO_CUTS_NAME.items() if char in path]
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        problems.append("it holds a control character or line break")
    if path != path.strip():
        problems.append("fio strips its leading and trailing blanks")
    if not path:
        problems.append("it is empty")
    if problems:
        raise PlanError(f"fio cannot be given the target {path!r} safely: {'; '.join(problems)}; rename it")
    return path.replace(":", "\\:")


_SEQUENTIAL = (RwMode.READ, RwMode.WRITE, RwMode.READWRITE)


def _own_regions(spec: JobSpec, target_bytes: int | None) -> list[str]:
    """fio options giving each of a sequential step's jobs its own 1/N of the target.

    Without them every job of ``--numjobs=N`` starts at offset 0 (checked with fio 3.33, --debug=io), so N
    "streams" move through the same blocks at the same moment: on a parity array md then serialises
    writes to the same stripes and completes each by reading, and a device with a cache serves the other
    N - 1 readers from it. N streams over N regions is what N sequential writers or readers do. fio takes
    both as a whole percentage of the target; more than 100 jobs keep fio's default. A time-based job
    only: a size-based job moves the bytes per job it was given, wherever its user put them.

    ``target_bytes`` is the target's size when the caller knows it (the local runner, just before it runs
    fio): a region smaller than one block is refused by fio ("blocksize is larger than data set range"),
    so a target too small to split keeps fio's default. Unknown (a plan shown before the run, a remote
    host's job file), the regions are written as they would be on a target large enough.
    """
    if spec.numjobs < 2 or spec.rw not in _SEQUENTIAL or spec.offset_bytes or spec.numjobs > 100:
        return []
    share = 100 // spec.numjobs
    if target_bytes is not None and target_bytes * share // 100 < spec.block_size_bytes:
        return []
    return [f"--size={share}%", f"--offset_increment={share}%"]


def fio_argv(spec: JobSpec, *, target_bytes: int | None = None) -> list[str]:
    """The fio command line for ``spec``: argv only, JSON on stdout with one document per interval.

    ``target_bytes``: the target's size if known (see _own_regions)."""
    if spec.tool is not Tool.FIO:
        raise PlanError(f"job {spec.name} is a {spec.tool} job, not a fio job")
    argv = [
        "fio",
        f"--name={spec.name}",
        f"--filename={fio_filename(spec.target)}",
        f"--rw={spec.rw.value}",
        f"--bs={size_arg(spec.block_size_bytes)}",
        f"--iodepth={spec.iodepth}",
        f"--numjobs={spec.numjobs}",
        f"--ioengine={spec.ioengine.value}",
        f"--direct={int(spec.direct)}",
    ]
    if spec.offset_bytes:
        argv.append(f"--offset={spec.offset_bytes}")
    if spec.runtime_s is not None:
        confirm_s = spec.steady.confirm_s(spec.runtime_s) if spec.steady is not None else 0
        argv += ["--time_based", f"--runtime={spec.runtime_s - confirm_s}"]
        argv += _own_regions(spec, target_bytes)
    else:
        argv.append(f"--size={size_arg(spec.size_bytes or 0)}")
    if spec.steady is not None:
        # fio ends the job once the figure is steady; the runtime above is the ceiling.
        argv += [
            f"--steadystate={spec.steady.fio_criterion}",
            f"--steadystate_duration={spec.steady.window_s}",
            f"--steadystate_ramp_time={spec.steady.ramp_s}",
        ]
    if not spec.writes:
        # fio then refuses any write, so a read benchmark can never damage a member of a live array.
        argv.append("--readonly")
    # Threads, not processes: fio's job processes leave the process group (setsid), so a cancel that
    # had to kill fio would orphan them still doing I/O; as threads they die with it.
    argv += ["--thread", "--group_reporting"]
    argv += _confirmation(spec, argv)
    argv += ["--output-format=json", f"--status-interval={spec.status_interval_s}"]
    return argv


def _confirmation(spec: JobSpec, job: list[str]) -> list[str]:
    """A confirmed steady step's second fio job: ``job``'s options again, run once the first has ended.

    The first job runs until steady, at most the runtime less the confirmation's share (SteadyState.confirm_s),
    so the step never runs past its ceiling. The second stands behind ``--stonewall``: it starts when the
    first ends, in the same fio process and JSON document, and is reported apart (group_reporting groups per
    stonewall group; checked with fio 3.33). It is judged by the same criterion without a ramp: the I/O has
    been running all along. mdtui.store.fio_read.fold_confirmations reads the two as one step.
    """
    steady = spec.steady
    if steady is None or spec.runtime_s is None or not (confirm_s := steady.confirm_s(spec.runtime_s)):
        return []
    options = [arg for arg in job[1:] if not arg.startswith(("--name=", "--runtime=", "--steadystate_ramp_time="))]
    return [
        f"--name={spec.name}{CONFIRM_SUFFIX}",
        "--stonewall",
        *options,
        f"--runtime={confirm_s}",
        "--steadystate_ramp_time=0",
    ]


def dd_argv(spec: JobSpec) -> list[str]:
    """The dd command line for ``spec``: a direct read to /dev/null with progress on stderr."""
    if spec.tool is not Tool.DD or spec.size_bytes is None:
        raise PlanError(f"job {spec.name} is not a dd read job")
    argv = [
        "dd",
        f"if={spec.target}",
        "of=/dev/null",
    ]
    if spec.direct:
        argv.append("iflag=direct")
    argv += [
        f"bs={size_arg(spec.block_size_bytes).upper()}",
        f"count={spec.size_bytes // spec.block_size_bytes}",
        f"skip={spec.offset_bytes // spec.block_size_bytes}",
        "status=progress",
    ]
    return argv


def job_argv(spec: JobSpec) -> list[str]:
    return fio_argv(spec) if spec.tool is Tool.FIO else dd_argv(spec)
