"""What a benchmark run records: system context, device and array configuration, and JobResult → store Metrics."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from mdtui.command import run_command
from mdtui.errors import MdtuiError
from mdtui.execute.argv import size_arg as size_text  # sizes spelled as fio and dd read them
from mdtui.execute.presets import Step
from mdtui.model.array import MdArray
from mdtui.model.disk import Disk
from mdtui.model.inventory import Inventory
from mdtui.model.job import JobResult, JobSpec, Tool
from mdtui.probe.cpu import CpufreqReader
from mdtui.probe.root import SystemRoot
from mdtui.probe.system import cpu_model, kernel_release
from mdtui.store.fio_import import metrics_from_fio
from mdtui.store.records import Metrics

NOT_AVAILABLE = "not available"


# --- system context ---------------------------------------------------------------------------------


@cache
def tool_version(program: str) -> str:
    """`program --version` as the tool prints it (fio on stdout, mdadm on stderr); "not installed" if absent.

    Cached: the version cannot change while mdtui runs, and every stored run carries it.
    """
    try:
        result = run_command([program, "--version"], timeout_s=10)
    except MdtuiError:
        return "not installed"
    text = (result.stdout.strip() or result.stderr.strip()).splitlines()
    return text[0].strip() if text else "unknown"


def governor_summary(root: SystemRoot) -> dict[str, str]:
    """The governors in use, the scaling driver and pstate mode; "not available" without cpufreq (VMs)."""
    state = CpufreqReader(root).read()
    if not state.available:
        return {"governor": NOT_AVAILABLE}
    governors = sorted({core.settings.governor for core in state.cores if core.settings.governor})
    drivers = sorted({core.settings.driver for core in state.cores if core.settings.driver})
    found = {"governor": ", ".join(governors) or "unknown"}
    if drivers:
        found["cpufreq_driver"] = ", ".join(drivers)
    if state.pstate_driver and state.pstate_status:
        found["pstate"] = f"{state.pstate_driver} {state.pstate_status}"
    return found


def system_context(root: SystemRoot) -> dict[str, Any]:
    """Hostname, kernel, CPU, governor, fio and mdadm versions: what a result depends on besides the disks."""
    hostname = root.read_text("/proc/sys/kernel/hostname") or (os.uname().nodename if root.is_live else "unknown")
    return {
        "hostname": hostname,
        "kernel": kernel_release(root),
        "cpu_model": cpu_model(root),
        **governor_summary(root),
        "fio_version": tool_version("fio"),
        "mdadm_version": tool_version("mdadm"),
    }


# --- device and array configuration -----------------------------------------------------------------


def disk_config(disk: Disk) -> dict[str, Any]:
    """A disk as a run records it: identity, size, kind and the link it trained at."""
    config: dict[str, Any] = {"name": disk.name, "transport": disk.transport.value}
    for key, value in (
        ("model", disk.model),
        ("serial", disk.serial),
        ("size_bytes", disk.size_bytes),
        ("rotational", disk.rotational),
        ("link", disk.link.describe() if disk.link else None),
    ):
        if value is not None:
            config[key] = value
    return config


def array_config(array: MdArray, inventory: Inventory | None = None) -> dict[str, Any]:
    """The store's ArrayConfig of an md array, with each member's model, serial and link where known."""
    members = []
    for member in array.members:
        if member.faulty:
            continue
        info: dict[str, Any] = {"name": member.name}
        disk = inventory.disk(member.name) if inventory is not None else None
        if disk is not None:
            for key, value in (("model", disk.model), ("serial", disk.serial)):
                if value:
                    info[key] = value
            if disk.link is not None:
                info["link"] = disk.link.describe()
        if member.spare:
            info["spare"] = True
        members.append(info)
    config: dict[str, Any] = {"name": array.name, "level": array.level or "unknown", "state": array.state}
    settings: tuple[tuple[str, int | str | None], ...] = (
        ("raid_disks", array.raid_disks),
        ("size_bytes", array.size_bytes),
        ("chunk_bytes", array.chunk_bytes),
        ("layout", array.layout),
        ("bitmap", array.bitmap),
        ("metadata", array.metadata),
        ("uuid", array.uuid),
    )
    for key, setting in settings:
        if setting is not None:
            config[key] = setting
    if array.degraded:
        config["degraded"] = array.degraded
    if array.sync is not None:
        # A benchmark during a resync measures the resync too; the record must say so.
        config["sync"] = f"{array.sync.action} {array.sync.state}"
    config["members"] = members
    return config


# --- parameters -------------------------------------------------------------------------------------


def job_params(spec: JobSpec) -> dict[str, Any]:
    """A job's options named as fio (or dd) takes them, as the store's params expect."""
    params: dict[str, Any] = {"tool": spec.tool.value, "rw": spec.rw.value, "bs": size_text(spec.block_size_bytes)}
    if spec.tool is Tool.FIO:
        params.update(
            iodepth=spec.iodepth,
            numjobs=spec.numjobs,
            ioengine=spec.ioengine.value,
            direct=int(spec.direct),
        )
    else:
        params["direct"] = int(spec.direct)
    if spec.runtime_s is not None:
        params["runtime"] = spec.runtime_s
    if spec.size_bytes is not None:
        params["size"] = size_text(spec.size_bytes)
    if spec.offset_bytes:
        params["offset"] = spec.offset_bytes
    if spec.steady is not None:
        # The runtime above is then the ceiling: the step ends once this holds (fio's --steadystate).
        params["steady"] = spec.steady.fio_criterion
        params["steady_window"] = spec.steady.window_s
        params["steady_ramp"] = spec.steady.ramp_s
        if spec.runtime_s is not None and (confirm_s := spec.steady.confirm_s(spec.runtime_s)):
            params["steady_confirm"] = confirm_s  # at most, of the ceiling: see execute.argv._confirmation
    return params


def step_title(step: Step) -> str:
    """A step's label, or for a custom job (labelled by its name) what it does: "randread 4k QD32×4"."""
    spec = step.jobs[0]
    if step.label != spec.name or len(step.jobs) > 1:
        return step.label
    return f"{spec.rw.value} {size_text(spec.block_size_bytes)} QD{spec.iodepth}×{spec.numjobs}"


def step_params(step: Step) -> dict[str, Any]:
    """The options of a step's jobs: one set when they agree, and what differs listed (targets, offsets)."""
    per_job = [job_params(spec) for spec in step.jobs]
    params = dict(per_job[0])
    for key in {key for p in per_job for key in p}:
        values = [p.get(key) for p in per_job]
        if any(value != values[0] for value in values[1:]):
            params.pop(key, None)
            params[f"{key}s"] = values
    if len(step.jobs) > 1:
        params["processes"] = len(step.jobs)
    params["step"] = step_title(step)
    return params


# --- metrics ---------------------------------------------------------------------------------------


def _fio_document(result: JobResult) -> dict[str, Any] | None:
    if result.spec.tool is not Tool.FIO or not result.raw:
        return None
    try:
        document = json.loads(result.raw)
    except json.JSONDecodeError:
        return None
    return document if isinstance(document, dict) and isinstance(document.get("jobs"), list) else None


def _dd_values(result: JobResult) -> dict[str, float]:
    total = result.total
    if total is None or total.read.io_bytes <= 0:
        return {}
    values = {"read_bw_bytes_per_s": total.read.bytes_per_s}
    if total.read.iops:
        values["read_iops"] = total.read.iops
    return values


def metrics_from_results(results: Sequence[JobResult], *, md_thread_cpu_pct: float | None = None) -> Metrics:
    """Store figures of jobs that ran at the same time (one step).

    fio jobs go through the store's own fio adapter on fio's final JSON, so a stored run holds exactly
    what fio reported and matches an imported one: bandwidth, IOPS and CPU summed over the jobs, mean
    latency weighted by I/O count, percentiles the worst job's. dd reports only a read rate.
    """
    documents = [doc for result in results if (doc := _fio_document(result)) is not None]
    values: dict[str, float] = {}
    if documents:
        merged = {"jobs": [job for doc in documents for job in doc["jobs"] if isinstance(job, dict)]}
        values.update(metrics_from_fio(merged).as_dict())
    for result in results:
        if result.spec.tool is Tool.DD:
            for key, value in _dd_values(result).items():
                values[key] = values.get(key, 0.0) + value
    if md_thread_cpu_pct is not None:
        values["md_thread_cpu_pct"] = md_thread_cpu_pct
    return Metrics.from_dict(values)


def fio_json_of(results: Iterable[JobResult]) -> str | None:
    """fio's final documents of a step, one after another as separate fio runs would print them."""
    raws = [result.raw for result in results if result.spec.tool is Tool.FIO and result.raw]
    return "\n".join(raws) if raws else None
