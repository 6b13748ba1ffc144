"""Which findings are about one array (or one of its members), which of them says what limits its speed, and the
command line that runs a finding's experiment: what the app's findings view and an array's detail show."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mdtui.advise.findings import Finding, Topic
from mdtui.model.array import MdArray

# What `mdtui advise` and the findings view say when the rules find nothing.
NO_FINDINGS = "No findings: nothing mdtui checks for is limiting these disks and arrays."
# A subject that names an md array ("md0", "/dev/md0", "md127").
_ARRAY = re.compile(r"(?:/dev/)?(md\d+)")


def subjects(finding: Finding) -> tuple[str, ...]:
    """The kernel names a finding is about, from its id ("busy-member:md0:sdc" -> md0, sdc); none for a finding
    about the whole host (the CPU governor, the monitor)."""
    _kind, _, rest = finding.id.partition(":")
    return tuple(part.rsplit("/", 1)[-1] for part in rest.split(":") if part) if rest else ()


def about_array(findings: Iterable[Finding], array: MdArray) -> tuple[Finding, ...]:
    """The findings about ``array`` or one of its members (a member's link, its SMART), in the order given."""
    names = {array.name, *(member.name for member in array.members)}
    return tuple(finding for finding in findings if names.intersection(subjects(finding)))


def host_wide(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """The findings about the whole host (no device named): they bear on every array."""
    return tuple(finding for finding in findings if not subjects(finding))


def limiting(findings: Iterable[Finding]) -> Finding | None:
    """What limits an array's speed: the first finding about performance, in the advisor's order (worst first,
    a cause before its consequences); None when none is."""
    return next((finding for finding in findings if finding.topic is Topic.PERFORMANCE), None)


def array_of(finding: Finding) -> str | None:
    """The md array a finding names ("md0"), if it names one."""
    return next((match[1] for part in subjects(finding) if (match := _ARRAY.fullmatch(part))), None)


def experiment_command(finding: Finding) -> str | None:
    """The command that runs the finding's experiment, on its array where it names one; None without one."""
    key = finding.experiment
    if key is None:
        return None
    target = array_of(finding) or "ARRAY"
    knob = subjects(finding)[1] if finding.id.startswith("knob-sweep:") and len(subjects(finding)) > 1 else None
    commands = {
        "weakest-link": f"mdtui bench --preset weakest-link --target {target}",
        "parity-cost": f"mdtui bench --preset parity-cost --target {target}",
        "governor-ab": f"mdtui experiment governor-ab --target {target}",
        "parallelism-sweep": f"mdtui experiment parallelism --target {target}",
        "knob-sweep": f"mdtui experiment knob --knob {knob or 'stripe_cache_size'} --values A,B --target {target}",
        # The sweeps build arrays on free disks and destroy them: the disks are the user's to name.
        "chunk-sweep": "mdtui experiment chunk-sweep DISK... (free disks: it creates and destroys arrays on them)",
        "level-compare": "mdtui experiment levels DISK... (free disks: it creates and destroys arrays on them)",
    }
    return commands.get(key)
