"""A benchmark result as a table for the terminal and as JSON for scripts."""

from __future__ import annotations

from typing import Any

from mdtui.bench.result import BenchResult
from mdtui.execute import record
from mdtui.execute.record import step_title
from mdtui.format import rate_mb_s, to_jsonable
from mdtui.model.job import JobResult, JobStatus

RESULT_COLUMNS = ("#", "step", "read", "write", "IOPS", "md CPU", "status")


def _rate_cell(value: float | None) -> str:
    return rate_mb_s(value) if value else "-"


def _status_cell(status: JobStatus, partial: bool) -> str:
    if status is JobStatus.COMPLETE:
        return "partial" if partial else "ok"
    return status.value


def result_rows(result: BenchResult) -> list[tuple[str, ...]]:
    """One row per step (RESULT_COLUMNS), steps that never ran included, and the check pass last."""
    rows: list[tuple[str, ...]] = []
    for outcome in result.steps:
        cpu = outcome.md_thread_cpu_pct
        rows.append(
            (
                str(outcome.index + 1),
                step_title(outcome.step),
                _rate_cell(outcome.read_bytes_per_s),
                _rate_cell(outcome.write_bytes_per_s),
                f"{outcome.iops:,.0f}" if outcome.iops else "-",
                f"{cpu:.1f}%" if cpu is not None else "-",
                _status_cell(outcome.status, outcome.partial),
            )
        )
    for index in range(len(result.steps), len(result.plan.steps)):
        rows.append((str(index + 1), step_title(result.plan.steps[index]), "-", "-", "-", "-", "not run"))
    check = result.check
    if check is not None:
        rate = check.bytes_per_s
        cpu = check.md_thread_cpu_pct
        status = "skipped" if check.skipped else _status_cell(check.status, False)
        rows.append(
            (
                "",
                f"check pass ({check.duration_s:.1f} s)" if not check.skipped else "check pass",
                f"{rate_mb_s(rate)}/member" if rate else "-",
                "-",
                "-",
                f"{cpu:.1f}%" if cpu is not None else "-",
                status,
            )
        )
    return rows


def _job_json(result: JobResult) -> dict[str, Any]:
    total = result.total
    return {
        "name": result.spec.name,
        "target": result.spec.target,
        "argv": list(result.argv),
        "status": result.status.value,
        "partial": result.partial,
        "returncode": result.returncode,
        "duration_s": result.duration_s,
        "read_bytes_per_s": total.read.bytes_per_s if total else None,
        "write_bytes_per_s": total.write.bytes_per_s if total else None,
        "read_iops": total.read.iops if total else None,
        "write_iops": total.write.iops if total else None,
        "error": result.error,
    }


def result_to_json(result: BenchResult) -> dict[str, Any]:
    """The whole result for scripts: plan, every step with its jobs, reports, context and samples."""
    plan = result.plan
    out: dict[str, Any] = {
        "preset": plan.preset.key,
        "target": plan.target.path,
        "target_kind": plan.target.kind.value,
        "quick": plan.request.quick,
        "writes": plan.writes,
        "status": result.status.value,
        "partial": result.partial,
        "error": result.error,
        "started_at": result.started_at.isoformat(),
        "duration_s": result.duration_s,
        "run_ids": list(result.run_ids),
        # Runs the results database could not take: files beside it, or the documents themselves.
        "spooled": [str(path) for path in result.spooled],
        "unsaved_runs": list(result.unsaved),
        "warnings": list(plan.warnings),
        "notes": list(result.notes),
        "steps": [
            {
                "index": o.index + 1,
                "label": step_title(o.step),
                "status": o.status.value,
                "partial": o.partial,
                "run_id": o.run_id,
                "started_s": o.started_s,
                "duration_s": o.duration_s,
                "bytes_per_s": o.bytes_per_s,
                "read_bytes_per_s": o.read_bytes_per_s,
                "write_bytes_per_s": o.write_bytes_per_s,
                "iops": o.iops,
                "md_thread_cpu_pct": o.md_thread_cpu_pct,
                "md_threads": list(o.md_threads),
                "metrics": o.metrics.as_dict(),
                "jobs": [_job_json(r) for r in o.results],
            }
            for o in result.steps
        ],
        "not_run": [step_title(step) for step in plan.steps[len(result.steps) :]],
        "context": result.context,
        "samples": [{"t_s": p.t_s, **p.values} for p in result.samples],
    }
    if plan.target.array is not None:
        out["array"] = record.array_config(plan.target.array)
    if result.check is not None:
        check = result.check
        out["check"] = {**to_jsonable(check), "bytes_per_s": check.bytes_per_s}
    if result.weakest_link is not None:
        report = result.weakest_link
        slowest = report.slowest
        out["weakest_link"] = {
            "members": to_jsonable(report.members),
            "slowest": slowest.device if slowest else None,
            "slowest_bytes_per_s": slowest.alone_bytes_per_s if slowest else None,
            "alone_sum_bytes_per_s": report.alone_sum_bytes_per_s,
            "together_sum_bytes_per_s": report.together_sum_bytes_per_s,
            "array_bytes_per_s": report.array_bytes_per_s,
            "slowest_times_n_bytes_per_s": report.predicted_bytes_per_s,
            "array_vs_slowest_times_n": report.vs_predicted,
            "array_vs_sum": report.vs_sum,
            # The member verdict the advisor renders too (plan/member_verdict.py), members by kernel name.
            "verdict": report.verdict_json(),
            "findings": list(report.findings()),
        }
    return out
