"""The chunk sweep on real md: create per chunk, a tiny fio read through the benchmark engine, tear down, next."""

from __future__ import annotations

import json

from .harness import Guest

STATE_ENV = {"MDTUI_STATE_DIR": "/tmp/mdtui-exp-state"}

# Runs in the guest: the experiment exactly as the app runs it (BenchRunner over mdtui.bench), with a
# read small enough for TCG (8 MiB in 1 MiB direct reads per point).
SWEEP = r"""
import json, sys
from mdtui.advise.experiments import chunk_sweep
from mdtui.advise.runner import BenchRunner
from mdtui.probe.inventory import scan
from mdtui.store.runs import ResultsStore

names = sys.argv[1:]
inventory = scan("/")
members = [inventory.disk(name) for name in names]
with ResultsStore("/tmp/mdtui-exp.db") as store:
    result = chunk_sweep(
        BenchRunner(store, sample_interval_s=None),
        members,
        store=store,
        device="/dev/md0",
        level="raid0",
        chunks_kib=(64, 512),
        preset_key="custom",
        quick=True,
        confirmed="/dev/md0",
        size_bytes=8 << 20,
        block_size_bytes=1 << 20,
    )
    runs = [store.get_run(run_id) for run_id in result.run_ids]
    print(json.dumps({
        "points": [[p.label, list(p.run_ids)] for p in result.runs],
        "runs": [
            {"id": r.id, "label": r.label, "status": r.status.value, "target": r.target,
             "read": r.metrics.read_bw_bytes_per_s, "array": r.array}
            for r in runs
        ],
        "normalised": [[row.run.label, row.data_disks, row.normalised] for row in result.normalised.rows],
    }))
"""


def test_chunk_sweep_on_real_md(standard_guest: Guest) -> None:
    guest = standard_guest
    devices = [guest.device("NVME0"), guest.device("NVME1")]
    names = [d.rsplit("/", 1)[-1] for d in devices]
    out = guest.run([guest.python_exe, "-c", SWEEP, *names], env=STATE_ENV, timeout=300)
    report = json.loads(out.stdout)

    labels = [label for label, _ in report["points"]]
    assert labels == [f"raw member {names[0]}", "raid0 chunk 64 KiB", "raid0 chunk 512 KiB"]
    runs = report["runs"]
    assert len(runs) == 3
    assert all(run["status"] == "complete" and run["read"] > 0 for run in runs)
    assert runs[0]["target"] == devices[0]
    # Both sweep runs were stored against the array as it was then: raid0, the chunk of that point.
    assert [run["array"].get("chunk_bytes") for run in runs[1:]] == [64 * 1024, 512 * 1024]
    assert all(run["array"].get("level") == "raid0" and run["target"] == "/dev/md0" for run in runs[1:])
    assert [row[1] for row in report["normalised"]] == [2.0, 2.0]
    assert all(row[2] is not None and row[2] > 0 for row in report["normalised"])

    # Torn down: no array left and no md superblock (or other signature) on either member.
    assert "md0" not in guest.read_file("/proc/mdstat")
    for dev in devices:
        examine = guest.run(["mdadm", "--examine", dev], check=False)
        assert examine.rc != 0 and "No md superblock" in examine.stderr, f"{dev} still has a superblock"
        assert guest.run(["wipefs", "--no-act", "--noheadings", dev]).stdout.strip() == ""
    registry = guest.run(["cat", "/tmp/mdtui-exp-state/created-arrays.json"], check=False).stdout
    assert json.loads(registry or "[]") == []


def test_chunk_sweep_from_the_cli(standard_guest: Guest) -> None:
    """`mdtui experiment chunk-sweep` end to end: the plan, --yes, two labelled points, nothing left behind."""
    guest = standard_guest
    devices = [guest.device("NVME0"), guest.device("NVME1")]
    names = [d.rsplit("/", 1)[-1] for d in devices]
    db = "/tmp/mdtui-exp-cli.db"
    guest.run(["rm", "-f", db])
    out = guest.run(
        [guest.python_exe, "-m", "mdtui", "experiment", "chunk-sweep", "--level", "0", "--chunks", "64,512",
         "--preset", "custom", "--runtime", "3", "--quick", "--yes", "--json", "--db", db, *names],
        env=STATE_ENV, timeout=300, check=False,
    )
    assert out.rc == 0, out.stderr
    assert "--chunk=64K" in out.stderr and "--chunk=512K" in out.stderr  # the plan, printed before it ran
    report = json.loads(out.stdout)
    labels = [point["label"] for point in report["points"]]
    assert labels == [f"raw member {names[0]}", "raid0 chunk 64 KiB", "raid0 chunk 512 KiB"]
    assert all(len(point["run_ids"]) == 1 for point in report["points"])
    listing = ("import json; from mdtui.store.runs import ResultsStore; "
               f"print(json.dumps([[r.label, r.status.value] for r in ResultsStore({db!r}).list_runs()]))")
    stored = json.loads(guest.run([guest.python_exe, "-c", listing], env=STATE_ENV).stdout)
    assert sorted(stored) == sorted([label, "complete"] for label in labels)
    assert [line for line in guest.read_file("/proc/mdstat").splitlines() if " : active" in line] == []
    for dev in devices:
        assert guest.run(["wipefs", "--no-act", "--noheadings", dev]).stdout.strip() == ""


def test_advise_on_a_real_raid6(standard_guest: Guest) -> None:
    """The parity routines come from the guest kernel's own dmesg; stripe cache and md0 from its sysfs."""
    guest = standard_guest
    devices = [guest.device(f"NVME{i}") for i in range(4)]
    guest.run(["mdadm", "--create", "/dev/md0", "--run", "--level=6", "--raid-devices=4", "--chunk=64",
               "--bitmap=none", "--assume-clean", *devices], timeout=120)
    out = guest.run([guest.python_exe, "-m", "mdtui", "advise", "--json", "--workload", "database",
                     "--db", "/tmp/mdtui-advise-none.db"], env=STATE_ENV, timeout=120)
    findings = {f["id"]: f for f in json.loads(out.stdout)["findings"]}
    parity = {e["label"]: e["value"] for e in findings["parity-cpu:md0"]["evidence"]}
    # Debian's 6.1 kernel benchmarks raid6 at boot: "raid6: using algorithm <name> gen() <N> MB/s".
    dmesg = guest.run(["dmesg"]).stdout
    assert f"raid6: using algorithm {parity['raid6 algorithm']}" in dmesg
    assert parity.get("xor function")
    assert findings["stripe-cache:md0"]["evidence"][0]["value"] == 256
    assert findings["level-small-writes:md0"]["severity"] == "warning"
    assert "resync:md0" not in findings  # --assume-clean: nothing to sync
