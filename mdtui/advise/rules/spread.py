"""How the advisor words the member verdict (plan/member_verdict.py decides it): each member with its own figure,
its ratio to its peers, and the one line for members that are only spread.

A member read slower than its peers is not by that alone what limits its array: healthy members scatter from
run to run (the lab's unthrottled NVMe read 4,293, 3,020 and 1,321 MB/s alone in one weakest-link run, while
the throttled one read 20.6 and the array 83.3 = 20.6 × 4). Only members the array's own figure blames are
named; the others are spread.
"""

from __future__ import annotations

from collections.abc import Sequence

from mdtui.advise.rules.inputs import mb_text
from mdtui.format import times
from mdtui.plan.member_verdict import Judged


def own_figures(judged: Judged, names: Sequence[str], verb: str) -> str:
    """Each member with its own figure: "nvme4n1 reads 21 MB/s", "nvme2n1 reads 240 MB/s and nvme3n1 245 MB/s"."""
    parts = [f"{names[0]} {verb}s {mb_text(judged.figures[names[0]])}"]
    parts += [f"{name} {mb_text(judged.figures[name])}" for name in names[1:]]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def ratios_text(judged: Judged, names: Sequence[str], against: str | None = None) -> str:
    """ "0.0056× its peers (3,656 MB/s)", "0.11× and 0.12× their peers (2,125 MB/s)"; ``against`` replaces
    "its/their peers"."""
    shown = [times(judged.ratio(name)) for name in names]
    joined = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    whom = against or f"{'its' if len(names) == 1 else 'their'} peers"
    return f"{joined} {whom} ({mb_text(judged.peers)})"


def spread_clause(judged: Judged, name: str, array_name: str | None, what: str) -> str:
    """One member that is spread or unsure, in its own words with its own figure."""
    value = judged.figures[name]
    text = f"{name} {what} {mb_text(value)} ({times(judged.ratio(name))} its peers' {mb_text(judged.peers)}"
    if judged.array is not None and array_name is not None:
        relation = "about" if name in judged.unsure else "not"
        pace = mb_text(judged.pace(name))
        text += f"; × {judged.stripe.factor_text} = {pace}, {relation} {array_name}'s {mb_text(judged.array)}"
    return text + ")"


def spread_title(judged: Judged, array_name: str | None, what: str) -> str:
    """The one line for the members slower than their peers that the figures do not blame. ``what`` says how
    they were measured, after the member's name: "read alone", "read with the same job"."""
    names = [*judged.unsure, *judged.spread]
    title = "Spread: " + "; ".join(spread_clause(judged, name, array_name, what) for name in names)
    noisy = [name for name in names if judged.within_noise(name)]
    if noisy:
        return title + f": within the run-to-run scatter ({judged.scatter_text(noisy)}); repeat the run before judging"
    return title + ": slower than their peers, but not what limits the array now"
