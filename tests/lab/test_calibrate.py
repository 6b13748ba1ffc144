"""`mdtui calibrate` on the lab kernel: md's ceilings over null_blk RAM members, stored and used by predict; only
what it made is removed, and someone else's RAM disk (made here first) keeps its bytes.

On the shared standard guest: about 150 s of guest time under TCG (calibrate --seconds 1 itself ~47 s: six
fio runs and three array creations; each of the two mdtui starts ~25 s).
"""

from __future__ import annotations

import json

import pytest

from .harness import Guest

pytestmark = pytest.mark.lab

STATE = "/tmp/mdtui-calibrate-state"
THEIRS = "/sys/kernel/config/nullb/someone-elses"
PREDICT = ("--level", "5", "--members", "4", "--json", "--member-figures")
FIGURES = "seq-read=3000MB/s,seq-write=3000MB/s,rand-read=500k,rand-write=400k,q1-read=80us,rotational=no"


def sh(guest: Guest, script: str, timeout: float = 60) -> str:
    return guest.run(["sh", "-c", script], timeout=timeout).stdout


def test_calibrate_measures_stores_and_leaves_only_what_it_found(standard_guest: Guest) -> None:
    guest = standard_guest
    # The admin's own RAM disk, made before: configfs mounted, null_blk loaded, 16 MiB with known bytes.
    sh(
        guest,
        "set -e; modprobe null_blk nr_devices=0; "
        "grep -q ' /sys/kernel/config configfs' /proc/mounts || mount -t configfs none /sys/kernel/config; "
        f"mkdir {THEIRS}; echo 1 > {THEIRS}/memory_backed; "
        f"echo 16 > {THEIRS}/size; echo 1 > {THEIRS}/power; udevadm settle -t 10 || sleep 1",
    )
    # Named after its directory on kernels since 5.19, nullbN on older ones.
    theirs = sh(guest, f"test -b /dev/someone-elses && echo /dev/someone-elses || echo /dev/nullb$(cat {THEIRS}/index)")
    theirs = theirs.strip()
    sh(
        guest,
        f"head -c 16777216 /dev/urandom > /tmp/theirs.bin && dd if=/tmp/theirs.bin of={theirs} bs=1M oflag=direct",
    )
    env = {"MDTUI_STATE_DIR": STATE}
    try:
        result = guest.run(
            [guest.python_exe, "-m", "mdtui", "calibrate", "--yes", "--json", "--seconds", "1"],
            env=env,
            timeout=300,
            check=False,
        )
        assert result.rc == 0, f"rc {result.rc}\n{result.stderr[-3000:]}"
        print(result.stderr)
        document = json.loads(result.stdout)
        print(json.dumps(document, indent=2))
        for level in ("raid5", "raid6"):
            figures = document["levels"][level]
            assert figures["stripe_write_bytes_per_s"] > 0 and figures["stripe_small_write_iops"] > 0, figures
            # The lab kernel logs its xor/raid6 benchmark at boot (raid456 loads then).
            assert figures["parity_bytes_per_s"] is None or figures["parity_bytes_per_s"] > 0
        assert document["layer_latency_s"] is None or document["layer_latency_s"] >= 0
        assert sh(guest, f"ls {STATE}").split() == ["md-calibration.json"]

        predicted = guest.run(
            [guest.python_exe, "-m", "mdtui", "predict", *PREDICT, FIGURES],
            env=env,
            timeout=60,
        )
        basis = json.loads(predicted.stdout)["basis"]
        assert basis["seq_write_mb_s"].startswith("calibrated here"), basis

        # Nothing of ours is left: no configfs directory, no array.
        # ("features" is null_blk's own attribute file.)
        assert set(sh(guest, "ls /sys/kernel/config/nullb").split()) - {"features"} == {"someone-elses"}
        assert not any(line.startswith("md") for line in sh(guest, "cat /proc/mdstat").splitlines())
        # Someone else's RAM disk is still there, powered, with its bytes.
        assert sh(guest, f"cat {THEIRS}/power").strip() == "1"
        assert sh(guest, f"cmp /tmp/theirs.bin {theirs} && echo same").strip() == "same"
    finally:
        sh(guest, f"echo 0 > {THEIRS}/power; rmdir {THEIRS}; rm -rf {STATE} /tmp/theirs.bin", timeout=60)
