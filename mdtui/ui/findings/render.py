"""Turns findings (mdtui.advise) into the findings view's list lines, one finding's detail, and an array's rows."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mdtui.advise.about import about_array, experiment_command, host_wide, limiting
from mdtui.advise.findings import EXPERIMENT_TITLES, Finding, Severity, short_title, why_text
from mdtui.format import plural
from mdtui.model.array import MdArray
from mdtui.ui.common.render import Palette

# The key that opens the findings view from the inventory (and that an array's detail names).
FINDINGS_KEY = "F"
# How many of an array's findings its detail names before "and N more".
DETAIL_FINDINGS = 3


def severity_style(severity: Severity, palette: Palette) -> str:
    return {Severity.CRITICAL: palette.error, Severity.WARNING: palette.warning, Severity.INFO: palette.muted}[
        severity
    ]


def severity_counts(findings: Sequence[Finding]) -> str:
    """"1 critical, 2 warnings, 1 info", worst first; "" for none."""
    counts = []
    for severity in (Severity.CRITICAL, Severity.WARNING, Severity.INFO):
        n = sum(finding.severity is severity for finding in findings)
        if n:
            counts.append(plural(n, "warning") if severity is Severity.WARNING else f"{n} {severity.value}")
    return ", ".join(counts)


def finding_line(finding: Finding, palette: Palette) -> Text:
    """One line of the list: the mark and the severity in words (so it reads without colour), then the title's
    first clause (the detail has the rest)."""
    style = severity_style(finding.severity, palette)
    text = Text(f"{finding.severity.mark} {finding.severity.value.upper():<8} ", style=style)
    text.append(short_title(finding))
    return text


def finding_detail(finding: Finding, palette: Palette, told: dict[str, str] | None = None) -> RenderableType:
    """Everything about one finding: title, evidence, why, what it rules out, what to do, its experiment and
    the command that runs it."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True, style=palette.muted)
    grid.add_column(overflow="fold")
    for index, item in enumerate(finding.evidence):
        grid.add_row("Evidence" if index == 0 else "", Text(str(item)))
    grid.add_row("Why", Text(why_text(finding, told)))
    for index, text in enumerate(finding.ruled_out):
        grid.add_row("Rules out" if index == 0 else "", Text(text))
    grid.add_row("What to do", Text(finding.what_to_do))
    if finding.experiment is not None:
        grid.add_row("Experiment", Text(EXPERIMENT_TITLES[finding.experiment]))
        command = experiment_command(finding)
        if command is not None:
            grid.add_row("", Text(command, style="bold"))
    style = f"bold {severity_style(finding.severity, palette)}"
    title = Text(f"{finding.severity.mark} {finding.severity.value.upper()}: ", style=style)
    title.append(finding.title, style="bold")
    return Group(title, Text(""), grid)


def array_rows(findings: Sequence[Finding] | None, array: MdArray) -> list[tuple[str, str, bool]]:
    """An array's detail rows (label, text, problem): what limits its speed, then its other findings (their
    count by severity and the first few by name), and how many are about the whole host.

    ``findings`` None: being read (or could not be); the rows say so rather than "none"."""
    if findings is None:
        return [("Findings", f"reading… ({FINDINGS_KEY} shows every finding)", False)]
    own = about_array(findings, array)
    limit = limiting(own)
    rows: list[tuple[str, str, bool]] = []
    if limit is not None:
        rows.append(("Limit", limit.title, True))
    else:
        rows.append(("Limit", "nothing mdtui checks for limits its speed", False))
    others = [finding for finding in own if finding is not limit]
    if others:
        counts = severity_counts(others)
        named = " · ".join(f"{f.severity.mark} {short_title(f)}" for f in others[:DETAIL_FINDINGS])
        more = f" · {len(others) - DETAIL_FINDINGS} more" if len(others) > DETAIL_FINDINGS else ""
        rows.append(("Findings", f"{counts}: {named}{more} ({FINDINGS_KEY} shows them)", False))
    elif limit is None:
        rows.append(("Findings", f"none about {array.name} ({FINDINGS_KEY} shows the host's)", False))
    shared = host_wide(findings)
    if shared:
        about_host = " · ".join(short_title(f) for f in shared)
        rows.append(("Host", f"{plural(len(shared), 'finding')} about the whole host: {about_host}", False))
    return rows
