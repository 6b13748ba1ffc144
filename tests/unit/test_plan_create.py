"""plan_create: exact mdadm argv, every validation message, size/speed predictions and warnings."""

from __future__ import annotations

import pytest

from mdtui.errors import PlanError
from mdtui.model import Disk, InUseKind, InUseReason, Link, LinkKind, Transport
from mdtui.plan import metadata
from mdtui.plan.create import CreateRequest, plan_create
from mdtui.plan.figures import MEASURED, MemberFigures
from mdtui.plan.forecast import MemberSource, link_sources
from mdtui.plan.levels import LINEAR, RAID1, RAID5, RAID5_LAYOUTS, RAID6_LAYOUTS
from mdtui.plan.rejected import PlanRejected

TB = 10**12
GIB = 1024**3
MIB = 1024**2
GEN3_X4 = Link(kind=LinkKind.PCIE, current_rate=8.0, max_rate=8.0, current_width=4, max_width=4)
GEN1_X4 = Link(kind=LinkKind.PCIE, current_rate=2.5, max_rate=8.0, current_width=4, max_width=4)


def nvme(i: int, link: Link | None = GEN3_X4, size: int | None = TB, **kw) -> Disk:
    fields = {
        "name": f"nvme{i}n1",
        "dev_path": f"/dev/nvme{i}n1",
        "transport": Transport.NVME,
        "size_bytes": size,
        "by_id_path": f"/dev/disk/by-id/nvme-Model_S{i}",
        "serial": f"S{i}",
        "logical_sector_bytes": 512,
        "rotational": False,
        "link": link,
    }
    fields.update(kw)
    return Disk(**fields)


def disks(n: int, **kw) -> tuple[Disk, ...]:
    return tuple(nvme(i, **kw) for i in range(n))


def ids(n: int, start: int = 0) -> tuple[str, ...]:
    return tuple(f"/dev/disk/by-id/nvme-Model_S{i}" for i in range(start, start + n))


def rejected(req: CreateRequest, **kw) -> list[str]:
    with pytest.raises(PlanRejected) as info:
        plan_create(req, **kw)
    assert isinstance(info.value, PlanError)
    return info.value.problems


def one_problem(req: CreateRequest, fragment: str) -> None:
    problems = rejected(req)
    assert any(fragment in p for p in problems), problems


# --- exact argv -------------------------------------------------------------------------------------

HEAD = ("mdadm", "--create", "/dev/md0", "--run")


@pytest.mark.parametrize(
    ("level", "n", "expected"),
    [
        ("linear", 2, ("--level=linear", "--raid-devices=2", "--metadata=1.2")),
        ("raid0", 4, ("--level=0", "--raid-devices=4", "--chunk=512K", "--metadata=1.2")),
        ("raid1", 2, ("--level=1", "--raid-devices=2", "--metadata=1.2", "--bitmap=none")),
        ("raid4", 3, ("--level=4", "--raid-devices=3", "--chunk=512K", "--metadata=1.2", "--bitmap=none")),
        (
            "raid5",
            4,
            (
                "--level=5",
                "--raid-devices=4",
                "--chunk=512K",
                "--layout=left-symmetric",
                "--metadata=1.2",
                "--bitmap=none",
            ),
        ),
        (
            "raid6",
            4,
            (
                "--level=6",
                "--raid-devices=4",
                "--chunk=512K",
                "--layout=left-symmetric",
                "--metadata=1.2",
                "--bitmap=none",
            ),
        ),
        (
            "raid10",
            4,
            ("--level=10", "--raid-devices=4", "--chunk=512K", "--layout=n2", "--metadata=1.2", "--bitmap=none"),
        ),
    ],
)
def test_argv_per_level(level, n, expected):
    plan = plan_create(CreateRequest("/dev/md0", level, disks(n)))
    assert plan.argv == (*HEAD, *expected, *ids(n))


@pytest.mark.parametrize("layout", RAID5_LAYOUTS)
def test_argv_raid5_layouts(layout):
    plan = plan_create(CreateRequest("/dev/md0", "raid5", disks(3), chunk_kib=64, layout=layout))
    assert plan.argv == (
        *HEAD,
        "--level=5",
        "--raid-devices=3",
        "--chunk=64K",
        f"--layout={layout}",
        "--metadata=1.2",
        "--bitmap=none",
        *ids(3),
    )


@pytest.mark.parametrize("layout", RAID6_LAYOUTS)
def test_argv_raid6_layouts(layout):
    plan = plan_create(CreateRequest("/dev/md0", "6", disks(4), chunk_kib=256, layout=layout))
    assert plan.argv == (
        *HEAD,
        "--level=6",
        "--raid-devices=4",
        "--chunk=256K",
        f"--layout={layout}",
        "--metadata=1.2",
        "--bitmap=none",
        *ids(4),
    )


@pytest.mark.parametrize("layout", ["n2", "f2", "o2", "n3", "f3", "o3"])
def test_argv_raid10_layouts(layout):
    plan = plan_create(CreateRequest("/dev/md0", "raid10", disks(3), chunk_kib=32, layout=layout))
    assert plan.argv == (
        *HEAD,
        "--level=10",
        "--raid-devices=3",
        "--chunk=32K",
        f"--layout={layout}",
        "--metadata=1.2",
        "--bitmap=none",
        *ids(3),
    )


def test_raid4_layout_is_implied_never_passed():
    # mdadm 4.2: "layout not meaningful for raid4 arrays" for any --layout.
    plan = plan_create(CreateRequest("/dev/md0", "raid4", disks(3), layout="parity-last"))
    assert plan.layout == "parity-last"
    assert not any(arg.startswith("--layout") for arg in plan.argv)


def test_layout_alias_is_normalised():
    plan = plan_create(CreateRequest("/dev/md0", "raid5", disks(3), layout="ra"))
    assert "--layout=right-asymmetric" in plan.argv


def test_argv_with_every_option():
    req = CreateRequest(
        "/dev/md/bench",
        "raid6",
        disks(4),
        spares=(nvme(4),),
        name="bench",
        chunk_kib=128,
        layout="left-symmetric-6",
        metadata="1.0",
        bitmap="internal",
        bitmap_chunk_kib=65536,
        assume_clean=True,
    )
    assert plan_create(req).argv == (
        "mdadm",
        "--create",
        "/dev/md/bench",
        "--run",
        "--level=6",
        "--raid-devices=4",
        "--spare-devices=1",
        "--chunk=128K",
        "--layout=left-symmetric-6",
        "--metadata=1.0",
        "--bitmap=internal",
        "--bitmap-chunk=65536K",
        "--assume-clean",
        "--name=bench",
        *ids(4),
        "/dev/disk/by-id/nvme-Model_S4",
    )


def test_argv_metadata_090():
    plan = plan_create(CreateRequest("/dev/md1", "raid1", disks(2), metadata="0.90"))
    assert "--metadata=0.90" in plan.argv


def test_argv_falls_back_to_dev_path_without_by_id():
    members = (nvme(0, by_id_path=None), nvme(1))
    plan = plan_create(CreateRequest("/dev/md0", "raid0", members))
    assert plan.argv[-2:] == ("/dev/nvme0n1", "/dev/disk/by-id/nvme-Model_S1")
    assert plan.member_paths == ("/dev/nvme0n1", "/dev/disk/by-id/nvme-Model_S1")


def test_argv_build_raid0():
    plan = plan_create(CreateRequest("/dev/md0", "raid0", disks(3), chunk_kib=2048, build=True))
    assert plan.argv == (
        "mdadm",
        "--build",
        "/dev/md0",
        "--level=0",
        "--raid-devices=3",
        "--chunk=2048K",
        *ids(3),
    )
    assert plan.metadata is None
    assert not plan.resync_expected


def test_argv_build_linear():
    plan = plan_create(CreateRequest("/dev/md0", "linear", disks(2), build=True))
    assert plan.argv == ("mdadm", "--build", "/dev/md0", "--level=linear", "--raid-devices=2", *ids(2))


def test_build_uses_whole_members():
    plan = plan_create(CreateRequest("/dev/md0", "linear", disks(2), build=True))
    assert plan.usable_bytes == 2 * TB


# --- validation -------------------------------------------------------------------------------------


def test_too_few_members():
    one_problem(CreateRequest("/dev/md0", "raid6", disks(3)), "raid6 needs at least 4 members; 3 given")
    one_problem(CreateRequest("/dev/md0", "raid5", disks(2)), "raid5 needs at least 3 members")
    one_problem(CreateRequest("/dev/md0", "raid1", disks(1)), "raid1 needs at least 2 members")


def test_unknown_level():
    one_problem(CreateRequest("/dev/md0", "raid7", disks(4)), "unknown RAID level 'raid7'")


@pytest.mark.parametrize("chunk", [3, 2, 0, 48, 100])
def test_bad_chunk(chunk):
    one_problem(
        CreateRequest("/dev/md0", "raid5", disks(3), chunk_kib=chunk),
        f"chunk {chunk} KiB is invalid: it must be a power of two of at least 4 KiB",
    )


def test_chunk_on_raid1_and_linear():
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), chunk_kib=64), "raid1 has no chunk size")
    one_problem(CreateRequest("/dev/md0", "linear", disks(2), chunk_kib=64), "--rounding")


def test_invalid_layouts():
    one_problem(
        CreateRequest("/dev/md0", "raid5", disks(3), layout="left-symmetric-6"),
        "layout 'left-symmetric-6' is not valid for raid5 with 3 members",
    )
    one_problem(
        CreateRequest("/dev/md0", "raid10", disks(2), layout="n3"),
        "layout 'n3' is not valid for raid10 with 2 members; choose one of n2, f2, o2",
    )
    one_problem(CreateRequest("/dev/md0", "raid0", disks(2), layout="n2"), "raid0 takes no layout")
    one_problem(
        CreateRequest("/dev/md0", "raid4", disks(3), layout="left-symmetric"),
        "choose one of parity-last",
    )


def test_member_in_use_names_disk_and_reasons():
    busy = nvme(
        1,
        in_use=(
            InUseReason(InUseKind.MOUNTED, "/srv"),
            InUseReason(InUseKind.FS_SIGNATURE, "ext4"),
        ),
    )
    problems = rejected(CreateRequest("/dev/md0", "raid1", (nvme(0), busy)))
    assert problems == ["nvme1n1 is in use (mounted: /srv; filesystem-signature: ext4); it cannot join a new array"]


def test_member_that_could_not_be_checked():
    odd = nvme(1, problems=("no permission to open",))
    one_problem(CreateRequest("/dev/md0", "raid1", (nvme(0), odd)), "nvme1n1 could not be checked")


def test_spare_in_use():
    busy = nvme(5, in_use=(InUseReason(InUseKind.SWAP, "active swap"),))
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), spares=(busy,)), "nvme5n1 is in use (swap")


def test_duplicate_path():
    one_problem(CreateRequest("/dev/md0", "raid0", (nvme(0), nvme(0))), "nvme0n1 is listed more than once")


def test_duplicate_serial():
    twin = nvme(1, serial="S0")
    one_problem(
        CreateRequest("/dev/md0", "raid0", (nvme(0), twin)),
        "nvme0n1 and nvme1n1 are the same disk (serial S0)",
    )


def test_duplicate_between_member_and_spare():
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), spares=(nvme(1),)), "listed more than once")


def test_mixed_logical_sector_sizes():
    one_problem(
        CreateRequest("/dev/md0", "raid0", (nvme(0), nvme(1, logical_sector_bytes=4096))),
        "members mix logical sector sizes (nvme0n1 512 B, nvme1n1 4096 B)",
    )


def test_very_different_sizes_refused_unless_allowed():
    members = (nvme(0, size=100 * GIB), nvme(1, size=400 * GIB), nvme(2, size=400 * GIB))
    one_problem(CreateRequest("/dev/md0", "raid5", members), "600.0 GiB (644245094400 bytes, 67% of")
    plan = plan_create(CreateRequest("/dev/md0", "raid5", members, allow_mixed_sizes=True))
    assert any("600.0 GiB (644245094400 bytes) of the larger members goes unused" in w for w in plan.warnings)


def test_sizes_of_terabytes_are_said_in_tib():
    # Issue 44: on a host of 16 TB disks the plan said "22650.0 GiB would go unused" (its own GiB formatter).
    members = (nvme(0, size=4 * TB), nvme(1, size=16 * TB), nvme(2, size=16 * TB))
    one_problem(CreateRequest("/dev/md0", "raid5", members), "21.8 TiB (24000000000000 bytes, 67% of")


def test_slightly_different_sizes_warn():
    members = (nvme(0, size=100 * GIB), nvme(1, size=110 * GIB))
    plan = plan_create(CreateRequest("/dev/md0", "raid1", members))
    assert any(
        "the smallest (nvme0n1, 100.0 GiB) sets every member's share, so 10.0 GiB (10737418240 bytes)" in w
        for w in plan.warnings
    )


def test_raid0_mixed_sizes_warn_about_zones():
    members = (nvme(0, size=100 * GIB), nvme(1, size=200 * GIB))
    plan = plan_create(CreateRequest("/dev/md0", "raid0", members))
    assert any("zones" in w for w in plan.warnings)


def test_spare_smaller_than_members():
    one_problem(
        CreateRequest("/dev/md0", "raid1", disks(2), spares=(nvme(7, size=TB // 2),)),
        "spare nvme7n1 (465.7 GiB) is smaller than the smallest member",
    )


def test_build_only_raid0_or_linear():
    one_problem(
        CreateRequest("/dev/md0", "raid1", disks(2), build=True),
        "--build makes superblock-less test arrays of raid0 or linear only, not raid1",
    )


def test_build_refuses_superblock_options():
    problems = rejected(
        CreateRequest("/dev/md0", "raid0", disks(2), build=True, metadata="1.2", name="x", assume_clean=True)
    )
    assert any("leave metadata unset" in p for p in problems)
    assert any("cannot carry a --name" in p for p in problems)
    assert any("--assume-clean is meaningless with --build" in p for p in problems)


def test_metadata_090_member_over_2tib():
    big = (nvme(0, size=3 * TB), nvme(1, size=3 * TB))
    one_problem(
        CreateRequest("/dev/md0", "raid1", big, metadata="0.90"), "metadata 0.90 limits members of raid1 to 2 TiB"
    )
    # mdadm(8) puts the 2 TB limit on levels 1 and greater only.
    plan_create(CreateRequest("/dev/md0", "raid0", big, metadata="0.90"))


def test_metadata_090_device_count_and_name():
    one_problem(CreateRequest("/dev/md0", "raid0", disks(29), metadata="0.90"), "at most 28 devices; 29 given")
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), metadata="0.90", name="x"), "0.90 cannot store")


def test_unknown_metadata():
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), metadata="1.1"), "metadata '1.1' is not supported")


def test_bitmap_on_raid0_and_linear():
    for level in ("raid0", "linear"):
        one_problem(
            CreateRequest("/dev/md0", level, disks(2), bitmap="internal"),
            f"{level} has no redundancy to resync: it takes no bitmap",
        )


def test_bitmap_none_is_not_passed_to_raid0():
    # mdadm 4.2 refuses even --bitmap=none on raid0 ("bitmaps not meaningful with level raid0").
    plan = plan_create(CreateRequest("/dev/md0", "raid0", disks(2), bitmap="none"))
    assert not any(arg.startswith("--bitmap") for arg in plan.argv)


def test_bad_bitmap_options():
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), bitmap="external"), "give none, internal, lockless or")
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), bitmap_chunk_kib=65536), "--bitmap-chunk needs a bitmap")
    one_problem(
        CreateRequest("/dev/md0", "raid1", disks(2), bitmap="internal", bitmap_chunk_kib=3000),
        "--bitmap-chunk 3000 KiB: give a power of two",
    )
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), bitmap="/srv/../etc/x"), "plain absolute path")


def test_write_safety_choices_md_and_mdadm_refuse_are_refused_up_front():
    # ppl: raid5 only, never with a bitmap; a journal: raid4/5/6 with its device; lockless: kernel 6.18.
    one_problem(CreateRequest("/dev/md0", "raid6", disks(4), policy="ppl"), "ppl) is raid5's only")
    one_problem(CreateRequest("/dev/md0", "raid5", disks(3), policy="ppl", bitmap="internal"), "refuses ppl with a")
    one_problem(CreateRequest("/dev/md0", "raid5", disks(3), policy="journal"), "needs the journal device")
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), policy="journal", journal=nvme(5)), "raid4, raid5 and")
    one_problem(CreateRequest("/dev/md0", "raid5", disks(3), bitmap="lockless", kernel="6.1.0-56-amd64"), "6.18")
    assert not rejected_or_none(CreateRequest("/dev/md0", "raid5", disks(3), bitmap="lockless", kernel="6.18.2"))


def test_ppl_journal_and_a_bitmap_file_reach_mdadms_argv():
    ppl = plan_create(CreateRequest("/dev/md0", "raid5", disks(3), policy="ppl"))
    assert ("--bitmap=none" in ppl.argv) and ("--consistency-policy=ppl" in ppl.argv)
    journal = nvme(5)
    logged = plan_create(CreateRequest("/dev/md0", "raid5", disks(3), policy="journal", journal=journal))
    assert f"--write-journal={journal.by_id_path or journal.dev_path}" in logged.argv
    assert journal.dev_path not in logged.member_paths
    filed = plan_create(CreateRequest("/dev/md0", "raid1", disks(2), bitmap="/srv/md0.bitmap", bitmap_chunk_kib=65536))
    assert {"--bitmap=/srv/md0.bitmap", "--bitmap-chunk=65536K"} <= set(filed.argv)


def test_a_journal_device_in_use_is_refused_like_a_member():
    busy = nvme(5, in_use=(InUseReason(InUseKind.MOUNTED, "mounted at /srv"),))
    one_problem(CreateRequest("/dev/md0", "raid5", disks(3), policy="journal", journal=busy), "nvme5n1 is in use")


def test_spares_on_raid0_and_linear():
    for level in ("raid0", "linear"):
        one_problem(
            CreateRequest("/dev/md0", level, disks(2), spares=(nvme(5),)),
            f"{level} cannot have spares",
        )


def test_bad_device_and_name():
    one_problem(CreateRequest("/dev/sda", "raid0", disks(2)), "'/dev/sda' is not an md device path")
    one_problem(CreateRequest("/dev/md0", "raid1", disks(2), name="has space"), "array name 'has space'")


def rejected_or_none(req: CreateRequest) -> list[str]:
    try:
        plan_create(req)
    except PlanError:
        return rejected(req)
    return []


def test_all_problems_reported_at_once():
    busy = nvme(1, in_use=(InUseReason(InUseKind.MD_MEMBER, "md127"),))
    problems = rejected(CreateRequest("/dev/md0", "raid6", (nvme(0), busy), chunk_kib=3, layout="n2", bitmap="bogus"))
    assert len(problems) == 5
    with pytest.raises(PlanError, match="cannot create /dev/md0:\n- nvme1n1 is in use"):
        plan_create(CreateRequest("/dev/md0", "raid6", (nvme(0), busy)))


# --- figures ----------------------------------------------------------------------------------------


def test_usable_size_subtracts_estimated_metadata():
    plan = plan_create(CreateRequest("/dev/md0", "raid5", disks(4), chunk_kib=64))
    per_member = TB - 129 * MIB
    per_member -= per_member % (64 * 1024)
    assert plan.usable_bytes == 3 * per_member
    assert plan.data_disks == 3.0
    assert plan.chunk_bytes == 64 * 1024


def loop(i: int, size: int) -> Disk:
    return Disk(name=f"loop{i}", dev_path=f"/dev/loop{i}", transport=Transport.LOOP, size_bytes=size,
                logical_sector_bytes=512)  # fmt: skip


# Sizes of arrays mdadm 4.2 created on Linux 6.1 in the lab (tests/lab/test_create.py, the same
# geometries on loop devices): (level, metadata, chunk KiB, layout, members, spares, bitmap, bytes).
MEASURED_SIZES = [
    ("raid1", "1.2", None, None, [300 * MIB + 7 * 512] * 2, [], "none", 313524224),
    ("raid1", "1.2", None, None, [2 * GIB + 12345 * 512] * 2, [], "internal", 2150629376),
    ("raid10", "1.2", 64, "f2", [64 * MIB + 64 * 1024] * 2, [], "none", 66060288),
    ("raid10", "1.2", 64, "n2", [64 * MIB + 64 * 1024] * 3, [], "none", 99155968),
    ("raid10", "1.2", 64, "o2", [64 * MIB + 64 * 1024] * 3, [], "none", 99090432),
    ("raid5", "1.2", 4096, None, [GIB] * 3, [], "none", 2122317824),
    ("raid0", "1.2", 64, None, [64 * MIB, 2 * GIB], [], "none", 2212495360),
    ("raid4", "1.2", 16, None, [200 * MIB + 3 * 512] * 3, [], "none", 417333248),
    ("raid5", "1.2", 512, None, [TB] * 3, [], "none", 1999728803840),
    ("linear", "1.0", None, None, [100 * MIB + 3 * 512, 50 * MIB + 1536], [], "none", 157261824),
    ("raid6", "1.0", 128, None, [9 * GIB + 5 * 512] * 4, [], "none", 19327090688),
    ("raid5", "1.0", 64, None, [8 * GIB] * 3, [8 * GIB + 8192], "none", 17179607040),
    ("raid1", "0.90", None, None, [100 * MIB + 100 * 512] * 2, [], "none", 104792064),
    ("linear", "0.90", None, None, [100 * MIB + 100 * 512, 80 * MIB + 512], [], "none", 188612608),
    ("raid5", "0.90", 32, None, [100 * MIB + 100 * 512] * 3, [], "none", 209584128),
    # The STANDARD lab machine's 1 GiB members through `mdtui create` (raid0 --build: whole members).
    ("raid10", "1.2", 512, "n2", [GIB] * 4, [], "none", 2143289344),
    ("raid1", "1.2", None, None, [GIB] * 2, [], "internal", 1071644672),
]


@pytest.mark.parametrize(("level", "meta", "chunk", "layout", "sizes", "spares", "bitmap", "expected"), MEASURED_SIZES)
def test_usable_size_is_what_mdadm_created(level, meta, chunk, layout, sizes, spares, bitmap, expected):
    devices = [loop(i, size) for i, size in enumerate(sizes + spares)]
    members, spare_disks = tuple(devices[: len(sizes)]), tuple(devices[len(sizes) :])
    req = CreateRequest("/dev/md9", level, members, spares=spare_disks, chunk_kib=chunk, layout=layout,
                        metadata=meta, bitmap=bitmap, allow_mixed_sizes=True)  # fmt: skip
    assert plan_create(req).usable_bytes == expected


def test_a_smaller_spare_data_area_sets_the_size():
    # 1.0 keeps 64 KiB of bitmap space on a member over 8 GiB but 4 KiB on one of exactly 8 GiB.
    members = tuple(loop(i, 8 * GIB) for i in range(3))
    alone = plan_create(CreateRequest("/dev/md0", "raid5", members, chunk_kib=64, metadata="1.0"))
    spared = plan_create(
        CreateRequest("/dev/md0", "raid5", members, spares=(loop(3, 8 * GIB + 8192),), chunk_kib=64, metadata="1.0")
    )
    assert alone.usable_bytes == 2 * (8 * GIB - 64 * 1024)
    assert spared.usable_bytes == 2 * (8 * GIB - 128 * 1024)


def test_usable_size_unknown_when_a_size_is_unknown():
    plan = plan_create(CreateRequest("/dev/md0", "raid1", (nvme(0), nvme(1, size=None))))
    assert plan.usable_bytes is None
    assert any("size of nvme1n1 is unknown" in w for w in plan.warnings)


def test_usable_size_metadata_090():
    plan = plan_create(CreateRequest("/dev/md0", "raid1", disks(2), metadata="0.90"))
    assert plan.usable_bytes == metadata.data_bytes(TB, "0.90")


@pytest.mark.parametrize(
    ("level", "n", "layout", "tolerance"),
    [
        ("raid0", 4, None, 0),
        ("raid1", 3, None, 2),
        ("raid5", 4, None, 1),
        ("raid6", 6, None, 2),
        ("raid10", 6, "n3", 2),
    ],
)
def test_fault_tolerance(level, n, layout, tolerance):
    plan = plan_create(CreateRequest("/dev/md0", level, disks(n), layout=layout))
    assert plan.fault_tolerance == tolerance
    assert plan.fault_tolerance_text


def test_small_write_figures():
    # md's own choice over four raid6 members: reconstruct-write reads the one other data unit (1 read) rather
    # than old data, P and Q (3): the figures the model's random-write prediction uses (before: 3 + 3).
    plan = plan_create(CreateRequest("/dev/md0", "raid6", disks(4)))
    assert (plan.small_write_reads, plan.small_write_writes) == (1, 3)
    assert "1 read + 3 writes (reconstruct-write" in plan.small_write_text
    wide = plan_create(CreateRequest("/dev/md0", "raid6", disks(8)))
    assert "3 reads + 3 writes (read-modify-write" in wide.small_write_text and "finding 4" in wide.small_write_text


@pytest.mark.parametrize(
    ("level", "n", "chunk", "ext4", "xfs", "width"),
    [
        ("raid0", 4, 64, "stride=16,stripe_width=64", "su=64k,sw=4", 4 * 64 * 1024),
        ("raid5", 5, 64, "stride=16,stripe_width=64", "su=64k,sw=4", 4 * 64 * 1024),
        ("raid6", 6, 256, "stride=64,stripe_width=256", "su=256k,sw=4", 4 * 256 * 1024),
        ("raid10", 4, 32, "stride=8,stripe_width=16", "su=32k,sw=2", 2 * 32 * 1024),
        ("raid4", 3, 512, "stride=128,stripe_width=256", "su=512k,sw=2", 2 * 512 * 1024),
    ],
)
def test_mkfs_alignment(level, n, chunk, ext4, xfs, width):
    plan = plan_create(CreateRequest("/dev/md0", level, disks(n), chunk_kib=chunk))
    assert plan.mkfs_ext4_args == ("-E", ext4)
    assert plan.mkfs_xfs_args == ("-d", xfs)
    assert plan.stripe_width_bytes == width


@pytest.mark.parametrize(("level", "n"), [("raid1", 2), ("linear", 3), ("raid10", 3)])
def test_no_mkfs_alignment(level, n):
    plan = plan_create(CreateRequest("/dev/md0", level, disks(n)))
    assert plan.mkfs_ext4_args is None
    assert plan.mkfs_xfs_args is None
    assert plan.stripe_width_bytes is None


def measured(members: tuple[Disk, ...], speeds: dict[str, float]) -> list[MemberSource]:
    """Each member measured at its sequential speed (read and write), the rest what bounds them (their links)."""
    bounds = {s.name: s for s in link_sources(members)}
    return [
        MemberSource(d.name, MemberFigures(speeds[d.name], speeds[d.name], basis=MEASURED), "measured just now")
        if d.name in speeds
        else bounds[d.name]
        for d in members
    ]


def test_prediction_with_a_downgraded_member():
    members = (*disks(3), nvme(3, link=GEN1_X4))
    plan = plan_create(CreateRequest("/dev/md0", "raid0", members))
    # The md model over the links (nothing measured): 4 × 1,000 MB/s, to the two figures a link can claim.
    assert plan.pace_setters == ("nvme3n1",)
    assert plan.prediction.seq_read_bytes_per_s.basis == "link"
    assert plan.seq_read_bytes_per_s == 4_000_000_000
    assert plan.seq_write_bytes_per_s == 4_000_000_000
    assert any(
        "nvme3n1 at 1,000 MB/s (link) limits the array to at most 4,000 MB/s of sequential reads (members "
        "(slowest × 4)); the others would allow at most 16,000 MB/s" in w
        for w in plan.warnings
    ), plan.warnings
    assert any(w.startswith("nvme3n1: link trained at Gen1 2.5 GT/s x4") for w in plan.warnings)


def test_prediction_from_measured_speeds_matches_finding_1():
    members = disks(4)
    speeds = {"nvme0n1": 1.65e9, "nvme1n1": 1.65e9, "nvme2n1": 1.65e9, "nvme3n1": 832e6}
    plan = plan_create(CreateRequest("/dev/md0", "raid0", members), measured(members, speeds))
    assert plan.seq_read_bytes_per_s == 3_330_000_000  # 4 × 832 = 3,328, three figures for a measured basis
    assert plan.prediction.seq_read_bytes_per_s.basis == "measured"
    assert any("nvme3n1 at 832 MB/s (measured) limits the array to 3,300 MB/s" in w for w in plan.warnings)


def test_prediction_mixes_measured_and_link():
    members = disks(2)
    plan = plan_create(CreateRequest("/dev/md0", "raid0", members), measured(members, {"nvme0n1": 3e9}))
    assert plan.prediction.seq_read_bytes_per_s.basis == "link, measured"
    assert plan.seq_read_bytes_per_s == 2 * 3_000_000_000


def test_prediction_unknown_speed():
    plan = plan_create(CreateRequest("/dev/md0", "raid0", (nvme(0), nvme(1, link=None))))
    assert plan.seq_read_bytes_per_s is None
    assert plan.seq_write_bytes_per_s is None
    assert plan.prediction.seq_read_bytes_per_s.bound.startswith("unknown")
    # Flash on no link: nothing bounds its sequential or random figures; its Q1 latency is flash's.
    assert plan.sources[1].note == "not measured: no link speed known; Q1 latency: flash's field figures"


@pytest.mark.parametrize(
    ("level", "n", "layout", "read", "write", "write_bound"),
    [
        ("linear", 3, None, 1, 1, "members"),
        ("raid0", 4, None, 4, 4, "members"),
        ("raid1", 3, None, 3, 1, "members"),
        # Flash members: parity levels read from every member; writes are held by md's stripe thread (the
        # field's 985 MB/s, to two figures) before the members' 3 × 1 GB/s.
        ("raid4", 4, None, 3, 0.98, "md stripe thread"),
        ("raid5", 4, None, 4, 0.98, "md stripe thread"),
        ("raid6", 6, None, 6, 0.98, "md stripe thread"),
        ("raid10", 4, "n2", 4, 2, "members"),
        ("raid10", 6, "f3", 6, 2, "members"),
    ],
)
def test_prediction_factors(level, n, layout, read, write, write_bound):
    members = disks(n)
    speeds = {d.name: 1e9 for d in members}
    plan = plan_create(CreateRequest("/dev/md0", level, members, layout=layout), measured(members, speeds))
    assert plan.seq_read_bytes_per_s == pytest.approx(read * 1e9)
    assert plan.seq_write_bytes_per_s == pytest.approx(write * 1e9)
    assert plan.prediction.seq_write_bytes_per_s.bound.startswith(write_bound)


def test_the_plan_notes_how_md_does_a_small_write():
    plan = plan_create(CreateRequest("/dev/md0", "raid5", disks(4)))
    assert any("2 member reads and 2 writes (read-modify-write" in n for n in plan.prediction.notes)


# --- warnings ---------------------------------------------------------------------------------------


def test_resync_warning_and_assume_clean():
    plan = plan_create(CreateRequest("/dev/md0", "raid5", disks(3)))
    assert plan.resync_expected
    assert any("benchmarks during the resync mislead" in w for w in plan.warnings)
    clean = plan_create(CreateRequest("/dev/md0", "raid5", disks(3), assume_clean=True))
    assert not clean.resync_expected
    assert not any("resync mislead" in w for w in clean.warnings)
    assert any("--assume-clean skips computing parity" in w for w in clean.warnings)


def test_no_resync_on_raid0():
    plan = plan_create(CreateRequest("/dev/md0", "raid0", disks(2)))
    assert not plan.resync_expected
    noop = plan_create(CreateRequest("/dev/md0", "raid0", disks(2), assume_clean=True))
    assert any("--assume-clean has no effect on raid0" in w for w in noop.warnings)


def test_rotational_and_ssd_mixed():
    hdd = Disk(
        name="sda",
        dev_path="/dev/sda",
        transport=Transport.SATA,
        size_bytes=TB,
        rotational=True,
        logical_sector_bytes=512,
    )
    plan = plan_create(CreateRequest("/dev/md0", "raid1", (hdd, nvme(0))))
    assert any("members mix rotational disks (sda) and SSDs (nvme0n1)" in w for w in plan.warnings)


def test_loop_devices_warn():
    loops = tuple(
        Disk(name=f"loop{i}", dev_path=f"/dev/loop{i}", transport=Transport.LOOP, size_bytes=GIB) for i in range(2)
    )
    plan = plan_create(CreateRequest("/dev/md0", "raid0", loops))
    assert any("loop0, loop1 are loop devices" in w for w in plan.warnings)


def test_small_parity_chunk_warns_with_finding_5():
    plan = plan_create(CreateRequest("/dev/md0", "raid5", disks(6), chunk_kib=16))
    assert any("16 KiB chunks on raid5 across 6 members" in w and "finding 5" in w for w in plan.warnings)
    big = plan_create(CreateRequest("/dev/md0", "raid5", disks(6), chunk_kib=512))
    assert not any("finding 5: RAID5" in w for w in big.warnings)


def test_wide_raid5_suggests_raid6():
    plan = plan_create(CreateRequest("/dev/md0", "raid5", disks(8)))
    assert any("raid6 tolerates two" in w for w in plan.warnings)


def test_odd_raid10_warns():
    plan = plan_create(CreateRequest("/dev/md0", "raid10", disks(3)))
    assert any("3 members do not divide into 2 copies" in w for w in plan.warnings)
    assert plan.data_disks == 1.5


def test_the_size_a_bitmaps_chunks_divide_is_the_levels_layout_of_the_members() -> None:
    """write_safety.array_bytes_of once took smallest × data disks for every level: a linear array of 1 and 3 GiB
    was 2 GiB to its bitmap. It is the level's own capacity rule now, as the plan's size is."""
    from mdtui.plan.write_safety import array_bytes_of

    gib = 1 << 30
    assert array_bytes_of([gib, 3 * gib], LINEAR, None) == LINEAR.usable_bytes([gib, 3 * gib]) == 4 * gib
    assert array_bytes_of([gib, 3 * gib, 2 * gib], RAID5, None) == 2 * gib
    assert array_bytes_of([gib, None], RAID1, None) is None
