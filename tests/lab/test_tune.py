"""md's own knobs on real md (issue 15): a raid5 knob sweep of stripe_cache_size and group_thread_cnt on short
sequential writes (every run's context holds the value read back from sysfs, the originals come back), a
sweep stopped by Ctrl-C, SIGHUP and SIGKILL (the last undone by the next `mdtui scan`), and `tune --apply`'s
udev rule re-applied by `udevadm trigger`, then removed.

The figures are printed (pytest -s) for docs/findings.md, "knob figures"; nothing here asserts a speed-up:
under TCG the CPU, not the stripe cache, may be the limit.
"""

from __future__ import annotations

import json
import time

from .harness import CommandResult, Guest, Pending

STATE_DIR = "/tmp/mdtui-tune-state"
DB = "/tmp/mdtui-tune.db"
PID_FILE = "/tmp/mdtui-tune.pid"
ENV = {"MDTUI_STATE_DIR": STATE_DIR, "MDTUI_DB": DB}
RULE_FILE = "/etc/udev/rules.d/90-mdtui-tune.rules"
CACHE = "/sys/block/md0/md/stripe_cache_size"
THREADS = "/sys/block/md0/md/group_thread_cnt"
SWEEP_RUNTIME_S = 3  # seconds of sequential writes per value
# A stopped sweep's run must still be going when the signal lands, however slowly the guest started it.
STOPPED_RUNTIME_S = 30
FIND_TIMEOUT_S = 90


def make_raid5(guest: Guest) -> list[str]:
    devices = [guest.device(serial) for serial in ("NVME0", "NVME1", "NVME2")]
    guest.run(["rm", "-rf", DB, f"{DB}-wal", f"{DB}-shm", STATE_DIR, PID_FILE, RULE_FILE])
    guest.run(["mdadm", "--create", "/dev/md0", "--run", "--level=5", "--raid-devices=3", "--chunk=512",
               "--bitmap=none", "--assume-clean", *devices], timeout=120)
    guest.run(["udevadm", "settle"], timeout=60)
    return devices


def knob(guest: Guest, path: str) -> str:
    return guest.read_file(path).strip()


def mdtui(guest: Guest, *argv: str, timeout: int = 300, check: bool = True) -> CommandResult:
    return guest.run([guest.python_exe, "-m", "mdtui", *argv], env=ENV, timeout=timeout, check=check)


def sweep_argv(guest: Guest, name: str, values: str, runtime_s: int) -> list[str]:
    return [guest.python_exe, "-m", "mdtui", "experiment", "knob", "--knob", name, "--values", values,
            "--target", "md0", "--preset", "custom", "--rw", "write", "--bs", "1m", "--iodepth", "8",
            "--runtime", str(runtime_s), "--yes"]


RUNS = """
import json, sys
from mdtui.store.runs import ResultsStore
store = ResultsStore(sys.argv[1], create=False)
print(json.dumps([
    {"id": r.id, "label": r.label, "status": r.status.value, "knobs": r.context.get("knobs", {}),
     "write": r.metrics.write_bw_bytes_per_s, "error": r.error}
    for r in sorted(store.get_runs([run.id for run in store.list_runs()]), key=lambda run: run.id)
]))
"""


def stored_runs(guest: Guest) -> list[dict]:
    return json.loads(guest.run([guest.python_exe, "-c", RUNS, DB], env=ENV).stdout)


def test_raid5_sweeps_store_the_read_back_values_and_restore_the_originals(standard_guest: Guest) -> None:
    guest = standard_guest
    make_raid5(guest)
    before = {CACHE: knob(guest, CACHE), THREADS: knob(guest, THREADS)}
    tune = json.loads(mdtui(guest, "tune", "md0", "--json").stdout)
    shown = {k["name"]: k for k in tune["knobs"] if k["device"] in ("md0", "")}
    assert shown["stripe_cache_size"]["value"] == before[CACHE] and shown["stripe_cache_size"]["writable"]
    assert shown["stripe_cache_size"]["memory_bytes"] == int(before[CACHE]) * 4096 * 3
    assert shown["read_ahead_kb"]["value"] is not None and shown["speed_limit_max"]["value"] is not None

    figures: dict[str, dict[str, float]] = {}
    for name, values, path in (("stripe_cache_size", "256,4096", CACHE), ("group_thread_cnt", "0,4", THREADS)):
        started = time.monotonic()
        result = guest.run(sweep_argv(guest, name, values, SWEEP_RUNTIME_S), env=ENV, timeout=300, check=False)
        assert result.rc == 0, result.stderr[-3000:] + result.stdout[-3000:]
        assert knob(guest, path) == before[path], f"{name} not restored: {knob(guest, path)}"
        assert "restored:" in result.stdout and "best:" in result.stdout, result.stdout
        runs = [run for run in stored_runs(guest) if run["label"].startswith(f"{name}=")]
        assert [run["label"] for run in runs] == [f"{name}={v}" for v in values.split(",")], runs
        for run in runs:
            value = run["label"].split("=", 1)[1]
            assert run["status"] == "complete", run
            assert run["knobs"].get(f"md/{name}") == value, (value, run["knobs"])  # read back from sysfs
            assert run["write"] and run["write"] > 0, run
        figures[name] = {run["label"]: run["write"] / 1e6 for run in runs}
        print(f"\n{name} sweep ({time.monotonic() - started:.0f} s): "
              + ", ".join(f"{label} {mbps:.1f} MB/s (run #{run['id']})"
                          for (label, mbps), run in zip(figures[name].items(), runs, strict=True)))
        print("\n".join(line for line in result.stdout.splitlines() if line.startswith("note:")))

    # The advisor reads the finished sweeps as evidence, with their run ids, whatever they measured.
    advice = json.loads(mdtui(guest, "advise", "--json", "--samples", "0").stdout)
    found = {f["id"]: f for f in advice["findings"]}
    for name in ("stripe_cache_size", "group_thread_cnt"):
        finding = found.get(f"knob-sweep:md0:{name}")
        assert finding is not None, sorted(found)
        assert name in finding["title"] and "run #" in finding["title"], finding
        print(f"advice: {finding['title']}")


def start_stoppable_sweep(guest: Guest) -> Pending:
    script = f"echo $$ > {PID_FILE}; exec " + " ".join(sweep_argv(guest, "stripe_cache_size", "4096,8192",
                                                                   STOPPED_RUNTIME_S))
    return guest.spawn(["/bin/sh", "-c", script], env=ENV, timeout=300, check=False)


def wait_for_the_first_value(guest: Guest, pending: Pending, *, fio: bool) -> float:
    """Seconds until the knob reads 4096 (and, with ``fio``, fio writes md0)."""
    started = time.monotonic()
    probe = f"[ $(cat {CACHE}) = 4096 ]" + (" && pgrep -f 'filename=/dev/md0' >/dev/null" if fio else "")
    while time.monotonic() - started < FIND_TIMEOUT_S:
        if guest.sh(probe, check=False).rc == 0:
            time.sleep(1)
            return time.monotonic() - started
        time.sleep(0.3)
    result = pending.wait()
    raise AssertionError(f"the sweep never reached fio on md0; it ended with {result.rc}: {result.stderr[-2000:]}")


def test_a_stopped_or_killed_sweep_puts_the_knob_back(standard_guest: Guest) -> None:
    guest = standard_guest
    make_raid5(guest)
    original = knob(guest, CACHE)
    for signal_name, exit_code in (("INT", 130), ("HUP", 129), ("KILL", -9)):
        pending = start_stoppable_sweep(guest)
        # Ctrl-C lands while fio writes (the run is stopped, its figures kept); SIGHUP and SIGKILL as soon as the
        # knob is changed, which is all they need to prove and saves a fio start each under TCG.
        waited = wait_for_the_first_value(guest, pending, fio=signal_name == "INT")
        guest.sh(f"kill -{signal_name} $(cat {PID_FILE})")
        result = pending.wait()
        assert result.rc == exit_code, (signal_name, result.rc, result.stderr[-2000:])
        after_exit = knob(guest, CACHE)
        if signal_name != "KILL":
            assert after_exit == original, f"SIGKILL aside, the sweep restores on its way out: {after_exit}"
            assert f"restored: md0 stripe_cache_size restored to {original}" in result.stderr, result.stderr[-2000:]
            print(f"\nSIG{signal_name} {waited:.1f} s in: exit {result.rc}, stripe_cache_size {after_exit}")
            continue
        assert after_exit == "4096", after_exit  # nobody was left to put it back
        scan = mdtui(guest, "scan")
        assert knob(guest, CACHE) == original
        (line,) = [line for line in scan.stderr.splitlines() if "stripe_cache_size restored" in line]
        assert "did not finish" in line, line
        assert guest.run(["ls", "-A", f"{STATE_DIR}/knob-journal"]).stdout.strip() == ""
        print(f"\nSIGKILL {waited:.1f} s in: left at {after_exit}; next `mdtui scan` said: {line}")


def test_apply_writes_a_udev_rule_that_trigger_reapplies_and_remove_takes_out(standard_guest: Guest) -> None:
    guest = standard_guest
    make_raid5(guest)
    try:
        applied = mdtui(guest, "tune", "--apply", "stripe_cache_size=4096", "md0", "--yes")
        assert 'ATTR{md/stripe_cache_size}="4096"' in applied.stdout and knob(guest, CACHE) == "4096"
        rule = guest.read_file(RULE_FILE)
        assert "ENV{MD_UUID}==" in rule, rule
        guest.sh(f"echo 512 > {CACHE}")
        shown = json.loads(mdtui(guest, "tune", "md0", "--json").stdout)
        (cache,) = [k for k in shown["knobs"] if k["name"] == "stripe_cache_size"]
        assert cache["persisted"] == "4096" and cache["value"] == "512", cache
        guest.run(["udevadm", "control", "--reload"])
        guest.run(["udevadm", "trigger", "--action=change", "--settle", "/dev/md0"], timeout=60)
        assert knob(guest, CACHE) == "4096", f"udev did not apply the rule: {knob(guest, CACHE)}\n{rule}"
        removed = mdtui(guest, "tune", "--remove", "stripe_cache_size", "md0", "--yes")
        assert "removed" in removed.stdout
        assert guest.run(["test", "-e", RULE_FILE], check=False).rc != 0
        print(f"\nrule applied by udevadm trigger (512 → 4096), then removed:\n{rule}")
    finally:
        guest.run(["rm", "-f", RULE_FILE])
