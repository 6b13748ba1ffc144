"""The sync-time model's answers in words: a predicted pass for plans and details, the create plan's line for the
pass mdadm starts, and what holds a pass that runs now (and how long is left of it)."""

from __future__ import annotations

from mdtui.format import about
from mdtui.plan.sync_inputs import SyncLimits
from mdtui.plan.sync_time import SyncTime

# A running rate this close to md's cap is held by the cap (md sleeps whenever it passes it).
AT_CAP_RATIO = 0.9


# Within this of md's minimum, with other I/O on the array, md is yielding to it.
NEAR_FLOOR_RATIO = 1.5


# At this share of what the members allow, or more, the members set the pace.
AT_MEMBERS_RATIO = 0.8


def bound_now(
    rate_bytes_per_s: float | None,
    limits: SyncLimits,
    predicted: SyncTime | None = None,
    *,
    foreground_io: bool | None = None,
) -> str:
    """What holds a running pass at ``rate_bytes_per_s`` (md's sync_speed) now: md's cap, other I/O holding it
    near the minimum, the members (the prediction's bound), or something the model does not know.

    ``foreground_io``: whether other I/O runs on the array now (None: not known, as without a sampler).
    """
    if not rate_bytes_per_s:
        return "not known yet (md reports no speed)"
    cap, cap_name = limits.cap()
    floor, floor_name = limits.floor()
    if rate_bytes_per_s >= AT_CAP_RATIO * cap:
        return cap_name
    free = predicted.free_rate_bytes_per_s if predicted is not None else None
    if free and rate_bytes_per_s >= AT_MEMBERS_RATIO * free:
        return predicted.bound if predicted is not None and predicted.bound.startswith("members") else "the members"
    if floor < cap and rate_bytes_per_s <= NEAR_FLOOR_RATIO * floor:
        if foreground_io:
            return f"foreground I/O: md yields to it and keeps the pass near {floor_name}"
        if foreground_io is None:
            return f"near {floor_name}: md yields to other I/O above it"
    if free:
        return f"below what the members allow ({rate_bytes_per_s / free:.0%} of {free / 1e6:,.3g} MB/s): not known why"
    return "not known: the members' figures are missing"


def remaining_seconds(predicted: SyncTime | None, done_fraction: float | None) -> float | None:
    """The prediction for what is left of a pass ``done_fraction`` through (md's counter)."""
    if predicted is None or predicted.predicted_seconds is None or done_fraction is None:
        return None
    return max(0.0, 1.0 - done_fraction) * predicted.predicted_seconds


def prediction_words(answer: SyncTime | None, what: str | None = "") -> str:
    """ "rebuild: about 2.5 h idle (bound: ...); about 9 d while other I/O runs (...)" for plans and details;
    ``what`` names it (the pass's own word when empty, nothing when None)."""
    if answer is None:
        return ""
    head = "" if what is None else f"{what or answer.words}: "
    if answer.predicted_seconds is None:
        return head + f"not predicted ({answer.bound})"
    text = head + f"{about(answer.predicted_seconds)} idle (bound: {answer.bound})"
    if answer.under_load_seconds is not None and answer.under_load_seconds > answer.predicted_seconds * 1.05:
        text += f"; {about(answer.under_load_seconds)} while other I/O runs ({answer.under_load_bound})"
    return text


def initial_sync_line(answer: SyncTime | None) -> str | None:
    """The create plan's line for the pass mdadm starts (None when it starts none)."""
    if answer is None:
        return None
    return "initial sync      " + prediction_words(answer, f"{answer.words} after the create")
