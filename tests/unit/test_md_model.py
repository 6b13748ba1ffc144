"""The md model: md's small-write choice, reads over every copy, its ceilings and shared links, held against
the field's published level matrix (docs/findings.md, finding 4) where members are the bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mdtui.errors import PlanError
from mdtui.plan.levels import level_from_name
from mdtui.plan.md_model import (
    FIELD,
    FIELD_CEILINGS,
    GIVEN,
    Figure,
    MdCeilings,
    MemberFigures,
    SharedLink,
    parse_member_figures,
    predict,
    small_write_ios,
)

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "trees" / "real-links"
KIB = 1024
# One of finding 4's SAS3 SSDs: 1123 MB/s sequential write, 169K random 4 KiB write IOPS (the two columns
# the finding quotes); the read figures are the drive's datasheet class, not part of the comparison.
SAS3_SSD = MemberFigures(
    seq_read_bytes_per_s=1112e6,
    seq_write_bytes_per_s=1123e6,
    rand_read_iops=180e3,
    rand_write_iops=169e3,
    q1_read_latency_s=58e-6,
    rotational=False,
    basis=GIVEN,
)


@pytest.mark.parametrize(
    ("level", "members", "io_bytes", "expected"),
    [
        ("raid5", 4, 4 * KIB, (2, 2)),  # read-modify-write: old data + old parity
        ("raid5", 3, 4 * KIB, (1, 2)),  # reconstruct-write reads the one other data unit
        ("raid6", 4, 4 * KIB, (1, 3)),  # two data units: the other one is cheaper than P and Q
        ("raid6", 8, 4 * KIB, (3, 3)),  # six data units: read-modify-write (data, P, Q)
        ("raid5", 4, 3 * 512 * KIB, (0, 4)),  # a whole stripe (chunk × 3 data disks): no reads
        ("raid1", 2, 4 * KIB, (0, 2)),
        ("raid10", 4, 4 * KIB, (0, 2)),
        ("raid0", 4, 4 * KIB, (0, 1)),
    ],
)
def test_a_small_write_costs_what_md_chooses(
    level: str, members: int, io_bytes: int, expected: tuple[int, int]
) -> None:
    assert small_write_ios(level_from_name(level), members, None, io_bytes, 512 * KIB) == expected


# Finding 4, measured on four SAS3 SSDs (256 KiB chunk, no bitmap): sequential 1 MiB writes Q8T8 (MB/s) and
# random 4 KiB writes Q32T8 (IOPS).
FINDING_4 = {
    "raid0": (4211e6, 613e3),
    "raid1": (910e6, 154e3),
    "raid10": (1648e6, 276e3),
    "raid5": (985e6, 58.3e3),
    "raid6": (951e6, 65.4e3),
}


@pytest.mark.parametrize("level", ["raid0", "raid1"])
def test_where_members_are_the_bound_the_field_matrix_is_met_within_25_percent(level: str) -> None:
    prediction = predict(level_from_name(level), [SAS3_SSD] * 4, chunk_bytes=256 * KIB)
    seq, rand = FINDING_4[level]
    assert prediction.seq_write_bytes_per_s.bound.startswith("members")
    assert prediction.seq_write_bytes_per_s.value is not None and prediction.rand_write_iops.value is not None
    assert 0.75 <= prediction.seq_write_bytes_per_s.value / seq <= 1.25
    assert 0.75 <= prediction.rand_write_iops.value / rand <= 1.25


@pytest.mark.parametrize("level", ["raid5", "raid6"])
def test_parity_writes_are_bounded_by_md_stripe_thread_not_the_members(level: str) -> None:
    """The members could write 3369 (raid5) MB/s; md wrote 985: the old 'slowest × data disks' was 3.4× high."""
    prediction = predict(level_from_name(level), [SAS3_SSD] * 4, chunk_bytes=256 * KIB)
    seq, rand = FINDING_4[level]
    for figure, measured in ((prediction.seq_write_bytes_per_s, seq), (prediction.rand_write_iops, rand)):
        assert figure.bound.startswith("md stripe thread") and figure.basis == FIELD
        assert figure.value is not None and 0.75 <= figure.value / measured <= 1.25


def test_raid10_writes_name_the_members_and_state_the_gap() -> None:
    """md's raid10 wrote 1648 MB/s where two pairs of members allow 2246: the model says members (and
    overstates by 1.36×); kept visible here rather than fitted away."""
    prediction = predict(level_from_name("raid10"), [SAS3_SSD] * 4, chunk_bytes=256 * KIB)
    assert prediction.seq_write_bytes_per_s.value == pytest.approx(2 * 1123e6)
    assert prediction.seq_write_bytes_per_s.value / FINDING_4["raid10"][0] == pytest.approx(1.36, abs=0.01)
    assert prediction.rand_write_iops.value is not None
    assert 0.75 <= prediction.rand_write_iops.value / FINDING_4["raid10"][1] <= 1.25


def test_parity_reads_skip_parity_for_free_on_flash_and_pay_a_rotation_on_platters() -> None:
    flash = predict(level_from_name("raid6"), [SAS3_SSD] * 4)
    hdd = MemberFigures(seq_read_bytes_per_s=200e6, seq_write_bytes_per_s=200e6, rotational=True, basis=GIVEN)
    platters = predict(level_from_name("raid6"), [hdd] * 4)
    assert flash.seq_read_bytes_per_s.value == pytest.approx(4 * 1112e6)  # the old model said 2 ×: half
    assert platters.seq_read_bytes_per_s.value == pytest.approx(2 * 200e6)
    assert predict(level_from_name("raid4"), [SAS3_SSD] * 4).seq_read_bytes_per_s.value == pytest.approx(3 * 1112e6)


def test_a_stripe_runs_at_its_slowest_member() -> None:
    slow = MemberFigures(seq_read_bytes_per_s=832e6, seq_write_bytes_per_s=800e6, basis=GIVEN)
    fast = MemberFigures(seq_read_bytes_per_s=1650e6, seq_write_bytes_per_s=1600e6, basis=GIVEN)
    prediction = predict(level_from_name("raid0"), [fast, fast, fast, slow])
    assert prediction.seq_read_bytes_per_s.value == pytest.approx(3328e6)  # finding 1: 3322 measured


def test_a_shared_link_caps_what_its_members_carry_together() -> None:
    """Eight 1 GB/s SSDs behind one HBA on PCIe x8 Gen3 (7.88 GB/s): reads stop at the link; mirrored writes
    carry two copies over it."""
    member = MemberFigures(seq_read_bytes_per_s=1e9, seq_write_bytes_per_s=1e9, basis=GIVEN)
    hba = SharedLink("HBA link x8 Gen3", 7.88e9, tuple(range(8)))
    raid0 = predict(level_from_name("raid0"), [member] * 8, links=[hba])
    assert raid0.seq_read_bytes_per_s.bound == "HBA link x8 Gen3"
    assert raid0.seq_read_bytes_per_s.value == pytest.approx(7.88e9)
    raid10 = predict(level_from_name("raid10"), [member] * 8, links=[hba])
    assert raid10.seq_write_bytes_per_s.value == pytest.approx(3.94e9)  # 4 GB/s of members, 3.94 over the link
    half = predict(level_from_name("raid0"), [member] * 8, links=[SharedLink("x4 port", 2e9, (0, 1, 2, 3))])
    assert half.seq_read_bytes_per_s.value == pytest.approx(4e9)  # half the members behind 2 GB/s


def test_md_adds_its_own_latency_at_q1_and_says_so() -> None:
    prediction = predict(level_from_name("raid1"), [SAS3_SSD] * 2)
    assert prediction.q1_read_latency_s.value == pytest.approx(58e-6 + FIELD_CEILINGS.layer_latency_s)
    unknown = predict(level_from_name("raid1"), [SAS3_SSD] * 2, ceilings=MdCeilings(basis=FIELD))
    assert unknown.q1_read_latency_s.bound.startswith("the member (md's own latency not known)")


def test_a_missing_figure_is_unknown_never_zero() -> None:
    only_seq = MemberFigures(seq_read_bytes_per_s=500e6, seq_write_bytes_per_s=400e6, basis=GIVEN)
    prediction = predict(level_from_name("raid5"), [only_seq] * 4)
    assert prediction.rand_read_iops.value is None and prediction.rand_write_iops.value is None
    assert prediction.as_json()["predicted"]["rand_write_iops"] is None
    with pytest.raises(PlanError, match="at least 3"):
        predict(level_from_name("raid5"), [only_seq] * 2)


def test_a_figure_claims_no_more_precision_than_its_basis() -> None:
    assert Figure(985_432_100.0, "x", FIELD).rounded == 990_000_000.0
    assert Figure(985_432_100.0, "x", GIVEN).rounded == 985_000_000.0
    assert Figure(985_432_100.0, "x", "field figure, given").rounded == 990_000_000.0


def test_member_figures_parse_with_units_and_refuse_the_rest_in_one_line() -> None:
    figures = parse_member_figures("seq-read=1112MB/s,seq-write=1.1GB/s,rand-read=180k,rand-write=169k,q1-read=58us")
    assert figures.seq_read_bytes_per_s == pytest.approx(1112e6)
    assert figures.seq_write_bytes_per_s == pytest.approx(1.1e9)
    assert (figures.rand_read_iops, figures.rand_write_iops) == (180e3, 169e3)
    assert figures.q1_read_latency_s == pytest.approx(58e-6)
    assert parse_member_figures("seq-read=1000MiB/s,rotational=yes").rotational is True
    for bad in ("seq-read=fast", "speed=3", "rand-read=-5", "seq-read", "q1-read=58", "rotational=maybe"):
        with pytest.raises(PlanError) as caught:
            parse_member_figures(bad)
        assert "\n" not in str(caught.value)


def test_predict_cli_json_and_link_basis_on_a_captured_tree() -> None:
    figures = "seq-read=1112MB/s,seq-write=1123MB/s,rand-read=180k,rand-write=169k,q1-read=58us,rotational=no"
    done = subprocess.run(
        [sys.executable, "-m", "mdtui", "predict", "--level", "5", "--members", "4", "--member-figures", figures,
         "--json"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    document = json.loads(done.stdout)
    assert set(document) == {"schema_version", "predicted", "bounds", "basis"}
    assert document["predicted"]["seq_read_mb_s"] == pytest.approx(4450.0)
    assert document["bounds"]["seq_write_mb_s"].startswith("md stripe thread")
    tree = subprocess.run(
        [sys.executable, "-m", "mdtui", "--root", str(REAL), "predict", "--level", "0", "nvme0n1", "nvme1n1"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "(link)" in tree.stdout and "unknown" in tree.stdout  # links bound sequential figures only


# The lab's member (bench/bench_levels.py): an NVMe throttled by QEMU to 20 MB/s and 500 IOPS, measured by
# member-matrix at its steady state.
THROTTLED = MemberFigures(
    seq_read_bytes_per_s=20.0e6,
    seq_write_bytes_per_s=20.0e6,
    rand_read_iops=495,
    rand_write_iops=497,
    q1_read_latency_s=1931e-6,
    rotational=False,
    basis=GIVEN,
)


@pytest.mark.parametrize(("level", "members"), [("raid5", 4), ("raid6", 5)])
def test_a_stripe_cache_too_small_for_the_streams_is_the_bound_not_the_members(level: str, members: int) -> None:
    """In the lab (steady), raid5 over four such members wrote 34 MB/s sequentially (members 60) with md's
    default stripe_cache_size 256, its members reading 498 MB for 1,091 MB written; at 4096 it wrote 53 MB/s.
    8 streams need 8 × 128 heads (a 512 KiB chunk row each) to write full stripes."""
    default = predict(level_from_name(level), [THROTTLED] * members)
    assert default.seq_write_bytes_per_s.value is None
    assert default.seq_write_bytes_per_s.bound == "md stripe cache (stripe_cache_size 256)"
    assert any("1024 or more" in note for note in default.notes)
    raised = predict(level_from_name(level), [THROTTLED] * members, stripe_cache_size=4096)
    assert raised.seq_write_bytes_per_s.bound.startswith("members")
    assert raised.seq_write_bytes_per_s.value == pytest.approx(3 * 20e6)
    # A smaller chunk needs fewer heads: 8 × 16 for 64 KiB fits the default cache.
    small_chunk = predict(level_from_name(level), [THROTTLED] * members, chunk_bytes=64 * KIB)
    assert small_chunk.seq_write_bytes_per_s.bound.startswith("members")
    # Reads and the mirrored levels never go through the stripe cache.
    assert default.seq_read_bytes_per_s.bound.startswith("members")
    assert predict(level_from_name("raid10"), [THROTTLED] * 4).seq_write_bytes_per_s.value == pytest.approx(40e6)


def test_a_write_covering_a_whole_chunk_row_needs_no_room_for_the_next_one() -> None:
    """raid6 over four: a 1 MiB write is a whole row (512 KiB × 2 data disks) and fills its heads itself. In
    the lab it wrote 40.0 MB/s at stripe_cache_size 256, the members' 40, reading nothing."""
    prediction = predict(level_from_name("raid6"), [THROTTLED] * 4)
    assert prediction.seq_write_bytes_per_s.bound.startswith("members")
    assert prediction.seq_write_bytes_per_s.value == pytest.approx(40e6)
