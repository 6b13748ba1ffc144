"""Issue 41/44: one question, one answer. For every level over the same disks, `predict --json`, `create --dry-run
--json`, the create screen, the guide's level table and `advise` give the md model's figures; on the generated
256-disk host `advise` raises no link alarm on a hard disk and opens with the array whose data is at risk."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from test_predict_create import store_member

from mdtui.advise.rules import advise
from mdtui.advise.rules.inputs import AdviceInput
from mdtui.bench.member_figures import load_member_runs, member_sources
from mdtui.cli.main import main
from mdtui.format import rate_mb_s
from mdtui.plan.create import CreateRequest, plan_create
from mdtui.plan.forecast import level_table, significant
from mdtui.plan.levels import LEVELS, RaidLevel
from mdtui.probe.inventory import scan
from mdtui.probe.root import SystemRoot
from mdtui.ui.common.render import Palette
from mdtui.ui.create import form as cf
from mdtui.ui.create.screen import preview_renderable

DISKS = 256
# Four free NVMe of the generated host: nvme22n1 trained at Gen4 x2 (3,938 MB/s), the others at Gen4 x4
# (7,877 MB/s); nvme20n1 is measured alone (member-matrix, test_predict_create's figures: 1,113 MB/s reads), so
# one member is measured and three are their links.
MEMBERS = ("nvme20n1", "nvme21n1", "nvme22n1", "nvme23n1")


@pytest.fixture(scope="module")
def host(bigtree: ModuleType) -> Iterator[Path]:
    directory = bigtree.scratch_directory()
    try:
        bigtree.build(directory, DISKS)
        yield Path(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "results.db"
    store_member(path, "nvme20n1", 1)
    monkeypatch.setenv("MDTUI_DB", str(path))
    return path


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


LEVELS_OF_FOUR: list[RaidLevel] = [level for level in LEVELS if level.min_members <= len(MEMBERS)]


@pytest.mark.parametrize("level", LEVELS_OF_FOUR, ids=lambda level: level.name)
def test_every_front_end_gives_the_models_figures(
    host: Path, db: Path, level: RaidLevel, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(host)
    predicted = cli_json(capsys, "--root", root, "predict", "--level", level.mdadm_level, *MEMBERS, "--json")
    planned = cli_json(capsys, "--root", root, "create", "--level", level.mdadm_level, *MEMBERS, "--dry-run", "--json")
    # create --dry-run --json: the same document predict --json prints, and its seq figures in bytes/s.
    predicted.pop("schema_version")  # the document's, not the prediction's: create's plan carries its own
    assert planned["plan"]["prediction"] == predicted
    seq_read = predicted["predicted"]["seq_read_mb_s"]
    assert seq_read is not None and predicted["basis"]["seq_read_mb_s"] == "link, measured"
    assert planned["plan"]["predicted_read_bytes_per_s"] == pytest.approx(seq_read * 1e6)

    inventory = scan(SystemRoot(root))
    disks = tuple(d for name in MEMBERS if (d := inventory.disk(name)) is not None)
    sources = member_sources(load_member_runs(str(db)), disks)
    shown_read = f"{significant(seq_read):,.0f} MB/s"
    # The create screen's plan preview (what the screen renders for this form).
    form = cf.CreateForm(device="/dev/md8", level=level.name, members=MEMBERS)
    preview = cf.preview(form, inventory, load_member_runs(str(db)))
    assert preview.plan is not None, preview.problems
    text = preview_renderable(preview, Palette()).plain
    line = next(line for line in text.splitlines() if line.strip().startswith("sequential read"))
    assert shown_read in line, line
    # The guide's level table (the cells ui/guide/steps.py shows).
    row = next(row for row in level_table(LEVELS, sources, chunk_bytes=512 * 1024) if row.level == level.name)
    assert row.cells[0] == shown_read and "unknown" not in row.cells[:2]
    # The advisor over the planned array: nvme20n1 (measured, 1,113 MB/s) and nvme22n1 (its x2 link, 3,938 MB/s)
    # are under 0.8x the others (7,877 MB/s links), and the figure they hold the array to is predict's.
    if level.name == "linear":
        return  # a concatenation has no pace to set: the advisor says nothing of it
    plan = plan_create(CreateRequest("/dev/md8", level, disks), sources)
    finding = next(f for f in advise(AdviceInput(plan=plan)) if f.id.startswith("slow-member:"))
    evidence = {e.label: e.value for e in finding.evidence}
    assert evidence["/dev/md8 (planned) sequential read now"] == significant(seq_read), finding.title
    assert finding.members == ("nvme20n1", "nvme22n1") and shown_read in finding.title


# Members nobody measured (issue 45): four free NVMe (nvme22n1 on its x2 link) and four free 16 TB SAS hard disks.
LINK_ONLY = {"nvme": MEMBERS, "hdd": ("sdao", "sdap", "sdaq", "sdar")}
# The five workloads the create screen and the guide's table show, as (predict --json key, line name, scale).
SHOWN = (
    ("seq_read_mb_s", "sequential read", 1e6),
    ("seq_write_mb_s", "sequential write", 1e6),
    ("rand_read_iops", "random read", 1.0),
    ("rand_write_iops", "random write", 1.0),
    ("q1_read_latency_us", "Q1 read latency", 1e-6),
)


def expected_text(document: dict, key: str, *, compact: bool = False) -> str:
    """What a front end must show for predict's figure ``key``: its value in its unit, "at most" before a bound."""
    value = document["predicted"][key]
    if key.endswith("mb_s"):
        text = rate_mb_s(value * 1e6)
    elif key.endswith("iops"):
        text = f"{value / 1000:,.0f}k IOPS" if compact and value >= 1000 else f"{value:,.0f} IOPS"
    else:
        text = f"{value:,.0f} µs"
    if not document["at_most"][key] or document["range"][key] is not None:
        return text  # with a range, a link bounds the range's top, not the value
    return f"≤{text}" if compact else f"at most {text}"


@pytest.mark.parametrize("kind", list(LINK_ONLY))
@pytest.mark.parametrize("level", LEVELS_OF_FOUR, ids=lambda level: level.name)
def test_members_known_only_by_their_links_give_every_workload_the_same_everywhere(
    host: Path, level: RaidLevel, kind: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Issue 45: nothing measured, every workload still has a figure, bound and basis (the link where it binds,
    "at most"; the kind of disk's field figures where the device does), and every front end shows predict's."""
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "none.db"))
    members = LINK_ONLY[kind]
    root = str(host)
    predicted = cli_json(capsys, "--root", root, "predict", "--level", level.mdadm_level, *members, "--json")
    for key, value in predicted["predicted"].items():
        assert value is not None and value > 0, (key, predicted["bounds"][key])
        assert not predicted["bounds"][key].startswith("unknown") and predicted["basis"][key], key
        assert "measured" not in predicted["basis"][key]
    planned = cli_json(capsys, "--root", root, "create", "--level", level.mdadm_level, *members, "--dry-run", "--json")
    predicted.pop("schema_version")
    assert planned["plan"]["prediction"] == predicted
    inventory = scan(SystemRoot(root))
    disks = tuple(d for name in members if (d := inventory.disk(name)) is not None)
    # The create screen's plan preview and the guide's level table, workload by workload.
    form = cf.CreateForm(device="/dev/md8", level=level.name, members=members)
    preview = cf.preview(form, inventory, [])
    assert preview.plan is not None, preview.problems
    lines = preview_renderable(preview, Palette()).plain.splitlines()
    rows = level_table(LEVELS, member_sources([], disks), chunk_bytes=512 * 1024)
    row = next(r for r in rows if r.level == level.name)
    for index, (key, name, _) in enumerate(SHOWN):
        line = next(line for line in lines if line.strip().startswith(name))
        assert expected_text(predicted, key) in line, (key, line)
        assert row.cells[index] == expected_text(predicted, key, compact=True), (key, row.cells)
    # The notes still say how to measure the members, so nobody mistakes a field figure for a measurement.
    text = "\n".join(lines)
    assert "have no member figures" in text and "--preset member-matrix" in text and "field figures" in text
    if kind == "nvme" and level.name != "linear":
        # The advisor holds the planned array to predict's figure (nvme22n1's x2 link sets its pace).
        plan = plan_create(CreateRequest("/dev/md8", level, disks), member_sources([], disks))
        finding = next(f for f in advise(AdviceInput(plan=plan)) if f.id.startswith("slow-member:"))
        evidence = {e.label: e.value for e in finding.evidence}
        assert evidence["/dev/md8 (planned) sequential read now"] == predicted["predicted"]["seq_read_mb_s"]
        assert finding.members == ("nvme22n1",) and expected_text(predicted, "seq_read_mb_s") in finding.title


def test_the_big_host_opens_with_data_at_risk_and_no_link_alarm_on_a_hard_disk(
    host: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 44 item 1: sdan is a 16 TB hard disk on a 6 Gbit link of a 12 Gbit port; its platter, not the link,
    is its limit, so the downgrade costs md6 nothing (before: CRITICAL "sdan limits md6 to 8 x 600 MB/s",
    first). Findings are ordered by what is at stake: the degraded md2 first."""
    findings = cli_json(capsys, "--root", str(host), "advise", "--json", "--db", str(tmp_path / "none.db"))["findings"]
    assert findings[0]["id"] == "degraded:md2", [f["id"] for f in findings[:5]]
    inventory = scan(SystemRoot(str(host)))
    hard_disks = {d.name for d in inventory.disks if d.rotational}
    alarms = [
        f for f in findings
        if f["severity"] != "info" and (set(f["members"]) & hard_disks or f["id"].split(":")[-1] in hard_disks)
    ]  # fmt: skip
    assert alarms == [], [f["title"] for f in alarms]
    sdan = next(f for f in findings if f["id"] == "link-downgraded:sdan")
    assert sdan["severity"] == "info" and "it costs nothing" in sdan["title"]
    # Data at risk, then lost speed, then advice: no keeping warning after a performance one, no info before.
    stakes = [
        0 if f["topic"] == "keeping" and f["severity"] != "info" else 2 if f["severity"] == "info" else 1
        for f in findings
    ]
    assert stakes == sorted(stakes), [f["id"] for f in findings]


def test_create_dry_run_words_the_prediction_with_the_write_safety_asked_for(
    host: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small bitmap chunk costs a raid1's random writes: create --dry-run's "what it will do" says predict's
    figure with the same options, as its --json and its costs line do (its text once showed the figure without
    the bitmap: 76,000 IOPS beside predict's 25,000)."""
    monkeypatch.setenv("MDTUI_DB", str(tmp_path / "none.db"))
    options = ("--level", "1", "nvme20n1", "nvme21n1", "--bitmap", "internal", "--bitmap-chunk", "4")
    predicted = cli_json(capsys, "--root", str(host), "predict", *options, "--json")
    plain = cli_json(capsys, "--root", str(host), "predict", *options[:4], "--bitmap", "none", "--json")
    assert predicted["predicted"]["rand_write_iops"] < plain["predicted"]["rand_write_iops"]  # the cost is there
    assert main(["--root", str(host), "create", *options, "--dry-run"]) == 0
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.strip().startswith("random write"))
    assert expected_text(predicted, "rand_write_iops") in line, line
    # The costs line words the same figures the same way (it once printed 25,378 beside predict's 25,000).
    costs = next(line for line in text.splitlines() if "costs" in line and "random write:" in line)
    both = f"random write: {expected_text(predicted, 'rand_write_iops')} vs {expected_text(plain, 'rand_write_iops')}"
    assert both in costs, costs
