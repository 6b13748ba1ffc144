"""The advisor's rules, one module per family, registered here in the order their findings are ranked."""

from __future__ import annotations

from collections.abc import Callable

from mdtui.advise.findings import Finding, sort_findings
from mdtui.advise.rules.cpu import rule_governor
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.advise.rules.keep import rule_boot, rule_health, rule_monitoring, rule_reshape
from mdtui.advise.rules.knobs import rule_knob_sweep
from mdtui.advise.rules.measured import rule_measured_slow_member, rule_shared_limit
from mdtui.advise.rules.member_runs import rule_busy_member, rule_same_job_on_members
from mdtui.advise.rules.members import rule_downgraded_links, rule_slow_members
from mdtui.advise.rules.parity import rule_parity_cpu, rule_stripe_cache
from mdtui.advise.rules.predicted import rule_below_prediction
from mdtui.advise.rules.resync import rule_resync
from mdtui.advise.rules.steady import rule_unsteady_steps
from mdtui.advise.rules.workload import rule_bitmap, rule_chunk_for_workload, rule_level_for_workload, rule_parallelism

RULES: tuple[Callable[[AdviceInput], list[Finding]], ...] = (
    rule_measured_slow_member,
    rule_shared_limit,
    rule_below_prediction,
    rule_same_job_on_members,
    rule_busy_member,
    rule_slow_members,
    rule_downgraded_links,
    rule_governor,
    rule_resync,
    rule_health,
    rule_reshape,
    rule_boot,
    rule_monitoring,
    rule_parallelism,
    rule_level_for_workload,
    rule_chunk_for_workload,
    rule_bitmap,
    rule_stripe_cache,
    rule_knob_sweep,
    rule_parity_cpu,
    rule_unsteady_steps,
)


def advise(inp: AdviceInput) -> tuple[Finding, ...]:
    """Every rule's findings, worst first (each rule sets its findings' topic: performance or keeping)."""
    return sort_findings(finding for rule in RULES for finding in rule(inp))
