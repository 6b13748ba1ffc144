"""mdtui's own commands in the command palette (Ctrl+P): open any screen, run a preset, create, tune,
persist, repair, scrub, export, theme, the findings (advise, experiments), doctor and calibrate, and bring
back a job left running in the background."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider


@dataclass(frozen=True)
class PaletteCommand:
    name: str
    help: str
    run: Callable[[], Any]


def mdtui_commands(app: Any) -> list[PaletteCommand]:
    """The commands as the app offers them now (background jobs change)."""
    from mdtui.execute.presets import PRESETS

    go = app.palette_go
    commands = [
        PaletteCommand("Open inventory", "disks and arrays", partial(go, "inventory")),
        PaletteCommand("Open bench: benchmark the selected array or disk", "presets, live chart", partial(go, "bench")),
        PaletteCommand("Open watch: live throughput of an array", "MB/s, IOPS, members, CPU", partial(go, "watch")),
        PaletteCommand("Open results: stored benchmark runs", "history, filter, export", partial(go, "results")),
        PaletteCommand("Open compare: mark runs in results, then c", "what changed", partial(go, "compare")),
        PaletteCommand(
            "Open create: plan and create an array", "mdadm --create after a typed confirmation", partial(go, "create")
        ),
        PaletteCommand("Open tune: the selected array's knobs", "read, sweep", partial(go, "tune")),
        PaletteCommand("Open guide: guided setup", "purpose, disks, create, a weakest-link run", partial(go, "guide")),
        PaletteCommand(
            "Open findings: what limits the arrays (mdtui advise)",
            "each finding's evidence, why, what to do and its experiment",
            partial(go, "findings"),
        ),
        PaletteCommand(
            "Experiments: the one each finding names (findings)",
            "weakest link, governor A/B, parallelism, chunk and level sweeps, knob sweeps",
            partial(go, "findings"),
        ),
        PaletteCommand(
            "Doctor: what this host gives mdtui (mdtui doctor)",
            "tools, md driver, root, cpufreq",
            partial(go, "doctor"),
        ),
        PaletteCommand(
            "Calibrate: md's own ceilings on this host (mdtui calibrate)",
            "what predictions use now, and the plan",
            partial(go, "calibrate"),
        ),
        PaletteCommand("Open help", "keys and columns of this screen", partial(go, "help")),
        PaletteCommand("Persist the selected array (mdadm.conf)", "mdtui persist", partial(go, "persist")),
        PaletteCommand("Repair the selected array", "fail, remove, add, replace, re-add", partial(go, "repair")),
        PaletteCommand("Grow the selected array", "members, level, chunk, layout, size", partial(go, "grow")),
        PaletteCommand("Scrub the selected array", "check or repair pass", partial(go, "scrub")),
        PaletteCommand("Export results", "Markdown, CSV or JSON", partial(go, "export")),
        PaletteCommand("Theme: pick a theme", "remembered across restarts", partial(go, "theme")),
    ]
    for preset in PRESETS:
        commands.append(
            PaletteCommand(
                f"Bench preset: {preset.title}",
                f"{preset.key} · opens bench with it chosen",
                partial(app.palette_preset, preset.key),
            )
        )
    for name, (job, subject) in dict(getattr(app, "background_jobs", {})).items():
        # The screen's installed name is internal: the help line says what runs, on what.
        commands.append(
            PaletteCommand(f"Back to {job} (running in the background)", subject, partial(app.palette_resume, name))
        )
    return commands


class MdtuiCommands(Provider):
    """Typing "bench" finds the bench screen, its presets and the background benchmark."""

    async def discover(self) -> Hits:
        for command in mdtui_commands(self.app):
            yield DiscoveryHit(command.name, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in mdtui_commands(self.app):
            score = max(matcher.match(command.name), matcher.match(command.help) * 0.5)
            if score > 0:
                yield Hit(score, matcher.highlight(command.name), command.run, help=command.help)
