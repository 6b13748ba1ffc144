"""The create form's pure rules: which choices each level and member count offers, and the request built."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mdtui.plan.create import DEFAULT_CHUNK_KIB
from mdtui.plan.levels import LEVELS, LINEAR, RAID0, RAID1, RAID4, RAID5, RAID10, RaidLevel, level_from_name
from mdtui.ui.create import form as cf

from .create_inventory import FREE_INVENTORY, FREE_NVME

THREE = tuple(d.name for d in FREE_NVME[:3])


def form(level: str = "raid5", members: tuple[str, ...] = THREE, **changes: object) -> cf.CreateForm:
    return replace(cf.CreateForm(device="/dev/md1", level=level, members=members), **changes)


def test_chunk_choices_are_powers_of_two_from_4_kib_with_the_default_marked() -> None:
    offered = cf.choices(form())
    values = [int(value) for _, value in offered.chunks]
    assert values[0] == 4 and values == sorted(values)
    assert all(v & (v - 1) == 0 for v in values)
    defaults = [label for label, value in offered.chunks if label.endswith(cf.DEFAULT_MARK)]
    assert defaults == [f"{DEFAULT_CHUNK_KIB} KiB{cf.DEFAULT_MARK}"]


@pytest.mark.parametrize("level", [RAID1, LINEAR])
def test_levels_without_a_chunk_disable_it(level: RaidLevel) -> None:
    offered = cf.choices(form(level.name))
    assert not offered.chunk_enabled
    request = cf.to_request(form(level.name, chunk_kib=64), FREE_INVENTORY)
    assert request.chunk_kib is None


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.name)
@pytest.mark.parametrize("count", [2, 3, 4])
def test_layouts_come_from_the_level_for_this_many_members(level: RaidLevel, count: int) -> None:
    members = tuple(d.name for d in FREE_NVME[:count])
    offered = cf.choices(form(level.name, members))
    expected = level.layouts(count)
    if expected:
        assert tuple(value for _, value in offered.layouts) == expected
    else:
        assert not offered.layout_enabled


def test_a_raid10_layout_no_longer_offered_falls_back_to_the_default() -> None:
    chosen = form("raid10", THREE, layout="f3")
    assert cf.current_layout(chosen) == "f3"
    two = replace(chosen, members=THREE[:2])
    assert "f3" not in RAID10.layouts(2)
    assert cf.current_layout(two) == RAID10.default_layout


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.name)
def test_build_only_for_raid0_and_linear(level: RaidLevel) -> None:
    offered = cf.choices(form(level.name))
    assert offered.build_enabled == (level in (RAID0, LINEAR))


def test_build_leaves_out_what_needs_a_superblock() -> None:
    request = cf.to_request(form("raid0", metadata="1.0", name="bench", build=True), FREE_INVENTORY)
    assert request.build and request.metadata is None and request.name is None
    assert not cf.choices(form("raid0", build=True)).metadata_enabled


def test_build_is_dropped_when_the_level_cannot_build() -> None:
    request = cf.to_request(form("raid5", build=True), FREE_INVENTORY)
    assert not request.build and request.metadata == "1.2"


def test_spares_bitmap_and_assume_clean_only_with_redundancy() -> None:
    chosen = form("raid0", spares=(FREE_NVME[3].name,), bitmap="internal", assume_clean=True)
    request = cf.to_request(chosen, FREE_INVENTORY)
    assert request.spares == () and request.bitmap == "none" and not request.assume_clean
    request = cf.to_request(replace(chosen, level="raid5"), FREE_INVENTORY)
    assert [d.name for d in request.spares] == [FREE_NVME[3].name]
    assert request.bitmap == "internal" and request.assume_clean


def test_members_follow_inventory_order_not_click_order() -> None:
    request = cf.to_request(form(members=tuple(reversed(THREE))), FREE_INVENTORY)
    assert [d.name for d in request.members] == list(THREE)


def test_a_disk_is_member_or_spare_never_both() -> None:
    chosen = cf.set_spare(form(), THREE[0])
    assert THREE[0] in chosen.spares and THREE[0] not in chosen.members
    chosen = cf.set_member(chosen, THREE[0])
    assert THREE[0] in chosen.members and THREE[0] not in chosen.spares


def test_next_free_device_skips_arrays_in_the_inventory() -> None:
    assert cf.next_free_device(FREE_INVENTORY) == "/dev/md1"
    assert cf.next_free_device(None) == "/dev/md0"


def test_preview_lists_problems_instead_of_a_plan() -> None:
    result = cf.preview(form("raid6"), FREE_INVENTORY)
    assert result.plan is None
    assert any("raid6 needs at least 4 members" in p for p in result.problems)
    result = cf.preview(form(), FREE_INVENTORY)
    assert result.plan is not None and result.plan.level is RAID5


def test_raid4_offers_its_one_layout_without_a_choice() -> None:
    offered = cf.choices(form("raid4"))
    assert not offered.layout_enabled
    assert [value for _, value in offered.layouts] == list(RAID4.layouts(3))


def test_unknown_level_text_falls_back_to_the_default() -> None:
    assert form("raid7").raid_level is cf.DEFAULT_LEVEL
    assert level_from_name(form(RAID1.name).level) is RAID1


def test_write_safety_choices_fit_the_level_and_reach_the_request() -> None:
    """ppl is offered on raid5 only, a journal on parity levels (with its disk), the lockless bitmap where the
    kernel has it, a chunk only with a bitmap; a file bitmap is its typed path."""
    raid1 = cf.choices(form("raid1", THREE[:2]))
    assert [v for _, v in raid1.policies] == ["resync"] and not raid1.policy_enabled
    raid5 = cf.choices(form())
    assert [v for _, v in raid5.policies] == ["resync", "ppl", "journal"]
    assert "lockless" not in [v for _, v in raid5.bitmaps]
    assert "lockless" in [v for _, v in cf.choices(form(kernel="6.18.1")).bitmaps]
    assert not raid5.bitmap_chunk_enabled and not raid5.journal_enabled and not raid5.bitmap_file_enabled
    spare = FREE_NVME[3].name
    journalled = form(policy="journal", journal=spare, free_disks=(spare,))
    offered = cf.choices(journalled)
    assert offered.journal_enabled and (spare, spare) in offered.journals
    request = cf.to_request(journalled, FREE_INVENTORY)
    assert request.policy == "journal" and request.journal is not None and request.journal.name == spare
    filed = cf.to_request(
        form(bitmap=cf.FILE_BITMAP, bitmap_file=" /srv/md1.bitmap ", bitmap_chunk_kib=64), FREE_INVENTORY
    )
    assert (filed.bitmap, filed.bitmap_chunk_kib) == ("/srv/md1.bitmap", 64)
    # raid6 keeps no ppl: a form that chose it falls back to resync rather than asking md for what it refuses.
    assert cf.to_request(form("raid6", (*THREE, spare), policy="ppl"), FREE_INVENTORY).policy == "resync"
