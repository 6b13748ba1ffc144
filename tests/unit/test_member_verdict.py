"""The one verdict on members (plan/member_verdict.py): slow, pace-setting, spread, shared limit, parallelism,
with the array's pace the md model's figure for its level."""

from __future__ import annotations

from mdtui.plan.levels import LINEAR, RAID0, RAID5
from mdtui.plan.member_verdict import ONE_FIGURE, SLOW_RATIO, Stripe, slower_than_peers, weakest_link_verdict

MB = 1e6


def test_the_pace_a_member_sets_is_the_models_figure_for_the_level() -> None:
    # Flash raid5 reads from every member; platters lose a rotation per parity chunk (data disks only); a
    # concatenation reads one member at a time (docs/predictions.md, the model).
    assert Stripe(RAID5, 4, rotational=False).factor == 4
    assert Stripe(RAID5, 4, rotational=True).factor == 3
    assert Stripe(LINEAR, 4).factor == 1
    assert Stripe(None, 3).factor == 3  # listed devices, no level: a plain stripe


def test_slow_is_under_the_ratio_of_the_others_median() -> None:
    assert SLOW_RATIO == 0.8
    assert slower_than_peers({"a": 100.0, "b": 100.0, "c": 79.0}) == ["c"]
    assert slower_than_peers({"a": 100.0, "b": 100.0, "c": 81.0}) == []


def test_a_member_at_0_7x_that_sets_the_pace_is_named_and_one_that_does_not_is_spread() -> None:
    alone = {"a": 40 * MB, "b": 40.5 * MB, "c": 39.8 * MB, "d": 28 * MB}
    paced = weakest_link_verdict(alone, Stripe(RAID0, 4), together=148 * MB, array=112 * MB)
    assert paced.named == ("d",) and not paced.short_of_parallelism and not paced.shared_limit
    faster = weakest_link_verdict(alone, Stripe(RAID0, 4), together=148 * MB, array=150 * MB)
    assert faster.named == () and faster.judged is not None and faster.judged.spread == ("d",)


def test_a_shared_limit_and_too_little_parallelism() -> None:
    alone = {name: 1000 * MB for name in "abcd"}
    # Together under (1 - 0.15) × their sum alone: something they share caps them.
    shared = weakest_link_verdict(alone, Stripe(RAID0, 4), together=2000 * MB, array=2000 * MB)
    assert shared.shared_limit and not shared.short_of_parallelism
    # The array clearly under both what they allow alone (4,000) and together (3,900): parallelism.
    short = weakest_link_verdict(alone, Stripe(RAID0, 4), together=3900 * MB, array=1000 * MB)
    assert short.short_of_parallelism and not short.shared_limit
    edge = weakest_link_verdict(alone, Stripe(RAID0, 4), together=3900 * MB, array=(1 - ONE_FIGURE) * 3900 * MB)
    assert not edge.short_of_parallelism
