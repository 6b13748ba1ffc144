"""Devices and arrays are listed in the kernel's order: nvme2n1 before nvme10n1, sdz before sdaa, md2 before md10."""

from __future__ import annotations

import random
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdtui.model.names import kernel_name_key


def test_the_generators_sd_names_follow_the_kernel(bigtree: ModuleType) -> None:
    """bench/bigtree.py names its SAS disks as the sd driver does (sd_format_disk_name: a..z, aa..zz, aaa..)."""
    assert [bigtree.sd_name(i) for i in (0, 25, 26, 27, 51, 52, 701, 702)] == [
        "sda", "sdz", "sdaa", "sdab", "sdaz", "sdba", "sdzz", "sdaaa",
    ]  # fmt: skip


@pytest.mark.parametrize("prefix", ["sd", "vd", "xvd", "hd"])
def test_lettered_disks_sort_in_the_order_the_kernel_hands_them_out(prefix: str, bigtree: ModuleType) -> None:
    indices = [*range(800), *random.Random(17).sample(range(800, 18_278 + 2000), 300)]
    names = [prefix + bigtree.sd_name(i).removeprefix("sd") for i in sorted(indices)]
    shuffled = random.Random(3).sample(names, len(names))
    assert sorted(shuffled, key=kernel_name_key) == names


def test_partitions_follow_their_disk_and_numbers_sort_by_value() -> None:
    expected = ["sda", "sda1", "sda2", "sda10", "sdb", "sdz", "sdz3", "sdaa", "sdaa1"]
    assert sorted(reversed(expected), key=kernel_name_key) == expected
    nvme = [f"nvme{c}n{n}" for c in range(12) for n in (1, 2, 10)]
    assert sorted(reversed(nvme), key=kernel_name_key) == nvme
    md = ["md", "md0", "md2", "md10", "md127", "md_home"]
    assert sorted(reversed(md), key=kernel_name_key) == md
    mixed = ["dm-2", "dm-10", "loop2", "loop10", "md9", "md10", "nvme9n1", "nvme10n1", "sdy", "sdaa", "vda", "xvdb"]
    assert sorted(reversed(mixed), key=kernel_name_key) == mixed


names = st.text(alphabet="sdvxhnmeloop0123456789abz-_", max_size=8)


@given(st.lists(names, max_size=30), st.randoms(use_true_random=False))
def test_any_names_sort_without_error_and_in_one_order(listed: list[str], rng: random.Random) -> None:
    ordered = sorted(listed, key=kernel_name_key)
    assert sorted(rng.sample(listed, len(listed)), key=kernel_name_key) == ordered


def test_findings_of_a_severity_come_in_the_kernels_order_of_their_arrays() -> None:
    from mdtui.advise.findings import Finding, Severity, sort_findings

    def finding(fid: str, severity: Severity = Severity.WARNING) -> Finding:
        return Finding(fid, severity, fid, (), "why", "what to do")

    given_ids = ["boot-unlisted:md10", "boot-unlisted:md2", "degraded:md11", "boot-unlisted:md1", "degraded:md3"]
    severities = {"degraded:md11": Severity.CRITICAL, "degraded:md3": Severity.CRITICAL}
    found = sort_findings(finding(fid, severities.get(fid, Severity.WARNING)) for fid in given_ids)
    assert [f.id for f in found] == [
        "degraded:md3", "degraded:md11", "boot-unlisted:md1", "boot-unlisted:md2", "boot-unlisted:md10",
    ]  # fmt: skip
