"""What the palette's *doctor* and *calibrate* show: the lines `mdtui doctor` and `mdtui calibrate --dry-run`
print, from the same core functions, as renderables."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from mdtui import __version__
from mdtui.errors import MdtuiError
from mdtui.probe.root import SystemRoot, live_refusal


def doctor_report(root: str) -> tuple[str, RenderableType]:
    from mdtui.advise.doctor import doctor_checks, doctor_lines

    lines = [f"mdtui {__version__} · root {root}", "", *doctor_lines(doctor_checks(SystemRoot(root)))]
    return "Doctor: what this host gives mdtui", Text("\n".join(lines))


def calibrate_report(root: str) -> tuple[str, RenderableType]:
    """What predictions use for md's own ceilings now, and what `mdtui calibrate` would do (or why it cannot)."""
    import os

    from mdtui.execute.calibrate import plan_calibration
    from mdtui.store.calibration import host_ceilings

    choice = host_ceilings()
    now = choice.note or f"md's ceilings: {choice.default.basis}"
    parts: list[RenderableType] = [Text(now), Text("")]
    refusal = live_refusal(root, "calibrating (null_blk devices and md arrays)")
    if refusal is not None:
        parts.append(Text(refusal))
    elif os.geteuid() != 0:
        parts.append(Text("calibrate makes null_blk devices and md arrays: run `mdtui calibrate` as root"))
    else:
        try:
            plan = plan_calibration()
        except MdtuiError as exc:
            parts.append(Text(str(exc)))
        else:
            parts += [Text("\n".join(plan.lines())), Text("")]
            parts.append(Text("Run it at a terminal: `mdtui calibrate` (it asks before it makes anything).", "bold"))
    return "Calibrate: md's own ceilings", Group(*parts)
