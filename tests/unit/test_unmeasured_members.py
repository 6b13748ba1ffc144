"""Issue 45: a member nobody measured still gives the model every figure, each with its basis and where it may land,
decided once (member_bounds.unmeasured_figures): its link where the link binds ("at most", rounded up), a device class's
field figures where the device does; so an array of such members has a figure, bound and basis for every workload
on every level."""

from __future__ import annotations

import pytest

from mdtui.model.link import LinkKind
from mdtui.plan.figures import CONDITIONS, FIELD, GIVEN, JSON_FIGURES, LINK, MEASURED, OPTIMAL, Figure, MemberFigures
from mdtui.plan.levels import LEVELS, RaidLevel, level_from_name
from mdtui.plan.md_model import SharedLink, predict
from mdtui.plan.member_bounds import (
    FLASH,
    FLASH_Q1_READ,
    FLASH_Q1_WRITE,
    NVME_SSD,
    PLATTER,
    PLATTER_BYTES_PER_S,
    SAS_SSD,
    SATA_SSD,
    device_class,
    link_limits,
    unmeasured_figures,
    with_unmeasured,
)

GEN4_X4 = 7.877e9  # what a PCIe Gen4 x4 link carries (bytes/s)
GEN1_X1 = 250e6
SAS_12G = 1.2e9
SATA_6G = 600e6
SATA_3G = 300e6
RANDOM = ("rand_read_iops", "rand_write_iops")
LATENCY = ("q1_read_latency_s", "q1_write_latency_s")


def test_a_link_is_a_limit_only_where_the_device_could_go_faster() -> None:
    # A hard disk on 6 Gbit SAS (600 MB/s usable) is held by its platter; on 1.5 Gbps SATA (150 MB/s) by the link.
    assert not link_limits(600e6, rotational=True) and link_limits(150e6, rotational=True)
    # Flash is built to fill its link: any link is its limit (unknown rotation is read as flash).
    assert link_limits(600e6, rotational=False) and link_limits(600e6, rotational=None)
    hdd = unmeasured_figures(600e6, True, LinkKind.SAS)
    assert (hdd.seq_read_bytes_per_s, hdd.seq_write_bytes_per_s, hdd.basis) == (PLATTER_BYTES_PER_S,) * 2 + (FIELD,)
    slow_sata = unmeasured_figures(150e6, True, LinkKind.SATA)
    assert (slow_sata.seq_read_bytes_per_s, slow_sata.basis) == (150e6, LINK)
    ssd = unmeasured_figures(GEN4_X4, False, LinkKind.PCIE)
    assert (ssd.seq_read_bytes_per_s, ssd.basis) == (GEN4_X4, LINK)
    # No link at all says nothing of flash's sequential or random figures; its Q1 latency is still flash's.
    linkless = unmeasured_figures(None, False, None)
    assert linkless.seq_read_bytes_per_s is None and linkless.rand_read_iops is None
    assert linkless.q1_read_latency_s == pytest.approx(FLASH_Q1_READ.value)


def test_the_device_class_follows_the_spindle_and_the_link() -> None:
    assert device_class(True, LinkKind.SATA) is PLATTER and device_class(True, None) is PLATTER
    assert device_class(False, LinkKind.PCIE) is NVME_SSD and device_class(None, LinkKind.PCIE) is NVME_SSD
    assert device_class(False, LinkKind.SATA) is SATA_SSD and device_class(False, LinkKind.SAS) is SAS_SSD
    assert device_class(False, None) is FLASH


@pytest.mark.parametrize(
    ("link", "rotational", "kind", "expected"),
    [
        # Gen4 x4 carries 1.9M 4 KiB requests a second, far above any NVMe's: the class's field figures.
        (GEN4_X4, False, LinkKind.PCIE, {"rand_read_iops": (FIELD, 279.5e3, 1e6),
                                         "rand_write_iops": (FIELD, 30.5e3, 190e3)}),
        # Gen1 x1 carries 61,035 a second, under any NVMe's: the link binds, at most that, no range.
        (GEN1_X1, False, LinkKind.PCIE, {"rand_read_iops": (LINK, None, None), "rand_write_iops": (LINK, None, None)}),
        (SATA_6G, False, LinkKind.SATA, {"rand_read_iops": (FIELD, 72e3, 100e3),
                                         "rand_write_iops": (FIELD, 33e3, 90e3)}),
        # SATA at 3 Gbps carries 73,242 a second: under the SATA SSD's middle read figure (85K), over its writes'
        # (55K), whose range it cuts.
        (SATA_3G, False, LinkKind.SATA, {"rand_read_iops": (LINK, None, None),
                                         "rand_write_iops": (FIELD, 33e3, SATA_3G / 4096)}),
        # 12 Gbit SAS carries 293K: the SAS SSD's reads (180K-400K) are cut at what the link carries.
        (SAS_12G, False, LinkKind.SAS, {"rand_read_iops": (FIELD, 180e3, SAS_12G / 4096),
                                        "rand_write_iops": (FIELD, 19e3, 169e3)}),
        (SAS_12G, True, LinkKind.SAS, {"rand_read_iops": (FIELD, 1 / 11.56e-3, 386.3),
                                       "rand_write_iops": (FIELD, 1 / 12.36e-3, 184.9)}),
    ],
)  # fmt: skip
def test_every_figure_of_a_member_nobody_measured_names_its_basis_and_range(
    link: float, rotational: bool, kind: LinkKind, expected: dict[str, tuple[str, float | None, float | None]]
) -> None:
    figures = unmeasured_figures(link, rotational, kind)
    for name, (basis, low, high) in expected.items():
        value = getattr(figures, name)
        assert figures.basis_of(name) == basis, name
        if basis == LINK:
            assert value == pytest.approx(link / 4096) and figures.range_of(name) is None
        else:
            span = figures.range_of(name)
            assert span is not None and span == pytest.approx((low, high)), name
            assert span[0] <= value <= span[1]
    for name in LATENCY:  # latency is the device's, whatever the link
        assert figures.basis_of(name) == FIELD and getattr(figures, name) is not None


def test_the_classes_hold_the_figures_measured_in_the_field() -> None:
    # Finding 4's SAS3 SSD, measured: 180K random reads, 169K random writes at Q32T8, 17.3K IOPS (58 µs) at Q1.
    assert SAS_SSD.rand_read_iops is not None and SAS_SSD.rand_write_iops is not None
    assert SAS_SSD.rand_read_iops.low <= 180e3 <= SAS_SSD.rand_read_iops.high
    assert SAS_SSD.rand_write_iops.low <= 169e3 <= SAS_SSD.rand_write_iops.high
    assert FLASH_Q1_READ.low <= 1 / 17.3e3 <= FLASH_Q1_READ.high
    # Intel's P4500 datasheet (85-115 µs random read, 20 µs write) and S4500 (110 µs, 52 µs) sit inside flash's.
    for read in (85e-6, 115e-6, 110e-6):
        assert FLASH_Q1_READ.low <= read <= FLASH_Q1_READ.high
    for write in (20e-6, 52e-6):
        assert FLASH_Q1_WRITE.low <= write <= FLASH_Q1_WRITE.high
    # A 7,200 rpm disk at Q1: seek plus half a turn, 11.6-12.7 ms; HGST's 7K4000 (8.2 ms + 4.16 ms) inside.
    assert PLATTER.q1_read_latency_s.low <= 8.2e-3 + 4.16e-3 <= PLATTER.q1_read_latency_s.high
    # Flash is faster than a platter on every figure, whatever the ranges' ends.
    for flash in (NVME_SSD, SATA_SSD, SAS_SSD):
        for name in RANDOM:
            assert getattr(flash, name).low > getattr(PLATTER, name).high
        for name in LATENCY:
            assert getattr(flash, name).high < getattr(PLATTER, name).low


MEMBER_SETS = {
    "nvme gen4 x4": [unmeasured_figures(GEN4_X4, False, LinkKind.PCIE)] * 4,
    "nvme gen1 x1": [unmeasured_figures(GEN1_X1, False, LinkKind.PCIE)] * 4,
    "sata ssd": [unmeasured_figures(SATA_6G, False, LinkKind.SATA)] * 4,
    "sas ssd": [unmeasured_figures(SAS_12G, False, LinkKind.SAS)] * 4,
    "sas hdd": [unmeasured_figures(SAS_12G, True, LinkKind.SAS)] * 4,
    "mixed": [
        unmeasured_figures(GEN1_X1, False, LinkKind.PCIE),
        unmeasured_figures(SATA_3G, True, LinkKind.SATA),
        unmeasured_figures(SAS_12G, False, LinkKind.SAS),
        unmeasured_figures(None, True, None),  # a virtio hard disk: no link, still a platter
    ],
}


@pytest.mark.parametrize("members", list(MEMBER_SETS), ids=str)
@pytest.mark.parametrize("level", LEVELS, ids=lambda level: level.name)
def test_members_known_by_their_links_give_every_workload_on_every_level(level: RaidLevel, members: str) -> None:
    figures = MEMBER_SETS[members]
    conditions = CONDITIONS if level.redundant else (OPTIMAL,)
    for condition in conditions:
        prediction = predict(level, figures, condition=condition)
        for attribute, key, _ in JSON_FIGURES:
            figure: Figure = getattr(prediction, attribute)
            assert figure.value is not None and figure.value > 0, (condition, key, figure.bound)
            assert figure.bound and not figure.bound.startswith("unknown") and figure.basis, (condition, key)
            # Nothing here was measured or given: every figure rests on a link, a field figure or the lab.
            assert MEASURED not in figure.basis and GIVEN not in figure.basis, (condition, key, figure.basis)


def test_at_most_only_where_a_link_binds_and_then_rounded_up() -> None:
    raid0 = level_from_name("raid0")
    gen1 = predict(raid0, MEMBER_SETS["nvme gen1 x1"])
    # Four Gen1 x1 NVMe: every figure a link sets is an upper bound, 4 x 61,035 random reads at most.
    assert gen1.rand_read_iops.at_most and gen1.seq_read_bytes_per_s.at_most
    assert gen1.rand_read_iops.rounded == 250_000  # 244,141 rounded up: a bound rounded down could be passed
    assert not gen1.q1_read_latency_s.at_most
    # A hard disk beside a Gen1 x1 NVMe in a raid1: the platter (a field figure) is the slowest, so the array's
    # figures are estimates, not bounds, though one member rests on its link.
    mixed = predict(level_from_name("raid1"), [MEMBER_SETS["nvme gen1 x1"][0], MEMBER_SETS["sas hdd"][0]])
    assert "link" in mixed.rand_read_iops.basis and not mixed.rand_read_iops.at_most
    assert not mixed.seq_read_bytes_per_s.at_most
    # A link members share binds: its cap is an upper bound whatever the members rest on.
    given = MemberFigures(1e9, 1e9, 2e5, 2e5, 1e-4, rotational=False, basis=GIVEN)
    shared = predict(raid0, [given] * 4, links=[SharedLink("HBA link x1 Gen1", 250e6, (0, 1, 2, 3))])
    assert shared.seq_read_bytes_per_s.bound == "HBA link x1 Gen1" and shared.seq_read_bytes_per_s.at_most
    assert not predict(raid0, [given] * 4).seq_read_bytes_per_s.at_most
    # A link-bound figure given a range on top (the stripe cache's lab fraction): the range's top is the bound,
    # not the value within it (before: "at most 430 MB/s (range 240-520 MB/s)", the range above the "at most").
    cached = predict(level_from_name("raid5"), MEMBER_SETS["nvme gen1 x1"]).seq_write_bytes_per_s
    assert cached.bound.startswith("md stripe cache") and cached.at_most and not cached.value_at_most
    assert cached.range_rounded is not None and cached.rounded is not None
    assert cached.range_rounded[1] >= cached.rounded and cached.range_rounded[1] == 520e6  # 0.69 x 3 x 250 MB/s, up
    # The precision rule: an estimate to its nearest two figures, a bound upwards.
    assert Figure(15_400e6, "members", FIELD).rounded == 15_000e6
    assert Figure(15_400e6, "members", LINK, at_most=True).rounded == 16_000e6
    assert Figure(4_000e6, "members", LINK, at_most=True).rounded == 4_000e6


def test_a_class_range_carries_into_the_arrays_figures() -> None:
    nvme = MEMBER_SETS["nvme gen4 x4"]
    raid0 = predict(level_from_name("raid0"), nvme)
    # Four members' reads at the class's low end (279.5K) bound the range's low; md's raid0 read path (167K a job
    # x 8, a field figure) caps the middle and the top.
    assert raid0.rand_read_iops.bound.startswith("md's raid0 read path")
    assert raid0.rand_read_iops.low == pytest.approx(4 * 279.5e3)
    assert raid0.rand_read_iops.value == pytest.approx(raid0.rand_read_iops.high)
    raid1 = predict(level_from_name("raid1"), nvme[:2])
    # Q1: the member plus md's ~65 µs, from flash's 58 µs to 152 µs.
    assert (raid1.q1_read_latency_s.low, raid1.q1_read_latency_s.high) == pytest.approx((123e-6, 217e-6), rel=0.01)
    assert raid1.as_json()["range"]["q1_read_latency_us"] == [120.0, 220.0]


def test_a_member_measured_in_part_keeps_its_own_figures_and_their_basis() -> None:
    stored = MemberFigures(seq_read_bytes_per_s=3.1e9, seq_write_bytes_per_s=2.9e9, rand_read_iops=610e3,
                           q1_read_latency_s=81e-6, rotational=False, basis=MEASURED)  # fmt: skip
    merged = with_unmeasured(stored, unmeasured_figures(GEN4_X4, False, LinkKind.PCIE))
    assert (merged.seq_read_bytes_per_s, merged.rand_read_iops, merged.q1_read_latency_s) == (3.1e9, 610e3, 81e-6)
    assert merged.basis_of("rand_read_iops") == MEASURED and merged.range_of("rand_read_iops") is None
    assert merged.rand_write_iops == pytest.approx(NVME_SSD.rand_write_iops.value)  # type: ignore[union-attr]
    assert merged.basis_of("rand_write_iops") == FIELD and merged.range_of("rand_write_iops") == (30.5e3, 190e3)
    assert merged.basis_of("q1_write_latency_s") == FIELD
