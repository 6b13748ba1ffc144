"""The advisor's scenario table: for each situation, the top finding names the one cause the figures show.

Runs are stored the way the benchmark engine stores a weakest-link run (one run per step: each member
alone, all members at once, the array), in a real results database; inventories are the captured trees.
The same five scenarios run on real md in tests/lab/test_advise_scenarios.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mdtui.advise.findings import Finding, Severity, Topic, finding_lines
from mdtui.advise.gather import weakest_link_figures
from mdtui.advise.rules import advise
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.keep.boot import read_boot_state
from mdtui.model.inventory import Inventory
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.store.records import Metrics, RunSetup, RunStatus
from mdtui.store.runs import ResultsStore

REPO = Path(__file__).resolve().parents[2]
REAL_LINKS = REPO / "tests" / "fixtures" / "trees" / "real-links"
LAB_STANDARD = REPO / "tests" / "fixtures" / "trees" / "lab-standard"
MB = 1e6


def store_weakest_link(
    store: ResultsStore,
    alone: dict[str, float],
    together: float,
    array: float,
    *,
    array_name: str = "md0",
    numjobs: int = 16,
    sync: str | None = None,
) -> list[int]:
    """A whole weakest-link run as mdtui.bench stores it; returns the run ids in step order."""
    base = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    members = [f"/dev/{name}" for name in alone]
    steps: list[tuple[str, float, str, dict[str, object]]] = [
        (f"{name} alone", speed, f"/dev/{name}", {}) for name, speed in alone.items()
    ]
    steps.append(("all members at once", together, ", ".join(members), {"processes": len(members)}))
    config: dict[str, object] = {"level": "raid0", "raid_disks": len(members)}
    if sync:
        config["sync"] = sync
    steps.append((f"array {array_name}", array, f"/dev/{array_name}", {}))
    ids = []
    for index, (step, figure, target, extra) in enumerate(steps, start=1):
        params: dict[str, object] = {"step": step, "numjobs": numjobs, "step_index": index, **extra}
        moment = base + timedelta(seconds=10 * index)
        ids.append(
            store.add_run(
                RunSetup(
                    preset="weakest-link",
                    target=target,
                    params=params,
                    array=config if target == f"/dev/{array_name}" else {},
                    label=f"weakest-link: {step}",
                ),
                status=RunStatus.COMPLETE,
                started_at=moment,
                ended_at=moment + timedelta(seconds=5),
                metrics=Metrics(read_bw_bytes_per_s=figure),
            )
        )
    return ids


def advise_on(tmp_path: Path, inventory: Inventory | None, **runs: object) -> tuple[Finding, ...]:
    with ResultsStore(tmp_path / "results.db") as store:
        store_weakest_link(store, **runs)  # type: ignore[arg-type]
        stored = tuple(store.list_runs())
    return advise(AdviceInput(inventory=inventory, runs=stored, weakest_link=weakest_link_figures(stored)))


def warnings(findings: tuple[Finding, ...]) -> list[Finding]:
    """Warnings and worse about performance (these scenarios' topic; keeping findings are tested elsewhere)."""
    return [f for f in findings if f.severity is not Severity.INFO and f.topic is Topic.PERFORMANCE]


@pytest.fixture(scope="module")
def lab_standard() -> Inventory:
    return scan(LAB_STANDARD, privileged=True)


@pytest.fixture(scope="module")
def real_links() -> Inventory:
    return scan(REAL_LINKS, privileged=True)


# (a) one member throttled, links all alike (the lab's NVMe all train at the same 2.5 GT/s x1)
def test_a_throttled_member_with_equal_links_is_the_cause_not_parallelism(tmp_path, lab_standard):
    alone = {"nvme0n1": 20 * MB, "nvme1n1": 4782 * MB, "nvme2n1": 4305 * MB, "nvme3n1": 3365 * MB}
    findings = advise_on(tmp_path, lab_standard, alone=alone, together=3500 * MB, array=81 * MB)
    top = findings[0]
    assert top.id == "measured-slow-member:md0"
    assert top.severity is Severity.CRITICAL
    # nvme3n1 (3,365 MB/s, 0.78× the median of the others) is slower than its peers too, but spread: the peers
    # are the other two (median 4,544 MB/s).
    assert top.title.startswith("nvme0n1 reads 20 MB/s alone, 0.0044× its peers (4,544 MB/s): md0 runs at its pace")
    assert "1.01× slowest × 4" in top.title
    # The figures rule out parallelism, and the link (all alike) too; parallelism is not offered at all.
    assert any(text.startswith("too little parallelism: md0 read 1.01× slowest × 4") for text in top.ruled_out)
    assert any(text.startswith("the link:") and "like its peers'" in text for text in top.ruled_out)
    assert "parallelism:md0" not in [f.id for f in findings]
    assert "smartctl -a /dev/nvme0n1" in top.what_to_do
    evidence = {e.label: e.value for e in top.evidence}
    assert evidence["runs"] == "#1, #2, #3, #4, #5, #6"
    assert evidence["nvme0n1 alone"] == 20.0 and evidence["peers × 4"] == (4782 + 4305) / 2 * 4
    assert any(line.startswith("  rules out: too little parallelism") for line in finding_lines(top))


# (b) slow links: in the real-links tree nvme2n1 and nvme3n1 sit on x1 links (250 MB/s) beside x4 peers
def test_b_a_link_that_explains_the_slow_members_is_one_finding(tmp_path, real_links):
    # Links only (no run yet): the link rule names the members and what they cost md0, first.
    findings = advise(AdviceInput(inventory=real_links))
    assert findings[0].id == "slow-member:md0"
    # The md model's figures, as `mdtui predict --level 6` gives them for these members (before: 2 × 250 = 500).
    assert findings[0].title == (
        "nvme2n1, nvme3n1 limit md0 to at most 1,000 MB/s of sequential reads, slowest × 4 (the others allow at "
        "most 4,000 MB/s)"
    )
    # With a weakest-link run that shows them at their links' pace: one finding, the measured one, with the link.
    alone = {"nvme0n1": 3300 * MB, "nvme1n1": 950 * MB, "nvme2n1": 240 * MB, "nvme3n1": 245 * MB}
    findings = advise_on(tmp_path, real_links, alone=alone, together=4700 * MB, array=960 * MB)
    top = findings[0]
    assert top.id == "measured-slow-member:md0"
    # Each named member with its own figure (a group given one figure hid a healthy member's before).
    assert top.title.startswith(
        "nvme2n1 reads 240 MB/s and nvme3n1 245 MB/s alone, 0.11× and 0.12× their peers (2,125 MB/s): md0 runs"
    )
    assert top.what_to_do.startswith("Fix the link first (nvme2n1's link trained at Gen1 2.5 GT/s x1")
    ids = [f.id for f in findings]
    assert "slow-member:md0" not in ids and "link-downgraded:nvme2n1" not in ids
    assert "parallelism:md0" not in ids


# (c) members fast, the array far below slowest × N and below the members together: too few jobs
def test_c_an_array_short_of_parallelism_is_named_as_such(tmp_path, lab_standard):
    alone = {"nvme0n1": 1000 * MB, "nvme1n1": 1010 * MB, "nvme2n1": 990 * MB, "nvme3n1": 1005 * MB}
    findings = advise_on(tmp_path, lab_standard, alone=alone, together=3900 * MB, array=1020 * MB, numjobs=1)
    top = findings[0]
    assert top.id == "parallelism:md0"
    assert top.experiment == "parallelism-sweep"
    assert top.ruled_out == ("a slow member: slowest × 4 = 3,960 MB/s, but md0 read only 0.26× of it",)
    assert not [f for f in findings if f.id.startswith("measured-slow-member")]


# (d) a run during a resync: the resync explains the figures before anything else
def test_d_a_run_during_a_resync_is_named_before_any_other_cause(tmp_path, lab_standard):
    alone = {"nvme0n1": 20 * MB, "nvme1n1": 1000 * MB, "nvme2n1": 1000 * MB, "nvme3n1": 1000 * MB}
    findings = advise_on(
        tmp_path, lab_standard, alone=alone, together=1500 * MB, array=60 * MB, sync="resync 12% at 80 MB/s"
    )
    top = warnings(findings)[0]
    assert top.id in ("resync:md0", "run-during-resync:6")
    ids = [f.id for f in findings]
    assert "run-during-resync:6" in ids
    assert "measured-slow-member:md0" not in ids and "parallelism:md0" not in ids
    during = next(f for f in findings if f.id == "run-during-resync:6")
    assert during.ruled_out and "resync" in during.ruled_out[0]


# (e) a healthy array: members alike, the array at slowest × N — no warning at all
def test_e_a_healthy_array_gives_no_warning(tmp_path):
    alone = {"nvme0n1": 1000 * MB, "nvme1n1": 900 * MB, "nvme2n1": 780 * MB, "nvme3n1": 950 * MB}
    findings = advise_on(tmp_path, None, alone=alone, together=3600 * MB, array=3100 * MB)
    assert warnings(findings) == [], [f.title for f in findings]


def test_the_newest_weakest_link_run_speaks_for_its_array(tmp_path, lab_standard):
    with ResultsStore(tmp_path / "results.db") as store:
        slow = {"nvme0n1": 20 * MB, "nvme1n1": 1000 * MB, "nvme2n1": 1000 * MB, "nvme3n1": 1000 * MB}
        store_weakest_link(store, alone=slow, together=1500 * MB, array=80 * MB)
        fixed = {"nvme0n1": 990 * MB, "nvme1n1": 1000 * MB, "nvme2n1": 1000 * MB, "nvme3n1": 1000 * MB}
        store_weakest_link(store, alone=fixed, together=3900 * MB, array=3900 * MB)
        stored = tuple(store.list_runs())
    findings = advise(AdviceInput(inventory=lab_standard, runs=stored, weakest_link=weakest_link_figures(stored)))
    assert "measured-slow-member:md0" not in [f.id for f in findings]


def test_alone_steps_of_another_session_are_not_paired(tmp_path):
    with ResultsStore(tmp_path / "results.db") as store:
        ids = store_weakest_link(store, alone={"a": 1.0 * MB, "b": 2.0 * MB}, together=3 * MB, array=2 * MB)
        store.delete_run(ids[0])
        stored = tuple(store.list_runs())
    (figures,) = weakest_link_figures(stored)
    assert figures.alone == ()  # one alone step is missing: no member figures rather than wrong ones


def test_the_guide_shows_the_measured_cause_after_its_weakest_link_run(tmp_path, lab_standard):
    from mdtui.advise.guide import after_run_findings

    with ResultsStore(tmp_path / "results.db") as store:
        slow = {"nvme0n1": 20 * MB, "nvme1n1": 1000 * MB, "nvme2n1": 1000 * MB, "nvme3n1": 1000 * MB}
        store_weakest_link(store, alone=slow, together=1500 * MB, array=80 * MB)
        stored = store.list_runs()
    shown = after_run_findings(lab_standard, stored)
    assert [f.id for f in shown] == ["measured-slow-member:md0"]
    assert shown[0].title.startswith("nvme0n1 reads 20 MB/s alone")
    with ResultsStore(tmp_path / "healthy.db") as store:
        even = {"nvme0n1": 990 * MB, "nvme1n1": 1000 * MB, "nvme2n1": 1000 * MB, "nvme3n1": 1000 * MB}
        store_weakest_link(store, alone=even, together=3900 * MB, array=3900 * MB)
        stored = store.list_runs()
    assert after_run_findings(lab_standard, stored) == ()
    assert after_run_findings(lab_standard, [stored[-1]]) is None  # the array step alone: nothing to reason from


def test_a_member_slow_alone_is_not_blamed_when_the_array_read_more_than_it_allows(tmp_path, lab_standard):
    # One disturbed "alone" step (other load on the host): the array itself read 2.4× slowest × 4, so the
    # member cannot be what limits it. Seen in the lab under load: nvme2n1 378 MB/s alone vs 706 for peers.
    alone = {"nvme0n1": 700 * MB, "nvme1n1": 710 * MB, "nvme2n1": 378 * MB, "nvme3n1": 706 * MB}
    findings = advise_on(tmp_path, lab_standard, alone=alone, together=2800 * MB, array=2700 * MB)
    assert "measured-slow-member:md0" not in [f.id for f in findings]


def test_parallelism_leads_when_the_array_reads_far_below_even_its_slowest_member(tmp_path, lab_standard):
    # A 4 MiB chunk and one job: the array reads at one member's speed, far below slowest × 4; a member that
    # also read slowly alone is spread (info), not the cause: the cause of the figure is parallelism.
    alone = {"nvme0n1": 268 * MB, "nvme1n1": 1450 * MB, "nvme2n1": 1460 * MB, "nvme3n1": 1470 * MB}
    findings = advise_on(tmp_path, lab_standard, alone=alone, together=4000 * MB, array=700 * MB, numjobs=1)
    assert findings[0].id == "parallelism:md0"
    assert "measured-slow-member:md0" not in [f.id for f in findings]
    spread = next(f for f in findings if f.id == "member-spread:md0")
    assert spread.severity is Severity.INFO
    expected = "nvme0n1 read alone 268 MB/s (0.18× its peers' 1,460 MB/s; × 4 = 1,072 MB/s, not md0's 700 MB/s)"
    assert expected in spread.title, spread.title
    assert "something else holds it first" in spread.what_to_do


def test_keeping_findings_carry_their_topic(tmp_path, lab_standard):
    # The captured lab tree has md arrays and no mdadm.conf: the boot check speaks, under its own topic.
    boot = read_boot_state(SystemRoot(LAB_STANDARD), arrays=lab_standard.arrays)
    findings = advise(AdviceInput(inventory=lab_standard, boot=boot))
    keeping = [f for f in findings if f.topic is Topic.KEEPING]
    assert keeping and all(f.id.startswith(("boot-", "monitor", "degraded", "smart", "mismatch")) for f in keeping)
    assert not [f for f in findings if f.topic is Topic.PERFORMANCE and f.id.startswith("boot-")]
